/*
 * serve.c: `rheap serve [--listen ADDR:PORT] DIR...`: a collector for one host. It follows every
 * recording that appears under the directories (heap.c), keeps each process's live heap up to
 * date as its recording is written, and answers over HTTP (http.c) what continuous profilers
 * and people ask:
 *
 *   /debug/pprof/heap?pid=P     gzipped profile.proto, live heap now (inuse_space by default)
 *   /debug/pprof/allocs?pid=P   the same, alloc_space by default
 *       without pid: every process, each sample labelled with its pid; ?seconds=N: the change
 *       over the next N seconds (the answer comes then), as Go's handlers do
 *   /metrics                    Prometheus text: live bytes and blocks, bytes and calls
 *                               allocated, allocation rate, recording state, per process
 *   /                           an HTML page listing the processes, with links
 *   /report?pid=P               `rheap report --html` of the process's recordings as far as
 *                               they are written, made on demand
 *
 * One thread does everything: between two rounds of the HTTP server it scans the recordings,
 * so a profile is always made from state at most one scan old, and no lock is needed. This file
 * is the command, the loop and the profile requests (delta ones wait in a list); the pages are
 * servepages.c's, the reports reports.c's (made by child processes), the dumps on a trigger
 * dumps.c's.
 */
#define _GNU_SOURCE /* open_memstream */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "collector.h"

/* How often the recordings are read, and how long an ended process stays listed. */
#define SCAN_MS 200
#define LINGER_S 300.0
#define MAX_SECONDS 300

typedef struct {
    int client;
    int allocs;
    double due;
    struct timespec started;
    size_t *idx;
    size_t n;
    sv__base_t *base;
    size_t nbase;
} pending_t;

typedef struct {
    sv__host_t *host;
    sv__http_t *http;
    pending_t pend[64];
    size_t npend;
    sv__dumps_t dumps;
    sv__reports_t reports;
} serve_t;

static volatile sig_atomic_t stop;

static void on_stop(int sig)
{
    (void)sig;
    stop = 1;
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
            "  -h, --help          show this help\n"
            "\n"
            "Runs until interrupted (SIGINT, SIGTERM); exit status 0, 1 for a usage error or\n"
            "an address that cannot be listened on.\n",
            MAX_SECONDS);
}

/* ---- Query strings ---- */

/* The value of key in a query string (k=v&k=v), into buf. 1 found, 0 not. */
static int query_get(const char *q, const char *key, char *buf, size_t len)
{
    size_t klen = strlen(key);
    while (*q) {
        const char *amp = strchr(q, '&');
        size_t plen = amp ? (size_t)(amp - q) : strlen(q);
        if (plen > klen && !strncmp(q, key, klen) && q[klen] == '=') {
            size_t vlen = plen - klen - 1;
            if (vlen >= len)
                vlen = len - 1;
            memcpy(buf, q + klen + 1, vlen);
            buf[vlen] = 0;
            return 1;
        }
        q += plen + (amp != NULL);
    }
    return 0;
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

/* ---- Answers ---- */

static void respond_text(serve_t *sv, int client, int status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void respond_text(serve_t *sv, int client, int status, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    sv__http_respond(sv->http, client, status, "text/plain; charset=utf-8", buf, strlen(buf));
}

/* The processes a profile covers: the newest recording of pid, or of every live process. */
static size_t pick(serve_t *sv, long pid, size_t *idx)
{
    size_t n = 0;
    if (pid >= 0) {
        long i = sv__host_find(sv->host, (uint32_t)pid);
        if (i >= 0)
            idx[n++] = (size_t)i;
        return n;
    }
    for (size_t i = 0; i < sv__host_count(sv->host); i++) {
        sv__info_t in;
        sv__host_info(sv->host, i, &in);
        if (in.state != SV_ENDED && !in.dropped && sv__host_find(sv->host, in.pid) == (long)i)
            idx[n++] = i;
    }
    return n;
}

static void send_profile(serve_t *sv, int client, const size_t *idx, size_t n, int allocs,
                         const sv__base_t *base, size_t nbase, int64_t period_ns)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    char err[256] = "out of memory";
    int rc = f ? sv__profile_write(sv->host, idx, n, allocs, base, nbase, period_ns, f, err,
                                   sizeof err)
               : -1;
    if (f && fclose(f) != 0)
        rc = -1;
    if (rc == 0)
        sv__http_respond(sv->http, client, 200, "application/octet-stream", buf, len);
    else
        respond_text(sv, client, 500, "the profile could not be made: %s\n", err);
    free(buf);
}

static void profile_request(serve_t *sv, const sv__request_t *r, int allocs)
{
    char v[32];
    long pid = -1;
    if (query_get(r->query, "pid", v, sizeof v)) {
        unsigned long p = number(v, UINT32_MAX);
        if (!p) {
            respond_text(sv, r->client, 400, "pid: expected a process id, got '%s'\n", v);
            return;
        }
        pid = (long)p;
    }
    unsigned long seconds = 0;
    if (query_get(r->query, "seconds", v, sizeof v) && !(seconds = number(v, MAX_SECONDS))) {
        respond_text(sv, r->client, 400, "seconds: expected a whole number from 1 to %d, got '%s'\n",
                     MAX_SECONDS, v);
        return;
    }
    size_t count = sv__host_count(sv->host);
    size_t *idx = calloc(count ? count : 1, sizeof *idx);
    if (!idx) {
        respond_text(sv, r->client, 500, "out of memory\n");
        return;
    }
    size_t n = pick(sv, pid, idx);
    if (pid >= 0 && n == 0) {
        free(idx);
        respond_text(sv, r->client, 404, "no recording of process %ld is followed\n", pid);
        return;
    }
    if (pid >= 0) {
        sv__info_t in;
        sv__host_info(sv->host, idx[0], &in);
        if (in.dropped) {
            free(idx);
            respond_text(sv, r->client, 503,
                         "process %ld is no longer followed: its live heap took more of the "
                         "collector's memory than --process-memory allows\n",
                         pid);
            return;
        }
    }
    if (!seconds) {
        send_profile(sv, r->client, idx, n, allocs, NULL, 0, 0);
        free(idx);
        return;
    }
    size_t nbase = 0;
    sv__base_t *base = sv__base_take(sv->host, idx, n, &nbase);
    if (!base || sv->npend == sizeof sv->pend / sizeof *sv->pend) {
        sv__base_free(base, nbase);
        free(idx);
        respond_text(sv, r->client, 503, "too many delta profiles under way\n");
        return;
    }
    pending_t *p = &sv->pend[sv->npend++];
    p->client = r->client;
    p->allocs = allocs;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    p->started = now;
    p->due = (double)now.tv_sec + now.tv_nsec / 1e9 + (double)seconds;
    p->idx = idx;
    p->n = n;
    p->base = base;
    p->nbase = nbase;
    sv__http_defer(sv->http, r->client, (int)seconds);
}

/* Delta profiles whose period is over. Processes that were forgotten meanwhile (their directory
 * removed) are left out: the indexes are looked up again by pid and recording. */
static void finish_pending(serve_t *sv)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double t = (double)now.tv_sec + now.tv_nsec / 1e9;
    for (size_t i = 0; i < sv->npend;) {
        pending_t *p = &sv->pend[i];
        if (t < p->due) {
            i++;
            continue;
        }
        size_t m = 0;
        for (size_t k = 0; k < p->nbase; k++)
            for (size_t j = 0; j < sv__host_count(sv->host); j++) {
                sv__info_t in;
                sv__host_info(sv->host, j, &in);
                if (in.pid == p->base[k].pid && in.recording == p->base[k].recording)
                    p->idx[m++] = j;
            }
        int64_t period = (int64_t)(now.tv_sec - p->started.tv_sec) * 1000000000 +
                         (now.tv_nsec - p->started.tv_nsec);
        send_profile(sv, p->client, p->idx, m, p->allocs, p->base, p->nbase, period);
        free(p->idx);
        sv__base_free(p->base, p->nbase);
        sv->pend[i] = sv->pend[--sv->npend];
    }
}

/* Answers with what write makes of the host. */
static void send_text(serve_t *sv, int client, const char *type,
                      void (*write)(const sv__host_t *h, FILE *f))
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) {
        respond_text(sv, client, 500, "out of memory\n");
        return;
    }
    write(sv->host, f);
    if (fclose(f) != 0) {
        free(buf);
        respond_text(sv, client, 500, "out of memory\n");
        return;
    }
    sv__http_respond(sv->http, client, 200, type, buf, len);
    free(buf);
}

static void report_request(serve_t *sv, const sv__request_t *r)
{
    char v[32];
    unsigned long pid = query_get(r->query, "pid", v, sizeof v) ? number(v, UINT32_MAX) : 0;
    if (!pid) {
        respond_text(sv, r->client, 400, "pid: expected a process id\n");
        return;
    }
    if (sv__host_find(sv->host, (uint32_t)pid) < 0) {
        respond_text(sv, r->client, 404, "no recording of process %lu is followed\n", pid);
        return;
    }
    char err[256];
    int st = sv__report_start(&sv->reports, sv->host, sv->http, r->client, (uint32_t)pid, err,
                              sizeof err);
    if (st)
        respond_text(sv, r->client, st, "%s\n", err);
}

static void handler(void *user, const sv__request_t *r)
{
    serve_t *sv = user;
    if (!strcmp(r->path, "/debug/pprof/heap"))
        profile_request(sv, r, 0);
    else if (!strcmp(r->path, "/debug/pprof/allocs"))
        profile_request(sv, r, 1);
    else if (!strcmp(r->path, "/metrics"))
        send_text(sv, r->client, "text/plain; version=0.0.4; charset=utf-8", sv__metrics_write);
    else if (!strcmp(r->path, "/") || !strcmp(r->path, "/index.html"))
        send_text(sv, r->client, "text/html; charset=utf-8", sv__index_write);
    else if (!strcmp(r->path, "/report"))
        report_request(sv, r);
    else
        respond_text(sv, r->client, 404,
                     "not found; served: /, /metrics, /debug/pprof/heap, /debug/pprof/allocs, "
                     "/report\n");
}

/* ---- The command ---- */

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
    enum { O_LISTEN = 0x2001, O_DUMP_DIR, O_DUMP_THRESHOLD, O_DUMP_KEEP, O_PROCESS_MEMORY };
    static const struct option longs[] = {
        {"listen", required_argument, NULL, O_LISTEN},
        {"dump-dir", required_argument, NULL, O_DUMP_DIR},
        {"dump-threshold", required_argument, NULL, O_DUMP_THRESHOLD},
        {"dump-keep", required_argument, NULL, O_DUMP_KEEP},
        {"process-memory", required_argument, NULL, O_PROCESS_MEMORY},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *listen_at = "127.0.0.1:6060", *threshold = NULL, *keep = NULL;
    const char *budget = "256M";
    serve_t sv = {0};
    sv.dumps.keep = 16;
    int c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", longs, NULL)) != -1) {
        switch (c) {
        case O_LISTEN: listen_at = optarg; break;
        case O_DUMP_DIR: sv.dumps.dir = optarg; break;
        case O_DUMP_THRESHOLD: threshold = optarg; break;
        case O_DUMP_KEEP: keep = optarg; break;
        case O_PROCESS_MEMORY: budget = optarg; break;
        case 'h': usage_serve(stdout); return RHEAP_EXIT_OK;
        default: return cli__option_error(c, argv, longs, "a value", "rheap serve --help");
        }
    }
    size_t tlen = threshold ? strlen(threshold) : 0;
    if (tlen > 1 && threshold[tlen - 1] == '%') {
        char digits[16];
        snprintf(digits, sizeof digits, "%.*s", (int)(tlen - 1), threshold);
        sv.dumps.share = (double)number(digits, 100);
        if (!sv.dumps.share) {
            cli__error(stderr, "--dump-threshold: expected a share from 1%% to 100%%, got '%s'",
                       threshold);
            return RHEAP_EXIT_USAGE;
        }
    } else if (threshold && !(sv.dumps.threshold = parse_bytes(threshold))) {
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
    if (keep && !(sv.dumps.keep = (unsigned)number(keep, 1000000))) {
        cli__error(stderr, "--dump-keep: expected a whole number from 1, got '%s'", keep);
        return RHEAP_EXIT_USAGE;
    }
    if (!sv.dumps.dir != !threshold) {
        cli__error(stderr, "--dump-dir and --dump-threshold go together");
        return RHEAP_EXIT_USAGE;
    }
    if (sv.dumps.dir && access(sv.dumps.dir, W_OK | X_OK) != 0) {
        cli__error(stderr, "--dump-dir %s: %s", sv.dumps.dir, strerror(errno));
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
    char err[512];
    sv.http = sv__http_open(listen_at, err, sizeof err);
    if (!sv.http) {
        cli__error(stderr, "%s", err);
        return RHEAP_EXIT_USAGE;
    }
    sv.host = sv__host_create(dirs, ndirs ? (size_t)ndirs : 1);
    if (!sv.host) {
        sv__http_close(sv.http);
        cli__error(stderr, "out of memory");
        return RHEAP_EXIT_INPUT;
    }
    sv__host_budget(sv.host, (uint64_t)budget_bytes);
    struct sigaction sa = {0}, ign = {0};
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    ign.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ign, NULL);
    sv__host_scan(sv.host, LINGER_S);
    cli__note(stderr, "serving http://%s/ (%zu recording%s followed)", sv__http_address(sv.http),
              sv__host_count(sv.host), sv__host_count(sv.host) == 1 ? "" : "s");
    fflush(stderr);
    struct timespec last;
    clock_gettime(CLOCK_MONOTONIC, &last);
    int oom_said = 0;
    while (!stop) {
        sv__http_round(sv.http, SCAN_MS / 2, handler, &sv);
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        long ms = (now.tv_sec - last.tv_sec) * 1000 + (now.tv_nsec - last.tv_nsec) / 1000000;
        if (ms >= SCAN_MS) {
            last = now;
            if (sv__host_scan(sv.host, LINGER_S) != 0 && !oom_said) {
                cli__warning(stderr, "out of memory while reading the recordings; what was read "
                                     "is still served");
                oom_said = 1;
            }
            if (sv.dumps.dir)
                sv__dumps_check(&sv.dumps, sv.host);
        }
        finish_pending(&sv);
        sv__reports_finish(&sv.reports, sv.http);
    }
    sv__reports_stop(&sv.reports);
    for (size_t i = 0; i < sv.npend; i++) {
        free(sv.pend[i].idx);
        sv__base_free(sv.pend[i].base, sv.pend[i].nbase);
    }
    sv__dumps_free(&sv.dumps);
    sv__host_destroy(sv.host);
    sv__http_close(sv.http);
    return RHEAP_EXIT_OK;
}
