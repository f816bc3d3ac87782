/*
 * moment.c: `--at TIME|MARKER` and `--from A --to B` as export, report and report --html take
 * them, and the report's section at that moment. What was live then comes from the analysis
 * library (ra_model_moment), the one implementation every output shares.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "cli.h"

/* Sites shown in the report's section. */
#define MOMENT_ROWS 10

int cli__moment_option(ra_moment_t *mo, int c, const char *arg)
{
    switch (c) {
    case RHEAP_MOMENT_OPT_AT: mo->at = arg; return 1;
    case RHEAP_MOMENT_OPT_FROM: mo->from = arg; return 1;
    case RHEAP_MOMENT_OPT_TO: mo->to = arg; return 1;
    }
    return 0;
}

int cli__moment_given(const ra_moment_t *mo)
{
    return mo->at || mo->from || mo->to;
}

/* A time of the recording: ms for people, whole ns with --raw. */
static void when(FILE *out, int64_t ns, int raw)
{
    if (raw)
        fprintf(out, "%" PRId64 " ns", ns);
    else
        fprintf(out, "%.3f ms", (double)ns / 1e6);
}

static void size(FILE *out, int64_t b, int raw)
{
    char buf[32];
    if (raw)
        snprintf(buf, sizeof buf, "%" PRId64 " bytes", b);
    else
        ra_human_bytes(b, buf, sizeof buf);
    fputs(buf, out);
}

static int by_bytes(const void *x, const void *y)
{
    const ra_stat_t *a = *(const ra_stat_t *const *)x, *b = *(const ra_stat_t *const *)y;
    if (a->peak_bytes != b->peak_bytes)
        return a->peak_bytes > b->peak_bytes ? -1 : 1;
    return a->bt < b->bt ? -1 : a->bt > b->bt;
}

int cli__moment_report(sqlite3 *db, const char *path, const char *pid, const char *skip,
                       const ra_moment_t *mo, int raw, FILE *out)
{
    ra_model_t m;
    ra_err_t err;
    ra_status_t st = ra_model_load(db, pid ? strtoll(pid, NULL, 10) : -1, RA_MODEL_STACKS, 0, &m,
                                   &err);
    if (st == RA_OK)
        st = ra_model_skip(db, &m, skip, &err);
    if (st == RA_OK)
        st = ra_model_moment(db, &m, mo, &err);
    if (st != RA_OK) {
        cli__error(stderr, "%s: %s", path, err.msg);
        ra_model_free(&m);
        return (int)st;
    }
    if (mo->at)
        fprintf(out, "\nLive at %s (rheap export collapsed --at %s)\n", mo->at, mo->at);
    else
        fprintf(out, "\nLive at the highest point from %s to %s (rheap export collapsed "
                     "--from %s --to %s)\n", mo->from, mo->to, mo->from, mo->to);
    for (size_t i = 0; i < m.nprocs; i++) {
        const ra_proc_t *p = &m.procs[i];
        fprintf(out, "  pid %" PRId64, p->pid);
        if (p->recording > 1)
            fprintf(out, " recording %" PRId64, p->recording);
        if (p->moment_unrecorded) {
            char windows[256];
            ra_model_windows_text(&m, p, windows, sizeof windows);
            fprintf(out, ": not recording then (recorded %s)\n", windows);
            continue;
        }
        if (p->moment_from < 0) {
            fprintf(out, ": no marker '%s' in this recording\n", mo->at ? mo->at : mo->from);
            continue;
        }
        fputs(": ", out);
        size(out, p->peak_bytes, raw);
        fprintf(out, " in %" PRId64 " blocks at ", p->peak_blocks);
        when(out, p->peak_t, raw);
        if (!mo->at) {
            fputs(" (of ", out);
            when(out, p->moment_from, raw);
            fputs(" .. ", out);
            when(out, p->moment_to, raw);
            fputc(')', out);
        }
        fputc('\n', out);
    }
    /* The stacks that held most, the largest first. */
    const ra_stat_t **top = malloc((m.nstats + 1) * sizeof *top);
    if (!top) {
        ra_model_free(&m);
        cli__error(stderr, "out of memory");
        return RHEAP_EXIT_OUTPUT;
    }
    size_t n = 0;
    for (size_t i = 0; i < m.nstats; i++)
        if (m.stats[i].peak_bytes > 0)
            top[n++] = &m.stats[i];
    if (n)
        qsort(top, n, sizeof *top, by_bytes);
    if (n == 0)
        fprintf(out, "  (nothing live)\n");
    else
        fprintf(out, "  %10s %8s  %s\n", "bytes", "blocks", "site");
    for (size_t i = 0; i < n && i < MOMENT_ROWS; i++) {
        const ra_stack_t *s = ra_model_stack(&m, top[i]->bt);
        char b[32], name[64];
        if (raw)
            snprintf(b, sizeof b, "%" PRId64, top[i]->peak_bytes);
        else
            ra_human_bytes(top[i]->peak_bytes, b, sizeof b);
        fprintf(out, "  %10s %8" PRId64 "  ", b, top[i]->peak_blocks);
        if (!s || !s->nframes) {
            fputs("(no backtrace)\n", out);
            continue;
        }
        const ra_frame_t *f = s->frames[0];
        fputs(ra_frame_name(f, name, sizeof name), out);
        if (f->file) {
            const char *base = strrchr(f->file, '/');
            fprintf(out, "  %s:%" PRId64, base ? base + 1 : f->file, f->line);
        }
        fputc('\n', out);
    }
    if (n > MOMENT_ROWS)
        fprintf(out, "  (%zu more stacks)\n", n - MOMENT_ROWS);
    free(top);
    ra_model_free(&m);
    return RHEAP_EXIT_OK;
}
