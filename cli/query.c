/*
 * query.c: `rheap query`: a canned query (queries/NAME.sql, read by the analysis library) run
 * on a database and printed as aligned columns, CSV or JSON; `--list` shows every query with
 * its parameters.
 *
 * `rheap report` and the summary of `rheap run` load the same query files through
 * cli__query_load, so they can never disagree with `rheap query`.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "cli.h"

/* "no query named 'leak' in DIR; did you mean 'leaks'?" */
static void no_such_query(const char *name, const char *dir, FILE *err)
{
    size_t n;
    char **names = ra_query_names(dir, &n);
    const char *near = cli__suggest(name, (const char *const *)names, n);
    if (near)
        cli__error(err, "no query named '%s' in %s; did you mean '%s'?", name, dir, near);
    else
        cli__error(err, "no query named '%s' in %s (rheap query --list shows them)", name, dir);
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

int cli__query_load(const char *name, ra_query_t *q, FILE *err)
{
    char dir[PATH_MAX] = "";
    memset(q, 0, sizeof *q);
    if (ra_query_name_ok(name) && !cli__queries_dir(dir, sizeof dir)) {
        cli__error(err, "cannot find the queries directory; set RHEAP_QUERIES to it");
        return RHEAP_EXIT_INPUT;
    }
    ra_err_t why;
    ra_status_t rc = ra_query_load(dir, name, q, &why);
    if (rc == RA_OK)
        return RHEAP_EXIT_OK;
    /* A valid name whose file is not there is a mistyped one more often than not. */
    if (rc == RA_E_USAGE && ra_query_name_ok(name))
        no_such_query(name, dir, err);
    else
        cli__error(err, "%s", why.msg);
    return (int)rc;
}

/* ---- `rheap query` ---- */

/* Rows printed in columns without --limit or --all. */
#define QUERY_ROWS 50

static void usage_query(FILE *f)
{
    fprintf(f,
            "Usage: rheap query NAME DB [--param KEY=VALUE]... [--csv | --json | --raw]\n"
            "                   [--stacks] [--wide]\n"
            "       rheap query --list\n"
            "\n"
            "Runs the canned query NAME (the file NAME.sql of the queries directory) on the\n"
            "database DB and prints its result as aligned columns with a header. Each file\n"
            "also runs as is in the sqlite3 shell: sqlite3 DB < NAME.sql.\n"
            "\n"
            "Options:\n"
            "  --list                 list the queries, what each answers, their parameters\n"
            "  -p, --param KEY=VALUE  set the query parameter :KEY (repeatable); unset ones\n"
            "                         take the default written in the query's header\n"
            "  --csv                  print CSV (RFC 4180) instead of columns\n"
            "  --json                 print a JSON array of objects\n"
            "  --raw                  exact integers in columns too (default: sizes in KiB,\n"
            "                         MiB, ...; times in us, ms, s; CSV and JSON are exact)\n"
            "  --stacks               print each row's call chain under it, from the\n"
            "                         allocation site outwards (queries with a stack column)\n"
            "  --wide, --full-names   columns: every column, whole names and template\n"
            "                         arguments (default: fit $COLUMNS, the terminal or 80)\n"
            "  --limit N              print the first N rows (columns: 50 by default, and a\n"
            "                         last line says how many more there are; CSV and JSON:\n"
            "                         every row by default, the count of those left out on\n"
            "                         stderr)\n"
            "  --all                  print every row, in columns too\n"
            "  -h, --help             show this help\n"
            "\n"
            "The leaks query also takes (its suppressed blocks are counted on stderr):\n"
            RHEAP_SUPP_HELP
            "\n"
            "The queries directory is $RHEAP_QUERIES when set, else the installed\n"
            "share/rheap/queries, else the source tree's queries/.\n"
            "\n"
            "Parameter values are checked: pid a process of DB, buckets, phases and top\n"
            "whole numbers from 1, by bytes or blocks, marker a marker label of DB, a and b\n"
            "a marker label or a time in ns, ...\n"
            "\n"
            "Exit status: 0 success, 1 usage error (unknown query or parameter, or a value\n"
            "the parameter does not take), 2 the database is missing, not a rheap database of\n"
            "this version, or locked, or the query failed; 4 the output could not be written.\n");
}

static int list_queries(FILE *out, FILE *err)
{
    char dir[PATH_MAX];
    if (!cli__queries_dir(dir, sizeof dir)) {
        cli__error(err, "cannot find the queries directory; set RHEAP_QUERIES to it");
        return RHEAP_EXIT_INPUT;
    }
    size_t n;
    char **names = ra_query_names(dir, &n);
    if (n == 0) {
        cli__error(err, "no queries (*.sql) in %s", dir);
        free(names);
        return RHEAP_EXIT_INPUT;
    }
    size_t w = 0;
    for (size_t i = 0; i < n; i++)
        if (strlen(names[i]) > w)
            w = strlen(names[i]);
    fprintf(out, "Queries in %s:\n\n", dir);
    int status = RHEAP_EXIT_OK;
    for (size_t i = 0; i < n; i++) {
        ra_query_t q;
        if (cli__query_load(names[i], &q, err) != RHEAP_EXIT_OK) {
            status = RHEAP_EXIT_INPUT;
            free(names[i]);
            continue;
        }
        fprintf(out, "  %-*s  %s\n", (int)w, q.name, q.title);
        for (size_t p = 0; p < q.nparams; p++)
            fprintf(out, "  %-*s    --param %s=%s%s%s\n", (int)w, "", q.params[p].name,
                    q.params[p].def, *q.params[p].desc ? "  " : "", q.params[p].desc);
        ra_query_free(&q);
        free(names[i]);
    }
    free(names);
    fprintf(out, "\nRun one: rheap query NAME DB [--param KEY=VALUE]...\n");
    return status;
}

/* The queries that count blocks never freed leave out, or leave empty, the recordings that
 * stopped while their process went on (schema.sql's view recording_ends): says so on stderr
 * and points to growth, which shows what piled up in such a window. */
static void window_note(sqlite3 *db, const char *name, const char *path)
{
    static const char *const counting[] = {"leaks", "lifetimes", "threads", "sizes"};
    int counts = 0;
    for (size_t i = 0; i < sizeof counting / sizeof counting[0]; i++)
        counts |= !strcmp(name, counting[i]);
    if (!counts)
        return;
    ra_table_t t;
    ra_err_t why;
    int ok = ra_fetch(db, "SELECT count(*) AS n FROM recording_ends WHERE NOT until_exit", NULL, 0,
                      &t, &why) == RA_OK;
    const char *n = ok && t.nrows ? ra_table_cell(&t, 0, "n") : NULL;
    if (n && strcmp(n, "0") != 0)
        cli__note_wrapped(stderr,
                  "%s %s stopped while the process went on (a window): blocks still live then "
                  "are not leaks and not counted as such; rheap query growth %s shows what grew",
                  n, strcmp(n, "1") ? "recordings" : "recording", path);
    ra_table_free(&t);
}

/* What `rheap query`'s options asked for. kv's keys point into owned[] (each --param's KEY,
 * without a leading ':'), its values into argv. */
typedef struct {
    cli__supp_opts_t so;
    cli__fmt_t fmt;
    int list, raw, chains, full_names;
    size_t limit; /* rows to print; 0: the format's default (QUERY_ROWS in columns, all else) */
    int all;
    ra_kv_t *kv;
    char **owned;
    size_t nkv;
    const char *const *pos; /* NAME and DB, wherever they were among the options */
    int npos;
} query_opts_t;

static void query_opts_free(query_opts_t *o)
{
    for (size_t i = 0; i < o->nkv; i++)
        free(o->owned[i]);
    free(o->owned);
    free(o->kv);
}

/* Reads the options: -1 when the command goes on, else its exit status (help printed, or the
 * error said). */
static int parse_query(int argc, char **argv, query_opts_t *o)
{
    static const struct option longs[] = {
        {"list", no_argument, NULL, 'l'},
        {"raw", no_argument, NULL, 'R'},
        {"stacks", no_argument, NULL, 'S'},
        {"csv", no_argument, NULL, 'C'},
        {"json", no_argument, NULL, 'J'},
        {"full-names", no_argument, NULL, 'F'},
        {"wide", no_argument, NULL, 'F'},
        {"param", required_argument, NULL, 'p'},
        {"limit", required_argument, NULL, 'L'},
        {"all", no_argument, NULL, 'A'},
        {"help", no_argument, NULL, 'h'},
        RHEAP_SUPP_LONGS,
        {NULL, 0, NULL, 0},
    };
    o->fmt = RHEAP_FMT_COLUMN;
    o->kv = calloc((size_t)argc + 1, sizeof *o->kv);
    o->owned = calloc((size_t)argc + 1, sizeof *o->owned);
    if (!o->kv || !o->owned) {
        cli__error(stderr, "out of memory");
        return RHEAP_EXIT_OUTPUT;
    }
    int c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":p:h", longs, NULL)) != -1) {
        switch (c) {
        case 'h':
            usage_query(stdout);
            return RHEAP_EXIT_OK;
        case 'l': o->list = 1; break;
        case 'R': o->raw = 1; break;
        case 'S': o->chains = 1; break;
        case 'C': o->fmt = RHEAP_FMT_CSV; break;
        case 'J': o->fmt = RHEAP_FMT_JSON; break;
        case 'F': o->full_names = 1; break;
        case 'A': o->all = 1; break;
        case 'L': {
            char *end;
            errno = 0;
            unsigned long long n = strtoull(optarg, &end, 10);
            if (!*optarg || *end || errno || n == 0 || optarg[0] == '-') {
                cli__error(stderr, "--limit: expected a number of rows from 1, got '%s'", optarg);
                return RHEAP_EXIT_USAGE;
            }
            o->limit = (size_t)n;
            break;
        }
        case 'p': {
            const char *eq = strchr(optarg, '=');
            if (!eq || eq == optarg) {
                cli__error(stderr, "--param '%s': expected KEY=VALUE", optarg);
                return RHEAP_EXIT_USAGE;
            }
            char *key = strndup(optarg, (size_t)(eq - optarg));
            if (!key)
                return RHEAP_EXIT_OUTPUT;
            o->owned[o->nkv] = key;
            o->kv[o->nkv].key = key[0] == ':' ? key + 1 : key;
            o->kv[o->nkv].value = eq + 1;
            o->nkv++;
            break;
        }
        default: {
            int sr = cli__supp_option(&o->so, c, optarg);
            if (sr > 0)
                break;
            if (sr == 0)
                cli__option_error(c, argv, longs, "KEY=VALUE", "rheap query --help");
            return RHEAP_EXIT_USAGE;
        }
        }
    }
    if (o->all && o->limit) {
        cli__error(stderr, "--limit and --all: give one of them");
        return RHEAP_EXIT_USAGE;
    }
    o->pos = (const char *const *)argv + optind;
    o->npos = argc - optind;
    if (o->npos > 2) {
        cli__error(stderr, "too many arguments at '%s' (try rheap query --help)", o->pos[2]);
        return RHEAP_EXIT_USAGE;
    }
    return -1;
}

/* Opens the database for query q, with the leaks query's suppressions: it reads stack_stats,
 * which becomes a view with the suppressed stacks' leaks taken out (ra_supp_shadow); the file
 * itself is unchanged. The exit status; on RHEAP_EXIT_OK *db is open and *supp set (NULL for
 * another query). */
static int open_for_query(const query_opts_t *o, const ra_query_t *q, sqlite3 **db,
                          ra_supp_t **supp)
{
    ra_err_t why;
    int status = cli__said(ra_open_read(o->pos[1], db, &why), &why, stderr);
    if (status != RHEAP_EXIT_OK)
        return status;
    int leaks = !strcmp(q->name, "leaks");
    if (!leaks && (o->so.nfiles || o->so.no_defaults)) {
        cli__error(stderr, "--suppress and --no-default-suppressions apply to the leaks query only");
        status = RHEAP_EXIT_USAGE;
    } else if (leaks) {
        status = cli__supp_open(&o->so, *db, supp, stderr);
        if (status == RHEAP_EXIT_OK)
            status = cli__said(ra_supp_shadow(*supp, *db, &why), &why, stderr);
    }
    if (status != RHEAP_EXIT_OK) {
        sqlite3_close(*db);
        *db = NULL;
    }
    return status;
}

/* Prints the result table as the options ask, with what the suppressions took out and the
 * profile-mode note on stderr. */
static void print_result(const query_opts_t *o, sqlite3 *db, const ra_supp_t *supp,
                         const char *name, ra_table_t *t)
{
    if (supp && ra_supp_nids(supp)) {
        const char *pid = NULL;
        for (size_t i = 0; i < o->nkv; i++)
            if (!strcmp(o->kv[i].key, "pid"))
                pid = o->kv[i].value;
        size_t nr = ra_supp_nrules(supp);
        int64_t *bl = calloc(nr, sizeof *bl), *by = calloc(nr, sizeof *by);
        ra_err_t why;
        if (bl && by && ra_supp_totals(supp, db, pid, bl, by, &why) == RA_OK)
            cli__supp_print(supp, bl, by, "rheap: ", "rheap:   ",
                            o->full_names ? 0 : cli__output_width(stderr), stderr);
        free(bl);
        free(by);
    }
    if (o->fmt == RHEAP_FMT_COLUMN && !o->raw)
        cli__table_humanize(t);
    /* Columns end with the count of the rows not shown, and how to see them; CSV and JSON
     * stay what a program reads, the count said on stderr. */
    size_t more = t->more;
    t->more = 0;
    if (o->fmt == RHEAP_FMT_COLUMN && o->chains && t->ncols)
        cli__table_print_chains(db, t, t->nrows, "", o->full_names, stdout);
    else
        cli__table_print(t, o->fmt, o->full_names, stdout);
    if (more && o->fmt == RHEAP_FMT_COLUMN)
        printf("... %zu more rows (--limit N shows N, --all every one)\n", more);
    else if (more)
        cli__note(stderr, "%zu more rows left out by --limit", more);
    long long interval = ra_sample_interval(db, NULL);
    if (interval)
        cli__note_wrapped(stderr,
                  "profile mode: blocks and bytes are estimates from allocations "
                  "sampled about once every %lld bytes",
                  interval);
    window_note(db, name, o->pos[1]);
}

int cli__cmd_query(int argc, char **argv)
{
    query_opts_t o = {0};
    int status = parse_query(argc, argv, &o);
    if (status >= 0) {
        query_opts_free(&o);
        return status;
    }
    if (o.list) {
        status = list_queries(stdout, stderr);
    } else if (o.npos < 2) {
        cli__error(stderr, "%s (try rheap query --help, or rheap query --list)",
                   o.npos == 0 ? "no query name given" : "no database given");
        status = RHEAP_EXIT_USAGE;
    } else {
        ra_query_t q;
        status = cli__query_load(o.pos[0], &q, stderr);
        if (status == RHEAP_EXIT_OK) {
            sqlite3 *db = NULL;
            ra_supp_t *supp = NULL;
            ra_table_t t;
            ra_err_t why;
            status = open_for_query(&o, &q, &db, &supp);
            /* A terminal shows a screen of rows (a process tree's per-site answers have
             * hundreds of thousands); CSV and JSON are read by programs, which want the whole
             * answer unless they ask for less. */
            size_t rows = o.all ? SIZE_MAX
                          : o.limit ? o.limit
                          : o.fmt == RHEAP_FMT_COLUMN ? QUERY_ROWS : SIZE_MAX;
            if (status == RHEAP_EXIT_OK)
                status = cli__said(cli__query_rows(db, &q, o.kv, o.nkv, rows, &t, &why), &why,
                                   stderr);
            if (status == RHEAP_EXIT_OK) {
                print_result(&o, db, supp, q.name, &t);
                ra_table_free(&t);
            }
            sqlite3_close(db);
            ra_supp_destroy(supp);
            ra_query_free(&q);
        }
    }
    query_opts_free(&o);
    return status;
}
