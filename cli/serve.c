/*
 * serve.c: `rheap serve [--listen ADDR:PORT] DIR...`: a collector for one host, the collector
 * library's server (../collector/, rheap_collect.h) behind the command's options. It follows
 * every recording that appears under the directories and answers over HTTP what continuous
 * profilers and people ask (/debug/pprof/heap and allocs, /metrics, the index page, /report).
 * This file parses the options, prints the library's notes and warnings as the command's lines,
 * and makes the reports the server asks for (a conversion as `rheap snapshot -o DB` makes one,
 * then `rheap report --html`).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"


static volatile sig_atomic_t stop;

static void on_stop(int sig)
{
    (void)sig;
    stop = 1;
}

static void log_line(void *user, rc_level_t level, const char *msg)
{
    (void)user;
    if (level == RC_LOG_WARNING)
        cli__warning(stderr, "%s", msg);
    else
        cli__note(stderr, "%s", msg);
}

const rc_log_t cli__collect_log = {log_line, NULL};

/* In the report's child (standard error goes to the page answered on failure): the recordings
 * of pid converted as far as they are written into DIR/report.db, then the page. */
static int make_report(void *user, const rc_host_t *h, uint32_t pid, const char *dir)
{
    (void)user;
    char db[4200], html[4200];
    snprintf(db, sizeof db, "%s/report.db", dir);
    snprintf(html, sizeof html, "%s/report.html", dir);
    int rc = cli__convert_pid(h, pid, db, 1);
    if (rc == RHEAP_EXIT_OK || rc == RHEAP_EXIT_WARNINGS) {
        char *args[] = {(char *)"--html", (char *)"-o", html, db, NULL};
        rc = cli__cmd_report_html(4, args);
    }
    return rc == RHEAP_EXIT_OK ? 0 : -1;
}

static void usage_serve(FILE *f)
{
    fprintf(f,
            "Usage: rheap serve [OPTIONS] [DIR...]\n"
            "\n"
            "A collector for one host: follows every recording (rip-<pid>[-N]) that appears\n"
            "under DIR (default $RHEAP_DIR, else the current directory) as processes start,\n"
            "exec and end, keeps each process's live heap up to date, and serves it over\n"
            "HTTP in the forms go tool pprof, Grafana Pyroscope (Alloy) and Parca scrape:\n"
            "\n"
            "  /debug/pprof/heap[?pid=P][&seconds=N]    live heap, gzipped profile.proto\n"
            "  /debug/pprof/allocs[?pid=P][&seconds=N]  allocations since recording began\n"
            "  /metrics                                 Prometheus text, per process\n"
            "  /                                        a page listing the processes\n"
            "  /report?pid=P                            rheap report --html of P, made now\n"
            "\n"
            "Without pid, every process, each sample labelled with its pid; seconds=N (1-%d)\n"
            "answers after N seconds with the change over them. Only recordings the user\n"
            "running rheap serve may read are followed.\n"
            "\n"
            "Options:\n"
            "  --listen ADDR:PORT  where to listen (default 127.0.0.1:6060; port 0: any free\n"
            "                      one; the address taken is printed on stderr)\n"
            "  --dump-dir DIR      write heap profiles there on a trigger:\n"
            "  --dump-threshold B  when a process's live heap passes B bytes (K, M, G\n"
            "                      suffixes: KiB, MiB, GiB) or N%% of the memory limit of\n"
            "                      its control groups, and at each new high mark at least\n"
            "                      1/16 above the last one dumped\n"
            "  --dump-keep N       keep the newest N dumps in DIR (default 16)\n"
            "  --process-memory B  stop following a process whose live heap takes more than\n"
            "                      B bytes of the collector's memory (default 256M; a\n"
            "                      profile-mode process takes a few KiB to a few MiB)\n"
            "  --disk-budget B     compact a profile-mode recording once its closed segments\n"
            "                      hold B bytes: a checkpoint of its live sampled blocks\n"
            "                      replaces them (default 32M; 0: never)\n"
            "  -h, --help          show this help\n"
            "\n"
            "Runs until interrupted (SIGINT, SIGTERM); exit status 0, 1 for a usage error or\n"
            "an address that cannot be listened on.\n",
            RC_MAX_SECONDS);
}

/* A whole number from 1 to max, digits only. 0 when not. */
static unsigned long number(const char *s, unsigned long max)
{
    unsigned long v = 0;
    if (!*s || strlen(s) > 10)
        return 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return 0;
        v = v * 10 + (unsigned long)(*s - '0');
    }
    return v <= max ? v : 0;
}

/* B, BK, BM, BG: bytes. 0 when not a number. */
static double parse_bytes(const char *s)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *s == '-' || *s == '+')
        return 0;
    double mul = 1;
    if (*end == 'K' || *end == 'k')
        mul = 1024.0, end++;
    else if (*end == 'M')
        mul = 1024.0 * 1024, end++;
    else if (*end == 'G')
        mul = 1024.0 * 1024 * 1024, end++;
    return *end ? 0 : (double)v * mul;
}

int cli__cmd_serve(int argc, char **argv)
{
    enum { O_LISTEN = 0x2001, O_DUMP_DIR, O_DUMP_THRESHOLD, O_DUMP_KEEP, O_PROCESS_MEMORY,
           O_DISK_BUDGET };
    static const struct option longs[] = {
        {"listen", required_argument, NULL, O_LISTEN},
        {"dump-dir", required_argument, NULL, O_DUMP_DIR},
        {"dump-threshold", required_argument, NULL, O_DUMP_THRESHOLD},
        {"dump-keep", required_argument, NULL, O_DUMP_KEEP},
        {"process-memory", required_argument, NULL, O_PROCESS_MEMORY},
        {"disk-budget", required_argument, NULL, O_DISK_BUDGET},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *listen_at = "127.0.0.1:6060", *threshold = NULL, *keep = NULL;
    const char *budget = "256M", *disk = "32M";
    rc_serve_opts_t o = RC_SERVE_OPTS_INIT;
    int c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", longs, NULL)) != -1) {
        switch (c) {
        case O_LISTEN: listen_at = optarg; break;
        case O_DUMP_DIR: o.dump_dir = optarg; break;
        case O_DUMP_THRESHOLD: threshold = optarg; break;
        case O_DUMP_KEEP: keep = optarg; break;
        case O_PROCESS_MEMORY: budget = optarg; break;
        case O_DISK_BUDGET: disk = optarg; break;
        case 'h': usage_serve(stdout); return RHEAP_EXIT_OK;
        default: return cli__option_error(c, argv, longs, "a value", "rheap serve --help");
        }
    }
    size_t tlen = threshold ? strlen(threshold) : 0;
    if (tlen > 1 && threshold[tlen - 1] == '%') {
        char digits[16];
        snprintf(digits, sizeof digits, "%.*s", (int)(tlen - 1), threshold);
        o.dump_share = (double)number(digits, 100);
        if (!o.dump_share) {
            cli__error(stderr, "--dump-threshold: expected a share from 1%% to 100%%, got '%s'",
                       threshold);
            return RHEAP_EXIT_USAGE;
        }
    } else if (threshold && !(o.dump_bytes = parse_bytes(threshold))) {
        cli__error(stderr, "--dump-threshold: expected bytes from 1 (digits, then K, M or G) "
                           "or a share of the memory limit (N%%), got '%s'", threshold);
        return RHEAP_EXIT_USAGE;
    }
    double budget_bytes = parse_bytes(budget);
    if (!budget_bytes) {
        cli__error(stderr, "--process-memory: expected bytes from 1 (digits, then K, M or G), "
                           "got '%s'", budget);
        return RHEAP_EXIT_USAGE;
    }
    double disk_bytes = strcmp(disk, "0") ? parse_bytes(disk) : 0;
    if (strcmp(disk, "0") && !disk_bytes) {
        cli__error(stderr, "--disk-budget: expected bytes (digits, then K, M or G) or 0, "
                           "got '%s'", disk);
        return RHEAP_EXIT_USAGE;
    }
    if (keep && !(o.dump_keep = (unsigned)number(keep, 1000000))) {
        cli__error(stderr, "--dump-keep: expected a whole number from 1, got '%s'", keep);
        return RHEAP_EXIT_USAGE;
    }
    if (!o.dump_dir != !threshold) {
        cli__error(stderr, "--dump-dir and --dump-threshold go together");
        return RHEAP_EXIT_USAGE;
    }
    if (o.dump_dir && access(o.dump_dir, W_OK | X_OK) != 0) {
        cli__error(stderr, "--dump-dir %s: %s", o.dump_dir, strerror(errno));
        return RHEAP_EXIT_USAGE;
    }
    const char *env = getenv("RHEAP_DIR");
    const char *dflt[1] = {env && *env ? env : "."};
    int ndirs = argc - optind;
    const char *const *dirs = ndirs ? (const char *const *)argv + optind : dflt;
    for (int i = 0; i < (ndirs ? ndirs : 1); i++)
        if (access(dirs[i], R_OK | X_OK) != 0) {
            cli__error(stderr, "%s: %s", dirs[i], strerror(errno));
            return RHEAP_EXIT_USAGE;
        }
    o.listen = listen_at;
    o.dirs = dirs;
    o.ndirs = ndirs ? (size_t)ndirs : 1;
    o.process_memory = (uint64_t)budget_bytes;
    o.disk_budget = (uint64_t)disk_bytes;
    o.report = make_report;
    o.log = cli__collect_log;
    rc_server_t *sv;
    rc_err_t err;
    rc_status_t st = rc_server_open(&o, &sv, &err);
    if (st != RC_OK) {
        cli__error(stderr, "%s", err.msg);
        return st == RC_E_USAGE ? RHEAP_EXIT_USAGE : RHEAP_EXIT_INPUT;
    }
    struct sigaction sa = {0}, ign = {0};
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    /* A report's child writes to pipes and files only, but a client gone mid-answer must not
     * end the command. */
    ign.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ign, NULL);
    size_t n = rc_host_count(rc_server_host(sv));
    cli__note(stderr, "serving http://%s/ (%zu recording%s followed)", rc_server_address(sv), n,
              n == 1 ? "" : "s");
    fflush(stderr);
    rc_server_run(sv, &stop);
    rc_server_close(sv);
    return RHEAP_EXIT_OK;
}
