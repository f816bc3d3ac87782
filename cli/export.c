/*
 * export.c: `rheap export FORMAT DB`, the database's stacks in the formats other tools read.
 *
 *   collapsed  folded stacks, one `outermost;...;site WEIGHT` line per distinct stack, the input
 *              of flamegraph.pl, inferno and speedscope;
 *   pprof      a gzipped profile.proto for `go tool pprof` (pprof.c).
 *
 * Both start each stack at its allocation site (the first frame that is not allocator
 * plumbing, as the canned queries name it), so `strdup` or `operator new` never hides the code
 * that wanted the memory. Inlined functions are frames of their own, as in the database.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "cli.h"

static const struct {
    const char *name;
    ra_weight_t w;
} weights[] = {
    {"leaked", RA_W_LEAKED},           {"peak", RA_W_PEAK},
    {"allocated", RA_W_ALLOCATED},     {"allocations", RA_W_ALLOCATIONS},
    {"temporary", RA_W_TEMPORARY},     {"live-at-stop", RA_W_STOPPED},
};

static const char *weight_name(ra_weight_t w)
{
    for (size_t k = 0; k < sizeof weights / sizeof weights[0]; k++)
        if (weights[k].w == w)
            return weights[k].name;
    return "?";
}

/* A window (a recording that stopped while its process went on) has no leaks: with the leaked
 * weight, says on stderr what its recordings left live and which weight shows it. */
static void window_note(const ra_model_t *pd, ra_weight_t w)
{
    int64_t blocks = 0, bytes = 0;
    for (size_t i = 0; i < pd->nprocs; i++) {
        blocks += pd->procs[i].stopped_blocks;
        bytes += pd->procs[i].stopped_bytes;
    }
    if (w == RA_W_LEAKED && blocks > 0)
        cli__note_wrapped(stderr,
                  "%" PRId64 " blocks, %" PRId64 " bytes still live when a window's recording "
                  "stopped are not leaks; --weight live-at-stop shows them",
                  blocks, bytes);
}

/* ---- collapsed ---- */

typedef struct {
    char *text;
    size_t len;
    int64_t weight[2]; /* [0] the base database's (with --base), [1] this one's */
} line_t;

static int cmp_line(const void *a, const void *b)
{
    return strcmp(((const line_t *)a)->text, ((const line_t *)b)->text);
}

/* The frame names as a line shows them, made once per distinct frame of a model: a build's
 * leaking stacks pass through the same frames a million times. */
typedef struct {
    const ra_model_t *pd;
    char **text;   /* per frame of pd->frames; NULL: not made yet */
    size_t *len;
} names_t;

/* A copy of a frame's name with the two characters the format gives meaning to (';' between
 * frames, the last space before the weight is fine) and line breaks made harmless; NULL when
 * out of memory. */
static char *line_name(const ra_frame_t *f, size_t *len)
{
    char buf[64];
    const char *s = ra_frame_name(f, buf, sizeof buf);
    size_t n = strlen(s);
    char *d = malloc(n + 1);
    if (!d)
        return NULL;
    for (size_t i = 0; i < n; i++)
        d[i] = s[i] == ';' ? ':' : (s[i] == '\n' || s[i] == '\r') ? ' ' : s[i];
    d[n] = 0;
    *len = n;
    return d;
}

/* The name of frame f of nm's model, made on first use; NULL when out of memory. */
static const char *name_of(names_t *nm, const ra_frame_t *f, size_t *len)
{
    size_t k = (size_t)(f - nm->pd->frames);
    if (!nm->text[k])
        nm->text[k] = line_name(f, &nm->len[k]);
    *len = nm->len[k];
    return nm->text[k];
}

/* A stack's line without its weight: its frames' names from the outermost, ';' between them.
 * malloc'ed (its length in *len); NULL when out of memory. */
static char *stack_text(names_t *nm, const ra_stack_t *s, size_t *len)
{
    if (!s || s->nframes == 0) {
        *len = strlen("(no backtrace)");
        return strdup("(no backtrace)");
    }
    size_t total = 0, n;
    for (size_t i = 0; i < s->nframes; i++) {
        if (!name_of(nm, s->frames[i], &n))
            return NULL;
        total += n + 1;
    }
    char *t = malloc(total), *p = t;
    if (!t)
        return NULL;
    for (size_t i = s->nframes; i-- > 0;) {
        const char *name = name_of(nm, s->frames[i], &n);
        memcpy(p, name, n);
        p += n;
        *p++ = i ? ';' : 0;
    }
    *len = total - 1;
    return t;
}

/* Appends the lines of one database's stacks, their weight on side `side`. The rows of a
 * stack in every recording are added up first, so that each stack's text is made once: a
 * process tree has a million (recording, stack) rows for forty thousand stacks. Lines of
 * equal text are added up afterwards in any case (stacks without frames, and the base). */
static int collect(const ra_model_t *pd, ra_weight_t w, int side, line_t **lines, size_t *n,
                   size_t *cap)
{
    /* [0]: the rows of no known stack; [1 + k]: those of pd->stacks[k]. */
    int64_t *sum = calloc(pd->nstacks + 1, sizeof *sum);
    unsigned char *any = calloc(pd->nstacks + 1, 1); /* a row of it weighs something (a
                                                        moment's changes may add up to 0) */
    names_t nm = {pd, calloc(pd->nframes + 1, sizeof *nm.text),
                  calloc(pd->nframes + 1, sizeof *nm.len)};
    if (!sum || !any || !nm.text || !nm.len) {
        free(sum);
        free(any);
        free(nm.text);
        free(nm.len);
        return -1;
    }
    for (size_t i = 0; i < pd->nstats; i++) {
        int64_t v = ra_weight_of(&pd->stats[i], w);
        if (v == 0)
            continue;
        const ra_stack_t *st = ra_model_stack(pd, pd->stats[i].bt);
        size_t k = st ? 1 + (size_t)(st - pd->stacks) : 0;
        sum[k] += v;
        any[k] = 1;
    }
    int rc = 0;
    for (size_t k = 0; k <= pd->nstacks && rc == 0; k++) {
        if (!any[k])
            continue;
        if (rheap_grow(lines, cap, *n, sizeof **lines, 256) != 0) {
            rc = -1;
            break;
        }
        line_t *l = &(*lines)[*n];
        l->text = stack_text(&nm, k ? &pd->stacks[k - 1] : NULL, &l->len);
        if (!l->text) {
            rc = -1;
            break;
        }
        l->weight[side] = sum[k];
        l->weight[!side] = 0;
        (*n)++;
    }
    for (size_t k = 0; k < pd->nframes; k++)
        free(nm.text[k]);
    free(nm.text);
    free(nm.len);
    free(sum);
    free(any);
    return rc;
}

/* Folded stacks of pd, `stack WEIGHT` a line; with base, `stack BASE_WEIGHT WEIGHT`, the two
 * columns a differential flamegraph reads (stacks are matched by their text, so the two
 * databases' ids and pids do not matter). */
static int write_collapsed(const ra_model_t *pd, const ra_model_t *base, ra_weight_t w,
                           FILE *out, char *err, size_t errlen)
{
    line_t *lines = NULL;
    size_t n = 0, cap = 0;
    int rc = collect(pd, w, 1, &lines, &n, &cap);
    if (rc == 0 && base)
        rc = collect(base, w, 0, &lines, &n, &cap);
    if (rc != 0)
        snprintf(err, errlen, "out of memory");
    /* Stacks that differ only below the site, or the same stack in several processes, are
     * one line: sorted, equal texts are neighbours. */
    if (rc == 0 && n) /* qsort's array may not be NULL, even when empty */
        qsort(lines, n, sizeof *lines, cmp_line);
    for (size_t i = 0; rc == 0 && i < n;) {
        int64_t sum[2] = {0, 0};
        size_t j = i;
        for (; j < n && lines[j].len == lines[i].len &&
               !memcmp(lines[j].text, lines[i].text, lines[i].len);
             j++) {
            sum[0] += lines[j].weight[0];
            sum[1] += lines[j].weight[1];
        }
        /* The text as a block: printf's %s of a line of hundreds of frames was a tenth. */
        fwrite(lines[i].text, 1, lines[i].len, out);
        if (base)
            fprintf(out, " %" PRId64 " %" PRId64 "\n", sum[0], sum[1]);
        else
            fprintf(out, " %" PRId64 "\n", sum[1]);
        i = j;
    }
    for (size_t i = 0; i < n; i++)
        free(lines[i].text);
    free(lines);
    return rc;
}

/* ---- The command ---- */

/* pprof: up to this many recordings, a sample per stack and recording labelled with its pid;
 * beyond, a build's thousands of processes would make millions of samples (2.5 million, 15 s
 * of CPU to write), so the samples are the stacks' totals over the recordings, and --pid P
 * gives one process's. */
#define PPROF_PER_RECORDING_MAX 64

/* The number of recordings of the database; -1 when it cannot be read. */
static int64_t recordings_of(sqlite3 *db)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "SELECT count(*) FROM processes", -1, &st, NULL) != SQLITE_OK)
        return -1;
    int64_t n = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
    sqlite3_finalize(st);
    return n;
}

/* Whether the output draws the stack of s: collapsed a line for each weight not 0, pprof a
 * sample for each stack with blocks (at the peak, with peak). */
static int drawn(const ra_stat_t *s, ra_weight_t w, int pprof)
{
    if (!pprof)
        return ra_weight_of(s, w) != 0;
    return (w == RA_W_PEAK ? s->peak_blocks : s->blocks) != 0;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Reads the frames of the stacks the output draws: the leaking stacks of a build are a fifth
 * of its stacks, and their frames a sixth of the rows. RA_OK or the failure in err. */
static ra_status_t read_frames(sqlite3 *db, ra_model_t *pd, ra_weight_t w, int pprof,
                               ra_err_t *err)
{
    int64_t *bts = malloc((pd->nstats + 1) * sizeof *bts);
    if (!bts) {
        snprintf(err->msg, sizeof err->msg, "out of memory");
        return RA_E_NOMEM;
    }
    size_t n = 0;
    for (size_t i = 0; i < pd->nstats; i++)
        if (pd->stats[i].bt >= 0 && drawn(&pd->stats[i], w, pprof))
            bts[n++] = pd->stats[i].bt;
    if (n)
        qsort(bts, n, sizeof *bts, cmp_i64);
    ra_status_t rc = ra_model_frames(db, pd, bts, n, err);
    free(bts);
    return rc;
}

/* Reads a database for export, its suppressed leaks taken out (named in a note on stderr), the
 * frames of the stacks drawn with weight w in the format. With RA_MODEL_TOTALS in what,
 * totals_over > 0 keeps the samples per recording in a database of at most that many
 * recordings. */
static int load(const char *path, int64_t pid, unsigned what, int64_t totals_over, ra_weight_t w,
                int pprof, const cli__supp_opts_t *so, const char *skip, const ra_moment_t *mo,
                ra_model_t *pd)
{
    sqlite3 *db;
    memset(pd, 0, sizeof *pd);
    ra_err_t open_err;
    int rc = cli__said(ra_open_read(path, &db, &open_err), &open_err, stderr);
    if (rc != RHEAP_EXIT_OK)
        return rc;
    /* One read transaction for the whole load: the seeks of the stacks drawn each took and
     * gave back the file's lock, and it reads one state of the database. Closing ends it. */
    sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
    if ((what & RA_MODEL_TOTALS) && totals_over > 0) {
        int64_t n = recordings_of(db);
        if (n >= 0 && n <= totals_over)
            what &= ~(unsigned)RA_MODEL_TOTALS;
    }
    ra_err_t err;
    ra_status_t loaded = ra_model_load(db, pid, what | RA_MODEL_FRAMES_LATER, 0, pd, &err);
    if (loaded == RA_OK)
        loaded = ra_model_moment(db, pd, mo, &err);
    if (loaded != RA_OK) {
        cli__error(stderr, "%s: %s", path, err.msg);
        ra_model_free(pd);
        sqlite3_close(db);
        return (int)loaded;
    }
    ra_supp_t *supp;
    rc = cli__supp_open(so, db, &supp, stderr);
    if (rc != RHEAP_EXIT_OK) {
        sqlite3_close(db);
        ra_model_free(pd);
        return rc;
    }
    size_t nr = ra_supp_nrules(supp);
    int64_t *bl = calloc(nr + 1, sizeof *bl), *by = calloc(nr + 1, sizeof *by);
    if (!bl || !by) {
        free(bl);
        free(by);
        ra_supp_destroy(supp);
        sqlite3_close(db);
        ra_model_free(pd);
        cli__error(stderr, "out of memory");
        return RHEAP_EXIT_OUTPUT;
    }
    ra_supp_apply(supp, pd, bl, by);
    int64_t any = 0;
    for (size_t r = 0; r < nr; r++)
        any += bl[r];
    if (any) {
        char prefix[PATH_MAX + 16];
        snprintf(prefix, sizeof prefix, "rheap: %s: ", path);
        cli__supp_print(supp, bl, by, prefix, "rheap:   ", cli__output_width(stderr),
                        stderr);
    }
    free(bl);
    free(by);
    ra_supp_destroy(supp);
    /* The suppressed leaks are out: their stacks need no frames for the leaked weight. */
    loaded = read_frames(db, pd, w, pprof, &err);
    if (loaded == RA_OK)
        loaded = ra_model_skip(db, pd, skip, &err);
    sqlite3_close(db);
    if (loaded != RA_OK) {
        cli__error(stderr, "%s: %s", path, err.msg);
        ra_model_free(pd);
        return (int)loaded;
    }
    return RHEAP_EXIT_OK;
}

static void usage_export(FILE *f)
{
    fprintf(f,
            "Usage: rheap export FORMAT DB [-o FILE [-f]] [--weight W] [--pid P]\n"
            "                    [--at TIME|MARKER | --from A --to B] [--skip GLOB]\n"
            "                    [--base BASE.db] [--suppress FILE]...\n"
            "                    [--no-default-suppressions]\n"
            "\n"
            "Writes the stacks of a database in a format other tools read, each stack from\n"
            "its allocation site outward (allocator plumbing such as strdup or operator new\n"
            "left out; inlined functions are frames of their own).\n"
            "\n"
            "Formats:\n"
            "  collapsed   folded stacks, 'main;parse;read_line 4096' per line, for\n"
            "              flamegraph.pl, inferno-flamegraph and speedscope\n"
            "  pprof       a gzipped profile.proto for go tool pprof: the sample types of a\n"
            "              Go heap profile (alloc_objects, alloc_space, inuse_objects,\n"
            "              inuse_space; inuse = never freed before the process ended or, in\n"
            "              a window, still live when it stopped); with --weight peak, the\n"
            "              blocks live at each process's peak instead. A sample per stack\n"
            "              and recording, labelled with its pid; beyond 64 recordings (a\n"
            "              build), one per stack over them all (--pid P: one process's)\n"
            "\n"
            "A database recorded in profile mode (rheap run --profile) holds a sample of the\n"
            "allocations: both formats carry the estimates scaled up from it (pprof's period\n"
            "is the sampling interval, as in Go's sampled heap profiles).\n"
            "\n"
            "Options:\n"
            "  -o, --output FILE   where to write (default: standard output)\n"
            "  -f, --force         replace FILE if it exists\n"
            "  --weight W          leaked (bytes never freed before their process ended, the\n"
            "                      default), live-at-stop (bytes still live when a window's\n"
            "                      recording stopped while its process went on: not leaks),\n"
            "                      peak (bytes live at each process's peak), allocated\n"
            "                      (bytes), allocations (blocks), temporary (blocks freed\n"
            "                      before their thread's next allocation; collapsed only).\n"
            "                      For pprof it picks the default sample type.\n"
            "  --pid P             only process P (default: every process, stacks added up)\n"
            RHEAP_MOMENT_HELP
            RHEAP_SKIP_HELP
            "  --base BASE.db      compare with another run. collapsed: 'stack BASE NEW' a\n"
            "                      line, the weights in BASE.db and in DB, for a differential\n"
            "                      flamegraph. pprof: one sample per stack, DB minus BASE.db\n"
            "                      (negative where BASE.db had more), stacks matched by\n"
            "                      function, file and line, as go tool pprof -diff_base shows\n"
            "                      two exports\n"
            RHEAP_SUPP_HELP
            "                      (suppressed leaks are named in a note on stderr)\n"
            "  -h, --help          show this help\n"
            "\n"
            "Exit status: 0 success, 1 usage error, 2 missing or bad database, 4 the output\n"
            "could not be written.\n");
}

/* What a value-taking option of export wants, for the message when it is missing. */
static const char *export_needs(void)
{
    switch (optopt) {
    case 'o': return "a file name";
    case 'W': return "a weight";
    case 'P': return "a process id";
    case 'B': return "a database";
    case 'K': return "a pattern";
    case RHEAP_MOMENT_OPT_AT:
    case RHEAP_MOMENT_OPT_FROM:
    case RHEAP_MOMENT_OPT_TO: return "a time or a marker label";
    }
    return "a value";
}

/* argv[0] is the command's name (only for getopt). */
int cli__cmd_export(int argc, char **argv)
{
    static const struct option longs[] = {
        {"output", required_argument, NULL, 'o'},
        {"weight", required_argument, NULL, 'W'},
        {"pid", required_argument, NULL, 'P'},
        {"base", required_argument, NULL, 'B'},
        {"skip", required_argument, NULL, 'K'},
        RHEAP_MOMENT_LONGS,
        {"force", no_argument, NULL, 'f'},
        {"help", no_argument, NULL, 'h'},
        RHEAP_SUPP_LONGS,
        {NULL, 0, NULL, 0},
    };
    cli__supp_opts_t so = {0};
    const char *format = NULL, *db_path = NULL, *output = NULL, *base_path = NULL, *skip = NULL;
    ra_weight_t w = RA_W_LEAKED;
    int weighed = 0;
    ra_moment_t mo = {0};
    int64_t pid = -1;
    int c;
    optind = 0;
    opterr = 0;
    int force = 0, rc0;
    while ((c = getopt_long(argc, argv, ":o:fh", longs, NULL)) != -1) {
        switch (c) {
        case 'h': usage_export(stdout); return RHEAP_EXIT_OK;
        case 'f': force = 1; break;
        case 'o': output = optarg; break;
        case 'B': base_path = optarg; break;
        case 'K':
            if (!*optarg) {
                cli__error(stderr, "--skip: expected a pattern; got ''");
                return RHEAP_EXIT_USAGE;
            }
            skip = optarg;
            break;
        case 'W': {
            size_t k = 0, nw = sizeof weights / sizeof weights[0];
            while (k < nw && strcmp(weights[k].name, optarg))
                k++;
            if (k == nw) {
                cli__error(stderr, "unknown weight '%s' (leaked, peak, allocated, "
                                     "allocations, temporary, live-at-stop)", optarg);
                return RHEAP_EXIT_USAGE;
            }
            w = weights[k].w;
            weighed = 1;
            break;
        }
        case 'P': {
            char *end;
            errno = 0;
            long long p = strtoll(optarg, &end, 10);
            if (errno || *end || end == optarg || p < 0) {
                cli__error(stderr, "--pid wants a process id, not '%s'", optarg);
                return RHEAP_EXIT_USAGE;
            }
            pid = p;
            break;
        }
        default: {
            if (cli__moment_option(&mo, c, optarg))
                break;
            int sr = cli__supp_option(&so, c, optarg);
            if (sr > 0)
                break;
            if (sr < 0)
                return RHEAP_EXIT_USAGE;
            return cli__option_error(c, argv, longs, export_needs(), "rheap export --help");
        }
        }
    }
    /* FORMAT and DB, wherever they were among the options. */
    if (argc - optind > 2) {
        cli__error(stderr, "one database at a time (try rheap export --help)");
        return RHEAP_EXIT_USAGE;
    }
    if (optind < argc)
        format = argv[optind];
    if (optind + 1 < argc)
        db_path = argv[optind + 1];
    if (!format || !db_path) {
        cli__error(stderr, "%s (rheap export FORMAT DB -o FILE)",
                     format ? "no database given" : "no format given");
        return RHEAP_EXIT_USAGE;
    }
    int pprof = !strcmp(format, "pprof");
    if (!pprof && strcmp(format, "collapsed")) {
        cli__error(stderr, "unknown format '%s' (collapsed, pprof)", format);
        return RHEAP_EXIT_USAGE;
    }
    /* A moment shows what was live then: the peak weight, drawn at that moment. */
    if (cli__moment_given(&mo)) {
        if (weighed && w != RA_W_PEAK) {
            cli__error(stderr, "--%s shows the bytes live at a moment; --weight %s does not "
                               "change with it (leave --weight out, or give peak)",
                       mo.at ? "at" : mo.from ? "from" : "to", weight_name(w));
            return RHEAP_EXIT_USAGE;
        }
        w = RA_W_PEAK;
    }
    if (pprof && w == RA_W_TEMPORARY) {
        cli__error(stderr, "a pprof profile has no temporary sample type; use collapsed");
        return RHEAP_EXIT_USAGE;
    }
    if (output && strcmp(output, "-") &&
        (rc0 = cli__output_check(output, force, pprof ? "profile" : "file")) != RHEAP_EXIT_OK)
        return rc0;

    unsigned what = RA_MODEL_STACKS;
    if (w == RA_W_PEAK)
        what |= RA_MODEL_PEAK;
    if (w == RA_W_TEMPORARY)
        what |= RA_MODEL_TEMPORARY;
    /* Every process's stacks added up: the converter's totals per stack (stack_totals), a row
     * per stack instead of one per stack and recording. Collapsed output adds them up in any
     * case; pprof keeps its samples per recording in a small tree. A moment is per recording. */
    int64_t totals_over = pprof ? PPROF_PER_RECORDING_MAX : 0;
    if (!cli__moment_given(&mo))
        what |= RA_MODEL_TOTALS;
    ra_model_t pd, base;
    int rc = load(db_path, pid, what, totals_over, w, pprof, &so, skip, &mo, &pd);
    if (rc != RHEAP_EXIT_OK)
        return rc;
    /* The base is another run: its pids differ, so --pid does not select in it. */
    if (base_path && (rc = load(base_path, -1, what, totals_over, w, pprof, &so, skip, &mo,
                                &base)) != RHEAP_EXIT_OK) {
        ra_model_free(&pd);
        return rc;
    }
    char err[1024];
    int64_t interval = ra_model_sample_interval(&pd);
    if (base_path && ra_model_sample_interval(&base) > interval)
        interval = ra_model_sample_interval(&base);
    if (!pprof)
        window_note(&pd, w);
    /* Folded stacks have no room for a note; pprof carries it as a comment. */
    if (interval && !pprof)
        cli__note_wrapped(stderr,
                  "profile mode: the weights are estimates from allocations sampled about "
                  "once every %" PRId64 " bytes",
                interval);

    FILE *out = stdout;
    if (output && strcmp(output, "-")) {
        out = fopen(output, pprof ? "wb" : "w");
        if (!out) {
            cli__error(stderr, "%s: %s", output, strerror(errno));
            ra_model_free(&pd);
            if (base_path)
                ra_model_free(&base);
            return RHEAP_EXIT_OUTPUT;
        }
    }
    int failed;
    if (pprof) {
        uint8_t *gz;
        size_t len;
        ra_err_t why;
        failed = ra_pprof_encode(&pd, base_path ? &base : NULL, w == RA_W_PEAK, w, &gz, &len,
                                 &why) != RA_OK;
        if (failed)
            snprintf(err, sizeof err, "%s", why.msg);
        else if ((failed = fwrite(gz, 1, len, out) != len))
            snprintf(err, sizeof err, "write failed");
        free(gz);
    } else {
        failed = write_collapsed(&pd, base_path ? &base : NULL, w, out, err, sizeof err);
    }
    ra_model_free(&pd);
    if (base_path)
        ra_model_free(&base);
    /* Standard output is flushed and checked by main, as for every command. */
    if (out != stdout && fclose(out) != 0) {
        if (!failed)
            snprintf(err, sizeof err, "%s", strerror(errno));
        failed = 1;
    }
    if (failed) {
        cli__error(stderr, "%s: %s", output ? output : "standard output", err);
        return RHEAP_EXIT_OUTPUT;
    }
    return RHEAP_EXIT_OK;
}
