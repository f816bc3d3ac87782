/*
 * serve.h: the host collector's cross-file functions (`rheap serve`, `rheap snapshot`), grouped
 * by the file that defines them. heap.c follows recordings as they are written and keeps each
 * process's live heap; heapprof.c writes it as profile.proto; http.c is the small HTTP/1.1
 * server; servepages.c, reports.c and dumps.c make what serve.c answers and writes; cgroup.c
 * reads memory limits; serve.c and snapshot.c are the commands.
 */
#ifndef RHEAP_SERVE_H
#define RHEAP_SERVE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "rheap_convert.h"

/* ---- heap.c: the live heap of every recording under some directories ---- */

/* One frame of a stack: a return address in a module (the symbolizer's module id, the offset
 * from its load bias), or module -1 and the absolute address. */
typedef struct {
    int module;
    uint64_t offset;
} sv__frame_t;

/* The values of one stack, in blocks and bytes (estimates in profile mode, so not integers):
 * everything allocated since the recording began, and what of it is live now. */
typedef struct {
    double alloc_blocks, alloc_bytes, live_blocks, live_bytes;
} sv__vals_t;

typedef struct {
    uint64_t hash;
    uint32_t nframes;
    sv__frame_t *frames;
    sv__vals_t v;
} sv__stack_t;

typedef enum { SV_RECORDING, SV_OFF, SV_ENDED } sv__state_t;

typedef struct sv__proc sv__proc_t;

/* What a process's recording holds now, for printing (owned by the host). */
typedef struct {
    uint32_t pid, recording;
    const char *dir, *exe, *cmdline;
    sv__state_t state;
    uint64_t interval;        /* profile mode: the mean sampling interval; 0 in trace mode */
    uint64_t start_wall_ns;   /* CLOCK_REALTIME when recording began */
    double live_bytes, live_blocks;       /* estimates in profile mode */
    double alloc_bytes, alloc_blocks;     /* exact in both modes (profile: the totals records) */
    double rate;              /* bytes allocated per second, over the last few seconds */
    double high_bytes;        /* the most live bytes seen at any scan */
    size_t nstacks;
    const sv__stack_t *stacks;
    uint64_t memory;          /* bytes the collector holds for it */
    int dropped;              /* no longer followed (sv__host_budget): the figures are the last */
} sv__info_t;

typedef struct sv__host sv__host_t;

/* A host following the recordings (rip-<pid>[-N] directories) under dirs. NULL when out of
 * memory. destroy(NULL) is a no-op. Single-threaded. */
sv__host_t *sv__host_create(const char *const *dirs, size_t ndirs);
void sv__host_destroy(sv__host_t *h);
/* Looks for new recordings, reads what every followed one has written since the last scan,
 * notes processes that ended (their recording is then read to its end) and forgets those whose
 * directory is gone or that ended more than `linger_s` seconds ago. Never blocks on a
 * recording. 0, or -1 when out of memory (what was read stays). */
int sv__host_scan(sv__host_t *h, double linger_s);
/* The most bytes of state the collector keeps for one process (0, the default: no limit). A
 * process whose state passes it is no longer followed, with a warning on stderr: its tables are
 * freed and its figures stay as they were. */
void sv__host_budget(sv__host_t *h, uint64_t bytes);
/* The processes, ordered by pid then recording. */
size_t sv__host_count(const sv__host_t *h);
void sv__host_info(const sv__host_t *h, size_t i, sv__info_t *out);
/* The index of the newest recording of pid (after an exec or a toggle, the one that grows),
 * or -1. */
long sv__host_find(const sv__host_t *h, uint32_t pid);
rheap_symbols_t *sv__host_symbols(sv__host_t *h);
/* The host's name, for the profiles' labels. */
const char *sv__host_name(const sv__host_t *h);

/* ---- heapprof.c: live heaps as profile.proto ---- */

/* The stack values of one recording at some moment, the base of a delta profile. */
typedef struct {
    uint32_t pid, recording;
    size_t nstacks;
    sv__vals_t *v;
} sv__base_t;

/* Captures the values of the processes at indexes idx[0..n) of h. NULL when out of memory. */
sv__base_t *sv__base_take(const sv__host_t *h, const size_t *idx, size_t n, size_t *nbase);
void sv__base_free(sv__base_t *b, size_t n);

/* Writes the gzipped profile.proto of the processes at indexes idx[0..n): alloc_objects,
 * alloc_space, inuse_objects, inuse_space per stack and process, labelled pid, exe and host;
 * inuse_space the default unless `allocs`. With base (nbase entries), each value is now minus
 * the base (a delta over a period of `period_ns`), as Go's ?seconds=N. 0, or -1 with a message
 * in err. */
int sv__profile_write(sv__host_t *h, const size_t *idx, size_t n, int allocs,
                      const sv__base_t *base, size_t nbase, int64_t period_ns, FILE *out,
                      char *err, size_t errlen);

/* ---- http.c: a small HTTP/1.1 server ---- */

typedef struct sv__http sv__http_t;

/* A request as the handler sees it. The strings live until the client is answered. */
typedef struct {
    int client;               /* what sv__http_respond takes */
    const char *method;       /* GET or HEAD (others are answered 405 before this) */
    const char *path;         /* without the query */
    const char *query;        /* after '?', "" when none */
    const char *peer;         /* the client's address, for messages */
} sv__request_t;

/* Listens on ADDR:PORT (an IPv4 address, a name, or [IPv6]; port 0: any free one). NULL with a
 * message in err. */
sv__http_t *sv__http_open(const char *listen, char *err, size_t errlen);
void sv__http_close(sv__http_t *s);
/* In a child process after fork: closes its copies of the sockets, so that connections end when
 * the parent closes them. s must not be used afterwards in the child. */
void sv__http_forget(sv__http_t *s);
/* The address actually bound, "127.0.0.1:40111". */
const char *sv__http_address(const sv__http_t *s);
/* One round: waits at most timeout_ms for sockets to be ready, accepts, reads requests and calls
 * handler for each complete one, writes answers, and drops clients past their time. A handler
 * answers at once with sv__http_respond or later (sv__http_defer first). Never fails: a bad
 * client is answered (400, 405, 413, 431, 503) or dropped. */
void sv__http_round(sv__http_t *s, int timeout_ms,
                    void (*handler)(void *user, const sv__request_t *r), void *user);
/* The request of client will be answered later, within `seconds` more than the usual time. */
void sv__http_defer(sv__http_t *s, int client, int seconds);
/* Answers client: status, content type and body (copied); the connection closes after it. */
void sv__http_respond(sv__http_t *s, int client, int status, const char *type,
                      const void *body, size_t len);

/* ---- servepages.c: /metrics and the index page ---- */

/* "recording", "off", "ended" or "dropped". */
const char *sv__state_name(const sv__info_t *in);
/* The Prometheus text of every recording of h. */
void sv__metrics_write(const sv__host_t *h, FILE *f);
/* The index page: the recordings with their heap now, links to their profiles and reports. */
void sv__index_write(const sv__host_t *h, FILE *f);

/* ---- reports.c: rheap report --html of a running process, made by a child ---- */

#define SV_MAX_REPORTS 2
#define SV_REPORT_S 120

typedef struct {
    int client;
    pid_t child;
    double due;
    char dir[4096];            /* its private directory: report.db, report.html, errors */
} sv__report_t;

typedef struct {
    sv__report_t r[SV_MAX_REPORTS];
    size_t n;
} sv__reports_t;

/* Starts making the report of pid's recordings for client (answered by sv__reports_finish).
 * 0, or the HTTP status to answer with and a message in err. */
int sv__report_start(sv__reports_t *rs, sv__host_t *h, sv__http_t *http, int client,
                     uint32_t pid, char *err, size_t errlen);
/* Answers the reports whose child is done, or past SV_REPORT_S (killed). Never blocks. */
void sv__reports_finish(sv__reports_t *rs, sv__http_t *http);
/* Kills the children still at work and removes their directories. */
void sv__reports_stop(sv__reports_t *rs);

/* ---- dumps.c: heap profiles written on a trigger ---- */

typedef struct {
    uint32_t pid, recording;
    double mark;               /* the live bytes of the last dump */
    int above, seen;
} sv__dumpmark_t;

typedef struct {
    const char *dir;
    double threshold;          /* bytes, or 0 with share */
    double share;              /* percent of the cgroup memory limit, or 0 */
    unsigned keep;
    sv__dumpmark_t *marks;
    size_t nmarks, capmarks;
    unsigned long seq;
} sv__dumps_t;

/* Writes the dumps the processes of h call for now (a note on stderr for each) and removes the
 * oldest beyond d->keep. */
void sv__dumps_check(sv__dumps_t *d, sv__host_t *h);
void sv__dumps_free(sv__dumps_t *d);

/* ---- cgroup.c: memory limits ---- */

/* The memory limit of process pid's control groups (v1 or v2), the smallest of its groups and
 * their ancestors, into *limit. 0, or -1 when it has none (or it cannot be read). */
int sv__cgroup_limit(uint32_t pid, uint64_t *limit);

/* ---- snapshot.c: `rheap snapshot`, and a conversion of what is written ---- */

/* Converts the recordings of pid that h follows, as far as they are written now, into the
 * database output (the converter's live inputs, told nothing grows any more; a recording
 * without its end gets a warning). Messages on stderr. Returns an RHEAP_EXIT_*. */
int sv__convert_pid(const sv__host_t *h, uint32_t pid, const char *output, int force);

/* ---- serve.c, snapshot.c: the commands ---- */
int cli__cmd_serve(int argc, char **argv);
int cli__cmd_snapshot(int argc, char **argv);

#endif
