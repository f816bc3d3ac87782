/*
 * profile.h: what the picture outputs (export, pprof, the HTML report) read from a database,
 * and the functions that write them, grouped by the file that defines them.
 *
 * Every SQL statement behind these outputs lives in profile_data.c; the writers only see the
 * structures below, so the database's layout can change (summary tables instead of the raw
 * allocations) without touching them.
 */
#ifndef RHEAP_CLI_PROFILE_H
#define RHEAP_CLI_PROFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct sqlite3;

/* ---- profile_data.c: reading a database for the pictures ---- */

/* One recording of one process (a processes row) with its totals and its peak. */
typedef struct {
    int64_t pid, recording, ppid; /* ppid -1 when unknown */
    char *exe, *cmdline;          /* NULL when unknown */
    int64_t start_wall_ns;        /* 0 when unknown */
    int64_t end_t;                /* last event, marker or window edge, ns since its start */
    int64_t peak_t, peak_bytes;   /* the largest live heap and when (peak.sql's rule) */
    int64_t peak_blocks;
    int64_t allocs, bytes, frees, leaked_blocks, leaked_bytes;
    int64_t sample_interval;      /* profile mode: mean bytes between samples (the figures but
                                     allocs and bytes are estimates); 0 in trace mode */
    size_t bucket0, nbuckets;     /* its slices of time: buckets[bucket0 .. bucket0 + nbuckets) */
} rheap__proc_t;

/* The blocks one stack allocated in one recording. bt is -1 for blocks without a backtrace. */
typedef struct {
    int64_t pid, recording, bt;
    int64_t blocks, bytes;               /* everything allocated */
    int64_t leaked_blocks, leaked_bytes; /* never freed while recording */
    int64_t peak_blocks, peak_bytes;     /* live at the recording's peak */
    int64_t temporary_blocks;            /* temporary.sql's rule; only with RHEAP_PD_TEMPORARY */
} rheap__stack_stat_t;

/* One frame of a stack, as in the backtraces table. */
typedef struct {
    const char *sym, *file, *module; /* NULL when unknown */
    int64_t line;                    /* 0 when unknown */
    int64_t offset;
    int inlined;                     /* inlined into the next frame */
    int ip_index;                    /* frames from one return address share it */
} rheap__frame_t;

/* A stack from its allocation site outward: frames[0] is the site (the first frame that is
 * not allocator plumbing, the view `frames` of schema.sql), frames[n - 1] the outermost. */
typedef struct {
    int64_t bt;
    size_t nframes;
    rheap__frame_t *frames;
} rheap__stack_t;

/* One slice of a recording's time: [t_from, t_to). */
typedef struct {
    int64_t t_from, t_to;
    int64_t max_live;  /* the most bytes live at any moment of the slice */
    int64_t end_live;  /* bytes live at its end */
    int64_t allocs, frees;
} rheap__bucket_t;

typedef struct {
    int64_t pid, recording, t;
    char *label;
} rheap__marker_t;

typedef struct {
    int64_t pid, recording, on_t, off_t; /* off_t -1: never turned off */
    char *on_how, *off_how;
} rheap__window_t;

typedef struct {
    int64_t pid, recording, tid;
    char *name;
    int64_t allocs, bytes, frees, leaked_blocks, leaked_bytes;
} rheap__thread_t;

/* A power-of-two size class [lo, hi] (lo = hi = 0 for size 0) of one recording. */
typedef struct {
    int64_t pid, recording, lo, hi;
    int64_t blocks, bytes, leaked_blocks, leaked_bytes;
} rheap__size_t;

/* A module path and the build id recorded for it (NULL: none). */
typedef struct {
    char *path, *build_id;
} rheap__module_t;

/* What rheap__pd_load reads beyond the processes, markers and windows. */
enum {
    RHEAP_PD_STACKS = 1,    /* stats per stack and the stacks' frames */
    RHEAP_PD_PEAK = 2,      /* each recording's peak, and the stacks' bytes live then */
    RHEAP_PD_TIMELINE = 4,  /* memory over time in buckets (implies the peak) */
    RHEAP_PD_TEMPORARY = 8, /* temporary blocks per stack */
    RHEAP_PD_TABLES = 16    /* per thread and per size class */
};

typedef struct {
    rheap__proc_t *procs;
    size_t nprocs;
    rheap__stack_stat_t *stats; /* sorted by pid, recording, bt */
    size_t nstats;
    rheap__stack_t *stacks;     /* sorted by bt */
    size_t nstacks;
    rheap__bucket_t *buckets;   /* each process's slices (rheap__proc_t.bucket0) */
    size_t nbuckets;
    int from_rows;              /* read from `allocations`: the database has no summary tables */
    rheap__marker_t *markers;
    size_t nmarkers;
    rheap__window_t *windows;
    size_t nwindows;
    rheap__thread_t *threads;
    size_t nthreads;
    rheap__size_t *sizes;
    size_t nsizes;
    rheap__module_t *modules;   /* distinct paths, sorted */
    size_t nmodules;
    struct pd_pool *pool;       /* owns the strings */
} rheap__pd_t;

/* Reads what `what` (RHEAP_PD_*) asks for, for process pid (-1: every process), with about
 * nbuckets slices per recording for the timeline (at most nbuckets; from the summary tables,
 * groups of their equal slices). Reads the summary tables (stack_stats, ...) when the database
 * has them and the environment does not set RHEAP_SCAN_ROWS=1, else the rows of `allocations`;
 * both give the same numbers. Returns 0, or -1 with a message in err. */
int rheap__pd_load(struct sqlite3 *db, int64_t pid, unsigned what, size_t nbuckets,
                   rheap__pd_t *pd, char *err, size_t errlen);
void rheap__pd_free(rheap__pd_t *pd);
/* The stack with that id, or NULL (bt -1, or a stack the database lacks). */
const rheap__stack_t *rheap__pd_stack(const rheap__pd_t *pd, int64_t bt);
/* The process row of (pid, recording), or NULL. */
const rheap__proc_t *rheap__pd_proc(const rheap__pd_t *pd, int64_t pid, int64_t recording);
/* The largest sampling interval of pd's recordings: 0 when all were made in trace mode (every
 * figure exact), else the figures but allocations and bytes allocated are estimates. */
int64_t rheap__pd_sample_interval(const rheap__pd_t *pd);
/* The build id (hex) recorded for a module path, or NULL. */
const char *rheap__pd_build_id(const rheap__pd_t *pd, const char *path);

/* A map from strings to numbers (it keeps copies of the keys), for the writers' tables. */
typedef struct {
    char **keys;
    uint64_t *vals;
    size_t cap, n;
} rheap__smap_t;

/* The value of key; when absent, stores `next` as its value and sets *created. 0, or -1 when
 * out of memory. */
int rheap__smap_get(rheap__smap_t *m, const char *key, uint64_t next, uint64_t *val, int *created);
void rheap__smap_free(rheap__smap_t *m);

/* ---- suppress.c: leak suppressions (LeakSanitizer's `leak:PATTERN` files) ---- */

/* The rules (a built-in list and the user's files) and, once computed, the suppressed stacks. */
typedef struct rheap__supp rheap__supp_t;

/* What the command line asked for: --suppress FILE (up to 16) and --no-default-suppressions. */
typedef struct {
    const char *files[16];
    size_t nfiles;
    int no_defaults;
} rheap__supp_opts_t;

/* getopt_long values of the two options, for each command's table. */
enum { RHEAP_SUPP_OPT_FILE = 0x1001, RHEAP_SUPP_OPT_NO_DEFAULTS = 0x1002 };
#define RHEAP_SUPP_LONGS                                                                         \
    {"suppress", required_argument, NULL, RHEAP_SUPP_OPT_FILE},                                  \
        {"no-default-suppressions", no_argument, NULL, RHEAP_SUPP_OPT_NO_DEFAULTS}
#define RHEAP_SUPP_HELP                                                                          \
    "  --suppress FILE     leave out leaks whose stack matches a line of FILE, in\n"             \
    "                      LeakSanitizer's format: leak:PATTERN, # comments; PATTERN\n"          \
    "                      matches a function, source file or module of any frame,\n"           \
    "                      * any characters, ^ and $ anchor it (repeatable)\n"                   \
    "  --no-default-suppressions\n"                                                              \
    "                      keep the never-freed runtime pools that the built-in list\n"         \
    "                      leaves out (stdio buffers, libstdc++'s exception pool)\n"

/* Takes getopt_long's result c: 1 when it was one of the two options (recorded in o), 0 when
 * not, -1 when too many files were given (said on stderr; a usage error). */
int rheap__supp_option(rheap__supp_opts_t *o, int c, const char *arg);
/* LeakSanitizer's match of one pattern against one name: anywhere in it unless anchored by a
 * leading ^ or a trailing $, * for any run of characters. An empty or NULL name never matches. */
int rheap__supp_match(const char *pattern, const char *name);
/* An empty set of rules, with the built-in list when defaults; NULL when out of memory. */
rheap__supp_t *rheap__supp_create(int defaults);
void rheap__supp_destroy(rheap__supp_t *s);
/* Adds the rules of a suppression file. An RHEAP_EXIT_*, with a message on err. */
int rheap__supp_load(rheap__supp_t *s, const char *path, FILE *err);
/* Decides every stack that leaked (suppressions take only leaks out), in one pass over their
 * rows of `backtraces`. 0, or -1 with err. */
int rheap__supp_stacks(rheap__supp_t *s, struct sqlite3 *db, char *err, size_t errlen);
/* create + load each file + stacks, as the options ask. An RHEAP_EXIT_*; *out set on success. */
int rheap__supp_open(const rheap__supp_opts_t *o, struct sqlite3 *db, rheap__supp_t **out,
                     FILE *err);
/* The index of the rule that suppresses stack bt, or -1 (also for s NULL). */
long rheap__supp_rule_of(const rheap__supp_t *s, int64_t bt);
size_t rheap__supp_nrules(const rheap__supp_t *s);
size_t rheap__supp_nids(const rheap__supp_t *s);
/* Makes the connection's `stack_stats` a temp view of main.stack_stats with the leak columns
 * of suppressed stacks zeroed, so canned queries (leaks.sql) run unchanged; nothing when no
 * stack is suppressed. 0 or -1. */
int rheap__supp_shadow(const rheap__supp_t *s, struct sqlite3 *db, char *err, size_t errlen);
/* Drops what rheap__supp_shadow made. */
void rheap__supp_unshadow(struct sqlite3 *db);
/* Zeroes the leaks of suppressed stacks in pd (and takes them off their processes' totals),
 * adding them per rule into blocks[] and bytes[] (rheap__supp_nrules entries each). */
void rheap__supp_apply_pd(const rheap__supp_t *s, rheap__pd_t *pd, int64_t *blocks,
                          int64_t *bytes);
/* Adds the never-freed blocks and bytes of suppressed stacks (of process pid, text; NULL: all)
 * per rule into blocks[] and bytes[], from main.stack_stats. 0 or -1. */
int rheap__supp_totals(const rheap__supp_t *s, struct sqlite3 *db, const char *pid,
                       int64_t *blocks, int64_t *bytes);
/* "PREFIXsuppressed: N blocks, B bytes (default list: stdio buffers; FILE: pattern)" and a
 * newline, naming the rules that took something; nothing when there are no rules. */
void rheap__supp_print(const rheap__supp_t *s, const int64_t *blocks, const int64_t *bytes,
                       const char *prefix, FILE *out);

/* ---- export.c: `rheap export` ---- */

/* The weights a stack can be measured by. */
typedef enum {
    RHEAP_W_LEAKED,      /* bytes never freed */
    RHEAP_W_PEAK,        /* bytes live at the peak */
    RHEAP_W_ALLOCATED,   /* bytes allocated */
    RHEAP_W_ALLOCATIONS, /* blocks allocated */
    RHEAP_W_TEMPORARY    /* temporary blocks */
} rheap__weight_t;

int64_t rheap__weight_of(const rheap__stack_stat_t *s, rheap__weight_t w);
/* A frame's display name: its function, or module+0xoffset when unknown. */
const char *rheap__frame_name(const rheap__frame_t *f, char *buf, size_t len);
int rheap__cmd_export(int argc, char **argv);

/* ---- pprof.c: profile.proto, gzipped ---- */

/* Writes the profile of pd to out: a Go heap profile (alloc_objects, alloc_space,
 * inuse_objects, inuse_space; inuse = never freed) or, with peak, the blocks live at each
 * recording's peak. 0, or -1 with a message in err. */
int rheap__pprof_write(const rheap__pd_t *pd, int peak,
                       rheap__weight_t default_weight, FILE *out, char *err, size_t errlen);
/* The same with base: one sample per stack of either, NEW minus BASE (negative where BASE had
 * more), stacks matched by their frames' function, file and line since ids and pids differ
 * between databases; what `go tool pprof -diff_base=BASE NEW` shows of two exports. */
int rheap__pprof_write_diff(const rheap__pd_t *pd, const rheap__pd_t *base, int peak,
                            rheap__weight_t default_weight, FILE *out, char *err, size_t errlen);

/* ---- diff.c: `rheap diff BASE.db NEW.db` ---- */
int rheap__cmd_diff(int argc, char **argv);

/* ---- html.c: the self-contained HTML report ---- */

/* `rheap report --html -o FILE DB` (arguments after the command name). */
int rheap__cmd_report_html(int argc, char **argv);

#endif
