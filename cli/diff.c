/*
 * diff.c: `rheap diff BASE.db NEW.db`, two runs compared site by site.
 *
 * Stack ids, pids and times belong to one database, so the two are matched by what stays the
 * same between runs of one program: an allocation site is its function in its module, with its
 * location (file:line, or module:0xoffset without line information) breaking ties, since an
 * edit moves lines and a rebuild moves offsets. Every process and recording of a database adds
 * up into its side.
 *
 * The same comparison is offered as folded stacks with two weights per line
 * (`rheap export collapsed NEW.db --base BASE.db`, the input of a differential flamegraph).
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "cli.h"

/* Per site and side: leaked, allocated and peak, bytes then blocks. */
enum { M_LEAKED, M_ALLOCATED, M_PEAK, M_N };

typedef struct {
    char *function, *module, *file, *location; /* module and file "" when unknown */
    int64_t line;
    int side;             /* the database it was seen in first: 0 BASE, 1 NEW */
    int matched;          /* a BASE site paired with a NEW one (it leaves the table) */
    int64_t v[2][M_N][2]; /* [side][measure][0 bytes, 1 blocks] */
} site_t;

typedef struct {
    ra_smap_t keys;
    site_t *v;
    size_t n, cap;
} sites_t;

/* The allocation site of stack bt: function, module, file and line (or module:0xoffset). */
static void site_of(const ra_model_t *pd, int64_t bt, char *fn, size_t fnlen, char *mod,
                    size_t modlen, char *file, size_t filelen, int64_t *line, char *loc,
                    size_t loclen)
{
    const ra_stack_t *s = ra_model_stack(pd, bt);
    *line = 0;
    snprintf(mod, modlen, "%s", "");
    snprintf(file, filelen, "%s", "");
    if (!s || s->nframes == 0) {
        snprintf(fn, fnlen, "(no backtrace)");
        snprintf(loc, loclen, "??");
        return;
    }
    const ra_frame_t *f = s->frames[0];
    snprintf(fn, fnlen, "%s", f->sym ? f->sym : "??");
    /* The module by its file name: a rebuild elsewhere is the same program. */
    const char *slash = f->module ? strrchr(f->module, '/') : NULL;
    snprintf(mod, modlen, "%s", slash ? slash + 1 : f->module ? f->module : "");
    if (f->file) {
        snprintf(file, filelen, "%s", f->file);
        *line = f->line;
        snprintf(loc, loclen, "%s:%" PRId64, f->file, f->line);
    } else {
        *line = f->offset;
        snprintf(loc, loclen, "%s:0x%" PRIx64, f->module ? f->module : "??", (uint64_t)f->offset);
    }
}

/* Adds one database's stacks into its sites: a site per function, module and location. */
static int add_side(sites_t *ss, const ra_model_t *pd, int side)
{
    for (size_t i = 0; i < pd->nstats; i++) {
        const ra_stat_t *st = &pd->stats[i];
        char fn[1024], mod[1024], file[1024], loc[1100], key[4200];
        int64_t line;
        site_of(pd, st->bt, fn, sizeof fn, mod, sizeof mod, file, sizeof file, &line, loc,
                sizeof loc);
        snprintf(key, sizeof key, "%d\x01%s\x01%s\x01%s", side, fn, mod, loc);
        uint64_t idx;
        int created;
        if (ra_smap_get(&ss->keys, key, ss->n, &idx, &created) != 0)
            return -1;
        if (created) {
            if (ss->n == ss->cap) {
                size_t cap = ss->cap ? ss->cap * 2 : 64;
                site_t *v = realloc(ss->v, cap * sizeof *v);
                if (!v)
                    return -1;
                ss->v = v;
                ss->cap = cap;
            }
            site_t *s = &ss->v[ss->n++];
            memset(s, 0, sizeof *s);
            s->side = side;
            s->line = line;
            s->function = strdup(fn);
            s->module = strdup(mod);
            s->file = strdup(file);
            s->location = strdup(loc);
            if (!s->function || !s->module || !s->file || !s->location)
                return -1;
        }
        site_t *s = &ss->v[idx];
        s->v[side][M_LEAKED][0] += st->leaked_bytes;
        s->v[side][M_LEAKED][1] += st->leaked_blocks;
        s->v[side][M_ALLOCATED][0] += st->bytes;
        s->v[side][M_ALLOCATED][1] += st->blocks;
        s->v[side][M_PEAK][0] += st->peak_bytes;
        s->v[side][M_PEAK][1] += st->peak_blocks;
    }
    return 0;
}

/* Moves BASE site b into NEW site n: one row, at NEW's location. */
static void pair(site_t *b, site_t *n)
{
    memcpy(n->v[0], b->v[0], sizeof n->v[0]);
    b->matched = 1;
    n->matched = 1;
}

static int cmp_unmatched(const void *a, const void *b)
{
    const site_t *x = *(site_t *const *)a, *y = *(site_t *const *)b;
    int c = strcmp(x->function, y->function);
    if (!c)
        c = strcmp(x->module, y->module);
    if (!c)
        c = x->side - y->side;
    if (!c)
        c = strcmp(x->file, y->file);
    if (!c)
        c = x->line < y->line ? -1 : x->line > y->line;
    return c;
}

/* Pairs the sites of BASE with those of NEW: the same function, module and location first;
 * then, per function and module, the ones left in the order of their file and line, so a line
 * added at the top of a file moves every site without splitting it into "0 -> N" and "N -> 0".
 * A paired BASE site is marked and left out of the table. -1 when out of memory. */
static int match_sites(sites_t *ss)
{
    for (size_t i = 0; i < ss->n; i++) {
        site_t *n = &ss->v[i];
        if (n->side != 1)
            continue;
        char key[4200];
        snprintf(key, sizeof key, "0\x01%s\x01%s\x01%s", n->function, n->module, n->location);
        uint64_t idx;
        int created;
        if (ra_smap_get(&ss->keys, key, SIZE_MAX, &idx, &created) != 0)
            return -1;
        if (!created && idx < ss->n && !ss->v[idx].matched)
            pair(&ss->v[idx], n);
    }
    site_t **left = malloc((ss->n + 1) * sizeof *left);
    if (!left)
        return -1;
    size_t nl = 0;
    for (size_t i = 0; i < ss->n; i++)
        if (!ss->v[i].matched)
            left[nl++] = &ss->v[i];
    if (nl)
        qsort(left, nl, sizeof *left, cmp_unmatched);
    for (size_t g = 0; g < nl;) {
        size_t e = g;
        while (e < nl && !strcmp(left[e]->function, left[g]->function) &&
               !strcmp(left[e]->module, left[g]->module))
            e++;
        size_t nb = 0;
        while (g + nb < e && left[g + nb]->side == 0)
            nb++;
        for (size_t k = 0; k < nb && nb + k < e - g; k++)
            pair(left[g + k], left[g + nb + k]);
        g = e;
    }
    free(left);
    return 0;
}

static int unit; /* 0 bytes, 1 blocks: what the sort compares */

static int64_t change(const site_t *s, int m)
{
    return s->v[1][m][unit] - s->v[0][m][unit];
}

/* Largest growth of what is left behind first, then of what is allocated, then at the peak. */
static int cmp_site(const void *a, const void *b)
{
    const site_t *x = a, *y = b;
    for (int m = 0; m < M_N; m++) {
        int64_t cx = change(x, m), cy = change(y, m);
        if (cx != cy)
            return cx > cy ? -1 : 1;
    }
    int c = strcmp(x->function, y->function);
    return c ? c : strcmp(x->location, y->location);
}

static int load(const char *path, ra_model_t *pd)
{
    sqlite3 *db;
    ra_err_t open_err;
    int rc = cli__said(ra_open_read(path, &db, &open_err), &open_err, stderr);
    if (rc != RHEAP_EXIT_OK)
        return rc;
    ra_err_t err;
    ra_status_t loaded = ra_model_load(db, -1, RA_MODEL_STACKS | RA_MODEL_PEAK, 1, pd, &err);
    if (loaded != RA_OK) {
        cli__error(stderr, "%s: %s", path, err.msg);
        sqlite3_close(db);
        return (int)loaded;
    }
    sqlite3_close(db);
    return RHEAP_EXIT_OK;
}

/* Fills a printable table: for leaked, allocated and peak, base, new and change; then the
 * site. Sites equal in every number are left out. */
static int to_table(const sites_t *ss, ra_table_t *t)
{
    static const char *const m_names[M_N] = {"leaked", "allocated", "peak"};
    static const char *const sides[3] = {"base", "new", "change"};
    memset(t, 0, sizeof *t);
    t->ncols = 3 * M_N + 2;
    t->names = calloc(t->ncols, sizeof *t->names);
    t->cells = calloc(t->ncols * (ss->n + 1), sizeof *t->cells);
    t->types = calloc(t->ncols * (ss->n + 1), 1);
    if (!t->names || !t->cells || !t->types)
        return -1;
    for (int m = 0; m < M_N; m++)
        for (int k = 0; k < 3; k++) {
            char name[64];
            snprintf(name, sizeof name, "%s_%s", m_names[m], sides[k]);
            t->names[3 * m + k] = strdup(name);
        }
    t->names[3 * M_N] = strdup("function");
    t->names[3 * M_N + 1] = strdup("location");
    for (size_t i = 0; i < ss->n; i++) {
        const site_t *s = &ss->v[i];
        int same = 1;
        for (int m = 0; m < M_N; m++)
            same &= change(s, m) == 0;
        if (same || (s->side == 0 && s->matched))
            continue;
        size_t r = t->nrows++;
        for (int m = 0; m < M_N; m++) {
            int64_t v[3] = {s->v[0][m][unit], s->v[1][m][unit], change(s, m)};
            for (int k = 0; k < 3; k++) {
                char num[32];
                snprintf(num, sizeof num, "%" PRId64, v[k]);
                t->cells[r * t->ncols + 3 * m + k] = strdup(num);
                t->types[r * t->ncols + 3 * m + k] = SQLITE_INTEGER;
            }
        }
        t->cells[r * t->ncols + 3 * M_N] = strdup(s->function);
        t->cells[r * t->ncols + 3 * M_N + 1] = strdup(s->location);
        t->types[r * t->ncols + 3 * M_N] = t->types[r * t->ncols + 3 * M_N + 1] = SQLITE_TEXT;
    }
    return 0;
}

/* Byte counts in KiB/MiB for people (aligned columns without --raw): a change carries its sign,
 * "+1.5 MiB" or "-320". */
static void humanize(ra_table_t *t)
{
    for (size_t r = 0; r < t->nrows; r++)
        for (size_t c = 0; c < 3 * M_N; c++) {
            char **cell = &t->cells[r * t->ncols + c], buf[40];
            long long v = strtoll(*cell, NULL, 10);
            int sign = c % 3 == 2 && v > 0;
            buf[0] = '+';
            cli__human_bytes(v, buf + sign, sizeof buf - 1);
            char *s = strdup(buf);
            if (s) {
                free(*cell);
                *cell = s;
            }
        }
}

static void usage_diff(FILE *f)
{
    fprintf(f,
            "Usage: rheap diff BASE.db NEW.db [--blocks] [--raw] [--wide] [--csv | --json]\n"
            "\n"
            "Compares two databases (two runs of a program) site by site: bytes never freed\n"
            "(before the process ended: a window's live blocks are no leaks), allocated and\n"
            "live at the peak in each (base, new) and the change, the largest\n"
            "growth of leaked bytes first. A site is its function in its module, the line\n"
            "breaking ties (an edit that moves lines keeps sites together), so the runs may\n"
            "have other pids and stack ids; all processes of a database add up. Sites equal\n"
            "in both are left out; a site's location is NEW's.\n"
            "\n"
            "Options:\n"
            "  --blocks      count blocks instead of bytes\n"
            "  --raw         exact byte counts (default: KiB, MiB, ... from 10 KiB up)\n"
            "  --wide        every column on one line, whole names (default: fit $COLUMNS,\n"
            "                the terminal or 80 columns)\n"
            "  --csv, --json output for scripts\n"
            "\n"
            "The same as folded stacks with two weights a line (a differential flamegraph):\n"
            "  rheap export collapsed NEW.db --base BASE.db [--weight W]\n"
            "\n"
            "Exit status: 0 success, 1 usage error, 2 missing or bad database.\n");
}

/* argv[0] is the command's name (only for getopt). */
int cli__cmd_diff(int argc, char **argv)
{
    static const struct option longs[] = {
        {"blocks", no_argument, NULL, 'b'},
        {"raw", no_argument, NULL, 'R'},
        {"wide", no_argument, NULL, 'W'},
        {"csv", no_argument, NULL, 'C'},
        {"json", no_argument, NULL, 'J'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    cli__fmt_t fmt = RHEAP_FMT_COLUMN;
    int raw = 0, wide = 0;
    unit = 0;
    int c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", longs, NULL)) != -1) {
        switch (c) {
        case 'h': usage_diff(stdout); return RHEAP_EXIT_OK;
        case 'b': unit = 1; break;
        case 'R': raw = 1; break;
        case 'W': wide = 1; break;
        case 'C': fmt = RHEAP_FMT_CSV; break;
        case 'J': fmt = RHEAP_FMT_JSON; break;
        default: return cli__option_error(c, argv, longs, "a value", "rheap diff --help");
        }
    }
    /* BASE and NEW, wherever they were among the options. */
    if (argc - optind > 2) {
        cli__error(stderr, "two databases, BASE and NEW (try rheap diff --help)");
        return RHEAP_EXIT_USAGE;
    }
    if (argc - optind != 2) {
        cli__error(stderr, "two databases needed (rheap diff BASE.db NEW.db)");
        return RHEAP_EXIT_USAGE;
    }
    const char *paths[2] = {argv[optind], argv[optind + 1]};
    ra_model_t pd[2];
    memset(pd, 0, sizeof pd);
    int rc = load(paths[0], &pd[0]);
    if (rc == RHEAP_EXIT_OK)
        rc = load(paths[1], &pd[1]);
    sites_t ss;
    memset(&ss, 0, sizeof ss);
    ra_table_t t;
    memset(&t, 0, sizeof t);
    if (rc == RHEAP_EXIT_OK) {
        if (add_side(&ss, &pd[0], 0) != 0 || add_side(&ss, &pd[1], 1) != 0 ||
            match_sites(&ss) != 0) {
            cli__error(stderr, "out of memory");
            rc = RHEAP_EXIT_OUTPUT;
        } else {
            if (ss.n) /* two empty databases: no array at all, and qsort wants one */
                qsort(ss.v, ss.n, sizeof *ss.v, cmp_site);
            if (to_table(&ss, &t) != 0) {
                cli__error(stderr, "out of memory");
                rc = RHEAP_EXIT_OUTPUT;
            } else {
                if (fmt == RHEAP_FMT_COLUMN && !raw && unit == 0)
                    humanize(&t);
                cli__table_print(&t, fmt, wide, stdout);
                for (int k = 0; k < 2; k++)
                    if (ra_model_sample_interval(&pd[k]))
                        cli__note_wrapped(stderr,
                                  "%s was recorded in profile mode: its figures are "
                                  "estimates from allocations sampled about once every %" PRId64
                                  " bytes",
                                paths[k], ra_model_sample_interval(&pd[k]));
                /* leaked counts leaks only: a window's live blocks are not (recording_ends). */
                for (int k = 0; k < 2; k++) {
                    int64_t stopped = 0;
                    for (size_t i = 0; i < pd[k].nprocs; i++)
                        stopped += pd[k].procs[i].stopped_bytes;
                    if (stopped > 0)
                        cli__note_wrapped(stderr,
                                  "%s: %" PRId64 " bytes still live when a window's recording "
                                  "stopped are not leaks, nor in the leaked columns",
                                  paths[k], stopped);
                }
            }
        }
    }
    ra_table_free(&t);
    for (size_t i = 0; i < ss.n; i++) {
        free(ss.v[i].function);
        free(ss.v[i].module);
        free(ss.v[i].file);
        free(ss.v[i].location);
    }
    free(ss.v);
    ra_smap_free(&ss.keys);
    ra_model_free(&pd[0]);
    ra_model_free(&pd[1]);
    return rc;
}
