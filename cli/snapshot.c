/*
 * snapshot.c: `rheap snapshot PID|--all [-o FILE.pb.gz|FILE.db] [DIR...]`: the live heap of
 * recorded running processes now, once: what `rheap serve` answers at /debug/pprof/heap, from
 * the command line.
 *
 * A profile is made as the collector makes it (heap.c reads what the recordings hold at this
 * moment). A database is a conversion of the process's recordings as far as they are written:
 * the converter's live inputs, told at once that nothing grows any more, read each file as it
 * is now.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static void usage_snapshot(FILE *f)
{
    fprintf(f,
            "Usage: rheap snapshot [OPTIONS] PID|--all [DIR...]\n"
            "\n"
            "The live heap now of a process recording under DIR (its rip-<pid>[-N]\n"
            "directories; default $RHEAP_DIR, else the current directory), or of every\n"
            "process recording there with --all, read from the recordings as they are being\n"
            "written: the process goes on undisturbed. A profile (FILE.pb.gz, or standard\n"
            "output when it is not a terminal) is a gzipped profile.proto for go tool pprof:\n"
            "alloc_objects, alloc_space (since recording began), inuse_objects, inuse_space\n"
            "(live now), per stack and process, labelled pid, exe and host; exact in trace\n"
            "mode, estimates in profile mode. FILE.db is the recordings converted as far as\n"
            "they are written (one process only).\n"
            "\n"
            "Options:\n"
            "  -o, --output FILE   FILE.pb.gz (any name but *.db) or FILE.db\n"
            "  -f, --force         replace FILE if it exists\n"
            "  --all               every process recording under DIR\n"
            "  -h, --help          show this help\n"
            "\n"
            "Exit status: 0 written, 1 usage, 2 no such recording, 4 the output could not be\n"
            "written.\n");
}

static int ends_with(const char *s, const char *tail)
{
    size_t a = strlen(s), b = strlen(tail);
    return a >= b && !strcmp(s + a - b, tail);
}

/* The converter's live inputs for the database: the recordings of one pid, each read as it is
 * now. */
typedef struct {
    char **dirs;
    size_t n, next;
} inputs_t;

static const char *next_input(void *user)
{
    inputs_t *in = user;
    return in->next < in->n ? in->dirs[in->next++] : NULL;
}

static int not_growing(void *user, const char *dir, int wait)
{
    (void)user, (void)dir, (void)wait;
    return 0;
}

int cli__convert_pid(const rc_host_t *h, uint32_t pid, const char *output, int force)
{
    inputs_t in = {0};
    size_t cap = 0;
    for (size_t i = 0; i < rc_host_count(h); i++) {
        rc_info_t info;
        rc_host_info(h, i, &info);
        if (info.pid != pid)
            continue;
        if (rheap_grow(&in.dirs, &cap, in.n, sizeof *in.dirs, 4) != 0 ||
            !(in.dirs[in.n] = strdup(info.dir))) {
            cli__error(stderr, "out of memory");
            return RHEAP_EXIT_INPUT;
        }
        in.n++;
    }
    rheap_convert_opts_t live = RHEAP_CONVERT_OPTS_INIT;
    live.next_input = next_input;
    live.growing = not_growing;
    live.live_user = &in;
    int rc = cli__convert_cmd(NULL, 0, &live, output, force, 0, 1, 0, 0);
    for (size_t i = 0; i < in.n; i++)
        free(in.dirs[i]);
    free(in.dirs);
    return rc;
}

int cli__cmd_snapshot(int argc, char **argv)
{
    static const struct option longs[] = {
        {"output", required_argument, NULL, 'o'},
        {"force", no_argument, NULL, 'f'},
        {"all", no_argument, NULL, 'a'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *output = NULL;
    int force = 0, all = 0, c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:fh", longs, NULL)) != -1) {
        switch (c) {
        case 'o': output = optarg; break;
        case 'f': force = 1; break;
        case 'a': all = 1; break;
        case 'h': usage_snapshot(stdout); return RHEAP_EXIT_OK;
        default:
            return cli__option_error(c, argv, longs, "a file name", "rheap snapshot --help");
        }
    }
    char **rest = argv + optind;
    int nrest = argc - optind;
    uint32_t pid = 0;
    if (!all) {
        char *end;
        errno = 0;
        unsigned long v = nrest > 0 ? strtoul(rest[0], &end, 10) : 0;
        if (nrest == 0 || errno || *end || end == rest[0] || v == 0 || v > UINT32_MAX) {
            cli__error(stderr, "%s (try rheap snapshot --help)",
                       nrest == 0 ? "give a PID or --all" : "expected a PID or --all");
            return RHEAP_EXIT_USAGE;
        }
        pid = (uint32_t)v;
        rest++, nrest--;
    }
    int want_db = output && ends_with(output, ".db");
    if (want_db && all) {
        cli__error(stderr, "a database holds one process: give a PID with -o FILE.db");
        return RHEAP_EXIT_USAGE;
    }
    if (!output && isatty(STDOUT_FILENO)) {
        cli__error(stderr, "standard output is a terminal: give -o FILE.pb.gz");
        return RHEAP_EXIT_USAGE;
    }
    if (output && !force && !access(output, F_OK)) {
        cli__error(stderr, "%s exists; use --force to replace it", output);
        return RHEAP_EXIT_USAGE;
    }
    const char *env = getenv("RHEAP_DIR");
    const char *dflt[1] = {env && *env ? env : "."};
    const char *const *dirs = nrest ? (const char *const *)rest : dflt;
    rc_host_t *h = rc_host_create(dirs, nrest ? (size_t)nrest : 1, &cli__collect_log);
    if (!h || rc_host_scan(h, 1e9, NULL) != RC_OK) {
        rc_host_destroy(h);
        cli__error(stderr, "out of memory");
        return RHEAP_EXIT_INPUT;
    }
    size_t n = rc_host_count(h);
    size_t *idx = calloc(n ? n : 1, sizeof *idx);
    if (!idx) {
        rc_host_destroy(h);
        cli__error(stderr, "out of memory");
        return RHEAP_EXIT_INPUT;
    }
    size_t m = rc_host_pick(h, all ? -1 : (long)pid, idx);
    int rc = RHEAP_EXIT_OK;
    if (m == 0) {
        if (all)
            cli__error(stderr, "no running process is recording under %s%s", dirs[0],
                       nrest > 1 ? " and the other directories" : "");
        else
            cli__error(stderr,
                       "no recording of process %u under %s%s (a process that has ended: "
                       "rheap convert its recordings)",
                       pid, dirs[0], nrest > 1 ? " and the other directories" : "");
        rc = RHEAP_EXIT_INPUT;
    } else if (want_db) {
        rc = cli__convert_pid(h, pid, output, force);
    } else {
        char tmp[4096];
        FILE *out = stdout;
        if (output) {
            snprintf(tmp, sizeof tmp, "%s.tmp-%ld", output, (long)getpid());
            out = fopen(tmp, "wb");
            if (!out) {
                cli__error(stderr, "%s: %s", output, strerror(errno));
                free(idx);
                rc_host_destroy(h);
                return RHEAP_EXIT_OUTPUT;
            }
        }
        rc_err_t err;
        int w = rc_profile_write(h, idx, m, 0, out, &err) == RC_OK ? 0 : -1;
        if (output) {
            if (fclose(out) != 0 && w == 0) {
                w = -1;
                snprintf(err.msg, sizeof err.msg, "%s", strerror(errno));
            }
            if (w == 0 && rename(tmp, output) != 0) {
                w = -1;
                snprintf(err.msg, sizeof err.msg, "%s", strerror(errno));
            }
            if (w != 0)
                unlink(tmp);
        }
        if (w != 0) {
            cli__error(stderr, "%s: %s", output ? output : "standard output", err.msg);
            rc = RHEAP_EXIT_OUTPUT;
        }
    }
    free(idx);
    rc_host_destroy(h);
    return rc;
}
