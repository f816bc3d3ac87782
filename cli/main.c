/*
 * main.c: the `rheap` command line. It only parses arguments and dispatches; the work lives
 * behind functions in the other files (convert.c, dump.c, run.c, query.c, report.c). Options
 * are parsed with getopt_long, so `-oFILE`, `--output=FILE`, `-qf` and options after the paths
 * all work, and `--` ends the options.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <rip.h>

#include "dump.h"
#include "cli.h"

static void usage_main(FILE *f)
{
    fprintf(f,
            "Usage: rheap COMMAND [ARGS]\n"
            "       rheap RIP... OUT.db          (short for: rheap convert RIP... -o OUT.db)\n"
            "\n"
            "Commands:\n"
            "  run       record a program and every process it starts, into one database\n"
            "  attach    record a running process for a while (attach --duration 10 PID)\n"
            "  report    a summary of a database: totals, peak, top leaks and sites\n"
            "  query     run a canned query (query --list shows them) on a database\n"
            "  stack     print one call stack of a database, innermost frame first\n"
            "  export    stacks as folded text (flamegraphs) or a pprof profile\n"
            "  diff      compare two databases (two runs) site by site\n"
            "  convert   convert recordings (rip-<pid> directories) into an SQLite database\n"
            "  dump      print the records of a recording or a .rip file as text\n"
            "  resymbolize  symbolize a database again (after installing debug information)\n"
            "  serve     follow the recordings under directories and serve live heap profiles\n"
            "            and metrics over HTTP (go tool pprof, Pyroscope, Parca, Prometheus)\n"
            "  snapshot  the live heap of a recording process now, as a profile or database\n"
            "\n"
            "Start with: rheap run -o out.db -- ./prog args...   then: rheap report out.db\n"
            "\n"
            "Options:\n"
            "  -h, --help     show this help (COMMAND --help: help on a command)\n"
            "  --version      show the version\n"
            "\n");
    cli__exit_help(f);
    fprintf(f, "run exits with the program's status, or convert's when the program succeeded\n"
               "but its recording could not be converted; query and report with 0, 1 (usage),\n"
               "2 (missing or bad database) or 4 (standard output could not be written). See\n"
               "rheap COMMAND --help.\n");
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
            CLI_MEMORY_HELP
            "  -h, --help          show this help\n"
            "\n");
    cli__exit_help(f);
}

static void usage_dump(FILE *f)
{
    fprintf(f,
            "Usage: rheap dump RIPDIR|FILE\n"
            "\n"
            "Prints every record of a recording directory or of one .rip file as text, one\n"
            "record a line, with file offsets. Exit status 0 on success, 2 on bad input.\n");
}

/* Parses convert's options. argv[0] is the command's name (only for getopt); `short_form`:
 * the last positional argument is the output. */
static int cmd_convert(int argc, char **argv, int short_form)
{
    static const struct option longs[] = {
        {"output", required_argument, NULL, 'o'},
        {"force", no_argument, NULL, 'f'},
        {"quiet", no_argument, NULL, 'q'},
        {"progress", no_argument, NULL, 'P'},
        {"no-progress", no_argument, NULL, 'N'},
        {"memory", required_argument, NULL, 'M'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *help = short_form ? "rheap --help" : "rheap convert --help";
    uint64_t memory = 0;
    const char *output = NULL;
    int force = 0, quiet = 0, progress = -1;
    int c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:fqh", longs, NULL)) != -1) {
        switch (c) {
        case 'o': output = optarg; break;
        case 'f': force = 1; break;
        case 'q': quiet = 1; break;
        case 'P': progress = 1; break;
        case 'N': progress = 0; break;
        case 'M':
            if (cli__memory_option("convert", optarg, &memory) != 0)
                return RHEAP_EXIT_USAGE;
            break;
        case 'h': usage_convert(stdout); return RHEAP_EXIT_OK;
        default: return cli__option_error(c, argv, longs, "a file name", help);
        }
    }
    /* getopt_long moved the paths, in their order, behind the options. */
    const char *const *inputs = (const char *const *)argv + optind;
    size_t n = (size_t)(argc - optind);
    if (short_form && !output && n >= 2)
        output = inputs[--n];
    if (!output || n == 0) {
        cli__error(stderr, "%s (try %s)",
                     n == 0 ? "no recording given" : "no output given (-o OUT.db)", help);
        return RHEAP_EXIT_USAGE;
    }
    return cli__convert_cmd(inputs, n, NULL, output, force, progress, quiet, 0, memory);
}

static int cmd_dump(int argc, char **argv)
{
    int rc = cli__help_only(argc, argv, usage_dump, "rheap dump --help");
    if (rc >= 0)
        return rc;
    if (argc - optind != 1) {
        usage_dump(stderr);
        return RHEAP_EXIT_USAGE;
    }
    return cli__dump(argv[optind], stdout, stderr);
}

static int dispatch(int argc, char **argv)
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
        printf("rheap %s (rip format %d.%d, schema %d)\n", RHEAP_VERSION_STRING, RIP_FORMAT_MAJOR,
               RIP_FORMAT_MINOR, rheap_convert_schema_version());
        return RHEAP_EXIT_OK;
    }
    /* Each command gets its own name as argv[0], the way getopt expects it. */
    if (!strcmp(cmd, "convert"))
        return cmd_convert(argc - 1, argv + 1, 0);
    if (!strcmp(cmd, "dump"))
        return cmd_dump(argc - 1, argv + 1);
    if (!strcmp(cmd, "run"))
        return cli__cmd_run(argc - 2, argv + 2);
    if (!strcmp(cmd, "attach"))
        return cli__cmd_attach(argc - 2, argv + 2);
    if (!strcmp(cmd, "query"))
        return cli__cmd_query(argc - 1, argv + 1);
    if (!strcmp(cmd, "export"))
        return cli__cmd_export(argc - 1, argv + 1);
    if (!strcmp(cmd, "diff"))
        return cli__cmd_diff(argc - 1, argv + 1);
    if (!strcmp(cmd, "report"))
        return cli__cmd_report(argc - 1, argv + 1);
    if (!strcmp(cmd, "stack"))
        return cli__cmd_stack(argc - 1, argv + 1);
    if (!strcmp(cmd, "resymbolize"))
        return cli__cmd_resymbolize(argc - 1, argv + 1);
    if (!strcmp(cmd, "serve"))
        return cli__cmd_serve(argc - 1, argv + 1);
    if (!strcmp(cmd, "snapshot"))
        return cli__cmd_snapshot(argc - 1, argv + 1);
    /* Anything else is the short form, rheap RIP... OUT.db, whose first word is an option or a
     * path: a word that names nothing on disk is more likely a mistyped command. */
    struct stat sb;
    if (cmd[0] != '-' && stat(cmd, &sb) != 0) {
        static const char *const commands[] = {"run",         "attach", "report", "query",   "stack",
                                               "export",      "diff",   "convert", "dump",
                                               "resymbolize", "serve",  "snapshot", "help", "version"};
        const char *near = cli__suggest(cmd, commands, sizeof commands / sizeof *commands);
        if (near)
            cli__error(stderr, "unknown command '%s'; did you mean '%s'?", cmd, near);
        else
            cli__error(stderr,
                         "'%s' is neither a command nor a recording directory (try rheap --help)",
                         cmd);
        return RHEAP_EXIT_USAGE;
    }
    return cmd_convert(argc, argv, 1);
}

/* Whatever a command printed must have reached standard output: a full disk or a closed pipe
 * is found here, once for every command, by flushing what is buffered and by the error flag an
 * earlier write left. A command that succeeded then exits RHEAP_EXIT_OUTPUT. */
static int finish_stdout(int status)
{
    errno = 0;
    int bad = fflush(stdout) != 0;
    int e = errno;
    if (ferror(stdout) || bad) {
        /* glibc keeps what a failed write could not write, so the flush fails again with the
         * same errno; "write error" only when the flush found nothing left to write. */
        cli__error(stderr, "writing standard output: %s", bad && e ? strerror(e) : "write error");
        return status == RHEAP_EXIT_OK ? RHEAP_EXIT_OUTPUT : status;
    }
    return status;
}

int main(int argc, char **argv)
{
    return finish_stdout(dispatch(argc, argv));
}
