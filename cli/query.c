/*
 * query.c: `rheap query`: a canned query (queries/NAME.sql, read by the analysis library) run
 * on a database and printed as aligned columns, CSV or JSON; `--list` shows every query with
 * its parameters.
 *
 * `rheap report` and the summary of `rheap run` load the same query files through
 * cli__query_load, so they can never disagree with `rheap query`.
 */
#include <getopt.h>
#include <limits.h>
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
            "  --list                 list the queries, what each answers, and their parameters\n"
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
    ra_table_t t;
    ra_err_t why;
    if (!counts)
        return;
    int ok = ra_fetch(db, "SELECT count(*) AS n FROM recording_ends WHERE NOT until_exit", NULL, 0,
                      &t, &why) == RA_OK;
    const char *n = ok && t.nrows ? ra_table_cell(&t, 0, "n") : NULL;
    if (n && strcmp(n, "0") != 0)
        fprintf(stderr,
                "rheap: %s %s stopped while the process went on (a window): blocks still live "
                "then are not leaks and not counted as such; rheap query growth %s shows what "
                "grew\n",
                n, strcmp(n, "1") ? "recordings" : "recording", path);
    ra_table_free(&t);
}

int cli__cmd_query(int argc, char **argv)
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
        {"help", no_argument, NULL, 'h'},
        RHEAP_SUPP_LONGS,
        {NULL, 0, NULL, 0},
    };
    cli__supp_opts_t so = {0};
    cli__fmt_t fmt = RHEAP_FMT_COLUMN;
    int list = 0, raw = 0, chains = 0, full_names = 0;
    ra_kv_t *kv = calloc((size_t)argc + 1, sizeof *kv);
    char **owned = calloc((size_t)argc + 1, sizeof *owned);
    size_t nkv = 0;
    int status = RHEAP_EXIT_USAGE;
    if (!kv || !owned) {
        cli__error(stderr, "out of memory");
        free(kv);
        free(owned);
        return RHEAP_EXIT_OUTPUT;
    }
    int c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":p:h", longs, NULL)) != -1) {
        switch (c) {
        case 'h':
            usage_query(stdout);
            status = RHEAP_EXIT_OK;
            goto done;
        case 'l': list = 1; break;
        case 'R': raw = 1; break;
        case 'S': chains = 1; break;
        case 'C': fmt = RHEAP_FMT_CSV; break;
        case 'J': fmt = RHEAP_FMT_JSON; break;
        case 'F': full_names = 1; break;
        case 'p': {
            const char *eq = strchr(optarg, '=');
            if (!eq || eq == optarg) {
                cli__error(stderr, "--param '%s': expected KEY=VALUE", optarg);
                goto done;
            }
            owned[nkv] = strndup(optarg, (size_t)(eq - optarg));
            if (!owned[nkv]) {
                status = RHEAP_EXIT_OUTPUT;
                goto done;
            }
            kv[nkv].key = owned[nkv][0] == ':' ? owned[nkv] + 1 : owned[nkv];
            kv[nkv].value = eq + 1;
            nkv++;
            break;
        }
        default: {
            int sr = cli__supp_option(&so, c, optarg);
            if (sr > 0)
                break;
            if (sr < 0)
                goto done;
            cli__option_error(c, argv, longs, "KEY=VALUE", "rheap query --help");
            goto done;
        }
        }
    }
    /* NAME and DB, wherever they were among the options. */
    const char *const *pos = (const char *const *)argv + optind;
    int npos = argc - optind;
    if (npos > 2) {
        cli__error(stderr, "too many arguments at '%s' (try rheap query --help)", pos[2]);
        goto done;
    }
    if (list) {
        status = list_queries(stdout, stderr);
        goto done;
    }
    if (npos < 2) {
        cli__error(stderr, "%s (try rheap query --help, or rheap query --list)",
                     npos == 0 ? "no query name given" : "no database given");
        goto done;
    }
    ra_query_t q;
    status = cli__query_load(pos[0], &q, stderr);
    if (status != RHEAP_EXIT_OK)
        goto done;
    sqlite3 *db;
    ra_err_t why;
    status = cli__said(ra_open_read(pos[1], &db, &why), &why, stderr);
    /* Suppressions belong to the leaks query: it reads stack_stats, which becomes a view with
     * the suppressed stacks' leaks taken out (ra_supp_shadow); the file itself is unchanged. */
    int leaks = !strcmp(q.name, "leaks");
    ra_supp_t *supp = NULL;
    if (status == RHEAP_EXIT_OK && !leaks && (so.nfiles || so.no_defaults)) {
        cli__error(stderr, "--suppress and --no-default-suppressions apply to the leaks query only");
        status = RHEAP_EXIT_USAGE;
        sqlite3_close(db);
    } else if (status == RHEAP_EXIT_OK && leaks) {
        status = cli__supp_open(&so, db, &supp, stderr);
        if (status == RHEAP_EXIT_OK)
            status = cli__said(ra_supp_shadow(supp, db, &why), &why, stderr);
        if (status != RHEAP_EXIT_OK)
            sqlite3_close(db);
    }
    if (status == RHEAP_EXIT_OK) {
        ra_table_t t;
        status = cli__said(ra_query_run(db, &q, kv, nkv, &t, &why), &why, stderr);
        if (status == RHEAP_EXIT_OK && supp && ra_supp_nids(supp)) {
            const char *pid = NULL;
            for (size_t i = 0; i < nkv; i++)
                if (!strcmp(kv[i].key, "pid"))
                    pid = kv[i].value;
            size_t nr = ra_supp_nrules(supp);
            int64_t *bl = calloc(nr, sizeof *bl), *by = calloc(nr, sizeof *by);
            if (bl && by && ra_supp_totals(supp, db, pid, bl, by, &why) == RA_OK)
                cli__supp_print(supp, bl, by, "rheap: ", stderr);
            free(bl);
            free(by);
        }
        if (status == RHEAP_EXIT_OK) {
            if (fmt == RHEAP_FMT_COLUMN && !raw)
                cli__table_humanize(&t);
            if (fmt == RHEAP_FMT_COLUMN && chains && t.ncols)
                cli__table_print_chains(db, &t, t.nrows, "", full_names, stdout);
            else
                cli__table_print(&t, fmt, full_names, stdout);
            ra_table_free(&t);
            long long interval = ra_sample_interval(db, NULL);
            if (interval)
                fprintf(stderr,
                        "rheap: profile mode: blocks and bytes are estimates from allocations "
                        "sampled about once every %lld bytes\n",
                        interval);
            window_note(db, q.name, pos[1]);
        }
        sqlite3_close(db);
    }
    ra_supp_destroy(supp);
    ra_query_free(&q);
done:
    for (size_t i = 0; i < nkv; i++)
        free(owned[i]);
    free(owned);
    free(kv);
    return status;
}
