/*
 * rheap_analysis.h: the analysis library, reading finished rheap databases (schema.sql).
 *
 * Opening a database and checking that it is one of ours; running SQL into tables; the canned
 * query files (queries/NAME.sql) with their declared parameters and the values each takes;
 * leak suppressions in LeakSanitizer's format; and the model the pictures are drawn from (per
 * recording its totals, peak and timeline, per stack its weights and frames from the
 * allocation site outward).
 *
 * The library prints nothing. A function that can fail returns an ra_status_t and, unless it is
 * RA_OK, leaves one sentence in the caller's ra_err_t saying what was wrong and where (a path,
 * a line, the parameter's name); the `rheap` command prints it as its error line and exits
 * with the status's code. Nothing here is thread-safe across calls on one connection; distinct
 * connections may be used from distinct threads.
 */
#ifndef RHEAP_ANALYSIS_H
#define RHEAP_ANALYSIS_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct sqlite3;

/* ---- Status and message ---- */

/* X(NAME, CODE, TEXT): every result of a call. The codes are the `rheap` command's exit
 * statuses for the same cases, so the command passes them on unchanged; keep them stable. */
#define RA_STATUS_LIST(X)                                                                        \
    X(RA_OK, 0, "done")                                                                          \
    X(RA_E_USAGE, 1, "a name or value the caller gave is not one the database or query takes")   \
    X(RA_E_INPUT, 2, "a database, query file or suppression file could not be read as one")      \
    X(RA_E_NOMEM, 4, "out of memory")

#define RA__STATUS_ENUM(name, code, text) name = code,
typedef enum { RA_STATUS_LIST(RA__STATUS_ENUM) } ra_status_t;
#undef RA__STATUS_ENUM

/* The TEXT of a status; "unknown status" for any other value. */
const char *ra_status_str(int status);

/* The message of the last failure, one sentence without a newline; "" after success. */
typedef struct {
    char msg[1024];
} ra_err_t;

/* How every library of rheap built on this one (the collector too) says its statuses and
 * failures, so that the rule lives in one place (errors.c); each keeps its own list. */
typedef struct {
    int code;
    const char *text;
} ra_status_entry_t;
/* The text of status in table[0 .. n) (a library's X-macro list); "unknown status" when the
 * table has no such code. */
const char *ra_status_text(const ra_status_entry_t *table, size_t n, int status);
/* Writes the message fmt and ap make into msg (cap bytes, always ended; nothing when msg is
 * NULL: the caller wants the status only) and returns status, for a library's `return
 * xx__fail(err, STATUS, "%s: ...", path);`. */
int ra_vfail(char *msg, size_t cap, int status, const char *fmt, va_list ap);

/* ---- Opening a database (open.c) ---- */

/* Opens the rheap database at path read-only (ra_open_read) or to change its rows
 * (ra_open_write), never creating a file, with a busy timeout of 5 s, after checking that it
 * is a regular non-empty file, an SQLite database with the tables meta and allocations, and of
 * the schema version this rheap reads. RA_OK with *db set, else RA_E_INPUT (or RA_E_NOMEM) with
 * *db NULL and a message naming path and what it is instead. */
ra_status_t ra_open_read(const char *path, struct sqlite3 **db, ra_err_t *err);
ra_status_t ra_open_write(const char *path, struct sqlite3 **db, ra_err_t *err);
/* The largest sampling interval of the recordings of process pid (NULL: of every process) made
 * in profile mode, whose figures but allocations and bytes allocated are estimates; 0 when all
 * were made in trace mode (or on a database error). */
long long ra_sample_interval(struct sqlite3 *db, const char *pid);

/* ---- Tables: SQL results held in memory (fetch.c) ---- */

/* A value bound to the SQL parameter :key (a number when the whole text is one). */
typedef struct {
    const char *key, *value;
} ra_kv_t;

/* A fetched result: cells[row * ncols + col] is the text of a value, NULL for SQL NULL;
 * types[] holds the SQLite type of each cell (SQLITE_INTEGER, ...). */
typedef struct {
    size_t ncols, nrows;
    char **names;
    char **cells;
    unsigned char *types;
    size_t more;  /* rows the statement gave beyond the nrows kept (ra_query_run_rows) */
} ra_table_t;

/* Runs sql (one or more statements) binding :key for each kv; t holds the result of the last
 * statement that returns columns (t is always initialized: ra_table_free it either way).
 * RA_OK, or RA_E_INPUT with SQLite's message (RA_E_NOMEM). */
ra_status_t ra_fetch(struct sqlite3 *db, const char *sql, const ra_kv_t *kv, size_t nkv,
                     ra_table_t *t, ra_err_t *err);
/* ra_fetch keeping the first max_rows rows of the result and counting the others in t->more:
 * a process tree's per-site answers have hundreds of thousands of rows, of which a terminal
 * shows a screen. */
ra_status_t ra_fetch_rows(struct sqlite3 *db, const char *sql, const ra_kv_t *kv, size_t nkv,
                          size_t max_rows, ra_table_t *t, ra_err_t *err);
/* The value of column col in row, or NULL (no such row or column, or SQL NULL). */
const char *ra_table_cell(const ra_table_t *t, size_t row, const char *col);
/* Frees what t holds and empties it; a zeroed table is fine. */
void ra_table_free(ra_table_t *t);

/* ---- Query files: queries/NAME.sql and their parameters (fetch.c, params.c) ---- */

/* A parameter declared in a query file's header: `-- param: NAME = DEFAULT  (description)`. */
typedef struct {
    char *name, *def, *desc;
} ra_qparam_t;

/* A loaded query file. */
typedef struct {
    char *name, *path;
    char *title;  /* first line of the header comment, without "NAME:" */
    char *sql;    /* the whole file */
    ra_qparam_t *params;
    size_t nparams;
} ra_query_t;

/* 1 when name can name a query file: letters, digits, '-' and '_'. */
int ra_query_name_ok(const char *name);
/* Sorted names (without .sql) of the query files in dir; free each and the array. NULL with *n
 * 0 when there are none (or dir cannot be read). */
char **ra_query_names(const char *dir, size_t *n);
/* Loads dir/NAME.sql and parses its header. RA_E_USAGE when name is not a query name or the file
 * does not exist, RA_E_INPUT when it cannot be read, RA_E_NOMEM; q is zeroed on failure. */
ra_status_t ra_query_load(const char *dir, const char *name, ra_query_t *q, ra_err_t *err);
/* The same from the file's text (len bytes, not NUL-terminated; a NUL ends the header), which
 * q keeps a copy of; name and path are how it is called. RA_OK or RA_E_NOMEM. */
ra_status_t ra_query_parse(const char *name, const char *path, const char *text, size_t len,
                           ra_query_t *q, ra_err_t *err);
/* Frees what q holds; a zeroed query is fine. */
void ra_query_free(ra_query_t *q);
/* Runs a loaded query with the user's values: a key that is neither a declared parameter nor a
 * :name of its SQL is RA_E_USAGE listing the valid ones, a value ra_param_check refuses too;
 * an SQL error is RA_E_INPUT naming the query and its file. t is always initialized. */
ra_status_t ra_query_run(struct sqlite3 *db, const ra_query_t *q, const ra_kv_t *kv, size_t nkv,
                         ra_table_t *t, ra_err_t *err);
/* ra_query_run keeping the first max_rows rows, the others counted in t->more (ra_fetch_rows). */
ra_status_t ra_query_run_rows(struct sqlite3 *db, const ra_query_t *q, const ra_kv_t *kv,
                              size_t nkv, size_t max_rows, ra_table_t *t, ra_err_t *err);
/* Checks value against what the documented parameter `name` takes (queries/README.md: a pid of
 * the database, a whole number, one of a few words, a marker label of the database, ...);
 * names it does not know pass. RA_OK, or RA_E_USAGE with a message naming the allowed values
 * and `opt`, where the value came from ("--param NAME" when opt is NULL). */
ra_status_t ra_param_check(struct sqlite3 *db, const char *name, const char *value,
                           const char *opt, ra_err_t *err);
/* A time as a person writes it, in ns: plain digits are ns; digits with an optional fraction
 * and a unit (ns, us or \u00b5s, ms, s; one blank allowed before it) are scaled and rounded
 * to whole ns: "1.8s", "250ms", "12us", "40 ns". 0 and *ns set, or -1 (not a time, or
 * 2^63 ns or more). The same rule for every parameter that is a time. */
int ra_duration_ns(const char *text, int64_t *ns);

/* ---- Leak suppressions, LeakSanitizer's `leak:PATTERN` files (suppress.c) ---- */

/* The rules (a built-in list and the caller's files) and, once decided, the suppressed stacks. */
typedef struct ra_supp ra_supp_t;

/* LeakSanitizer's match of one pattern against one name: anywhere in it unless anchored by a
 * leading ^ or a trailing $, * for any run of characters. An empty or NULL name never matches. */
int ra_supp_match(const char *pattern, const char *name);
/* An empty set of rules, with the built-in list when defaults; NULL when out of memory. */
ra_supp_t *ra_supp_create(int defaults);
/* Frees s; NULL is a no-op. */
void ra_supp_destroy(ra_supp_t *s);
/* Adds the rules of a suppression file: one `leak:PATTERN` a line, `#` comments and blank lines
 * skipped. RA_E_INPUT when it cannot be read, RA_E_USAGE naming path and line for any other
 * line, RA_E_NOMEM. */
ra_status_t ra_supp_load(ra_supp_t *s, const char *path, ra_err_t *err);
/* The same from a file's text (len bytes; a NUL ends its line), which `origin` names in
 * messages and in ra_supp_rule: it must outlive s. RA_E_USAGE or RA_E_NOMEM. */
ra_status_t ra_supp_parse(ra_supp_t *s, const char *origin, const char *text, size_t len,
                          ra_err_t *err);
/* Decides every stack that leaked (suppressions take only leaks out), in one pass over their
 * rows of `backtraces`. RA_OK, or RA_E_INPUT / RA_E_NOMEM. */
ra_status_t ra_supp_stacks(ra_supp_t *s, struct sqlite3 *db, ra_err_t *err);
/* The index of the rule that suppresses stack bt, or -1 (also for s NULL). */
long ra_supp_rule_of(const ra_supp_t *s, int64_t bt);
/* How many rules, and how many stacks they suppress (0 for s NULL). */
size_t ra_supp_nrules(const ra_supp_t *s);
size_t ra_supp_nids(const ra_supp_t *s);
/* Rule r's name (a built-in entry's label, or the user's pattern), and in *from where it came
 * from: NULL for the built-in list, else the file's path as given to ra_supp_load. */
const char *ra_supp_rule(const ra_supp_t *s, size_t r, const char **from);
/* Makes the connection's `stack_stats` a temp view of main.stack_stats with the leak columns
 * of suppressed stacks zeroed, so canned queries (leaks.sql) run unchanged; nothing when no
 * stack is suppressed. RA_OK or RA_E_INPUT. */
ra_status_t ra_supp_shadow(const ra_supp_t *s, struct sqlite3 *db, ra_err_t *err);
/* Drops what ra_supp_shadow made. */
void ra_supp_unshadow(struct sqlite3 *db);
/* After ra_supp_shadow: takes its two views away (on = 0), so that queries that read no leak
 * column read the tables themselves (a view joins every row with the re-added sites), or puts
 * them back (on = 1) without deciding anything again. Nothing when no stack is suppressed.
 * RA_OK or RA_E_INPUT. */
ra_status_t ra_supp_views(const ra_supp_t *s, struct sqlite3 *db, int on, ra_err_t *err);
/* Adds the never-freed blocks and bytes of suppressed stacks (of process pid, text; NULL: all)
 * per rule into blocks[] and bytes[] (ra_supp_nrules entries each), from main.stack_stats.
 * RA_OK or RA_E_INPUT. */
ra_status_t ra_supp_totals(const ra_supp_t *s, struct sqlite3 *db, const char *pid,
                           int64_t *blocks, int64_t *bytes, ra_err_t *err);

/* ---- The model the pictures are drawn from (model.c) ---- */

/* One recording of one process (a processes row) with its totals and its peak. */
typedef struct {
    int64_t pid, recording, ppid; /* ppid -1 when unknown */
    char *exe, *cmdline;          /* NULL when unknown */
    int64_t start_wall_ns;        /* 0 when unknown */
    int64_t end_t;                /* last event, marker or window edge, ns since its start */
    int64_t peak_t, peak_bytes;   /* the largest live heap and when (peak.sql's rule) */
    int64_t peak_blocks;
    int64_t allocs, bytes, frees;
    int64_t leaked_blocks, leaked_bytes;   /* never freed before the process ended; 0 in a window */
    int64_t stopped_blocks, stopped_bytes; /* a window's: still live when recording stopped */
    int until_exit;               /* 1: the recording lasted until its process ended, so its
                                     never-freed blocks are leaks; 0: a window (schema.sql's
                                     view recording_ends), whose live blocks are `stopped` */
    int64_t sample_interval;      /* profile mode: mean bytes between samples (the figures but
                                     allocs and bytes are estimates); 0 in trace mode */
    size_t bucket0, nbuckets;     /* its slices of time: buckets[bucket0 .. bucket0 + nbuckets) */
    int moment;                   /* RA_MOMENT_AT or _RANGE after ra_model_moment: peak_t and the
                                     peak figures (here and per stack) are the heap at the moment
                                     asked for, not the recording's own peak; 0 otherwise */
    int64_t moment_from, moment_to; /* the range asked for (both the moment with --at), ns since
                                     the start; -1 when the recording lacks the marker named
                                     or was not recording then (moment_unrecorded) */
    int moment_unrecorded;        /* 1: the moment (or the whole range) asked for falls outside
                                     every window of the recording, where its heap is unknown:
                                     nothing of it is shown (ra_model_moment) */
} ra_proc_t;

/* Decades of lifetime in stack_lifetimes: under 1 us, under 10 us, ... under 10 s, 10 s or more. */
#define RA_LIFE_DECADES 9

/* The blocks one stack allocated in one recording. bt is -1 for blocks without a backtrace. */
typedef struct {
    int64_t pid, recording, bt;
    int64_t blocks, bytes;               /* everything allocated */
    int64_t leaked_blocks, leaked_bytes; /* never freed before the process ended (ra_proc_t) */
    int64_t stopped_blocks, stopped_bytes; /* in a window: still live when recording stopped */
    int64_t peak_blocks, peak_bytes;     /* live at the recording's peak */
    int64_t temporary_blocks, temporary_bytes; /* freed before their thread's next allocation
                                                  (temporary.sql's default rule) */
    /* With RA_MODEL_LIFETIMES: the freed blocks and their bytes per decade of lifetime
     * (stack_lifetimes): [0] under 1 us, [d] from 10^(d+2) ns to under 10^(d+3) ns, [8] 10 s
     * or more. The blocks that lived at least 10^(k+2) ns are the decades from k on. */
    int64_t life_blocks[RA_LIFE_DECADES], life_bytes[RA_LIFE_DECADES];
} ra_stat_t;

/* A frame of code, as in the backtraces table: one per distinct frame of the database (table
 * unique_frames), shared by every stack that passes through it (ra_model_t.frames). */
typedef struct {
    const char *sym, *file, *module; /* NULL when unknown */
    int64_t line;                    /* 0 when unknown */
    int64_t offset;
    int inlined;                     /* inlined into the next frame */
} ra_frame_t;

/* A stack from its allocation site outward: frames[0] is the site (stacks.site_frame),
 * frames[n - 1] the outermost. */
typedef struct {
    int64_t bt;
    size_t nframes;
    const ra_frame_t **frames;       /* into the model's frames */
    const uint16_t *ip;              /* per frame, which recorded return address it comes from
                                        (backtraces.ip_index, modulo 65536): the frames of one
                                        address share it, the next address has the next */
} ra_stack_t;

/* One slice of a recording's time: [t_from, t_to). */
typedef struct {
    int64_t t_from, t_to;
    int64_t max_live;  /* the most bytes live at any moment of the slice */
    int64_t end_live;  /* bytes live at its end */
    int64_t allocs, frees;
} ra_bucket_t;

typedef struct {
    int64_t pid, recording, t;
    char *label;
} ra_marker_t;

typedef struct {
    int64_t pid, recording, on_t, off_t; /* off_t -1: never turned off */
    char *on_how, *off_how;
} ra_window_t;

typedef struct {
    int64_t pid, recording, tid;
    char *name;
    int64_t allocs, bytes, frees, leaked_blocks, leaked_bytes;
    int64_t stopped_blocks, stopped_bytes; /* as in ra_stat_t */
} ra_thread_t;

/* A power-of-two size class [lo, hi] (lo = hi = 0 for size 0) of one recording. */
typedef struct {
    int64_t pid, recording, lo, hi;
    int64_t blocks, bytes, leaked_blocks, leaked_bytes;
    int64_t stopped_blocks, stopped_bytes; /* as in ra_stat_t */
} ra_sizeclass_t;

/* A module path and the build id recorded for it (NULL: none). */
typedef struct {
    char *path, *build_id;
} ra_module_t;

/* What ra_model_load reads beyond the processes, markers and windows. */
enum {
    RA_MODEL_STACKS = 1,    /* stats per stack and the stacks' frames */
    RA_MODEL_PEAK = 2,      /* each recording's peak, and the stacks' bytes live then */
    RA_MODEL_TIMELINE = 4,  /* memory over time in buckets (implies the peak) */
    RA_MODEL_TEMPORARY = 8, /* temporary blocks per stack */
    RA_MODEL_TABLES = 16,   /* per thread and per size class */
    RA_MODEL_LIFETIMES = 32, /* per stack its freed blocks by decade of lifetime (implies stacks) */
    RA_MODEL_TOTALS = 64,   /* with every process (pid < 0): one stat per stack, its rows of every
                               recording added up, pid and recording -1 (table stack_totals;
                               added up here from the per-recording rows for a database without
                               it), with RA_MODEL_LIFETIMES their lifetimes the same way
                               (stack_lifetime_totals); not with a moment (ra_model_moment) */
    RA_MODEL_FRAMES_LATER = 128 /* the stacks' stats without their frames: the caller reads
                                   those of the stacks it shows with ra_model_frames */
};

typedef struct {
    ra_proc_t *procs;
    size_t nprocs;
    ra_stat_t *stats;          /* sorted by pid, recording, bt */
    size_t nstats;
    ra_stack_t *stacks;        /* sorted by bt */
    size_t nstacks;
    ra_frame_t *frames;        /* the distinct frames the stacks point into (unique_frames, by
                                  id - 1), once a stack is read */
    size_t nframes;
    ra_bucket_t *buckets;      /* each process's slices (ra_proc_t.bucket0) */
    size_t nbuckets;
    ra_marker_t *markers;
    size_t nmarkers;
    ra_window_t *windows;
    size_t nwindows;
    ra_thread_t *threads;
    size_t nthreads;
    ra_sizeclass_t *sizes;
    size_t nsizes;
    ra_module_t *modules;      /* distinct paths, sorted */
    size_t nmodules;
    struct ra_pool *pool;      /* owns the strings */
    struct ra_proc_key *proc_order; /* procs by pid, recording (ra_model_proc); NULL: none */
} ra_model_t;

/* ---- Memory beyond the heap (memory.c) ---- */

/* A sample of resident memory, in bytes (schema.sql's table rss). */
typedef struct {
    int64_t t, bytes, anon, file, swap;
} ra_rss_point_t;

/* One recording's resident memory and the program's own mappings. Every figure is 0 when the
 * recording has none (sampling off, no mapping, a database from before they were recorded). */
typedef struct {
    ra_rss_point_t *points;  /* at most the `max` asked for, in time order: each the largest
                                sample of an equal slice of the samples' time */
    size_t npoints;
    int64_t samples;         /* samples in the database */
    int64_t peak_t, peak_bytes; /* the largest sample (the first of equals) */
    int64_t heap_at_peak;    /* the most heap live in the timeline's slice holding peak_t: the
                                rest of peak_bytes, at least, was not the heap */
    int64_t maps, map_bytes; /* calls that mapped and their bytes (mapping_stats) */
    int64_t map_peak_bytes, map_peak_t, map_end_bytes;
} ra_memory_t;

/* Reads them for (pid, recording). RA_OK, else RA_E_INPUT or RA_E_NOMEM with m empty.
 * ra_memory_free releases what it holds (NULL: nothing). */
ra_status_t ra_memory_load(struct sqlite3 *db, int64_t pid, int64_t recording, size_t max,
                           ra_memory_t *m, ra_err_t *err);
void ra_memory_free(ra_memory_t *m);

/* Reads what `what` (RA_MODEL_*) asks for, for process pid (-1: every process), with about
 * nbuckets slices per recording for the timeline (at most nbuckets; from the summary tables,
 * groups of their equal slices), from the summary tables (stack_stats, ...), which hold what
 * the rows of `allocations` give. RA_OK, or RA_E_INPUT (a database without them) / RA_E_NOMEM;
 * m is always initialized (ra_model_free it either way). */
ra_status_t ra_model_load(struct sqlite3 *db, int64_t pid, unsigned what, size_t nbuckets,
                          ra_model_t *m, ra_err_t *err);
void ra_model_free(ra_model_t *m);
/* After ra_model_load without RA_MODEL_TIMELINE: reads the timeline, at most nbuckets slices
 * each, of the recordings pd->procs[i] with which[i] set, a seek per recording (a page draws
 * the memory of a dozen of a build's thousands). RA_OK, RA_E_INPUT or RA_E_NOMEM. */
ra_status_t ra_model_timeline(struct sqlite3 *db, ra_model_t *m, const unsigned char *which,
                              size_t nbuckets, ra_err_t *err);
/* After ra_model_load with RA_MODEL_TOTALS (one stat per stack, pid -1): adds the per-stack
 * stats, with their lifetimes, of the recordings pd->procs[i] with which[i] set, each its own
 * (a page's charted recordings keep their detail; a window's blocks are stopped). The stats stay
 * sorted, the totals first. RA_OK, RA_E_INPUT or RA_E_NOMEM. */
ra_status_t ra_model_detail(struct sqlite3 *db, ra_model_t *m, const unsigned char *which,
                            ra_err_t *err);
/* After ra_model_load with RA_MODEL_FRAMES_LATER: reads the frames of the stacks bts[0, n)
 * (ascending; ids not above the last stack read are skipped), for ra_model_stack. RA_OK,
 * RA_E_INPUT or RA_E_NOMEM. */
ra_status_t ra_model_frames(struct sqlite3 *db, ra_model_t *m, const int64_t *bts, size_t n,
                            ra_err_t *err);
/* Charges the stacks of m (loaded with RA_MODEL_STACKS from db) to the callers of the wrapper
 * functions whose bare name matches the GLOB pattern glob (NULL: nothing): each stack starts
 * at the first frame that is neither allocator plumbing nor matched, as the canned queries'
 * :skip (queries/README.md). RA_OK or RA_E_INPUT. */
ra_status_t ra_model_skip(struct sqlite3 *db, ra_model_t *m, const char *glob, ra_err_t *err);
/* The stack with that id, or NULL (bt -1, or a stack the database lacks). */
const ra_stack_t *ra_model_stack(const ra_model_t *m, int64_t bt);
/* The process row of (pid, recording), or NULL. */
const ra_proc_t *ra_model_proc(const ra_model_t *m, int64_t pid, int64_t recording);
/* The largest sampling interval of m's recordings: 0 when all were made in trace mode (every
 * figure exact), else the figures but allocations and bytes allocated are estimates. */
int64_t ra_model_sample_interval(const ra_model_t *m);
/* The build id (hex) recorded for a module path, or NULL. */
const char *ra_model_build_id(const ra_model_t *m, const char *path);
/* Zeroes the leaks of the stacks s suppresses in m (and takes them off their processes'
 * totals), adding them per rule into blocks[] and bytes[] (ra_supp_nrules entries each). */
void ra_supp_apply(const ra_supp_t *s, ra_model_t *m, int64_t *blocks, int64_t *bytes);

/* ---- A moment or a range the pictures are drawn at (moment.c) ---- */

enum { RA_MOMENT_AT = 1, RA_MOMENT_RANGE = 2 };

/* What the pictures show instead of each recording's own peak: the heap at one moment (`at`,
 * as `--at`), or at the highest point inside a range (`from` and `to`, both ends included).
 * Each is a time as ra_duration_ns reads it ("1.8s", "250ms", "1200us", plain ns), counted
 * from the start of each recording, or else a marker label, the time of each recording's
 * first marker with it. NULL: not given. */
typedef struct {
    const char *at, *from, *to;
} ra_moment_t;

/* Checks the texts of mo before anything is read: at alone or from with to; each a time or a
 * label some marker of the database has; from not after to. RA_OK, or RA_E_USAGE naming the
 * option (--at, --from, --to) and what it expected. */
ra_status_t ra_moment_check(struct sqlite3 *db, const ra_moment_t *mo, ra_err_t *err);
/* Makes the peak of each recording of m (loaded from db with RA_MODEL_STACKS) the moment mo
 * asks for: ra_proc_t.peak_t, peak_blocks and peak_bytes, and every ra_stat_t's peak_blocks and
 * peak_bytes, become the heap at that moment, exactly what SQL over `allocations` gives
 * (allocated at or before it and not freed by then), read from the converter's checkpoints in
 * well under a second on tens of millions of blocks; ra_proc_t.moment says so. A recording
 * without the marker named gets peak_t -1 and nothing live, and so does one that was not
 * recording then (the time, or the whole range, outside every window of it: before it went on,
 * after it went off, or between two windows), with moment_unrecorded set: what its program did
 * unrecorded is unknown, so no heap is made up for it. When no recording of m was recording
 * then, RA_E_USAGE names the windows there are. Nothing when mo is all NULL. RA_OK,
 * RA_E_USAGE (ra_moment_check, or no recording on then), RA_E_INPUT (a database without
 * checkpoints) or RA_E_NOMEM. */
ra_status_t ra_model_moment(struct sqlite3 *db, ra_model_t *m, const ra_moment_t *mo,
                            ra_err_t *err);
/* Writes the windows of recording p of m into buf (at most n bytes, always ended) as
 * "0.000 .. 31.877 ms", several joined by ", ", in ms since the recording's start; a window
 * never turned off ends at the recording's last event. The number of windows written. */
size_t ra_model_windows_text(const ra_model_t *m, const ra_proc_t *p, char *buf, size_t n);

/* The weights a stack can be measured by. */
typedef enum {
    RA_W_LEAKED,      /* bytes never freed before their process ended */
    RA_W_PEAK,        /* bytes live at the peak */
    RA_W_ALLOCATED,   /* bytes allocated */
    RA_W_ALLOCATIONS, /* blocks allocated */
    RA_W_TEMPORARY,   /* temporary blocks */
    RA_W_STOPPED      /* bytes a window left live when its recording stopped (not leaks) */
} ra_weight_t;

/* The figure of s that weight w measures. */
int64_t ra_weight_of(const ra_stat_t *s, ra_weight_t w);
/* A frame's display name: its function, or module+0xoffset (in buf) when unknown. */
const char *ra_frame_name(const ra_frame_t *f, char *buf, size_t len);

/* ---- Names made to fit a table (shorten.c) ----
 * Pure functions of a string: no state, no output; each runs in time linear in its input
 * (tests/fuzz/fuzz_names.c holds them to that on real and random names) and never returns a
 * longer text than it was given. */

/* A copy of name with each template argument list longer than 3 characters shortened to
 * <...>: `std::vector<int, std::allocator<int> >::push_back` reads `std::vector<...>::push_back`.
 * The characters of operator<, operator<<, operator<=, operator<=>, operator> and operator->
 * are kept as a name, not taken for a list; a '<' at the start or after a blank (Rust's
 * `<T as Trait>::f`) is kept and only its insides shortened. malloc'ed; NULL on no memory. */
char *ra_name_short(const char *name);

/* A copy of name without its trailing parameter list and qualifiers, for a column too narrow
 * for both: `Table::operator[](int) const` reads `Table::operator[]`, and
 * `main::{lambda(int)#1}::operator()(int) const` reads `main::{lambda(int)#1}::operator()`.
 * A name that does not end with a parameter list (C, Rust) is copied whole. malloc'ed; NULL on
 * no memory. */
char *ra_name_without_params(const char *name);

/* Display columns of a UTF-8 string: its code points. */
size_t ra_text_columns(const char *s);

/* A copy of s cut to `keep` columns when it is wider, the cut marked with "...": the first
 * keep - 3 columns and "..." (from_end: "..." and the last keep - 3 columns, as a location
 * keeps its file:line). A keep below 4 leaves s whole. malloc'ed; NULL on no memory. */
char *ra_text_clip(const char *s, size_t keep, int from_end);

/* A byte count as a person reads it at a glance, into buf (len bytes): under 10 KiB the number
 * itself ("9216"), else one decimal and a binary unit ("12.5 MiB"). The one form of a size for
 * people, in tables and in the collector's pages and messages alike. */
void ra_human_bytes(long long b, char *buf, size_t len);

/* ---- A map from strings to numbers (smap.c), for tables keyed by a frame's or a stack's text:
 * pprof's string, function and location tables, the HTML page's frames and stacks, diff's
 * sites ---- */

/* A map from strings to numbers; it keeps copies of the keys. Zeroed is empty. */
typedef struct {
    char **keys;
    uint64_t *vals;
    size_t cap, n;
} ra_smap_t;

/* The value of key; when absent, stores `next` as its value and sets *created. 0, or -1 when
 * out of memory. */
int ra_smap_get(ra_smap_t *m, const char *key, uint64_t next, uint64_t *val, int *created);
void ra_smap_free(ra_smap_t *m);

/* ---- The model as a pprof profile (pprof.c): profile.proto, gzipped ---- */

/* The profile of m, gzipped, in *out (malloc'ed, *len bytes; the caller writes and frees it): a
 * Go heap profile (alloc_objects, alloc_space, inuse_objects,
 * inuse_space; inuse = never freed) or, with peak, the blocks live at each recording's peak;
 * default_weight picks the sample type pprof shows first. With base (NULL: none), one sample
 * per stack of either, NEW minus BASE (negative where BASE had more), stacks matched by their
 * frames' function, file and line since ids and pids differ between databases: what `go tool
 * pprof -diff_base=BASE NEW` shows of two exports. RA_OK, or RA_E_NOMEM with *out NULL. */
ra_status_t ra_pprof_encode(const ra_model_t *m, const ra_model_t *base, int peak,
                            ra_weight_t default_weight, uint8_t **out, size_t *len,
                            ra_err_t *err);


/* ---- Profiles built sample by sample (pbuild.c): profile.proto, gzipped ----
 * For heaps that come from no database: the host collector's live heaps (`rheap serve`,
 * `rheap snapshot`). A Go heap profile: alloc_objects, alloc_space, inuse_objects,
 * inuse_space; one location per return address with its inlined functions as lines; one mapping
 * per module with an address range of its own; labels pid (a number), exe and host. Not
 * thread-safe per profile. */

typedef struct ra_pb ra_pb_t;

/* One source line of a return address: the function (never NULL: the caller names unknown
 * code), its file (NULL unknown) and line (0 unknown). */
typedef struct {
    const char *function, *file;
    int64_t line;
} ra_pb_line_t;

/* A new profile: inuse_space shown first, or alloc_space with allocs; the period (the sampling
 * interval, 1 for a trace) and the time and duration in ns. NULL when out of memory. */
ra_pb_t *ra_pb_create(int allocs, int64_t period, int64_t time_nanos, int64_t duration_nanos);
void ra_pb_comment(ra_pb_t *b, const char *text);
/* The id of the location of a return address: `offset` from the load bias of the module the
 * caller numbers `module` (its path module_path), or module -1 and the absolute address; lines
 * innermost first. The same (module, offset) gets the same id, its lines taken the first time.
 * 0 when out of memory (ra_pb_finish then fails). */
uint64_t ra_pb_location(ra_pb_t *b, int module, const char *module_path, uint64_t offset,
                        const ra_pb_line_t *lines, size_t nlines);
/* A sample: locations leaf first; values alloc_objects, alloc_space, inuse_objects,
 * inuse_space; its labels. */
void ra_pb_sample(ra_pb_t *b, const uint64_t *locs, size_t nlocs, const int64_t values[4],
                  int64_t pid, const char *exe, const char *host);
/* The profile, gzipped, in *out (malloc'ed, *len bytes; the caller frees it); b is freed.
 * RA_OK, or RA_E_NOMEM with *out NULL. */
ra_status_t ra_pb_finish(ra_pb_t *b, uint8_t **out, size_t *len, ra_err_t *err);
/* Frees a profile not finished; NULL is a no-op. */
void ra_pb_free(ra_pb_t *b);

#ifdef __cplusplus
}
#endif

#endif
