/*
 * collector.h: the collector library's cross-file functions, grouped by the file that defines
 * them; nothing outside collector/ sees it. heap.c follows recordings as they are written and
 * keeps each process's live heap; heapprof.c writes it as profile.proto; http.c is the small
 * HTTP/1.1 server; servepages.c, reports.c and dumps.c make what server.c answers and writes;
 * cgroup.c reads memory limits; failures.c holds the statuses and the log. Arrays grow
 * with the converter's rheap_grow.
 */
#ifndef RC__COLLECTOR_H
#define RC__COLLECTOR_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <rip.h>

#include "rheap_collect.h"
#include "rheap_convert.h"

/* ---- failures.c: statuses, the log ---- */

/* Writes the message (printf-style) into err and returns status. err may be NULL. */
rc_status_t rc__fail(rc_err_t *err, rc_status_t status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Says one sentence (printf-style) through log; nothing when log or its fn is NULL. */
void rc__log(const rc_log_t *log, rc_level_t level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- heap.c: the live heap of every recording under some directories ---- */

/* One frame of a stack: a return address in a module (the symbolizer's module id, the offset
 * from its load bias), or module -1 and the absolute address. */
typedef struct {
    int module;
    uint64_t offset;
} rc__frame_t;

/* The values of one stack, in blocks and bytes (estimates in profile mode, so not integers):
 * everything allocated since the recording began, and what of it is live now. */
typedef struct {
    double alloc_blocks, alloc_bytes, live_blocks, live_bytes;
} rc__vals_t;

typedef struct {
    uint64_t hash;
    uint32_t nframes;
    rc__frame_t *frames;
    rc__vals_t v;
} rc__stack_t;

typedef struct rc__proc rc__proc_t;

/* The stacks of the process at index i of h, *n of them (owned by the host, valid until its next
 * scan). */
const rc__stack_t *rc__host_stacks(const rc_host_t *h, size_t i, size_t *n);
rheap_symbols_t *rc__host_symbols(rc_host_t *h);
/* The host's name, for the profiles' labels. */
const char *rc__host_name(const rc_host_t *h);

/* ---- dirlock.c: one collector per directory and user ---- */

/* Takes `dir`'s collector lock for this process (the caller closes *fd at its end): 0 with
 * *fd >= 0, or 0 with *fd = -1 when the directory may not be written (nothing to compact there),
 * or -1 with msg saying why, naming the pid of the collector that holds it. */
int rc__dir_lock(const char *dir, int *fd, char *msg, size_t len);

/* ---- compact.c: a checkpoint file of a profile-mode recording ---- */

/* A module of the checkpoint's list: its stacks' addresses are bias + offset, and one segment
 * of `size` bytes from bias covers them. */
typedef struct {
    const char *path;
    const uint8_t *build_id;
    size_t build_id_len;
    uint64_t bias, size;
} rc__ckpt_mod_t;

/* A live sampled block; stack is the checkpoint's id (1..nstacks), 0 none. */
typedef struct {
    uint64_t t, addr, size, stack;
    unsigned call;             /* rip_call_t: the call that allocated it */
} rc__ckpt_block_t;

/* What a checkpoint holds (rip-format/FORMAT.md section 3b): the files it replaces, its
 * modules, its stacks (stack i is ips[stack_at[i] .. stack_at[i + 1])), its blocks in time
 * order, and the totals of the files it replaces. */
typedef struct {
    uint32_t pid, recording;
    uint64_t start_ns, number, t;
    const rip_range_t *ranges;
    uint32_t nranges;
    const rc__ckpt_mod_t *mods;
    size_t nmods;
    const uint64_t *ips;
    const size_t *stack_at;
    size_t nstacks;
    const rc__ckpt_block_t *blocks;
    size_t nblocks;
    uint64_t allocs, bytes, frees;
} rc__ckpt_t;

/* The bytes of the writer's memory rc__checkpoint_write takes (16-byte aligned): the host keeps
 * one such buffer for all its compactions, rather than a megabyte allocated and freed each time. */
size_t rc__checkpoint_mem_size(void);
/* Writes dir/checkpoint-<number>.rip durably, with the writer in mem: under a temporary name,
 * synced, renamed, the directory synced. 0, or -1 with the reason in why (nothing left behind
 * under either name). */
int rc__checkpoint_write(const char *dir, const rc__ckpt_t *c, void *mem, char *why,
                         size_t whylen);

/* ---- heapprof.c: live heaps as profile.proto ---- */

/* The stack values of one recording at some moment, the base of a delta profile. */
typedef struct {
    uint32_t pid, recording;
    size_t nstacks;
    rc__vals_t *v;
} rc__base_t;

/* Captures the values of the processes at indexes idx[0..n) of h. NULL when out of memory. */
rc__base_t *rc__base_take(const rc_host_t *h, const size_t *idx, size_t n, size_t *nbase);
void rc__base_free(rc__base_t *b, size_t n);

/* Writes the gzipped profile.proto of the processes at indexes idx[0..n): alloc_objects,
 * alloc_space, inuse_objects, inuse_space per stack and process, labelled pid, exe and host;
 * inuse_space the default unless `allocs`. With base (nbase entries), each value is now minus
 * the base (a delta over a period of `period_ns`), as Go's ?seconds=N. RC_OK, or RC_E_NOMEM or
 * RC_E_OUTPUT with a message in err. */
rc_status_t rc__profile_write(rc_host_t *h, const size_t *idx, size_t n, int allocs,
                              const rc__base_t *base, size_t nbase, int64_t period_ns, FILE *out,
                              rc_err_t *err);

/* ---- http.c: a small HTTP/1.1 server ---- */

typedef struct rc__http rc__http_t;

/* A request as the handler sees it. The strings live until the client is answered. */
typedef struct {
    int client;               /* what rc__http_respond takes */
    const char *method;       /* GET or HEAD (others are answered 405 before this) */
    const char *path;         /* without the query */
    const char *query;        /* after '?', "" when none */
    const char *peer;         /* the client's address, for messages */
} rc__request_t;

/* Listens on ADDR:PORT (an IPv4 address, a name, or [IPv6]; port 0: any free one). NULL with a
 * message in err. */
rc__http_t *rc__http_open(const char *listen, char *err, size_t errlen);
void rc__http_close(rc__http_t *s);
/* In a child process after fork: closes its copies of the sockets, so that connections end when
 * the parent closes them. s must not be used afterwards in the child. */
void rc__http_forget(rc__http_t *s);
/* The address actually bound, "127.0.0.1:40111". */
const char *rc__http_address(const rc__http_t *s);
/* One round: waits at most timeout_ms for sockets to be ready, accepts, reads requests and calls
 * handler for each complete one, writes answers, and drops clients past their time. A handler
 * answers at once with rc__http_respond or later (rc__http_defer first). Never fails: a bad
 * client is answered (400, 405, 413, 431, 503) or dropped. */
void rc__http_round(rc__http_t *s, int timeout_ms,
                    void (*handler)(void *user, const rc__request_t *r), void *user);
/* The request of client will be answered later, within `seconds` more than the usual time. */
void rc__http_defer(rc__http_t *s, int client, int seconds);
/* Answers client: status, content type and body (copied); the connection closes after it. */
void rc__http_respond(rc__http_t *s, int client, int status, const char *type,
                      const void *body, size_t len);

/* ---- servepages.c: /metrics and the index page ---- */

/* "recording", "off", "ended" or "dropped". */
const char *rc__state_name(const rc_info_t *in);
/* The Prometheus text of every recording of h. */
void rc__metrics_write(const rc_host_t *h, FILE *f);
/* The index page: the recordings with their heap now, links to their profiles and reports. */
void rc__index_write(const rc_host_t *h, FILE *f);

/* ---- reports.c: rheap report --html of a running process, made by a child ---- */

#define RC__MAX_REPORTS 2
#define RC__REPORT_S 120

typedef struct {
    int client;
    pid_t child;
    double due;
    char dir[4096];            /* its private directory: report.db, report.html, errors */
} rc__report_t;

typedef struct {
    rc__report_t r[RC__MAX_REPORTS];
    size_t n;
} rc__reports_t;

/* Starts making the report of pid's recordings for client (answered by rc__reports_finish):
 * a child process calls make(user, h, pid, dir). 0, or the HTTP status to answer with and a
 * message in err. */
int rc__report_start(rc__reports_t *rs, rc_host_t *h, rc__http_t *http, int client,
                     uint32_t pid, rc_report_fn make, void *user, char *err, size_t errlen);
/* Answers the reports whose child is done, or past RC__REPORT_S (killed). Never blocks. */
void rc__reports_finish(rc__reports_t *rs, rc__http_t *http);
/* Kills the children still at work and removes their directories. */
void rc__reports_stop(rc__reports_t *rs);

/* ---- dumps.c: heap profiles written on a trigger ---- */

typedef struct {
    uint32_t pid, recording;
    double mark;               /* the live bytes of the last dump */
    int above, seen;
} rc__dumpmark_t;

typedef struct {
    const char *dir;
    double threshold;          /* bytes, or 0 with share */
    double share;              /* percent of the cgroup memory limit, or 0 */
    unsigned keep;
    rc__dumpmark_t *marks;
    size_t nmarks, capmarks;
    unsigned long seq;
    const rc_log_t *log;       /* a note for each dump, a warning for each that fails */
} rc__dumps_t;

/* Writes the dumps the processes of h call for now (a note through d->log for each) and removes the
 * oldest beyond d->keep. */
void rc__dumps_check(rc__dumps_t *d, rc_host_t *h);
void rc__dumps_free(rc__dumps_t *d);

/* ---- cgroup.c: memory limits ---- */

/* The memory limit of process pid's control groups (v1 or v2), the smallest of its groups and
 * their ancestors, into *limit. 0, or -1 when it has none (or it cannot be read). */
int rc__cgroup_limit(uint32_t pid, uint64_t *limit);

#endif /* RC__COLLECTOR_H */
