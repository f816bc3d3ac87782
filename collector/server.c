/*
 * server.c: the collector's server (rc_server_*): a host (heap.c) following every recording that
 * appears under some directories, keeping each process's live heap up to date as its recording
 * is written, behind a small HTTP server (http.c) answering what continuous profilers and people
 * ask:
 *
 *   /debug/pprof/heap?pid=P     gzipped profile.proto, live heap now (inuse_space by default)
 *   /debug/pprof/allocs?pid=P   the same, alloc_space by default
 *       without pid: every process, each sample labelled with its pid; ?seconds=N: the change
 *       over the next N seconds (the answer comes then), as Go's handlers do
 *   /metrics                    Prometheus text: live bytes and blocks, bytes and calls
 *                               allocated, allocation rate, recording state, per process
 *   /                           an HTML page listing the processes, with links
 *   /report?pid=P               the caller's HTML report of the process's recordings as far
 *                               as they are written, made on demand
 *
 * One thread does everything: between two rounds of the HTTP server it scans the recordings,
 * so a profile is always made from state at most one scan old, and no lock is needed. This file
 * is the loop and the profile requests (delta ones wait in a list); the pages are
 * servepages.c's, the reports reports.c's (made by child processes), the dumps on a trigger
 * dumps.c's.
 */
#define _GNU_SOURCE /* open_memstream */
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "collector.h"

/* How often the recordings are read, and how long an ended process stays listed. */
#define SCAN_MS 200
#define LINGER_S 300.0

typedef struct {
    int client;
    int allocs;
    double due;
    struct timespec started;
    size_t *idx;
    size_t n;
    rc__base_t *base;
    size_t nbase;
} pending_t;

struct rc_server {
    rc_host_t *host;
    rc__http_t *http;
    pending_t pend[64];
    size_t npend;
    rc__dumps_t dumps;
    rc__reports_t reports;
    rc_report_fn report;
    void *report_user;
    rc_log_t log;
    int *locks;                /* each directory's collector lock (dirlock.c), or -1 */
    size_t nlocks;
};

typedef struct rc_server serve_t;

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

unsigned long rc_whole_number(const char *s, unsigned long max)
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
    rc__http_respond(sv->http, client, status, "text/plain; charset=utf-8", buf, strlen(buf));
}

static void send_profile(serve_t *sv, int client, const size_t *idx, size_t n, int allocs,
                         const rc__base_t *base, size_t nbase, int64_t period_ns)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    rc_err_t err = {"out of memory"};
    int rc = f && rc__profile_write(sv->host, idx, n, allocs, base, nbase, period_ns, f,
                                    &err) == RC_OK
                 ? 0
                 : -1;
    if (f && fclose(f) != 0)
        rc = -1;
    if (rc == 0)
        rc__http_respond(sv->http, client, 200, "application/octet-stream", buf, len);
    else
        respond_text(sv, client, 500, "the profile could not be made: %s\n", err.msg);
    free(buf);
}

static void profile_request(serve_t *sv, const rc__request_t *r, int allocs)
{
    char v[32];
    long pid = -1;
    if (query_get(r->query, "pid", v, sizeof v)) {
        unsigned long p = rc_whole_number(v, UINT32_MAX);
        if (!p) {
            respond_text(sv, r->client, 400, "pid: expected a process id, got '%s'\n", v);
            return;
        }
        pid = (long)p;
    }
    unsigned long seconds = 0;
    if (query_get(r->query, "seconds", v, sizeof v) &&
        !(seconds = rc_whole_number(v, RC_MAX_SECONDS))) {
        respond_text(sv, r->client, 400, "seconds: expected a whole number from 1 to %d, got '%s'\n",
                     RC_MAX_SECONDS, v);
        return;
    }
    size_t count = rc_host_count(sv->host);
    size_t *idx = calloc(count ? count : 1, sizeof *idx);
    if (!idx) {
        respond_text(sv, r->client, 500, "out of memory\n");
        return;
    }
    size_t n = rc_host_pick(sv->host, pid, idx);
    if (pid >= 0 && n == 0) {
        free(idx);
        respond_text(sv, r->client, 404, "no recording of process %ld is followed\n", pid);
        return;
    }
    if (pid >= 0) {
        rc_info_t in;
        rc_host_info(sv->host, idx[0], &in);
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
    rc__base_t *base = rc__base_take(sv->host, idx, n, &nbase);
    if (!base || sv->npend == sizeof sv->pend / sizeof *sv->pend) {
        rc__base_free(base, nbase);
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
    rc__http_defer(sv->http, r->client, (int)seconds);
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
            for (size_t j = 0; j < rc_host_count(sv->host); j++) {
                rc_info_t in;
                rc_host_info(sv->host, j, &in);
                if (in.pid == p->base[k].pid && in.recording == p->base[k].recording)
                    p->idx[m++] = j;
            }
        int64_t period = (int64_t)(now.tv_sec - p->started.tv_sec) * 1000000000 +
                         (now.tv_nsec - p->started.tv_nsec);
        send_profile(sv, p->client, p->idx, m, p->allocs, p->base, p->nbase, period);
        free(p->idx);
        rc__base_free(p->base, p->nbase);
        sv->pend[i] = sv->pend[--sv->npend];
    }
}

/* Answers with what write makes of the host. */
static void send_text(serve_t *sv, int client, const char *type,
                      void (*write)(const rc_host_t *h, FILE *f))
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
    rc__http_respond(sv->http, client, 200, type, buf, len);
    free(buf);
}

static void report_request(serve_t *sv, const rc__request_t *r)
{
    char v[32];
    unsigned long pid =
        query_get(r->query, "pid", v, sizeof v) ? rc_whole_number(v, UINT32_MAX) : 0;
    if (!pid) {
        respond_text(sv, r->client, 400, "pid: expected a process id\n");
        return;
    }
    if (!sv->report) {
        respond_text(sv, r->client, 404, "this collector makes no reports\n");
        return;
    }
    if (rc_host_find(sv->host, (uint32_t)pid) < 0) {
        respond_text(sv, r->client, 404, "no recording of process %lu is followed\n", pid);
        return;
    }
    char err[256];
    int st = rc__report_start(&sv->reports, sv->host, sv->http, r->client, (uint32_t)pid,
                              sv->report, sv->report_user, err, sizeof err);
    if (st)
        respond_text(sv, r->client, st, "%s\n", err);
}

static void handler(void *user, const rc__request_t *r)
{
    serve_t *sv = user;
    if (!strcmp(r->path, "/debug/pprof/heap"))
        profile_request(sv, r, 0);
    else if (!strcmp(r->path, "/debug/pprof/allocs"))
        profile_request(sv, r, 1);
    else if (!strcmp(r->path, "/metrics"))
        send_text(sv, r->client, "text/plain; version=0.0.4; charset=utf-8", rc__metrics_write);
    else if (!strcmp(r->path, "/") || !strcmp(r->path, "/index.html"))
        send_text(sv, r->client, "text/html; charset=utf-8", rc__index_write);
    else if (!strcmp(r->path, "/report"))
        report_request(sv, r);
    else
        respond_text(sv, r->client, 404,
                     "not found; served: /, /metrics, /debug/pprof/heap, /debug/pprof/allocs, "
                     "/report\n");
}

/* ---- The server ---- */

rc_status_t rc_server_open(const rc_serve_opts_t *o, rc_server_t **out, rc_err_t *err)
{
    *out = NULL;
    serve_t *sv = calloc(1, sizeof *sv);
    if (!sv)
        return rc__fail(err, RC_E_NOMEM, "out of memory");
    sv->log = o->log;
    sv->report = o->report;
    sv->report_user = o->report_user;
    sv->dumps.dir = o->dump_dir;
    sv->dumps.threshold = o->dump_bytes;
    sv->dumps.share = o->dump_share;
    sv->dumps.keep = o->dump_keep ? o->dump_keep : 16;
    sv->dumps.log = &sv->log;
    char msg[512];
    sv->http = rc__http_open(o->listen ? o->listen : "127.0.0.1:6060", msg, sizeof msg);
    if (!sv->http) {
        free(sv);
        return rc__fail(err, RC_E_USAGE, "%s", msg);
    }
    if (!(sv->locks = malloc((o->ndirs ? o->ndirs : 1) * sizeof *sv->locks))) {
        rc__http_close(sv->http);
        free(sv);
        return rc__fail(err, RC_E_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < o->ndirs; i++, sv->nlocks++) {
        char why[4600];
        if (rc__dir_lock(o->dirs[i], &sv->locks[i], why, sizeof why) != 0) {
            for (size_t j = 0; j < i; j++)
                if (sv->locks[j] >= 0)
                    close(sv->locks[j]);
            free(sv->locks);
            rc__http_close(sv->http);
            free(sv);
            return rc__fail(err, RC_E_USAGE, "%s", why);
        }
    }
    sv->host = rc_host_create(o->dirs, o->ndirs, &sv->log);
    if (!sv->host) {
        for (size_t i = 0; i < sv->nlocks; i++)
            if (sv->locks[i] >= 0)
                close(sv->locks[i]);
        free(sv->locks);
        rc__http_close(sv->http);
        free(sv);
        return rc__fail(err, RC_E_NOMEM, "out of memory");
    }
    rc_host_budget(sv->host, o->process_memory);
    rc_host_disk_budget(sv->host, o->disk_budget);
    /* Out of memory here is said once the loop runs, as any later scan's would be. */
    rc_host_scan(sv->host, LINGER_S, NULL);
    *out = sv;
    return RC_OK;
}

const char *rc_server_address(const rc_server_t *sv)
{
    return rc__http_address(sv->http);
}

const rc_host_t *rc_server_host(const rc_server_t *sv)
{
    return sv->host;
}

void rc_server_run(rc_server_t *sv, volatile sig_atomic_t *stop)
{
    struct timespec last;
    clock_gettime(CLOCK_MONOTONIC, &last);
    int oom_said = 0;
    while (!*stop) {
        rc__http_round(sv->http, SCAN_MS / 2, handler, sv);
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        long ms = (now.tv_sec - last.tv_sec) * 1000 + (now.tv_nsec - last.tv_nsec) / 1000000;
        if (ms >= SCAN_MS) {
            last = now;
            rc_err_t err;
            if (rc_host_scan(sv->host, LINGER_S, &err) != RC_OK && !oom_said) {
                rc__log(&sv->log, RC_LOG_WARNING, "%s", err.msg);
                oom_said = 1;
            }
            if (sv->dumps.dir)
                rc__dumps_check(&sv->dumps, sv->host);
        }
        finish_pending(sv);
        rc__reports_finish(&sv->reports, sv->http);
    }
}

void rc_server_close(rc_server_t *sv)
{
    if (!sv)
        return;
    rc__reports_stop(&sv->reports);
    for (size_t i = 0; i < sv->npend; i++) {
        free(sv->pend[i].idx);
        rc__base_free(sv->pend[i].base, sv->pend[i].nbase);
    }
    rc__dumps_free(&sv->dumps);
    rc_host_destroy(sv->host);
    rc__http_close(sv->http);
    for (size_t i = 0; i < sv->nlocks; i++)
        if (sv->locks[i] >= 0)
            close(sv->locks[i]);
    free(sv->locks);
    free(sv);
}
