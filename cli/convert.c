/*
 * convert.c: `rheap convert` as the user sees it. The converter library does the work and
 * prints nothing; this file turns its diagnostics into "rheap: warning: ..." and
 * "rheap: error: ..." lines, its progress into a bar on stderr, and its result into the
 * summary line. `rheap run` converts through here too.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* The library's statuses are the command's exit statuses, passed on unchanged. */
_Static_assert((int)RHEAP_CONVERT_OK == RHEAP_EXIT_OK &&
                   (int)RHEAP_CONVERT_E_REFUSED == RHEAP_EXIT_USAGE &&
                   (int)RHEAP_CONVERT_E_INPUT == RHEAP_EXIT_INPUT &&
                   (int)RHEAP_CONVERT_WARNINGS == RHEAP_EXIT_WARNINGS &&
                   (int)RHEAP_CONVERT_E_OUTPUT == RHEAP_EXIT_OUTPUT,
               "converter statuses and exit statuses differ");

typedef struct {
    int bar;      /* draw the progress bar */
    int bar_open; /* a bar is on screen without its newline */
    int last_pct;
    const char *output; /* the database, named by the summary's pointers to other commands */
} view_t;

static void on_diag(void *user, const rheap_convert_diag_t *d)
{
    view_t *v = user;
    /* A message must not be appended to the bar's line. */
    if (v->bar_open) {
        fputc('\n', stderr);
        v->bar_open = 0;
    }
    if (d->level == RHEAP_CONVERT_ERROR)
        cli__error(stderr, "%s", d->message);
    else
        cli__warning(stderr, "%s", d->message);
}

/* Redraws the bar when the percentage changed: "rheap: converting [####....]  42% N events". */
static void on_progress(void *user, const rheap_convert_progress_t *p)
{
    view_t *v = user;
    int pct = p->bytes_total ? (int)(p->bytes_done * 100 / p->bytes_total) : 100;
    if (p->final || pct > 100)
        pct = 100;
    if (pct == v->last_pct && !p->final)
        return;
    v->last_pct = pct;
    char bar[41];
    int fill = pct * 40 / 100;
    memset(bar, '#', (size_t)fill);
    memset(bar + fill, '.', (size_t)(40 - fill));
    bar[40] = 0;
    fprintf(stderr, "\rrheap: converting [%s] %3d%% %llu events", bar, pct,
            (unsigned long long)p->events);
    v->bar_open = !p->final;
    if (p->final)
        fputc('\n', stderr);
    fflush(stderr);
}

/* The summary tables are written: rheap run's summary, before the last rows are. */
static void on_summary(void *user, struct sqlite3 *db)
{
    view_t *v = user;
    if (v->bar_open) {
        fputc('\n', stderr);
        v->bar_open = 0;
    }
    cli__report_brief(db, v->output, stderr);
    fflush(stderr);
}

int cli__convert_cmd(const char *const *inputs, size_t ninputs, const rheap_convert_opts_t *live,
                       const char *output, int force, int progress, int quiet, int brief)
{
    view_t v = {progress < 0 ? isatty(STDERR_FILENO) : progress, 0, -1, output};
    rheap_convert_opts_t o = RHEAP_CONVERT_OPTS_INIT;
    o.inputs = inputs;
    o.ninputs = ninputs;
    if (live) {
        o.next_input = live->next_input;
        o.growing = live->growing;
        o.live_user = live->live_user;
    }
    o.output = output;
    o.force = force;
    o.diag = on_diag;
    o.progress = v.bar ? on_progress : NULL;
    o.summary = brief ? on_summary : NULL;
    o.user = &v;
    rheap_convert_result_t r;
    rheap_convert_status_t st = rheap_convert(&o, &r);
    if (v.bar_open)
        fputc('\n', stderr);
    if ((st == RHEAP_CONVERT_OK || st == RHEAP_CONVERT_WARNINGS) && !quiet)
        cli__note_wrapped(stderr,
                    "wrote %s: %llu allocations (%llu not freed while recording), %llu stacks, from %llu events "
                    "in %.2f s (%.0f events/s)",
                    output, (unsigned long long)r.allocations, (unsigned long long)r.never_freed,
                    (unsigned long long)r.stacks, (unsigned long long)r.events, r.seconds,
                    r.seconds > 0 ? (double)r.events / r.seconds : 0.0);
    return (int)st;
}
