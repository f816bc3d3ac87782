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
 * so a profile is always made from state at most one scan old, and no lock is needed. A report
 * needs a conversion, seconds for a big recording: a child process makes it (fork, then the
 * converter and the page writer as `rheap snapshot -o DB` and `rheap report --html` would), so
 * the loop goes on meanwhile and a failure costs the child only.
 *
 * With --dump-dir, a process's heap profile is also written there when its live heap passes
 * --dump-threshold bytes (or a share of its cgroup memory limit, cgroup.c), and again each time it sets a new high mark at least 1/16 above the
 * last one dumped (jemalloc's prof.gdump, a memory-threshold dump); the directory keeps the
 * newest --dump-keep of them.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
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
#include "serve.h"

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
    uint32_t pid, recording;
    double mark;
    int above, seen;
} dumpmark_t;

/* A report being made by a child process. */
typedef struct {
    int client;
    pid_t child;
    double due;
    char dir[4096];           /* its private directory: report.db, report.html, errors */
} report_t;

#define MAX_REPORTS 2
#define REPORT_S 120

typedef struct {
    sv__host_t *host;
    sv__http_t *http;
    pending_t pend[64];
    size_t npend;
    const char *dump_dir;
    double dump_threshold;
    double dump_share;          /* --dump-threshold N%: of the process's memory limit */
    unsigned dump_keep;
    dumpmark_t *marks;
    size_t nmarks, capmarks;
    unsigned long dump_seq;
    report_t reports[MAX_REPORTS];
    size_t nreports;
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

static const char *state_name(const sv__info_t *in)
{
    if (in->dropped)
        return in->state == SV_ENDED ? "ended" : "dropped";
    return in->state == SV_RECORDING ? "recording" : in->state == SV_OFF ? "off" : "ended";
}

/* A Prometheus label value: backslash, double quote and newline escaped. */
static void label_value(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '\\' || *s == '"')
            fprintf(f, "\\%c", *s);
        else if (*s == '\n')
            fputs("\\n", f);
        else
            fputc(*s, f);
    }
}

static void metrics(serve_t *sv, const sv__request_t *r)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) {
        respond_text(sv, r->client, 500, "out of memory\n");
        return;
    }
    static const struct {
        const char *name, *type, *help;
    } series[] = {
        {"rheap_live_bytes", "gauge",
         "Bytes in blocks allocated and not freed, now (an estimate in profile mode)."},
        {"rheap_live_blocks", "gauge", "Blocks allocated and not freed, now (an estimate in "
                                       "profile mode)."},
        {"rheap_live_bytes_high", "gauge", "The most live bytes seen since the collector began "
                                           "following the recording."},
        {"rheap_allocated_bytes_total", "counter",
         "Bytes asked for by allocating calls since recording began."},
        {"rheap_allocations_total", "counter", "Allocating calls since recording began."},
        {"rheap_allocation_rate_bytes", "gauge",
         "Bytes allocated per second over the last few seconds."},
        {"rheap_recording_state", "gauge",
         "1 for the recording's state: recording, off (turned off) or ended (process gone or "
         "exec'ed)."},
        {"rheap_collector_memory_bytes", "gauge",
         "Memory the collector holds for the recording (live blocks, stacks)."},
    };
    size_t n = sv__host_count(sv->host);
    for (size_t s = 0; s < sizeof series / sizeof *series; s++) {
        fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", series[s].name, series[s].help,
                series[s].name, series[s].type);
        for (size_t i = 0; i < n; i++) {
            sv__info_t in;
            sv__host_info(sv->host, i, &in);
            fprintf(f, "%s{pid=\"%" PRIu32 "\",recording=\"%" PRIu32 "\",exe=\"", series[s].name,
                    in.pid, in.recording);
            label_value(f, in.exe);
            fprintf(f, "\",mode=\"%s\"", in.interval ? "profile" : "trace");
            if (s == 6)
                fprintf(f, ",state=\"%s\"", state_name(&in));
            fputs("} ", f);
            switch (s) {
            case 0: fprintf(f, "%.0f\n", in.live_bytes); break;
            case 1: fprintf(f, "%.0f\n", in.live_blocks); break;
            case 2: fprintf(f, "%.0f\n", in.high_bytes); break;
            case 3: fprintf(f, "%.0f\n", in.alloc_bytes); break;
            case 4: fprintf(f, "%.0f\n", in.alloc_blocks); break;
            case 5: fprintf(f, "%.1f\n", in.rate); break;
            case 6: fputs("1\n", f); break;
            default: fprintf(f, "%" PRIu64 "\n", in.memory); break;
            }
        }
    }
    fprintf(f, "# HELP rheap_collector_processes Recordings the collector follows.\n"
               "# TYPE rheap_collector_processes gauge\nrheap_collector_processes %zu\n",
            n);
    if (fclose(f) != 0) {
        free(buf);
        respond_text(sv, r->client, 500, "out of memory\n");
        return;
    }
    sv__http_respond(sv->http, r->client, 200, "text/plain; version=0.0.4; charset=utf-8", buf,
                     len);
    free(buf);
}

static void html_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
}

static void index_page(serve_t *sv, const sv__request_t *r)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) {
        respond_text(sv, r->client, 500, "out of memory\n");
        return;
    }
    fprintf(f, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>rheap serve: ");
    html_text(f, sv__host_name(sv->host));
    fputs("</title>\n<style>\n"
          "body{font:14px system-ui,sans-serif;margin:2em;color:#222}\n"
          "table{border-collapse:collapse}th,td{padding:.3em .8em;border-bottom:1px solid #ddd}\n"
          "th{text-align:left;background:#f3f3f3}td.n{text-align:right;white-space:nowrap;font-variant-numeric:"
          "tabular-nums}\n.recording{color:#070}.off{color:#a60}.ended{color:#888}\n"
          "code{font-size:12px}</style></head><body>\n<h1>rheap serve on ",
          f);
    html_text(f, sv__host_name(sv->host));
    size_t n = sv__host_count(sv->host);
    fprintf(f, "</h1>\n<p id=\"count\">%zu recording%s followed. Profiles: "
               "<a href=\"/debug/pprof/heap\">heap of every process</a>, "
               "<a href=\"/debug/pprof/allocs\">allocations of every process</a>, "
               "<a href=\"/metrics\">metrics</a>.</p>\n",
            n, n == 1 ? "" : "s");
    fputs("<table id=\"processes\"><tr><th>pid</th><th>recording</th><th>state</th>"
          "<th>mode</th><th>live heap</th><th>live blocks</th><th>allocated</th>"
          "<th>rate</th><th>program</th><th>profiles</th></tr>\n",
          f);
    for (size_t i = 0; i < n; i++) {
        sv__info_t in;
        sv__host_info(sv->host, i, &in);
        char live[32], alloc[32], rate[40];
        cli__human_bytes((long long)in.live_bytes, live, sizeof live);
        cli__human_bytes((long long)in.alloc_bytes, alloc, sizeof alloc);
        cli__human_bytes((long long)in.rate, rate, sizeof rate);
        fprintf(f,
                "<tr data-pid=\"%" PRIu32 "\" data-live-bytes=\"%.0f\"><td class=n>%" PRIu32
                "</td><td class=n>%" PRIu32 "</td><td class=\"%s\">%s</td><td>%s</td>"
                "<td class=n>%s%s</td><td class=n>%.0f</td><td class=n>%s</td>"
                "<td class=n>%s/s</td><td><code>",
                in.pid, in.live_bytes, in.pid, in.recording, state_name(&in),
                state_name(&in), in.interval ? "profile" : "trace",
                in.interval ? "~" : "", live, in.live_blocks, alloc, rate);
        html_text(f, in.cmdline[0] ? in.cmdline : in.exe);
        fputs("</code></td><td>", f);
        if (sv__host_find(sv->host, in.pid) == (long)i)
            fprintf(f,
                    "<a href=\"/debug/pprof/heap?pid=%" PRIu32 "\">heap</a> "
                    "<a href=\"/debug/pprof/allocs?pid=%" PRIu32 "\">allocs</a> "
                    "<a href=\"/report?pid=%" PRIu32 "\">report</a>",
                    in.pid, in.pid, in.pid);
        else
            fputs("(superseded)", f);
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n<p>Fetch a profile with <code>go tool pprof http://HOST:PORT/debug/pprof/"
          "heap?pid=PID</code>. Values of profile-mode recordings (~) are estimates.</p>\n"
          "</body></html>\n",
          f);
    if (fclose(f) != 0) {
        free(buf);
        respond_text(sv, r->client, 500, "out of memory\n");
        return;
    }
    sv__http_respond(sv->http, r->client, 200, "text/html; charset=utf-8", buf, len);
    free(buf);
}


/* ---- Reports, made by a child process ---- */

typedef struct {
    char **dirs;
    size_t n, next;
} report_inputs_t;

static const char *report_next(void *user)
{
    report_inputs_t *in = user;
    return in->next < in->n ? in->dirs[in->next++] : NULL;
}

static int report_growing(void *user, const char *dir, int wait)
{
    (void)user, (void)dir, (void)wait;
    return 0;
}

static void remove_report_dir(const char *dir)
{
    static const char *const files[] = {"report.db", "report.html", "errors"};
    char path[4200];
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        unlink(path);
    }
    rmdir(dir);
}

/* In the child: the recordings of pid converted as far as they are written, then the page.
 * Its messages go to DIR/errors. Never returns. */
static void make_report(serve_t *sv, uint32_t pid, const char *dir)
{
    sv__http_forget(sv->http);
    char path[4200];
    snprintf(path, sizeof path, "%s/errors", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd >= 0) {
        dup2(fd, STDERR_FILENO);
        close(fd);
    }
    report_inputs_t in = {0};
    size_t cap = 0;
    for (size_t i = 0; i < sv__host_count(sv->host); i++) {
        sv__info_t info;
        sv__host_info(sv->host, i, &info);
        if (info.pid == pid && cli__grow(&in.dirs, &cap, in.n, sizeof *in.dirs, 4) == 0)
            in.dirs[in.n++] = (char *)info.dir;
    }
    rheap_convert_opts_t live = RHEAP_CONVERT_OPTS_INIT;
    live.next_input = report_next;
    live.growing = report_growing;
    live.live_user = &in;
    char db[4200], html[4200];
    snprintf(db, sizeof db, "%s/report.db", dir);
    snprintf(html, sizeof html, "%s/report.html", dir);
    int rc = cli__convert_cmd(NULL, 0, &live, db, 1, 0, 1, 0);
    if (rc == RHEAP_EXIT_OK || rc == RHEAP_EXIT_WARNINGS) {
        char *args[] = {(char *)"--html", (char *)"-o", html, db, NULL};
        rc = cli__cmd_report_html(4, args);
    }
    fflush(stderr);
    _exit(rc == RHEAP_EXIT_OK ? 0 : 1);
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
    if (sv->nreports == MAX_REPORTS) {
        respond_text(sv, r->client, 503, "%d reports are being made; ask again later\n",
                     MAX_REPORTS);
        return;
    }
    report_t *rp = &sv->reports[sv->nreports];
    const char *tmp = getenv("TMPDIR");
    snprintf(rp->dir, sizeof rp->dir, "%s/rheap-report-XXXXXX", tmp && *tmp ? tmp : P_tmpdir);
    if (!mkdtemp(rp->dir)) {
        respond_text(sv, r->client, 500, "no directory for the report: %s\n", strerror(errno));
        return;
    }
    fflush(stderr);
    pid_t child = fork();
    if (child == 0)
        make_report(sv, (uint32_t)pid, rp->dir);
    if (child < 0) {
        remove_report_dir(rp->dir);
        respond_text(sv, r->client, 500, "the report could not be started: %s\n",
                     strerror(errno));
        return;
    }
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    rp->client = r->client;
    rp->child = child;
    rp->due = (double)now.tv_sec + now.tv_nsec / 1e9 + REPORT_S;
    sv->nreports++;
    sv__http_defer(sv->http, r->client, REPORT_S);
}

/* Reads a whole small file. NULL when it cannot. */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t cap = 0;
    *len = 0;
    for (;;) {
        if (cli__grow(&buf, &cap, *len + 65536, 1, 65536 * 2) != 0) {
            free(buf);
            fclose(f);
            return NULL;
        }
        size_t got = fread(buf + *len, 1, cap - *len, f);
        *len += got;
        if (got == 0)
            break;
    }
    fclose(f);
    return buf;
}

/* Reports whose child is done (or past its time: killed), answered. */
static void finish_reports(serve_t *sv)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double t = (double)now.tv_sec + now.tv_nsec / 1e9;
    for (size_t i = 0; i < sv->nreports;) {
        report_t *rp = &sv->reports[i];
        int ws = 0;
        pid_t done = waitpid(rp->child, &ws, WNOHANG);
        if (done == 0 && t < rp->due) {
            i++;
            continue;
        }
        if (done == 0) {
            kill(rp->child, SIGKILL);
            waitpid(rp->child, &ws, 0);
            respond_text(sv, rp->client, 500, "the report took more than %d s\n", REPORT_S);
        } else {
            char path[4200];
            size_t len = 0;
            int ok = done > 0 && WIFEXITED(ws) && WEXITSTATUS(ws) == 0;
            snprintf(path, sizeof path, "%s/%s", rp->dir, ok ? "report.html" : "errors");
            char *body = slurp(path, &len);
            if (ok && body)
                sv__http_respond(sv->http, rp->client, 200, "text/html; charset=utf-8", body, len);
            else
                sv__http_respond(sv->http, rp->client, 500, "text/plain; charset=utf-8",
                                 body ? body : "the report could not be made\n",
                                 body ? len : strlen("the report could not be made\n"));
            free(body);
        }
        remove_report_dir(rp->dir);
        sv->reports[i] = sv->reports[--sv->nreports];
    }
}

static void handler(void *user, const sv__request_t *r)
{
    serve_t *sv = user;
    if (!strcmp(r->path, "/debug/pprof/heap"))
        profile_request(sv, r, 0);
    else if (!strcmp(r->path, "/debug/pprof/allocs"))
        profile_request(sv, r, 1);
    else if (!strcmp(r->path, "/metrics"))
        metrics(sv, r);
    else if (!strcmp(r->path, "/") || !strcmp(r->path, "/index.html"))
        index_page(sv, r);
    else if (!strcmp(r->path, "/report"))
        report_request(sv, r);
    else
        respond_text(sv, r->client, 404,
                     "not found; served: /, /metrics, /debug/pprof/heap, /debug/pprof/allocs\n");
}

/* ---- Dumps on a trigger ---- */

static int dump_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Removes the oldest dumps beyond the kept count: names sort by time. */
static void dump_trim(serve_t *sv)
{
    DIR *d = opendir(sv->dump_dir);
    if (!d)
        return;
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (strncmp(e->d_name, "rheap-heap-", 11) || l < 7 || strcmp(e->d_name + l - 6, ".pb.gz"))
            continue;
        if (cli__grow(&names, &cap, n, sizeof *names, 32) != 0 || !(names[n] = strdup(e->d_name)))
            break;
        n++;
    }
    closedir(d);
    if (n > 1)
        qsort(names, n, sizeof *names, dump_cmp);
    for (size_t i = 0; i + sv->dump_keep < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", sv->dump_dir, names[i]);
        unlink(path);
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

static void dump_one(serve_t *sv, size_t i, const sv__info_t *in)
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    char stamp[32], path[4096], tmp[4200];
    strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
    snprintf(path, sizeof path, "%s/rheap-heap-%s-%06lu-pid%" PRIu32 ".pb.gz", sv->dump_dir, stamp,
             ++sv->dump_seq, in->pid);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    char err[256] = "";
    int rc = f ? sv__profile_write(sv->host, &i, 1, 0, NULL, 0, 0, f, err, sizeof err) : -1;
    if (f && fclose(f) != 0)
        rc = -1;
    if (rc != 0 || rename(tmp, path) != 0) {
        unlink(tmp);
        cli__warning(stderr, "%s: the heap profile could not be written%s%s", path,
                     err[0] ? ": " : "", err);
        return;
    }
    char live[32];
    cli__human_bytes((long long)in->live_bytes, live, sizeof live);
    cli__note(stderr, "process %" PRIu32 ": live heap %s: wrote %s", in->pid, live, path);
    dump_trim(sv);
}

static void check_dumps(serve_t *sv)
{
    for (size_t k = 0; k < sv->nmarks; k++)
        sv->marks[k].seen = 0;
    for (size_t i = 0; i < sv__host_count(sv->host); i++) {
        sv__info_t in;
        sv__host_info(sv->host, i, &in);
        if (in.state == SV_ENDED || in.dropped)
            continue;
        size_t k = 0;
        while (k < sv->nmarks &&
               !(sv->marks[k].pid == in.pid && sv->marks[k].recording == in.recording))
            k++;
        if (k == sv->nmarks) {
            if (cli__grow(&sv->marks, &sv->capmarks, sv->nmarks, sizeof *sv->marks, 16) != 0)
                return;
            sv->marks[sv->nmarks++] = (dumpmark_t){in.pid, in.recording, 0, 0, 0};
        }
        dumpmark_t *m = &sv->marks[k];
        m->seen = 1;
        double threshold = sv->dump_threshold;
        if (sv->dump_share) {
            uint64_t limit;
            if (sv__cgroup_limit(in.pid, &limit) != 0)
                continue; /* no limit: no share of it to pass */
            threshold = sv->dump_share / 100 * (double)limit;
        }
        if (in.live_bytes < threshold) {
            m->above = 0;
            continue;
        }
        if (m->above && in.live_bytes < m->mark + m->mark / 16)
            continue;
        m->above = 1;
        if (in.live_bytes > m->mark)
            m->mark = in.live_bytes;
        dump_one(sv, i, &in);
    }
    /* The marks of processes no longer followed go, so a week of processes leaves none. */
    size_t keep = 0;
    for (size_t k = 0; k < sv->nmarks; k++)
        if (sv->marks[k].seen)
            sv->marks[keep++] = sv->marks[k];
    sv->nmarks = keep;
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
    sv.dump_keep = 16;
    int c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", longs, NULL)) != -1) {
        switch (c) {
        case O_LISTEN: listen_at = optarg; break;
        case O_DUMP_DIR: sv.dump_dir = optarg; break;
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
        sv.dump_share = (double)number(digits, 100);
        if (!sv.dump_share) {
            cli__error(stderr, "--dump-threshold: expected a share from 1%% to 100%%, got '%s'",
                       threshold);
            return RHEAP_EXIT_USAGE;
        }
    } else if (threshold && !(sv.dump_threshold = parse_bytes(threshold))) {
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
    if (keep && !(sv.dump_keep = (unsigned)number(keep, 1000000))) {
        cli__error(stderr, "--dump-keep: expected a whole number from 1, got '%s'", keep);
        return RHEAP_EXIT_USAGE;
    }
    if (!sv.dump_dir != !threshold) {
        cli__error(stderr, "--dump-dir and --dump-threshold go together");
        return RHEAP_EXIT_USAGE;
    }
    if (sv.dump_dir && access(sv.dump_dir, W_OK | X_OK) != 0) {
        cli__error(stderr, "--dump-dir %s: %s", sv.dump_dir, strerror(errno));
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
            if (sv.dump_dir)
                check_dumps(&sv);
        }
        finish_pending(&sv);
        finish_reports(&sv);
    }
    for (size_t i = 0; i < sv.nreports; i++) {
        kill(sv.reports[i].child, SIGKILL);
        waitpid(sv.reports[i].child, NULL, 0);
        remove_report_dir(sv.reports[i].dir);
    }
    for (size_t i = 0; i < sv.npend; i++) {
        free(sv.pend[i].idx);
        sv__base_free(sv.pend[i].base, sv.pend[i].nbase);
    }
    free(sv.marks);
    sv__host_destroy(sv.host);
    sv__http_close(sv.http);
    return RHEAP_EXIT_OK;
}
