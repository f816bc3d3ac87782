/*
 * rheap_collect.h: the host collector library, following the recordings written under some
 * directories while their processes run and serving their live heaps.
 *
 * A host (rc_host_t) follows every recording (rip-<pid>[-N]) that appears under its directories,
 * profile and trace mode, as processes start, exec and end, and keeps each process's live heap
 * up to date from what its recording has written so far; a profile (rc_profile_write) is that
 * heap as a gzipped profile.proto, the form go tool pprof, Pyroscope and Parca read. A server
 * (rc_server_t) is a host behind a small HTTP server, with /debug/pprof/heap and allocs,
 * /metrics, an index page, reports made on demand and dumps on a trigger: the loop of
 * `rheap serve`.
 *
 * The library prints nothing. A function that can fail returns an rc_status_t and, unless it is
 * RC_OK, leaves one sentence in the caller's rc_err_t saying what was wrong and where; notes and
 * warnings a long-running host has to say (a damaged thread file, a process no longer followed,
 * a dump written) go to the caller's rc_log_t, one sentence each, or nowhere when it has none.
 * Single-threaded: one thread uses a host or a server at a time.
 */
#ifndef RHEAP_COLLECT_H
#define RHEAP_COLLECT_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---- Statuses and messages (failures.c) ---- */

/* X(NAME, CODE, TEXT). The codes are the `rheap` command's exit statuses for the same cases. */
#define RC_STATUS_LIST(X)                                                                        \
    X(RC_OK, 0, "done")                                                                          \
    X(RC_E_USAGE, 1, "a value the caller gave is not one the collector takes")                   \
    X(RC_E_INPUT, 2, "a directory or recording could not be read")                               \
    X(RC_E_OUTPUT, 4, "a profile could not be written")                                          \
    X(RC_E_NOMEM, 5, "out of memory")

#define RC__STATUS_ENUM(name, code, text) name = code,
typedef enum { RC_STATUS_LIST(RC__STATUS_ENUM) } rc_status_t;
#undef RC__STATUS_ENUM

/* The TEXT of a status; "unknown status" for any other value. */
const char *rc_status_str(int status);

typedef struct {
    char msg[512];
} rc_err_t;

typedef enum { RC_LOG_NOTE, RC_LOG_WARNING } rc_level_t;

/* Where the collector's notes and warnings go: fn(user, level, sentence), the sentence without
 * a newline. A zeroed rc_log_t drops them. */
typedef struct {
    void (*fn)(void *user, rc_level_t level, const char *msg);
    void *user;
} rc_log_t;

/* ---- The live heaps of a host (heap.c) ---- */

typedef enum { RC_RECORDING, RC_OFF, RC_ENDED } rc_state_t;

/* What a process's recording holds now (the strings are the host's, valid until its next
 * scan). */
typedef struct {
    uint32_t pid, recording;
    const char *dir, *exe, *cmdline;
    rc_state_t state;
    uint64_t interval;        /* profile mode: the mean sampling interval; 0 in trace mode */
    uint64_t start_wall_ns;   /* CLOCK_REALTIME when recording began */
    double live_bytes, live_blocks;       /* estimates in profile mode */
    double alloc_bytes, alloc_blocks;     /* exact in both modes (profile: the totals records) */
    double rate;              /* bytes allocated per second, over the last few seconds */
    double high_bytes;        /* the most live bytes seen at any scan */
    size_t nstacks;
    uint64_t memory;          /* bytes the collector holds for it */
    int dropped;              /* no longer followed (rc_host_budget): the figures are the last */
    uint64_t compactions;     /* checkpoints this host wrote for it (rc_host_disk_budget) */
    uint64_t compacted_before_ns; /* its newest checkpoint's time (ns since recording began): the
                                     frees of blocks allocated and freed before it are gone; 0 */
    uint64_t compactions_deferred; /* compactions put off to a later scan: a conversion was
                                      reading the recording (its shared flock) */
} rc_info_t;

typedef struct rc_host rc_host_t;

/* A host following the recordings under dirs[0..ndirs) (copied), saying what it must through
 * log (may be NULL). NULL when out of memory. destroy(NULL) is a no-op. */
rc_host_t *rc_host_create(const char *const *dirs, size_t ndirs, const rc_log_t *log);
void rc_host_destroy(rc_host_t *h);
/* Looks for new recordings, reads what every followed one has written since the last scan,
 * notes processes that ended (their recording is then read to its end) and forgets those whose
 * directory is gone or that ended more than `linger_s` seconds ago. Never blocks on a
 * recording. RC_OK, or RC_E_NOMEM (what was read stays). */
rc_status_t rc_host_scan(rc_host_t *h, double linger_s, rc_err_t *err);
/* The most bytes of state the host keeps for one process (0, the default: no limit). A process
 * whose state passes it is no longer followed, with a warning: its tables are freed and its
 * figures stay as they were. */
void rc_host_budget(rc_host_t *h, uint64_t bytes);
/* Profile mode's disk budget per process (0, the default: never compact). Once the closed
 * segments of a recording (rip-format/FORMAT.md section 3a), read to their end, hold this many
 * bytes of disk, the host replaces them and its previous checkpoint by a new checkpoint of the
 * live sampled blocks they hold (section 3b), written durably before they are deleted. A
 * failure to write or delete is said through the log once, and that recording is no longer
 * compacted. */
void rc_host_disk_budget(rc_host_t *h, uint64_t bytes);
/* The processes, ordered by pid then recording; i < rc_host_count(h). */
size_t rc_host_count(const rc_host_t *h);
void rc_host_info(const rc_host_t *h, size_t i, rc_info_t *out);
/* The index of the newest recording of pid (after an exec or a toggle, the one that grows),
 * or -1. */
long rc_host_find(const rc_host_t *h, uint32_t pid);
/* The processes a profile covers, their indexes into idx (room for rc_host_count(h)): the
 * newest recording of pid (any state), or with pid -1 that of every process still running and
 * followed (the image each runs now). Returns how many. */
size_t rc_host_pick(const rc_host_t *h, long pid, size_t *idx);

/* ---- Profiles (heapprof.c) ---- */

/* Writes to out the gzipped profile.proto of the processes at indexes idx[0..n) of h:
 * alloc_objects, alloc_space, inuse_objects, inuse_space per stack and process, labelled pid,
 * exe and host; inuse_space the default unless `allocs`. RC_OK, or RC_E_NOMEM or RC_E_OUTPUT
 * with a message. */
rc_status_t rc_profile_write(rc_host_t *h, const size_t *idx, size_t n, int allocs, FILE *out,
                             rc_err_t *err);

/* ---- The server (server.c) ---- */

/* Makes the HTML report of process pid's recordings as far as they are written, as the file
 * DIR/report.html; DIR is a private directory it may use for other files too. Called in a child
 * process whose standard error goes to the page answered when it fails. 0 when the page is
 * written. */
typedef int (*rc_report_fn)(void *user, const rc_host_t *h, uint32_t pid, const char *dir);

typedef struct {
    const char *listen;              /* ADDR:PORT, [IPv6]:PORT or NAME:PORT; port 0: any */
    const char *const *dirs;         /* where the recordings appear */
    size_t ndirs;
    uint64_t process_memory;         /* rc_host_budget's bytes; 0: no limit */
    const char *dump_dir;            /* NULL: no dumps */
    double dump_bytes;               /* dump when the live heap passes this many bytes ... */
    double dump_share;               /* ... or this percentage of the cgroup memory limit */
    unsigned dump_keep;              /* the newest dumps kept in dump_dir */
    rc_report_fn report;             /* NULL: /report answers 404 */
    void *report_user;
    rc_log_t log;
    uint64_t disk_budget;            /* rc_host_disk_budget's bytes; 0: never compact */
} rc_serve_opts_t;

#define RC_SERVE_OPTS_INIT                                                                         \
    {"127.0.0.1:6060", NULL, 0, 0, NULL, 0, 0, 16, NULL, NULL, {NULL, NULL}, 0}

typedef struct rc_server rc_server_t;

/* The longest period a delta profile (?seconds=N) may ask for. */
#define RC_MAX_SECONDS 300

/* A whole number from 1 to max, digits only (no sign, no space), as the server takes it in a
 * request (pid, seconds) and `rheap serve` in its options; 0 when s is not one. */
unsigned long rc_whole_number(const char *s, unsigned long max);

/* Listens where o says and reads the recordings there once. RC_OK and *out, or RC_E_USAGE
 * (an address that cannot be listened on) or RC_E_NOMEM with a message. */
rc_status_t rc_server_open(const rc_serve_opts_t *o, rc_server_t **out, rc_err_t *err);
/* The address actually bound, "127.0.0.1:40111". */
const char *rc_server_address(const rc_server_t *s);
/* The host the server follows, for its figures. */
const rc_host_t *rc_server_host(const rc_server_t *s);
/* Serves until *stop is set (a signal handler's flag): answers requests, reads the recordings
 * every 200 ms, writes the dumps they call for, makes the reports asked for. A bad client or a
 * failure while answering one never ends it. */
void rc_server_run(rc_server_t *s, volatile sig_atomic_t *stop);
/* Ends the reports under way, frees everything and closes the socket. close(NULL) is a no-op. */
void rc_server_close(rc_server_t *s);

#endif
