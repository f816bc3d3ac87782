/*
 * main.c: the `rheap` command line. It only parses arguments and dispatches; the work lives
 * behind functions in the other files (convert.c, dump.c, run.c, query.c, report.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <rip.h>

#include "dump.h"
#include "cli.h"
#include "profile.h"

static const char exit_help[] =
    "Exit status:\n"
    "  0  success\n"
    "  1  usage error (bad arguments, or the output exists and --force was not given)\n"
    "  2  bad input (missing path, not a recording, wrong version, corrupted data); nothing written\n"
    "  3  converted, with warnings (e.g. a truncated thread file: its complete part was converted)\n"
    "  4  the database could not be written (disk full, permissions, out of memory)\n";

static void usage_main(FILE *f)
{
    fprintf(f,
            "Usage: rheap COMMAND [ARGS]\n"
            "       rheap RIP... OUT.db          (short for: rheap convert RIP... -o OUT.db)\n"
            "\n"
            "Commands:\n"
            "  run       record a program and every process it starts, into one database\n"
            "  report    a summary of a database: totals, peak, top leaks and sites\n"
            "  query     run a canned query (query --list shows them) on a database\n"
            "  stack     print one call stack of a database, innermost frame first\n"
            "  export    stacks as folded text (flamegraphs) or a pprof profile\n"
            "  diff      compare two databases (two runs) site by site\n"
            "  convert   convert recordings (rip-<pid> directories) into an SQLite database\n"
            "  dump      print the records of a recording or a .rip file as text\n"
            "  resymbolize  symbolize a database again (after installing debug information)\n"
            "\n"
            "Start with: rheap run -o out.db -- ./prog args...   then: rheap report out.db\n"
            "\n"
            "Options:\n"
            "  -h, --help     show this help (COMMAND --help: help on a command)\n"
            "  --version      show the version\n"
            "\n%s"
            "run exits with the program's status; query and report with 0, 1 (usage) or 2\n"
            "(missing or bad database). See rheap COMMAND --help.\n",
            exit_help);
}

static void usage_convert(FILE *f)
{
    fprintf(f,
            "Usage: rheap convert [OPTIONS] RIP... -o OUT.db\n"
            "       rheap [OPTIONS] RIP... OUT.db\n"
            "\n"
            "Converts one or more recordings (rip-<pid>[-N] directories written by librheap;\n"
            "several for a process tree) into one SQLite database, symbolizing the stacks\n"
            "offline from the recorded module maps. The database is built under a temporary\n"
            "name beside OUT.db and renamed only when the conversion succeeded.\n"
            "\n"
            "Options:\n"
            "  -o, --output FILE   the database to write\n"
            "  -f, --force         replace FILE if it exists\n"
            "  --progress          always show a progress bar on stderr\n"
            "  --no-progress       never show it (default: when stderr is a terminal)\n"
            "  -q, --quiet         no summary line\n"
            "  -h, --help          show this help\n"
            "\n%s",
            exit_help);
}

static void usage_dump(FILE *f)
{
    fprintf(f,
            "Usage: rheap dump RIPDIR|FILE\n"
            "\n"
            "Prints every record of a recording directory or of one .rip file as text, one\n"
            "record a line, with file offsets. Exit status 0 on success, 2 on bad input.\n");
}

/* Parses convert options; `short_form`: the last positional argument is the output. */
static int cmd_convert(int argc, char **argv, int short_form)
{
    rheap__convert_opts_t o = {0};
    o.progress = -1;
    const char **inputs = calloc((size_t)argc + 1, sizeof *inputs);
    if (!inputs) {
        fprintf(stderr, "rheap: error: out of memory\n");
        return RHEAP_EXIT_OUTPUT;
    }
    size_t n = 0;
    int only_paths = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (only_paths || a[0] != '-' || a[1] == 0) {
            inputs[n++] = a;
        } else if (!strcmp(a, "--")) {
            only_paths = 1;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage_convert(stdout);
            free(inputs);
            return RHEAP_EXIT_OK;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "rheap convert: %s needs a file name\n", a);
                free(inputs);
                return RHEAP_EXIT_USAGE;
            }
            o.output = argv[++i];
        } else if (!strncmp(a, "--output=", 9)) {
            o.output = a + 9;
        } else if (!strcmp(a, "-f") || !strcmp(a, "--force")) {
            o.force = 1;
        } else if (!strcmp(a, "--progress")) {
            o.progress = 1;
        } else if (!strcmp(a, "--no-progress")) {
            o.progress = 0;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            o.quiet = 1;
        } else {
            fprintf(stderr, "rheap convert: unknown option %s (try rheap convert --help)\n", a);
            free(inputs);
            return RHEAP_EXIT_USAGE;
        }
    }
    if (short_form && !o.output && n >= 2)
        o.output = inputs[--n];
    if (!o.output || n == 0) {
        fprintf(stderr, "rheap convert: %s (try rheap convert --help)\n",
                n == 0 ? "no recording given" : "no output given (-o OUT.db)");
        free(inputs);
        return RHEAP_EXIT_USAGE;
    }
    o.inputs = inputs;
    o.ninputs = n;
    int rc = rheap__convert(&o, stderr);
    free(inputs);
    return rc;
}

static int cmd_dump(int argc, char **argv)
{
    if (argc >= 1 && (!strcmp(argv[0], "-h") || !strcmp(argv[0], "--help"))) {
        usage_dump(stdout);
        return RHEAP_EXIT_OK;
    }
    if (argc != 1) {
        usage_dump(stderr);
        return RHEAP_EXIT_USAGE;
    }
    return rheap_dump(argv[0], stdout, stderr);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage_main(stderr);
        return RHEAP_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
        usage_main(stdout);
        return RHEAP_EXIT_OK;
    }
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
        printf("rheap %s (rip format %d.%d, schema %d)\n", RHEAP_VERSION_STRING, RIP_FORMAT_MAJOR, RIP_FORMAT_MINOR,
               RHEAP_SCHEMA_VERSION);
        return RHEAP_EXIT_OK;
    }
    if (!strcmp(cmd, "convert"))
        return cmd_convert(argc - 2, argv + 2, 0);
    if (!strcmp(cmd, "dump"))
        return cmd_dump(argc - 2, argv + 2);
    if (!strcmp(cmd, "run"))
        return rheap__cmd_run(argc - 2, argv + 2);
    if (!strcmp(cmd, "query"))
        return rheap__cmd_query(argc - 2, argv + 2);
    if (!strcmp(cmd, "export"))
        return rheap__cmd_export(argc - 2, argv + 2);
    if (!strcmp(cmd, "diff"))
        return rheap__cmd_diff(argc - 2, argv + 2);
    if (!strcmp(cmd, "report"))
        return rheap__cmd_report(argc - 2, argv + 2);
    if (!strcmp(cmd, "stack"))
        return rheap__cmd_stack(argc - 2, argv + 2);
    if (!strcmp(cmd, "resymbolize"))
        return rheap__cmd_resymbolize(argc - 2, argv + 2);
    if (cmd[0] == '-' && strcmp(cmd, "-f") && strcmp(cmd, "--force") && strcmp(cmd, "-q") &&
        strcmp(cmd, "--quiet") && strcmp(cmd, "--progress") && strcmp(cmd, "--no-progress") &&
        strcmp(cmd, "-o") && strncmp(cmd, "--output", 8)) {
        fprintf(stderr, "rheap: unknown option %s (try rheap --help)\n", cmd);
        return RHEAP_EXIT_USAGE;
    }
    /* Anything else is the short form, rheap RIP... OUT.db, whose first word is a path: a
     * word that names nothing on disk is more likely a mistyped command. */
    struct stat sb;
    if (cmd[0] != '-' && stat(cmd, &sb) != 0) {
        fprintf(stderr, "rheap: '%s' is neither a command nor a recording directory (try rheap --help)\n",
                cmd);
        return RHEAP_EXIT_USAGE;
    }
    return cmd_convert(argc - 1, argv + 1, 1);
}
