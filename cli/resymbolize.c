/*
 * resymbolize.c: `rheap resymbolize DB`: symbolizing a finished database again, after debug
 * information was installed. The work is the converter library's (rheap_resymbolize); here
 * are the options, the opening of the database and the lines the user sees.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "cli.h"

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: rheap resymbolize [OPTIONS] DB\n"
            "\n"
            "Symbolizes every frame of DB again from the module paths, build-ids and offsets\n"
            "it stores: after installing debug information (a -dbgsym package, a file under\n"
            "--debug-dir) or rebuilding a module with -g, its frames get names and file:line.\n"
            "A module whose file is gone or whose build-id differs from the recorded one\n"
            "keeps its frames as they were, with a warning. DB is updated in one transaction.\n"
            "\n"
            "Options:\n"
            "  --debug-dir DIR   also look for debug files under DIR (build-id tree\n"
            "                    DIR/.build-id/xx/yyyy.debug, or DIR/<module's path>); the\n"
            "                    same as RHEAP_DEBUG_DIR, which it replaces\n"
            "  -q, --quiet       no summary line\n"
            "  -h, --help        show this help\n"
            "\n"
            "Exit status: 0 done, 1 usage, 2 not a rheap database, 3 done with warnings,\n"
            "4 the database could not be written.\n");
}

/* The converter's diagnostics: a module file gone or rebuilt, or what stopped it. */
static void print_diag(void *user, const rheap_convert_diag_t *d)
{
    (void)user;
    if (d->level == RHEAP_CONVERT_WARNING)
        cli__warning(stderr, "%s", d->message);
    else
        cli__error(stderr, "%s", d->message);
}

/* argv[0] is the command's name (only for getopt). */
int cli__cmd_resymbolize(int argc, char **argv)
{
    static const struct option longs[] = {
        {"debug-dir", required_argument, NULL, 'D'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int quiet = 0;
    int c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":qh", longs, NULL)) != -1) {
        switch (c) {
        case 'h': usage(stdout); return RHEAP_EXIT_OK;
        case 'q': quiet = 1; break;
        case 'D':
            /* The symbolizer reads its search path from the environment (debuginfo.c). */
            setenv("RHEAP_DEBUG_DIR", optarg, 1);
            break;
        default:
            return cli__option_error(c, argv, longs, "a directory", "rheap resymbolize --help");
        }
    }
    /* DB, wherever it was among the options. */
    if (argc - optind > 1) {
        cli__error(stderr, "one database at a time (try rheap resymbolize --help)");
        return RHEAP_EXIT_USAGE;
    }
    if (argc - optind < 1) {
        usage(stderr);
        return RHEAP_EXIT_USAGE;
    }
    const char *path = argv[optind];

    /* ra_open_write checks that the file is a rheap database without creating one. */
    sqlite3 *db;
    ra_err_t open_err;
    int rc = cli__said(ra_open_write(path, &db, &open_err), &open_err, stderr);
    if (rc != RHEAP_EXIT_OK)
        return rc;

    rheap_resymbolize_result_t r;
    rheap_convert_status_t st = rheap_resymbolize(db, path, print_diag, NULL, &r);
    sqlite3_close(db);
    if (st != RHEAP_CONVERT_OK && st != RHEAP_CONVERT_WARNINGS)
        return RHEAP_EXIT_OUTPUT;
    if (!quiet)
        printf("rheap: resymbolized %s: %llu frames with a source file, %llu before\n", path,
               (unsigned long long)r.frames_after, (unsigned long long)r.frames_before);
    return st == RHEAP_CONVERT_WARNINGS ? RHEAP_EXIT_WARNINGS : RHEAP_EXIT_OK;
}
