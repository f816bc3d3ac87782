/*
 * db.c: the SQLite writer.
 *
 * The database is built under a temporary name beside the requested one (`OUT.tmp-XXXXXX`, made
 * exclusively with a random part) and
 * renamed over it only when everything succeeded, so the requested path never holds a
 * half-written database. The load runs in one transaction with the journal and fsyncs off: if
 * the converter dies, the temporary file is garbage anyway.
 *
 * Allocation rows, nearly all of what is written, are written by a thread of their own: the
 * converter queues chunks of rows, each the fields it had from its live-block store
 * (cv__row_t), and goes on reading and pairing while the writer lays them into pages (btree.c;
 * SQLite's insert cost three times as much per row): allocation_rows and its side tables are
 * built beside SQLite and put into the file at the end (append_trees, link_trees); so are
 * the four largest per-recording summary tables, put in earlier, once every recording's rows
 * are written (cv__db_settle, put_trees), since the totals and the summary callback read them.
 * SQLite is built for one thread here (no mutexes), so the two take turns on the connection
 * (`conn`), which also guards the builders: the writer holds it for one chunk at a time, and
 * any other write waits for the chunk in progress only, not for the queue to empty
 * (enter/leave). Stack rows, which come throughout a conversion, are kept here and handed to
 * the writer thread in sets, so a new stack costs the reader no wait.
 * The queue may hold up to QUEUE_BYTES of rows: the reader finishes its pass, and the caller
 * reads the summaries (rheap run prints its summary), while the writer is still catching up.
 */
#define _GNU_SOURCE /* gettid, pthread_setname_np */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rip.h>

#include <sqlite3.h>

#include "converter.h"

/* The line of schema.sql that separates what is created before the load from what after. */
#define AFTER_LOAD_MARK "\n-- rheap: after load\n"

/* Allocation rows go in batches of BATCH rows per statement: one multi-row INSERT costs far
 * less per row than BATCH single-row ones (one step, one reset, one trip through the VDBE's
 * statement setup). */
#define BATCH 64
/* 16 KiB pages (README, Write); the b-tree builders lay their pages at the same size. */
#define PAGE_SIZE 16384u
#define PAGE_SIZE_TEXT "16384"
#define ALLOC_COLS 6
/* Rows go to the writer thread in chunks of CHUNK_BYTES (a chunk of many batches keeps the two
 * threads from waking each other at every batch), at most QUEUE_BYTES of them waiting. A row
 * is queued as the converting thread has it (cv__row_t, 64 bytes): the 32 MiB hold half a
 * million rows. They were packed into LEB128 numbers (about 20 bytes a row, 1.6 million rows),
 * but packing and unpacking them cost more than the rest of the row's way (bigheap 2000000
 * under callgrind: 173 instructions a row on the converting thread, 245 on the writer), and a
 * writer that lays a row into its page in 430 instructions seldom lets the queue fill. The
 * queue is most of the converter's memory beside the live blocks (a queue of 128 MiB, filled
 * while `rheap run`'s writer ran at nice 19, took its conversion of a program holding 8 M
 * blocks to 54 bytes per live block over 64 MiB); 32 MiB keeps the whole conversion within 48
 * bytes per live block plus 64 MiB, and a reader further ahead than that waits for the
 * writer. */
#define CHUNK_BYTES (64u << 10)
#define CHUNK_ROWS (CHUNK_BYTES / sizeof(cv__row_t))
#define QUEUE_BYTES (32u << 20)
#define QUEUE ((unsigned)(QUEUE_BYTES / CHUNK_BYTES))
/* Under a limit of address space (ulimit -v) the queue is made smaller, down to this. */
#define QUEUE_MIN 4u
/* Frame rows kept before they are written (see hand_off_if_full), FRAME_BATCH per statement. */
#define KEPT_FRAMES 8192
#define FRAME_BATCH 32
#define FRAME_COLS 9
/* Statements kept for cv__db_insert: summary.c's 16 tables at 6 sizes of batch at most. */
#define INSERTS_MAX 128

enum { ST_ALLOC, ST_FREE, ST_EXTRA, ST_FRAME, ST_STACK, ST_STACK_FRAMES, ST_PROCESS, ST_THREAD, ST_MODULE, ST_MARKER, ST_POOL, ST_POOL_BLOCK, ST_MAP_PIECE, ST_RSS, ST_MAP_STATS, ST_WINDOW, ST_META, ST_N };

static const char *const stmt_sql[ST_N] = {
    /* No id: SQLite's own next rowid (the largest plus one) is the converter's id, since rows
     * arrive in id order into an empty table; an explicit rowid would cost a uniqueness seek
     * per row. */
    [ST_ALLOC] = "INSERT INTO allocation_rows (t, life, bt, size, addr, how) "
                 "VALUES (?,?,?,?,?,?)",
    [ST_FREE] = "INSERT INTO allocation_frees (id, thread) VALUES (?,?)",
    [ST_EXTRA] = "INSERT INTO allocation_extras (id, extra) VALUES (?,?)",
    [ST_FRAME] = "INSERT INTO backtraces (id, frame_no, file, line, sym, module, offset, inlined, "
                 "ip_index) VALUES (?,?,?,?,?,?,?,?,?)",
    [ST_STACK] = "INSERT INTO stacks (id, frames, site_frame, function, location, site) VALUES (?,?,?,?,?,?)",
    [ST_STACK_FRAMES] = "INSERT INTO stack_frames (id, frames) VALUES (?,?)",
    [ST_PROCESS] = "INSERT INTO processes (pid, recording, ppid, exe, cmdline, start_ns, "
                   "start_wall_ns, page_size, stack_depth, sample_ppm, dir, unmatched_frees, "
                   "lost_events) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [ST_THREAD] = "INSERT INTO threads (id, pid, recording, tid, name, serial, file, events, "
                  "lost_events, addr_base) VALUES (?,?,?,?,?,?,?,?,?,?)",
    [ST_MODULE] = "INSERT INTO modules (pid, recording, path, bias, build_id, status) "
                  "VALUES (?,?,?,?,?,?)",
    [ST_MARKER] = "INSERT INTO markers (pid, recording, tid, t, label) VALUES (?,?,?,?,?)",
    [ST_POOL] = "INSERT INTO pools (id, pid, recording, pool, t, name) VALUES (?,?,?,?,?,?)",
    [ST_POOL_BLOCK] = "INSERT INTO pool_blocks (id, pool) VALUES (?,?)",
    [ST_MAP_PIECE] = "INSERT INTO map_pieces (id, of) VALUES (?,?)",
    [ST_RSS] = "INSERT INTO rss (pid, recording, t, bytes, anon, file, swap) "
               "VALUES (?,?,?,?,?,?,?)",
    [ST_MAP_STATS] = "INSERT INTO mapping_stats (pid, recording, maps, bytes, peak_bytes, peak_ns, "
                     "end_bytes) VALUES (?,?,?,?,?,?,?)",
    [ST_WINDOW] = "INSERT INTO windows (pid, recording, on_t, on_how, off_t, off_how) "
                  "VALUES (?,?,?,?,?,?)",
    [ST_META] = "INSERT OR REPLACE INTO meta (key, value) VALUES (?,?)",
};

/* What a parameter of an allocation statement is bound to now. SQLite keeps bindings across
 * sqlite3_reset, and some parameters repeat from one batch to the next (how is mostly 0),
 * so a parameter is bound again only when its value changes: each bind
 * releases and rewrites a VDBE cell. */
enum { B_UNSET, B_NULL, B_INT, B_REAL };

typedef struct {
    uint64_t v;
    int kind;
} bound_t;

/* A row of backtraces kept until flush_kept: the symbolizer's strings live as long as the
 * conversion, so they are not copied. */
typedef struct {
    uint64_t bt, offset;
    uint32_t frame_no, line, ip_index;
    int inlined;
    const char *file, *sym, *module;
} frame_row_t;

/* A row of stacks, and its row of stack_frames, kept until flush_kept; its strings are
 * copies (frame_ids handed over by cv__db_stack's caller). */
typedef struct {
    uint64_t id;
    uint32_t frames, site_frame, site;
    char *function, *location, *frame_ids;
} stack_row_t;

/* Rows of backtraces and stacks kept to be written together: those being gathered, or a full
 * set handed to the writer thread. */
typedef struct kept {
    frame_row_t *frames;
    size_t nframes, capframes;
    stack_row_t *stacks;
    size_t nstacks, capstacks;
    struct kept *next;
} kept_t;

/* The tables whose rows are laid into pages directly (btree.c): every row comes in increasing
 * id order. Allocation rows and their side tables are put into the file at the end
 * (cv__db_finish); the per-recording summary tables, from T_SUMMARY on, once every recording's
 * rows are in (cv__db_settle), since the totals and the summary callback read them. Each
 * recording's summary rows take the next rowids, in recording turns, as SQLite's inserts gave
 * them (summary.c's recording_rows names each recording's range of stack_stats). */
enum { T_ROWS, T_FREES, T_EXTRAS, T_STATS, T_LIFE, T_SIZES, T_LEAKS, T_N };
#define T_SUMMARY T_STATS
static const char *const tree_table[T_N] = {"allocation_rows", "allocation_frees",
                                            "allocation_extras", "stack_stats",
                                            "stack_lifetimes", "stack_sizes", "stack_leaks"};

struct cv__db {
    sqlite3 *db;
    /* The b-trees of allocation_rows and its side tables, built beside SQLite; NULL when the
     * rows go through SQLite's inserts (cv__db_rows_by_sqlite). */
    cv__btree_t *tree[T_N];
    /* The end: the trees appended to the file by a thread of their own while the caller reads
     * the finished tables (cv__db_finish_start), their roots and page count kept for the rest. */
    pthread_t appender;
    int appending, append_rc;
    uint32_t roots[T_N], pages;
    int end_trees; /* the trees put in at the end: T_ROWS up to this one */
    char append_msg[4800];
    int background;           /* the writer thread runs at nice 19; the reader writes a full queue */
    sqlite3_stmt *st[ST_N];
    bound_t single[ALLOC_COLS];      /* the parameters of st[ST_ALLOC] */
    bound_t batched[BATCH * ALLOC_COLS]; /* the parameters of batch */
    sqlite3_stmt *batch;      /* BATCH-row INSERT into allocations */
    sqlite3_stmt *frame_batch; /* FRAME_BATCH-row INSERT into backtraces */
    /* The other files' multi-row inserts (cv__db_insert), prepared on first use. */
    struct {
        const char *table;
        int cols, rows;
        sqlite3_stmt *st;
    } ins[INSERTS_MAX];
    int nins;
    /* The chunks: qcap + 1 places of CHUNK_BYTES in one mapping, where the queue's chunks wait
     * and the pending one is filled; memory is used as far as the queue ever grows. */
    uint8_t *area;
    uint32_t *used;           /* used[i]: rows in place i */
    uint64_t *first;          /* first[i]: the id of its first row (the others follow on) */
    unsigned pending;         /* the place being filled */
    /* Rows of backtraces and stacks being gathered (flush_kept writes them). */
    kept_t kept;
    char *path;
    char *tmp;
    dev_t tmp_dev;            /* the temporary file as made: a reopen must find the same */
    ino_t tmp_ino;
    int force;                /* replace an existing path; without it, never */
    /* The writer thread and its queue of full chunks (under mu). */
    int have_writer;
    pthread_t writer;
    pthread_mutex_t mu;
    pthread_cond_t work, room;  /* signaled when a chunk is queued / written */
    unsigned qcap;              /* the queue's length: QUEUE, or less under a limit */
    unsigned *queue;            /* places of full chunks, a ring of qcap */
    unsigned q_head, q_count;   /* q_count includes the chunk being written */
    unsigned *spare;            /* free places, a stack: the last written is reused first */
    unsigned nspare;
    kept_t *kept_full, **kept_end; /* full sets of backtraces and stacks rows, oldest first */
    /* Turns on the connection: the writer holds conn while it writes a chunk; `want` counts the
     * other callers waiting for it, and the writer lets them go first (turn). */
    pthread_mutex_t conn;
    pthread_cond_t turn;
    _Atomic int want;
    int quit;
    int failed;                 /* a batch failed; the message is in error */
    char error[512];             /* why the writer thread failed */
    char why[600];
    int main_failed;             /* a write of the calling thread failed: main_error says why */
    char main_error[600];
};

static void fmt(char *buf, size_t len, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    vsnprintf(buf, len, f, ap);
    va_end(ap);
}

/* SQLite's message for the last error (or msg when given), with the system's reason when
 * SQLite kept one ("disk I/O error (File too large)"). In a buffer of db's, valid until the
 * next call. */
static const char *why(cv__db_t *db, const char *msg)
{
    int e = db->db ? sqlite3_system_errno(db->db) : 0;
    const char *m = msg ? msg : db->db ? sqlite3_errmsg(db->db) : "out of memory";
    if (e)
        fmt(db->why, sizeof db->why, "%s (%s)", m, strerror(e));
    else
        fmt(db->why, sizeof db->why, "%s", m);
    return db->why;
}

static int write_chunk(cv__db_t *db, unsigned place);
static int write_kept_list(cv__db_t *db, kept_t *list);
static kept_t *take_kept(cv__db_t *db);
static void drop_kept(kept_t *list);
static void help_writer(cv__db_t *db, unsigned keep);

/* At most this many chunks queued when not 0: set by the tests (cv__db_queue_limit), which make
 * the queue fill with a recording of thousands of rows instead of millions. */
static unsigned queue_limit;

void cv__db_queue_limit(unsigned chunks)
{
    queue_limit = chunks;
}

/* Set by the tests that compare the b-tree builder with SQLite's own inserts. */
static int rows_by_sqlite;

void cv__db_rows_by_sqlite(int on)
{
    rows_by_sqlite = on;
}

/* The mapping of a queue of qcap chunks: qcap + 1 places, one of them being filled. */
static size_t area_bytes(unsigned qcap)
{
    return (size_t)(qcap + 1) * CHUNK_BYTES;
}

/* The rows of chunk place i. */
static inline cv__row_t *chunk(cv__db_t *db, unsigned i)
{
    return (cv__row_t *)(db->area + (size_t)i * CHUNK_BYTES);
}

/* Writes the oldest work of the queue: the full sets of kept rows, else the oldest queued chunk,
 * which then leaves the queue. Called with the connection held (conn), by the writer thread or,
 * when the queue is full and the writer runs at low priority, by the reading thread: whoever
 * holds the connection takes the oldest chunk, so chunks are written one at a time and in
 * their order (rows get SQLite's next rowid, which must follow the converter's ids). The sets
 * are taken only once the connection is held: a set taken before could still be unwritten when
 * the reading thread's turn comes, and that turn must find every kept row in the database (the
 * summary callback reads them). Keeps why a write failed for the reading thread; after a
 * failure the rest is dropped unwritten. 0 when there was nothing to write. */
static int write_oldest(cv__db_t *db)
{
    pthread_mutex_lock(&db->mu);
    int kept = db->kept_full != NULL;
    if (!kept && !db->q_count) {
        pthread_mutex_unlock(&db->mu);
        return 0;
    }
    unsigned place = kept ? 0 : db->queue[db->q_head];
    int failed = db->failed;
    pthread_mutex_unlock(&db->mu);
    int rc = 0;
    if (!failed) {
        rc = kept ? write_kept_list(db, take_kept(db)) : write_chunk(db, place);
        if (rc != 0 && kept)
            fmt(db->error, sizeof db->error, "%s", why(db, NULL));
    } else if (kept) {
        drop_kept(take_kept(db));
    }
    pthread_mutex_lock(&db->mu);
    if (rc != 0)
        db->failed = 1;
    if (!kept) {
        db->spare[db->nspare++] = place;
        db->q_head = (db->q_head + 1) % db->qcap;
        db->q_count--;
        pthread_cond_broadcast(&db->room);
    }
    pthread_mutex_unlock(&db->mu);
    return 1;
}

static void *writer_main(void *arg)
{
    cv__db_t *db = arg;
    /* Named apart from the thread that made it (a conversion's worker), for top -H. */
    pthread_setname_np(pthread_self(), "rheap writer");
    if (db->background)
        setpriority(PRIO_PROCESS, (id_t)gettid(), 19);
    pthread_mutex_lock(&db->mu);
    for (;;) {
        while (!db->q_count && !db->kept_full && !db->quit)
            pthread_cond_wait(&db->work, &db->mu);
        if (!db->q_count && !db->kept_full)
            break;
        pthread_mutex_unlock(&db->mu);
        /* Other callers of the connection go first: they wait for one chunk at most. */
        pthread_mutex_lock(&db->conn);
        while (atomic_load(&db->want))
            pthread_cond_wait(&db->turn, &db->conn);
        write_oldest(db);
        pthread_mutex_unlock(&db->conn);
        pthread_mutex_lock(&db->mu);
    }
    pthread_mutex_unlock(&db->mu);
    return NULL;
}

/* Whether a chunk failed to be written (db->error says why). */
static int writer_failed(cv__db_t *db)
{
    if (!db->have_writer)
        return 0;
    pthread_mutex_lock(&db->mu);
    int failed = db->failed;
    pthread_mutex_unlock(&db->mu);
    return failed;
}

/* Waits until every queued chunk is written (when the writer runs at nice 19, writing them
 * itself: the end of a conversion is no time for low priority). -1 if one failed. */
static int drain(cv__db_t *db)
{
    if (!db->have_writer)
        return 0;
    pthread_mutex_lock(&db->mu);
    while (db->q_count) {
        if (db->background && !db->failed) {
            pthread_mutex_unlock(&db->mu);
            help_writer(db, 0);
            pthread_mutex_lock(&db->mu);
        } else {
            pthread_cond_wait(&db->room, &db->mu);
        }
    }
    int failed = db->failed;
    pthread_mutex_unlock(&db->mu);
    return failed ? -1 : 0;
}

/* Takes the connection from the writer thread, which finishes its chunk first. */
static void take_turn(cv__db_t *db)
{
    if (!db->have_writer)
        return;
    atomic_fetch_add(&db->want, 1);
    pthread_mutex_lock(&db->conn);
}

static void give_turn(cv__db_t *db)
{
    if (!db->have_writer)
        return;
    atomic_fetch_sub(&db->want, 1);
    pthread_cond_broadcast(&db->turn);
    pthread_mutex_unlock(&db->conn);
}

/* The calling thread writes the oldest queued work itself, in its turn on the connection, until
 * at most `keep` chunks are left: a writer thread at nice 19 gets next to no CPU while the
 * program's processes keep the cores busy (a build's compilers), and a reader that waited for
 * it would stop the whole conversion until the end. So a full queue is written at the reader's
 * own priority, and the writer thread still takes what it can while the queue has room, when
 * a core is free. The turn starts once the writer's chunk in progress is done, which a starved
 * writer may take long to finish: one turn writes many chunks, not one, so that wait comes
 * once per half a queue. */
static void help_writer(cv__db_t *db, unsigned keep)
{
    take_turn(db);
    for (;;) {
        pthread_mutex_lock(&db->mu);
        int more = (db->q_count > keep || db->kept_full) && !db->failed;
        pthread_mutex_unlock(&db->mu);
        if (!more || !write_oldest(db))
            break;
    }
    give_turn(db);
}

static int flush_kept(cv__db_t *db);

/* A write of the calling thread failed: keeps why for cv__db_error. Returns -1. */
static int failed_here(cv__db_t *db, const char *msg)
{
    fmt(db->main_error, sizeof db->main_error, "%s", msg);
    db->main_failed = 1;
    return -1;
}

/* The same with SQLite's message (or msg), read while the turn is still held, before the
 * writer thread's next chunk can replace it; then gives the turn back. */
static int leave_failed(cv__db_t *db, const char *msg)
{
    failed_here(db, why(db, msg));
    give_turn(db);
    return -1;
}

/* The connection for this thread, with the kept stack rows written: 0, or -1 when a chunk or
 * those rows failed (the turn is given back then). */
static int enter(cv__db_t *db)
{
    take_turn(db);
    if (writer_failed(db)) {
        give_turn(db);
        return -1;
    }
    if (flush_kept(db) != 0)
        return leave_failed(db, NULL);
    return 0;
}

/* Ends the writer thread once the queue is empty; with `discard`, batches still queued are
 * dropped unwritten (the database is being thrown away). */
static void stop_writer(cv__db_t *db, int discard)
{
    if (!db->have_writer)
        return;
    pthread_mutex_lock(&db->mu);
    db->quit = 1;
    if (discard)
        db->failed = 1;
    pthread_cond_signal(&db->work);
    pthread_mutex_unlock(&db->mu);
    pthread_join(db->writer, NULL);
    pthread_cond_destroy(&db->work);
    pthread_cond_destroy(&db->room);
    pthread_mutex_destroy(&db->mu);
    pthread_cond_destroy(&db->turn);
    pthread_mutex_destroy(&db->conn);
    db->have_writer = 0;
}

static void finalize_inserts(cv__db_t *db)
{
    for (int i = 0; i < db->nins; i++)
        sqlite3_finalize(db->ins[i].st);
    db->nins = 0;
}

/* Every prepared statement finalized: before the commit. */
static void finalize_all(cv__db_t *db)
{
    sqlite3_finalize(db->batch);
    db->batch = NULL;
    sqlite3_finalize(db->frame_batch);
    db->frame_batch = NULL;
    finalize_inserts(db);
    for (int i = 0; i < ST_N; i++) {
        sqlite3_finalize(db->st[i]);
        db->st[i] = NULL;
    }
}

static void close_all(cv__db_t *db)
{
    stop_writer(db, 1);
    finalize_all(db);
    sqlite3_close(db->db);
    db->db = NULL;
}

/* Interrupted (Ctrl-C, kill): the temporary database must not stay behind. The handler only
 * unlinks a path copied beforehand, then dies of the same signal. A file size limit (ulimit
 * -f) would kill the converter the same way, by SIGXFSZ: that one is ignored instead, so the
 * write fails (EFBIG), the conversion says so and removes its file. Signals the caller ignores
 * or handles (rheap run ignores Ctrl-C while its program runs) stay as they are. */
static void on_cleanup_signal(int sig);
static const struct {
    int sig;
    void (*handler)(int);
} cleanup_signals[] = {
    {SIGINT, on_cleanup_signal},
    {SIGTERM, on_cleanup_signal},
    {SIGHUP, on_cleanup_signal},
    {SIGXFSZ, SIG_IGN},
};
#define CLEANUP_SIGNALS (sizeof cleanup_signals / sizeof cleanup_signals[0])
static char cleanup_path[PATH_MAX + 64];
static _Atomic int cleanup_set; /* cleanup_path names the temporary file of a conversion */
static struct sigaction cleanup_saved[CLEANUP_SIGNALS];
static int cleanup_installed[CLEANUP_SIGNALS];

static void on_cleanup_signal(int sig)
{
    unlink(cleanup_path);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void cleanup_install(const char *tmp)
{
    if (strlen(tmp) >= sizeof cleanup_path)
        return;
    atomic_store(&cleanup_set, 0);
    strcpy(cleanup_path, tmp);
    atomic_store(&cleanup_set, 1);
    for (size_t i = 0; i < CLEANUP_SIGNALS; i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = cleanup_signals[i].handler;
        sigemptyset(&sa.sa_mask);
        cleanup_installed[i] = sigaction(cleanup_signals[i].sig, NULL, &cleanup_saved[i]) == 0 &&
                               cleanup_saved[i].sa_handler == SIG_DFL &&
                               sigaction(cleanup_signals[i].sig, &sa, NULL) == 0;
    }
}

void rheap_convert_discard(void)
{
    if (atomic_load(&cleanup_set))
        unlink(cleanup_path);
}

static void cleanup_remove(void)
{
    atomic_store(&cleanup_set, 0);
    for (size_t i = 0; i < CLEANUP_SIGNALS; i++)
        if (cleanup_installed[i])
            sigaction(cleanup_signals[i].sig, &cleanup_saved[i], NULL);
    memset(cleanup_installed, 0, sizeof cleanup_installed);
}

/* Frees a set's rows and arrays (not the set itself). */
static void free_kept(kept_t *b)
{
    free(b->frames);
    for (size_t i = 0; i < b->nstacks; i++) {
        free(b->stacks[i].function);
        free(b->stacks[i].location);
        free(b->stacks[i].frame_ids);
    }
    free(b->stacks);
    memset(b, 0, sizeof *b);
}

/* Frees the sets in list, unwritten. */
static void drop_kept(kept_t *list)
{
    for (kept_t *next; list; list = next) {
        next = list->next;
        free_kept(list);
        free(list);
    }
}

static void destroy(cv__db_t *db)
{
    cleanup_remove();
    for (int t = 0; t < T_N; t++)
        cv__btree_destroy(db->tree[t]);
    if (db->area)
        munmap(db->area, area_bytes(db->qcap));
    free(db->used);
    free(db->first);
    free(db->spare);
    free(db->queue);
    drop_kept(db->kept_full);
    free_kept(&db->kept);
    free(db->path);
    free(db->tmp);
    free(db);
}

/* Runs the part of the schema before (part 0) or after (part 1) the after-load mark. */
static int run_schema(cv__db_t *db, int part, cv__err_t *err)
{
    const char *mark = strstr(cv__schema_sql, AFTER_LOAD_MARK);
    size_t split = mark ? (size_t)(mark - cv__schema_sql) : strlen(cv__schema_sql);
    char *sql = part == 0 ? strndup(cv__schema_sql, split) : strdup(cv__schema_sql + split);
    if (!sql)
        return cv__fail(err, RHEAP_CONVERT_E_OUTPUT, db->tmp, CV__NO_OFFSET,
                        "%s: creating the schema: out of memory", db->tmp);
    char *msg = NULL;
    int rc = sqlite3_exec(db->db, sql, NULL, NULL, &msg);
    free(sql);
    if (rc != SQLITE_OK) {
        cv__fail(err, RHEAP_CONVERT_E_OUTPUT, db->tmp, CV__NO_OFFSET,
                 "%s: creating the schema: %s", db->tmp, why(db, msg ? msg : "?"));
        sqlite3_free(msg);
        return RHEAP_CONVERT_E_OUTPUT;
    }
    return RHEAP_CONVERT_OK;
}

/* Prepares the INSERT `single` (one VALUES group) with its group repeated n times. */
static int prepare_batch(cv__db_t *db, const char *single, int n, sqlite3_stmt **out)
{
    const char *one = strstr(single, "VALUES") + 7;
    size_t head = (size_t)(one - single);
    size_t grp = strlen(one);
    char *sql = malloc(head + (size_t)n * (grp + 1) + 1);
    if (!sql)
        return -1;
    memcpy(sql, single, head);
    char *p = sql + head;
    for (int i = 0; i < n; i++) {
        if (i)
            *p++ = ',';
        memcpy(p, one, grp);
        p += grp;
    }
    *p = 0;
    int rc = sqlite3_prepare_v2(db->db, sql, -1, out, NULL);
    free(sql);
    return rc == SQLITE_OK ? 0 : -1;
}

sqlite3_stmt *cv__db_insert(cv__db_t *db, const char *table, int cols, int rows)
{
    for (int i = 0; i < db->nins; i++)
        if (db->ins[i].table == table && db->ins[i].rows == rows)
            return db->ins[i].st;
    if (db->nins == INSERTS_MAX || cols < 1 || rows < 1)
        return NULL;
    /* "INSERT INTO table VALUES " and rows groups of "(?,...,?)" with commas between. */
    size_t len = strlen(table) + 32 + (size_t)rows * (2 * (size_t)cols + 2);
    char *sql = malloc(len);
    if (!sql)
        return NULL;
    char *p = sql + sprintf(sql, "INSERT INTO %s VALUES ", table);
    for (int r = 0; r < rows; r++) {
        if (r)
            *p++ = ',';
        *p++ = '(';
        for (int c = 0; c < cols; c++) {
            if (c)
                *p++ = ',';
            *p++ = '?';
        }
        *p++ = ')';
    }
    *p = 0;
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db->db, sql, -1, &st, NULL);
    free(sql);
    if (rc != SQLITE_OK)
        return NULL;
    db->ins[db->nins].table = table;
    db->ins[db->nins].cols = cols;
    db->ins[db->nins].rows = rows;
    db->ins[db->nins++].st = st;
    return st;
}

/* The allocator plumbing list (stacks.c) as the table the view `frames` reads. */
static int write_plumbing(cv__db_t *db, cv__err_t *err)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db->db, "INSERT INTO plumbing_patterns (kind, pattern) VALUES (?, ?)",
                                -1, &st, NULL);
    for (size_t i = 0; rc == SQLITE_OK && i < cv__plumbing_count; i++) {
        const cv__plumbing_t *p = &cv__plumbing[i];
        sqlite3_bind_text(st, 1, p->kind == RHEAP_PLUMBING_MODULE ? "module" : "name", -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, p->pattern, -1, SQLITE_STATIC);
        rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
        sqlite3_reset(st);
    }
    if (rc != SQLITE_OK)
        cv__fail(err, RHEAP_CONVERT_E_OUTPUT, db->tmp, CV__NO_OFFSET,
                 "%s: writing the plumbing patterns: %s", db->tmp, sqlite3_errmsg(db->db));
    sqlite3_finalize(st);
    return rc == SQLITE_OK ? RHEAP_CONVERT_OK : RHEAP_CONVERT_E_OUTPUT;
}

/* The output's name is free, or may be replaced (force); never a directory. */
static rheap_convert_status_t check_output(const char *path, int force, cv__err_t *err)
{
    struct stat sb;
    if (stat(path, &sb) == 0) {
        if (S_ISDIR(sb.st_mode))
            return cv__fail(err, RHEAP_CONVERT_E_REFUSED, path, CV__NO_OFFSET,
                            "%s: is a directory, expected a database file name", path);
        if (!force)
            return cv__fail(err, RHEAP_CONVERT_E_REFUSED, path, CV__NO_OFFSET,
                            "%s: already exists (use --force to replace it)", path);
    }
    return RHEAP_CONVERT_OK;
}

/* The SQLite file OUT.tmp-XXXXXX, created empty and removed by the cleanup handlers if the
 * converter is killed before it is put in place. A name no one else can have made first:
 * created here, exclusively (never through a link), with a random part (mkostemp). Beside the
 * output in a shared directory, a predictable name could be planted by another user between
 * the removal of a leftover and SQLite's open, and that user would own the database. */
static rheap_convert_status_t open_temporary(cv__db_t *db, cv__err_t *err)
{
    /* The converter uses SQLite from one thread at a time (the writer thread or, after a
     * drain, the caller's): without its mutexes and memory statistics every row is measurably
     * cheaper. Only possible before SQLite initializes; later calls
     * fail harmlessly and keep the defaults. */
    sqlite3_config(SQLITE_CONFIG_SINGLETHREAD);
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    int tfd = mkostemp(db->tmp, O_CLOEXEC);
    if (tfd < 0)
        return cv__fail(err, RHEAP_CONVERT_E_OUTPUT, db->tmp, CV__NO_OFFSET,
                        "%s: cannot create a temporary file: %s", db->tmp, strerror(errno));
    cleanup_install(db->tmp);
    /* The mode SQLite would have given a file it created. */
    mode_t mask = umask(0);
    umask(mask);
    struct stat mine, now;
    if (fchmod(tfd, 0666 & ~mask) != 0 || fstat(tfd, &mine) != 0) {
        int e = errno;
        close(tfd);
        return cv__fail(err, RHEAP_CONVERT_E_OUTPUT, db->tmp, CV__NO_OFFSET, "%s: %s", db->tmp,
                        strerror(e));
    }
    int opened = sqlite3_open_v2(db->tmp, &db->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX,
                                 NULL) == SQLITE_OK;
    /* SQLite opens by name: the file must still be the one made above (where the directory
     * lets others rename files, someone could have put another in its place). */
    int same = opened && lstat(db->tmp, &now) == 0 && now.st_dev == mine.st_dev &&
               now.st_ino == mine.st_ino;
    db->tmp_dev = mine.st_dev;
    db->tmp_ino = mine.st_ino;
    close(tfd);
    if (!opened)
        return cv__fail(err, RHEAP_CONVERT_E_OUTPUT, db->tmp, CV__NO_OFFSET,
                        "%s: cannot create the database: %s", db->tmp, why(db, NULL));
    if (!same)
        return cv__fail(err, RHEAP_CONVERT_E_OUTPUT, db->tmp, CV__NO_OFFSET,
                        "%s: replaced by another file while the database was being created; "
                        "refused",
                        db->tmp);
    return RHEAP_CONVERT_OK;
}

/* The connection's PRAGMAs: set at the start and again when cv__db_settle reopens the file.
 * page_size must come before the first table. The journal and syncs are useless here: a failed
 * load is thrown away as a whole. */
static rheap_convert_status_t set_pragmas(cv__db_t *db, cv__err_t *err)
{
    const char *pragmas = "PRAGMA page_size = " PAGE_SIZE_TEXT ";"
                          "PRAGMA journal_mode = OFF;"
                          "PRAGMA synchronous = OFF;"
                          "PRAGMA locking_mode = EXCLUSIVE;"
                          "PRAGMA temp_store = MEMORY;"
                          "PRAGMA cache_size = -32768;";
    char *msg = NULL;
    if (sqlite3_exec(db->db, pragmas, NULL, NULL, &msg) != SQLITE_OK) {
        cv__fail(err, RHEAP_CONVERT_E_OUTPUT, db->tmp, CV__NO_OFFSET, "%s: %s", db->tmp,
                 msg ? msg : "?");
        sqlite3_free(msg);
        return RHEAP_CONVERT_E_OUTPUT;
    }
    return RHEAP_CONVERT_OK;
}

/* The load transaction and the prepared inserts. */
static rheap_convert_status_t begin_load(cv__db_t *db, cv__err_t *err)
{
    char *msg = NULL;
    if (sqlite3_exec(db->db, "BEGIN", NULL, NULL, &msg) != SQLITE_OK) {
        cv__fail(err, RHEAP_CONVERT_E_OUTPUT, db->tmp, CV__NO_OFFSET, "%s: %s", db->tmp,
                 msg ? msg : "?");
        sqlite3_free(msg);
        return RHEAP_CONVERT_E_OUTPUT;
    }
    for (int i = 0; i < ST_N; i++)
        if (sqlite3_prepare_v2(db->db, stmt_sql[i], -1, &db->st[i], NULL) != SQLITE_OK)
            return cv__fail(err, RHEAP_CONVERT_E_OUTPUT, db->tmp, CV__NO_OFFSET,
                            "%s: preparing '%s': %s", db->tmp, stmt_sql[i],
                            sqlite3_errmsg(db->db));
    if (prepare_batch(db, stmt_sql[ST_ALLOC], BATCH, &db->batch) != 0 ||
        prepare_batch(db, stmt_sql[ST_FRAME], FRAME_BATCH, &db->frame_batch) != 0)
        return cv__fail(err, RHEAP_CONVERT_E_OUTPUT, db->tmp, CV__NO_OFFSET,
                        "%s: preparing a batch insert: %s", db->tmp, sqlite3_errmsg(db->db));
    return RHEAP_CONVERT_OK;
}

/* The PRAGMAs, the schema's load part, the load transaction, the prepared inserts and the
 * plumbing patterns. */
static rheap_convert_status_t create_schema(cv__db_t *db, cv__err_t *err)
{
    if (set_pragmas(db, err) != RHEAP_CONVERT_OK || run_schema(db, 0, err) != RHEAP_CONVERT_OK ||
        begin_load(db, err) != RHEAP_CONVERT_OK)
        return RHEAP_CONVERT_E_OUTPUT;
    return write_plumbing(db, err);
}

/* The queue of row chunks and the thread that writes them. Without the thread (no memory for
 * its queue, or no thread) chunks are written by the caller; only a queue that cannot be
 * mapped at all fails. */
static rheap_convert_status_t start_writer(cv__db_t *db, int background, cv__err_t *err)
{
    /* Address space only: pages are used as they are first written. Under a limit of address
     * space (ulimit -v), which counts it whole, the queue takes an eighth of the limit at most,
     * and less if even that is refused: a shorter queue only makes the summary wait longer for
     * the writer. */
    void *area;
    struct rlimit as;
    db->qcap = QUEUE;
    if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY &&
        as.rlim_cur / 8 < area_bytes(db->qcap)) {
        uint64_t fit = as.rlim_cur / 8 / area_bytes(0);
        db->qcap = fit > QUEUE_MIN ? (unsigned)fit - 1 : QUEUE_MIN;
    }
    if (queue_limit && db->qcap > queue_limit)
        db->qcap = queue_limit > QUEUE_MIN ? queue_limit : QUEUE_MIN;
    for (;; db->qcap /= 2) {
        area = mmap(NULL, area_bytes(db->qcap), PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (area != MAP_FAILED || db->qcap / 2 < QUEUE_MIN)
            break;
    }
    if (area == MAP_FAILED)
        return cv__fail(err, RHEAP_CONVERT_E_OUTPUT, db->tmp, CV__NO_OFFSET,
                        "%s: out of memory for the queue of rows", db->tmp);
    db->area = area;
    db->used = calloc(db->qcap + 1, sizeof *db->used);
    db->first = calloc(db->qcap + 1, sizeof *db->first);
    if (!db->used || !db->first)
        return cv__fail(err, RHEAP_CONVERT_E_OUTPUT, db->tmp, CV__NO_OFFSET,
                        "%s: out of memory for the queue of rows", db->tmp);
    db->queue = malloc(db->qcap * sizeof *db->queue);
    db->spare = malloc(db->qcap * sizeof *db->spare);
    for (unsigned i = 0; db->spare && i < db->qcap; i++)
        db->spare[i] = db->qcap - i; /* place 0 is pending; 1, 2, ... come next */
    db->nspare = db->spare ? db->qcap : 0;
    if (db->queue && db->spare && pthread_mutex_init(&db->mu, NULL) == 0) {
        int ok = pthread_cond_init(&db->work, NULL) == 0;
        ok = ok && pthread_cond_init(&db->room, NULL) == 0;
        ok = ok && pthread_mutex_init(&db->conn, NULL) == 0;
        ok = ok && pthread_cond_init(&db->turn, NULL) == 0;
        db->background = background;
        db->have_writer = ok && pthread_create(&db->writer, NULL, writer_main, db) == 0;
        /* (A failed init leaves nothing to destroy on Linux, where these allocate nothing.) */
    }
    return RHEAP_CONVERT_OK;
}

/* The builders of allocation_rows and its side tables, each with its unnamed file beside the
 * database (the page size is the database's: create_schema set it). */
static rheap_convert_status_t create_trees(cv__db_t *db, cv__err_t *err)
{
    if (rows_by_sqlite)
        return RHEAP_CONVERT_OK;
    for (int t = 0; t < T_N; t++) {
        db->tree[t] = cv__btree_create(db->path, tree_table[t], PAGE_SIZE, 0);
        if (!db->tree[t])
            return cv__fail(err, RHEAP_CONVERT_E_OUTPUT, db->tmp, CV__NO_OFFSET,
                            "%s: out of memory", db->tmp);
        if (cv__btree_error(db->tree[t]))
            return cv__fail(err, RHEAP_CONVERT_E_OUTPUT, db->tmp, CV__NO_OFFSET, "%s",
                            cv__btree_error(db->tree[t]));
    }
    return RHEAP_CONVERT_OK;
}

rheap_convert_status_t cv__db_create(const char *path, int force, int background, cv__db_t **out,
                                     cv__err_t *err)
{
    *out = NULL;
    rheap_convert_status_t st = check_output(path, force, err);
    if (st != RHEAP_CONVERT_OK)
        return st;
    cv__db_t *db = calloc(1, sizeof *db);
    size_t tlen = strlen(path) + 32;
    if (db) {
        db->kept_end = &db->kept_full;
        db->path = strdup(path);
        db->force = force;
        db->tmp = malloc(tlen);
    }
    if (!db || !db->path || !db->tmp) {
        if (db)
            destroy(db);
        return cv__fail(err, RHEAP_CONVERT_E_OUTPUT, path, CV__NO_OFFSET,
                        "%s: out of memory", path);
    }
    snprintf(db->tmp, tlen, "%s.tmp-XXXXXX", path);
    if (open_temporary(db, err) != RHEAP_CONVERT_OK || create_schema(db, err) != RHEAP_CONVERT_OK ||
        create_trees(db, err) != RHEAP_CONVERT_OK ||
        start_writer(db, background, err) != RHEAP_CONVERT_OK) {
        close_all(db);
        unlink(db->tmp);
        destroy(db);
        return RHEAP_CONVERT_E_OUTPUT;
    }
    *out = db;
    return RHEAP_CONVERT_OK;
}

static int step(sqlite3_stmt *s)
{
    int rc = sqlite3_step(s);
    sqlite3_reset(s);
    return rc == SQLITE_DONE ? 0 : -1;
}

static void bind_u64_or_null(sqlite3_stmt *s, int i, uint64_t v, int present)
{
    if (present)
        sqlite3_bind_int64(s, i, (sqlite3_int64)v);
    else
        sqlite3_bind_null(s, i);
}

static void bind_text_or_null(sqlite3_stmt *s, int i, const char *v)
{
    if (v)
        sqlite3_bind_text(s, i, v, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(s, i);
}

/* The same for a string that outlives the statement's next step: not copied. */
static void bind_static_or_null(sqlite3_stmt *s, int i, const char *v)
{
    if (v)
        sqlite3_bind_text(s, i, v, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(s, i);
}

/* Binds parameter i (1-based) of s, whose current binding is *b, unless it holds v already. */
static void rebind_int(sqlite3_stmt *s, bound_t *b, int i, uint64_t v)
{
    if (b->kind == B_INT && b->v == v)
        return;
    sqlite3_bind_int64(s, i, (sqlite3_int64)v);
    b->kind = B_INT;
    b->v = v;
}

/* A size: unsigned, stored as a REAL from 2^63 on (cv__bind_wide). */
static void rebind_size(sqlite3_stmt *s, bound_t *b, int i, uint64_t v)
{
    if (v <= INT64_MAX) {
        rebind_int(s, b, i, v);
    } else if (b->kind != B_REAL || b->v != v) {
        sqlite3_bind_double(s, i, (double)v);
        b->kind = B_REAL;
        b->v = v;
    }
}

void cv__bind_wide(sqlite3_stmt *s, int i, cv__wide_t v)
{
    if (v >= INT64_MIN && v <= INT64_MAX)
        sqlite3_bind_int64(s, i, (sqlite3_int64)v);
    else
        sqlite3_bind_double(s, i, (double)v);
}

static void rebind_int_or_null(sqlite3_stmt *s, bound_t *b, int i, uint64_t v, int present)
{
    if (present) {
        rebind_int(s, b, i, v);
    } else if (b->kind != B_NULL) {
        sqlite3_bind_null(s, i);
        b->kind = B_NULL;
    }
}

/* The row's columns in allocation_rows (schema.sql) are scaled down where that is exact: times
 * in units of 4 ns when both are multiples of 4 (always, from librheap, whose files count 4 ns
 * units) and small enough that the view's product cannot overflow, and the address, taken
 * relative to the allocating thread's first one, in units of 16 bytes when it is a multiple of
 * 16 away (always, from glibc's malloc). A row where either is not so is stored unscaled.
 * Call, kind of free, thread and realloc_of or align are packed into `how`, so that a malloc by
 * the first thread freed by itself is a 0, which SQLite stores in no byte at all. */
#define EXTRA_SHIFT 30 /* above 22 bits of thread: a realloc_of up to 2^16 rows back fits in 6 bytes */
#define EXTRA_ELSEWHERE (((uint64_t)1 << (63 - EXTRA_SHIFT)) - 2) /* the value is in allocation_extras */
_Static_assert(RIP_CALL_LAST <= 64, "how keeps call - 1 in 6 bits");
_Static_assert(RHEAP_MAX_THREADS <= (UINT32_MAX >> CV__ROW_THREAD_SHIFT) + 1,
               "a row's who keeps the thread in 24 bits");

/* The calls that resize (rip_call_resizes), as bits: the writer asks for every row. */
#define RESIZE_BIT(name, id, text, kind) | ((uint64_t)((kind) == RIP_RESIZE) << (id))
static const uint64_t resizing = 0 RIP_CALL_LIST(RESIZE_BIT);
#undef RESIZE_BIT

/* A row's fields as the writer reads them. */
typedef struct {
    uint64_t id;
    unsigned call, freed, cross; /* cross: freed by another thread, or by none recorded */
    uint32_t thread;
    uint64_t extra;              /* realloc_of as id - realloc_of when the call resizes, else align */
    int resize;
} fields_t;

static inline void fields_of(const cv__row_t *r, uint64_t id, fields_t *f)
{
    f->id = id;
    f->call = r->who & 63;
    f->freed = (r->who & CV__ROW_FREED) != 0;
    f->thread = r->who >> CV__ROW_THREAD_SHIFT;
    f->cross = f->freed && r->free_thread != f->thread;
    f->resize = (int)(resizing >> f->call & 1);
    f->extra = f->resize ? r->back : r->align;
}

/* The columns of row r in allocation_rows, after the id: t, life, bt, size, addr, how, in v;
 * the bit of each NULL in the result. A size of 2^63 or more does not fit: *wide is set, and
 * the caller stores r->size as a REAL (cv__bind_wide), as SQLite's INTEGER affinity keeps it. */
static inline uint32_t row_columns(const cv__row_t *r, const fields_t *f, int64_t *v, int *wide)
{
    const uint64_t limit = (uint64_t)1 << 59;
    uint64_t t = r->alloc_t, addr = r->addr;
    uint64_t end = f->freed ? r->dealloc_t : 0;
    /* Scaled unless a time is not a multiple of 4 or an address of 16, or one is too large. */
    int plain = ((t | end) & 3) != 0 || (addr & 15) != 0 || (t | end | addr) >= limit;
    unsigned ts = plain ? 0 : 2, as = plain ? 0 : 4;
    /* The extra value as kept in `how`: doubled, plus 1 for a resizing call, so that the view
     * tells realloc_of from align without knowing the calls; EXTRA_ELSEWHERE (+1 when
     * resizing) when it is in allocation_extras. */
    uint64_t extra = f->extra == 0 ? 0
                     : (f->extra >= EXTRA_ELSEWHERE / 2 ? EXTRA_ELSEWHERE : f->extra * 2) +
                           (uint64_t)f->resize;
    v[0] = (int64_t)(t >> ts);
    /* Exact: both times are multiples of 4 when scaled; a clock step can make it negative. */
    v[1] = (int64_t)(end - t) >> ts;
    v[2] = (int64_t)r->bt;
    v[3] = (int64_t)r->size;
    v[4] = (int64_t)(addr >> as);
    v[5] = (int64_t)((uint64_t)((f->call - 1) & 63) | (uint64_t)f->cross << 6 |
                     (uint64_t)plain << 7 | (uint64_t)f->thread << 8 | extra << EXTRA_SHIFT);
    *wide = r->size > INT64_MAX;
    return (f->freed ? 0u : 2u) | (r->bt ? 0u : 4u);
}

/* b points at the row's ALLOC_COLS bindings, base is the row's first parameter minus one. */
static void bind_row(sqlite3_stmt *s, bound_t *b, int base, const cv__row_t *r, uint64_t id)
{
    fields_t f;
    fields_of(r, id, &f);
    int64_t v[ALLOC_COLS];
    int wide;
    uint32_t nulls = row_columns(r, &f, v, &wide);
    for (int i = 0; i < ALLOC_COLS; i++) {
        if (i == 3)
            rebind_size(s, &b[i], base + i + 1, r->size);
        else
            rebind_int_or_null(s, &b[i], base + i + 1, (uint64_t)v[i], !(nulls >> i & 1));
    }
}

/* The side rows of a block: its freeing thread when another thread freed it, its realloc_of or
 * align when too large for `how`. Through SQLite's inserts (cv__db_rows_by_sqlite). */
static int write_side(cv__db_t *db, const cv__row_t *r, uint64_t id)
{
    fields_t f;
    fields_of(r, id, &f);
    if (f.cross && r->free_thread != RHEAP_NO_THREAD) {
        sqlite3_stmt *s = db->st[ST_FREE];
        sqlite3_bind_int64(s, 1, (sqlite3_int64)id);
        sqlite3_bind_int64(s, 2, r->free_thread);
        if (step(s) != 0)
            return -1;
    }
    if (f.extra >= EXTRA_ELSEWHERE / 2) {
        sqlite3_stmt *s = db->st[ST_EXTRA];
        sqlite3_bind_int64(s, 1, (sqlite3_int64)id);
        sqlite3_bind_int64(s, 2, (sqlite3_int64)f.extra);
        if (step(s) != 0)
            return -1;
    }
    return 0;
}

/* Writes BATCH rows, the first with id `first`, in one statement. */
static int write_batch(cv__db_t *db, const cv__row_t *rows, uint64_t first)
{
    for (size_t i = 0; i < BATCH; i++)
        bind_row(db->batch, &db->batched[i * ALLOC_COLS], (int)i * ALLOC_COLS, &rows[i],
                 first + i);
    if (step(db->batch) != 0)
        return -1;
    /* The ids the converter handed out (realloc_of refers to them) must be SQLite's. */
    if (sqlite3_last_insert_rowid(db->db) != (sqlite3_int64)(first + BATCH - 1))
        return -1;
    for (size_t i = 0; i < BATCH; i++)
        if (write_side(db, &rows[i], first + i) != 0)
            return -1;
    return 0;
}

/* Writes n rows through SQLite: whole batches in one statement each, the rest row by row. */
static int write_rows(cv__db_t *db, const cv__row_t *rows, size_t n, uint64_t first)
{
    size_t i = 0;
    for (; i + BATCH <= n; i += BATCH)
        if (write_batch(db, rows + i, first + i) != 0)
            return -1;
    for (; i < n; i++) {
        bind_row(db->st[ST_ALLOC], db->single, 0, &rows[i], first + i);
        if (step(db->st[ST_ALLOC]) != 0 || write_side(db, &rows[i], first + i) != 0)
            return -1;
    }
    return 0;
}

/* Lays row r (id `id`) and its side rows into the b-trees: the record straight from the row's
 * fields (cv__btree_add_ints), the id column NULL (an INTEGER PRIMARY KEY is the rowid, and
 * SQLite keeps NULL in its place). The side rows are rare: a block freed by another thread, a
 * realloc_of far back. 0, or -1 (cv__btree_error). */
static inline int tree_row(cv__db_t *db, const cv__row_t *r, uint64_t id)
{
    fields_t f;
    fields_of(r, id, &f);
    int64_t v[1 + ALLOC_COLS];
    v[0] = 0; /* the id column: NULL */
    int wide;
    uint32_t nulls = 1u | row_columns(r, &f, v + 1, &wide) << 1;
    if (!wide) {
        if (cv__btree_add_ints(db->tree[T_ROWS], (int64_t)id, v, 1 + ALLOC_COLS, nulls) != 0)
            return -1;
    } else {
        cv__bt_value_t w[1 + ALLOC_COLS];
        for (int i = 0; i < 1 + ALLOC_COLS; i++)
            w[i] = (cv__bt_value_t){(nulls >> i & 1) ? CV__BT_NULL : CV__BT_INT, v[i], 0};
        w[4] = (cv__bt_value_t){CV__BT_REAL, 0, (double)r->size};
        if (cv__btree_add(db->tree[T_ROWS], (int64_t)id, w, 1 + ALLOC_COLS) != 0)
            return -1;
    }
    if (f.cross && r->free_thread != RHEAP_NO_THREAD) {
        int64_t side[2] = {0, r->free_thread};
        if (cv__btree_add_ints(db->tree[T_FREES], (int64_t)id, side, 2, 1) != 0)
            return -1;
    }
    if (f.extra >= EXTRA_ELSEWHERE / 2) {
        int64_t side[2] = {0, (int64_t)f.extra};
        if (cv__btree_add_ints(db->tree[T_EXTRAS], (int64_t)id, side, 2, 1) != 0)
            return -1;
    }
    return 0;
}

/* The first failed builder's message in db->error. */
static int tree_failed(cv__db_t *db)
{
    for (int t = 0; t < T_N; t++)
        if (cv__btree_error(db->tree[t])) {
            fmt(db->error, sizeof db->error, "%s", cv__btree_error(db->tree[t]));
            break;
        }
    return -1;
}

/* Writes the rows of chunk place i: into the b-trees, or through SQLite a batch at a time. On
 * failure db->error says why. */
static int write_chunk(cv__db_t *db, unsigned place)
{
    const cv__row_t *rows = chunk(db, place);
    uint32_t n = db->used[place];
    uint64_t first = db->first[place];
    if (db->tree[T_ROWS]) {
        for (uint32_t i = 0; i < n; i++)
            if (tree_row(db, &rows[i], first + i) != 0)
                return tree_failed(db);
        return 0;
    }
    if (write_rows(db, rows, n, first) == 0)
        return 0;
    fmt(db->error, sizeof db->error, "%s", why(db, NULL));
    return -1;
}

/* Makes the pending place an empty chunk. */
static void empty_pending(cv__db_t *db)
{
    db->used[db->pending] = 0;
}

/* Writes the pending rows on this thread. */
static int flush_rows(cv__db_t *db)
{
    int rc = write_chunk(db, db->pending);
    empty_pending(db);
    return rc;
}

/* Queues the full pending chunk for the writer thread and takes a free place. While the queue
 * is full: waits, or, when the writer runs at nice 19, writes the older half itself. */
static int submit(cv__db_t *db)
{
    pthread_mutex_lock(&db->mu);
    while (db->q_count == db->qcap && !db->failed) {
        if (db->background) {
            pthread_mutex_unlock(&db->mu);
            help_writer(db, db->qcap / 2);
            pthread_mutex_lock(&db->mu);
        } else {
            pthread_cond_wait(&db->room, &db->mu);
        }
    }
    if (!db->failed) {
        db->queue[(db->q_head + db->q_count) % db->qcap] = db->pending;
        db->q_count++;
        pthread_cond_signal(&db->work);
        db->pending = db->spare[--db->nspare]; /* qcap + 1 places, at most qcap queued */
    }
    int failed = db->failed;
    pthread_mutex_unlock(&db->mu);
    empty_pending(db);
    return failed ? -1 : 0;
}

/* The pending chunk handed on: to the writer thread, or written here when there is none. */
static int hand_over(cv__db_t *db)
{
    if (db->have_writer)
        return submit(db);
    return flush_rows(db) == 0 ? 0 : failed_here(db, db->error);
}

int cv__db_rows(cv__db_t *db, uint64_t first, const cv__row_t *rows, size_t n)
{
    while (n) {
        uint32_t used = db->used[db->pending];
        /* A chunk's rows have consecutive ids, from first[place] on. */
        if (used && first != db->first[db->pending] + used) {
            if (hand_over(db) != 0)
                return -1;
            used = 0;
        }
        if (!used)
            db->first[db->pending] = first;
        size_t k = CHUNK_ROWS - used < n ? CHUNK_ROWS - used : n;
        memcpy(chunk(db, db->pending) + used, rows, k * sizeof *rows);
        db->used[db->pending] = used + (uint32_t)k;
        first += k;
        rows += k;
        n -= k;
        if (used + k == CHUNK_ROWS && hand_over(db) != 0)
            return -1;
    }
    return 0;
}

/* Binds frame row f to the parameters from base + 1 of statement s. */
static void bind_frame(sqlite3_stmt *s, int base, const frame_row_t *f)
{
    sqlite3_bind_int64(s, base + 1, (sqlite3_int64)f->bt);
    sqlite3_bind_int64(s, base + 2, f->frame_no);
    bind_static_or_null(s, base + 3, f->file);
    bind_u64_or_null(s, base + 4, f->line, f->line != 0);
    bind_static_or_null(s, base + 5, f->sym);
    bind_static_or_null(s, base + 6, f->module);
    sqlite3_bind_int64(s, base + 7, (sqlite3_int64)f->offset);
    sqlite3_bind_int(s, base + 8, f->inlined ? 1 : 0);
    sqlite3_bind_int64(s, base + 9, f->ip_index);
}

/* Writes a set of backtraces and stacks rows; the caller has the connection. The set is
 * empty afterwards, whether or not the writes succeeded. */
static int write_kept(cv__db_t *db, kept_t *b)
{
    int rc = 0;
    size_t i = 0;
    for (; rc == 0 && i + FRAME_BATCH <= b->nframes; i += FRAME_BATCH) {
        for (int k = 0; k < FRAME_BATCH; k++)
            bind_frame(db->frame_batch, k * FRAME_COLS, &b->frames[i + (size_t)k]);
        rc = step(db->frame_batch);
    }
    for (; rc == 0 && i < b->nframes; i++) {
        bind_frame(db->st[ST_FRAME], 0, &b->frames[i]);
        rc = step(db->st[ST_FRAME]);
    }
    b->nframes = 0;
    sqlite3_stmt *s = db->st[ST_STACK];
    for (size_t i = 0; i < b->nstacks; i++) {
        stack_row_t *k = &b->stacks[i];
        if (rc == 0) {
            sqlite3_bind_int64(s, 1, (sqlite3_int64)k->id);
            sqlite3_bind_int64(s, 2, k->frames);
            sqlite3_bind_int64(s, 3, k->site_frame);
            sqlite3_bind_text(s, 4, k->function, -1, SQLITE_STATIC);
            sqlite3_bind_text(s, 5, k->location, -1, SQLITE_STATIC);
            sqlite3_bind_int64(s, 6, k->site);
            rc = step(s);
        }
        if (rc == 0) {
            sqlite3_stmt *f = db->st[ST_STACK_FRAMES];
            sqlite3_bind_int64(f, 1, (sqlite3_int64)k->id);
            sqlite3_bind_text(f, 2, k->frame_ids, -1, SQLITE_STATIC);
            rc = step(f);
        }
        free(k->function);
        free(k->location);
        free(k->frame_ids);
    }
    b->nstacks = 0;
    return rc;
}

/* The full sets handed to the writer thread and not yet taken by it, oldest first. */
static kept_t *take_kept(cv__db_t *db)
{
    if (!db->have_writer)
        return NULL;
    pthread_mutex_lock(&db->mu);
    kept_t *list = db->kept_full;
    db->kept_full = NULL;
    db->kept_end = &db->kept_full;
    pthread_mutex_unlock(&db->mu);
    return list;
}

/* Writes the sets in list and frees them: the first failure ends the writing. */
static int write_kept_list(cv__db_t *db, kept_t *list)
{
    int rc = 0;
    for (kept_t *b = list; rc == 0 && b; b = b->next)
        rc = write_kept(db, b);
    drop_kept(list);
    return rc;
}

/* Writes every kept backtraces and stacks row, those handed to the writer thread and not yet
 * written included; the caller has the connection. */
static int flush_kept(cv__db_t *db)
{
    int rc = write_kept_list(db, take_kept(db));
    if (rc == 0)
        rc = write_kept(db, &db->kept);
    return rc;
}

/* Once KEPT_FRAMES frame rows are gathered, they go to the writer thread, which writes them
 * before its next chunk: the reading thread goes on decoding (writing them itself cost it about
 * 4,700 instructions a frame row, 60 ms of a python3 recording's 218,000). Without a writer
 * thread they are written here. */
static int hand_off_if_full(cv__db_t *db)
{
    if (db->kept.nframes < KEPT_FRAMES)
        return 0;
    if (!db->have_writer) {
        if (enter(db) != 0)
            return -1;
        give_turn(db);
        return 0;
    }
    kept_t *b = malloc(sizeof *b);
    if (!b)
        return failed_here(db, "out of memory");
    *b = db->kept;
    b->next = NULL;
    memset(&db->kept, 0, sizeof db->kept);
    pthread_mutex_lock(&db->mu);
    *db->kept_end = b;
    db->kept_end = &b->next;
    pthread_cond_signal(&db->work);
    pthread_mutex_unlock(&db->mu);
    return 0;
}

int cv__db_frame(cv__db_t *db, uint64_t bt, uint32_t frame_no, const cv__srcframe_t *f,
                    const char *module, uint64_t offset, uint32_t ip_index)
{
    kept_t *b = &db->kept;
    if (rheap_grow(&b->frames, &b->capframes, b->nframes, sizeof *b->frames, 1024) != 0)
        return failed_here(db, "out of memory");
    b->frames[b->nframes++] =
        (frame_row_t){bt, offset, frame_no, f->line, ip_index, f->inlined, f->file, f->sym, module};
    return hand_off_if_full(db);
}

int cv__db_stack(cv__db_t *db, uint64_t id, uint32_t frames, uint32_t site_frame, uint32_t site,
                    const char *function, const char *location, char *frame_ids)
{
    kept_t *b = &db->kept;
    if (!frame_ids || rheap_grow(&b->stacks, &b->capstacks, b->nstacks, sizeof *b->stacks, 256) != 0) {
        free(frame_ids);
        return failed_here(db, "out of memory");
    }
    char *fn = strdup(function), *loc = strdup(location);
    if (!fn || !loc) {
        free(fn);
        free(loc);
        free(frame_ids);
        return failed_here(db, "out of memory");
    }
    b->stacks[b->nstacks++] = (stack_row_t){id, frames, site_frame, site, fn, loc, frame_ids};
    return hand_off_if_full(db);
}

sqlite3 *cv__db_enter(cv__db_t *db)
{
    return enter(db) == 0 ? db->db : NULL;
}

void cv__db_leave(cv__db_t *db)
{
    give_turn(db);
}

void cv__db_failed(cv__db_t *db)
{
    for (int t = T_SUMMARY; t < T_N; t++)
        if (db->tree[t] && cv__btree_error(db->tree[t])) {
            failed_here(db, cv__btree_error(db->tree[t]));
            return;
        }
    failed_here(db, why(db, NULL));
}

/* Steps s, a write of the calling thread made after enter(), and gives the turn back. */
static int put(cv__db_t *db, sqlite3_stmt *s)
{
    if (step(s) != 0)
        return leave_failed(db, NULL);
    give_turn(db);
    return 0;
}

int cv__db_process(cv__db_t *db, const cv__process_row_t *p)
{
    if (enter(db) != 0)
        return -1;
    sqlite3_stmt *s = db->st[ST_PROCESS];
    sqlite3_bind_int64(s, 1, p->pid);
    sqlite3_bind_int64(s, 2, p->recording);
    sqlite3_bind_int64(s, 3, p->ppid);
    bind_text_or_null(s, 4, p->exe);
    bind_text_or_null(s, 5, p->cmdline);
    sqlite3_bind_int64(s, 6, (sqlite3_int64)p->start_ns);
    bind_u64_or_null(s, 7, p->wall_ns, p->wall_ns != 0);
    bind_u64_or_null(s, 8, p->page_size, p->page_size != 0);
    bind_u64_or_null(s, 9, p->depth, p->depth != 0);
    bind_u64_or_null(s, 10, p->sample_ppm, p->has_config);
    bind_text_or_null(s, 11, p->dir);
    sqlite3_bind_int64(s, 12, (sqlite3_int64)p->unmatched_frees);
    sqlite3_bind_int64(s, 13, (sqlite3_int64)p->lost);
    return put(db, s);
}

int cv__db_thread(cv__db_t *db, uint32_t id, uint32_t pid, uint32_t recording, uint32_t tid,
                     const char *name, uint32_t serial, const char *file, uint64_t events,
                     uint64_t lost, uint64_t addr_base)
{
    if (enter(db) != 0)
        return -1;
    sqlite3_stmt *s = db->st[ST_THREAD];
    sqlite3_bind_int64(s, 1, id);
    sqlite3_bind_int64(s, 2, pid);
    sqlite3_bind_int64(s, 3, recording);
    sqlite3_bind_int64(s, 4, tid);
    bind_text_or_null(s, 5, name);
    sqlite3_bind_int64(s, 6, serial);
    bind_text_or_null(s, 7, file);
    sqlite3_bind_int64(s, 8, (sqlite3_int64)events);
    sqlite3_bind_int64(s, 9, (sqlite3_int64)lost);
    sqlite3_bind_int64(s, 10, (sqlite3_int64)addr_base);
    return put(db, s);
}

int cv__db_module(cv__db_t *db, uint32_t pid, uint32_t recording, const char *path,
                     uint64_t bias, const char *build_id_hex, const char *status)
{
    if (enter(db) != 0)
        return -1;
    sqlite3_stmt *s = db->st[ST_MODULE];
    sqlite3_bind_int64(s, 1, pid);
    sqlite3_bind_int64(s, 2, recording);
    bind_text_or_null(s, 3, path);
    sqlite3_bind_int64(s, 4, (sqlite3_int64)bias);
    bind_text_or_null(s, 5, build_id_hex);
    bind_text_or_null(s, 6, status);
    return put(db, s);
}

int cv__db_marker(cv__db_t *db, uint32_t pid, uint32_t recording, uint32_t tid, uint64_t t,
                     const char *label, size_t label_len)
{
    if (enter(db) != 0)
        return -1;
    sqlite3_stmt *s = db->st[ST_MARKER];
    sqlite3_bind_int64(s, 1, pid);
    sqlite3_bind_int64(s, 2, recording);
    sqlite3_bind_int64(s, 3, tid);
    sqlite3_bind_int64(s, 4, (sqlite3_int64)t);
    sqlite3_bind_text(s, 5, label, (int)label_len, SQLITE_TRANSIENT);
    return put(db, s);
}

int cv__db_pool(cv__db_t *db, uint64_t id, uint32_t pid, uint32_t recording, uint64_t pool,
                uint64_t t, const char *name)
{
    if (enter(db) != 0)
        return -1;
    sqlite3_stmt *s = db->st[ST_POOL];
    sqlite3_bind_int64(s, 1, (sqlite3_int64)id);
    sqlite3_bind_int64(s, 2, pid);
    sqlite3_bind_int64(s, 3, recording);
    sqlite3_bind_int64(s, 4, (sqlite3_int64)pool);
    sqlite3_bind_int64(s, 5, (sqlite3_int64)t);
    bind_text_or_null(s, 6, name);
    return put(db, s);
}

int cv__db_pool_block(cv__db_t *db, uint64_t id, uint64_t pool)
{
    if (enter(db) != 0)
        return -1;
    sqlite3_stmt *s = db->st[ST_POOL_BLOCK];
    sqlite3_bind_int64(s, 1, (sqlite3_int64)id);
    sqlite3_bind_int64(s, 2, (sqlite3_int64)pool);
    return put(db, s);
}

int cv__db_map_piece(cv__db_t *db, uint64_t id, uint64_t of)
{
    if (enter(db) != 0)
        return -1;
    sqlite3_stmt *s = db->st[ST_MAP_PIECE];
    sqlite3_bind_int64(s, 1, (sqlite3_int64)id);
    sqlite3_bind_int64(s, 2, (sqlite3_int64)of);
    return put(db, s);
}

int cv__db_rss(cv__db_t *db, uint32_t pid, uint32_t recording, uint64_t t, uint64_t bytes,
               uint64_t anon, uint64_t file, uint64_t swap)
{
    if (enter(db) != 0)
        return -1;
    sqlite3_stmt *s = db->st[ST_RSS];
    sqlite3_bind_int64(s, 1, pid);
    sqlite3_bind_int64(s, 2, recording);
    sqlite3_bind_int64(s, 3, (sqlite3_int64)t);
    sqlite3_bind_int64(s, 4, (sqlite3_int64)bytes);
    sqlite3_bind_int64(s, 5, (sqlite3_int64)anon);
    sqlite3_bind_int64(s, 6, (sqlite3_int64)file);
    sqlite3_bind_int64(s, 7, (sqlite3_int64)swap);
    return put(db, s);
}

int cv__db_map_stats(cv__db_t *db, uint32_t pid, uint32_t recording, uint64_t maps,
                     uint64_t bytes, uint64_t peak_bytes, uint64_t peak_ns, uint64_t end_bytes)
{
    if (enter(db) != 0)
        return -1;
    sqlite3_stmt *s = db->st[ST_MAP_STATS];
    sqlite3_bind_int64(s, 1, pid);
    sqlite3_bind_int64(s, 2, recording);
    sqlite3_bind_int64(s, 3, (sqlite3_int64)maps);
    sqlite3_bind_int64(s, 4, (sqlite3_int64)bytes);
    sqlite3_bind_int64(s, 5, (sqlite3_int64)peak_bytes);
    sqlite3_bind_int64(s, 6, (sqlite3_int64)peak_ns);
    sqlite3_bind_int64(s, 7, (sqlite3_int64)end_bytes);
    return put(db, s);
}

int cv__db_window(cv__db_t *db, uint32_t pid, uint32_t recording, uint64_t on_t,
                     const char *on_how, int has_off, uint64_t off_t, const char *off_how)
{
    if (enter(db) != 0)
        return -1;
    sqlite3_stmt *s = db->st[ST_WINDOW];
    sqlite3_bind_int64(s, 1, pid);
    sqlite3_bind_int64(s, 2, recording);
    sqlite3_bind_int64(s, 3, (sqlite3_int64)on_t);
    bind_text_or_null(s, 4, on_how);
    bind_u64_or_null(s, 5, off_t, has_off);
    bind_text_or_null(s, 6, has_off ? off_how : NULL);
    return put(db, s);
}

int cv__db_meta_int(cv__db_t *db, const char *key, int64_t value)
{
    if (enter(db) != 0)
        return -1;
    sqlite3_stmt *s = db->st[ST_META];
    sqlite3_bind_text(s, 1, key, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(s, 2, value);
    return put(db, s);
}

int cv__db_meta_text(cv__db_t *db, const char *key, const char *value)
{
    if (enter(db) != 0)
        return -1;
    sqlite3_stmt *s = db->st[ST_META];
    sqlite3_bind_text(s, 1, key, -1, SQLITE_TRANSIENT);
    bind_text_or_null(s, 2, value);
    return put(db, s);
}

/* The message of the last failed write: the calling thread's, the writer thread's, or SQLite's
 * now. */
static const char *last_error(cv__db_t *db)
{
    if (db->main_failed)
        return db->main_error;
    if (writer_failed(db))
        return db->error;
    take_turn(db);
    fmt(db->error, sizeof db->error, "%s", why(db, NULL));
    give_turn(db);
    return db->error;
}

rheap_convert_status_t cv__db_error(cv__db_t *db, const char *what, cv__err_t *err)
{
    if (!db)
        return cv__fail(err, RHEAP_CONVERT_E_OUTPUT, NULL, CV__NO_OFFSET,
                        "writing the database (%s): no database", what);
    return cv__fail(err, RHEAP_CONVERT_E_OUTPUT, db->tmp, CV__NO_OFFSET,
                    "writing the database (%s): %s", what, last_error(db));
}

/* Puts the finished temporary file in place. With force, rename replaces whatever is there.
 * Without it, link() claims the name only if it is still free: the output did not exist when
 * the conversion began, but another conversion to the same name may have finished since, and
 * its database must not be replaced in silence. A file system without hard links falls back to
 * a check and rename. */
static rheap_convert_status_t install(cv__db_t *db, cv__err_t *err)
{
    if (!db->force) {
        if (link(db->tmp, db->path) == 0) {
            unlink(db->tmp);
            return RHEAP_CONVERT_OK;
        }
        if (errno == EEXIST || access(db->path, F_OK) == 0)
            return cv__fail(err, RHEAP_CONVERT_E_REFUSED, db->path, CV__NO_OFFSET,
                            "%s: created by someone else while this conversion ran; left alone "
                            "(use --force to replace it)",
                            db->path);
    }
    if (rename(db->tmp, db->path) != 0)
        return cv__fail(err, RHEAP_CONVERT_E_OUTPUT, db->tmp, CV__NO_OFFSET,
                        "%s: cannot rename to %s: %s", db->tmp, db->path, strerror(errno));
    return RHEAP_CONVERT_OK;
}

/* The root pages SQLite allocated for the tables first .. end - 1 built beside it, read before
 * it closes. A table with an index could not be built that way (the index would miss the
 * rows): refused. */
static int tree_roots(cv__db_t *db, uint32_t *roots, int first, int end, cv__err_t *err)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db->db,
                                "SELECT (SELECT rootpage FROM sqlite_schema WHERE type = 'table' "
                                "AND name = ?1), (SELECT count(*) FROM sqlite_schema WHERE "
                                "type = 'index' AND tbl_name = ?1)",
                                -1, &st, NULL);
    for (int t = first; rc == SQLITE_OK && t < end; t++) {
        sqlite3_bind_text(st, 1, tree_table[t], -1, SQLITE_STATIC);
        if (sqlite3_step(st) != SQLITE_ROW) {
            rc = SQLITE_ERROR;
            break;
        }
        int64_t root = sqlite3_column_int64(st, 0), indexes = sqlite3_column_int64(st, 1);
        sqlite3_reset(st);
        if (root < 2 || root > UINT32_MAX || indexes != 0) {
            sqlite3_finalize(st);
            return cv__fail(err, RHEAP_CONVERT_E_OUTPUT, db->tmp, CV__NO_OFFSET,
                            "%s: table %s: %s", db->tmp, tree_table[t],
                            indexes ? "has an index, which rows laid into pages would miss"
                                    : "no root page");
        }
        roots[t] = (uint32_t)root;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_OK)
        return cv__fail(err, RHEAP_CONVERT_E_OUTPUT, db->tmp, CV__NO_OFFSET,
                        "%s: reading the tables' root pages: %s", db->tmp, why(db, NULL));
    return 0;
}

/* The appender thread: the pages of the trees put in at the end after SQLite's last page
 * (cv__btree_put_pages). */
static void *append_trees(void *arg)
{
    cv__db_t *db = arg;
    pthread_setname_np(pthread_self(), "rheap appender");
    db->append_rc = cv__btree_put_pages(db->tmp, db->tree, (unsigned)db->end_trees, &db->pages,
                                        db->append_msg, sizeof db->append_msg);
    return NULL;
}

/* Waits for the appender; its status. */
static int join_appender(cv__db_t *db)
{
    if (db->appending) {
        pthread_join(db->appender, NULL);
        db->appending = 0;
    }
    return db->append_rc;
}

/* Opens the file put together with SQLite again and reads the last row of each table first ..
 * end - 1, which goes through the root and the right-most pages: a file SQLite could not read
 * is an error here, not the user's surprise. The builders are destroyed; msg holds the error
 * when one was made. */
static int verify_trees(cv__db_t *db, int first, int end, char *msg, size_t msglen, cv__err_t *err)
{
    sqlite3 *h = NULL;
    int ok = sqlite3_open_v2(db->tmp, &h, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) ==
             SQLITE_OK;
    for (int t = first; ok && t < end; t++) {
        char sql[128];
        snprintf(sql, sizeof sql, "SELECT count(*), max(rowid) FROM (SELECT rowid FROM %s "
                                  "ORDER BY rowid DESC LIMIT 1)", tree_table[t]);
        sqlite3_stmt *st = NULL;
        ok = sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK &&
             sqlite3_step(st) == SQLITE_ROW;
        uint64_t rows = cv__btree_rows(db->tree[t]);
        ok = ok && sqlite3_column_int64(st, 0) == (rows ? 1 : 0) &&
             (!rows || sqlite3_column_int64(st, 1) == cv__btree_last(db->tree[t]));
        sqlite3_finalize(st);
        if (!ok)
            fmt(msg, msglen, "%s: the last row of %s, laid into pages, does not read back: %s",
                db->tmp, tree_table[t], h ? sqlite3_errmsg(h) : "out of memory");
    }
    if (!ok && !h)
        fmt(msg, msglen, "%s: reopening: out of memory", db->tmp);
    sqlite3_close(h);
    for (int t = first; t < end; t++) {
        cv__btree_destroy(db->tree[t]);
        db->tree[t] = NULL;
    }
    if (!ok)
        return cv__fail(err, RHEAP_CONVERT_E_OUTPUT, db->tmp, CV__NO_OFFSET, "%s", msg);
    return 0;
}

/* Puts the b-trees first .. end - 1 into the database file SQLite has closed, and reads them
 * back (verify_trees). */
static int put_trees(cv__db_t *db, const uint32_t *roots, int first, int end, cv__err_t *err)
{
    char msg[4800];
    if (cv__btree_put(db->tmp, db->tree + first, roots + first, (unsigned)(end - first), msg,
                      sizeof msg) != 0)
        return cv__fail(err, RHEAP_CONVERT_E_OUTPUT, db->tmp, CV__NO_OFFSET, "%s", msg);
    return verify_trees(db, first, end, msg, sizeof msg, err);
}

/* Links the appended trees in (their roots, the header's page count) once SQLite has closed the
 * file, and reads them back (verify_trees). */
static int link_trees(cv__db_t *db, cv__err_t *err)
{
    char msg[4800];
    if (cv__btree_put_roots(db->tmp, db->tree, db->roots, (unsigned)db->end_trees, db->pages, msg,
                            sizeof msg) != 0)
        return cv__fail(err, RHEAP_CONVERT_E_OUTPUT, db->tmp, CV__NO_OFFSET, "%s", msg);
    return verify_trees(db, T_ROWS, db->end_trees, msg, sizeof msg, err);
}

cv__btree_t *cv__db_tree(cv__db_t *db, const char *table)
{
    for (int t = T_SUMMARY; t < T_N; t++)
        if (strcmp(tree_table[t], table) == 0)
            return db->tree[t];
    return NULL;
}

/* The load's statements finalized and its transaction committed. 0, or -1 with err filled. */
static int commit(cv__db_t *db, cv__err_t *err)
{
    char *msg = NULL;
    finalize_all(db);
    if (sqlite3_exec(db->db, "COMMIT", NULL, NULL, &msg) == SQLITE_OK)
        return 0;
    cv__fail(err, RHEAP_CONVERT_E_OUTPUT, db->tmp, CV__NO_OFFSET, "%s: committing: %s", db->tmp,
             why(db, msg ? msg : "?"));
    sqlite3_free(msg);
    return -1;
}

/* Commits, closes SQLite, puts the summary tables' b-trees into the file and opens it again for
 * the rest of the load: what comes after (the totals, the summary callback, the allocation
 * rows' pages) finds those tables in the database. The connection is held throughout, so the
 * writer thread, which writes allocation rows into their own b-trees meanwhile, waits between
 * two chunks. A reopen must find the file made at the start (the directory may let others
 * rename files). */
static rheap_convert_status_t settle(cv__db_t *db, cv__err_t *err)
{
    if (commit(db, err) != 0)
        return RHEAP_CONVERT_E_OUTPUT;
    uint32_t roots[T_N];
    if (tree_roots(db, roots, T_SUMMARY, T_N, err) != 0)
        return RHEAP_CONVERT_E_OUTPUT;
    if (sqlite3_close(db->db) != SQLITE_OK)
        return cv__fail(err, RHEAP_CONVERT_E_OUTPUT, db->tmp, CV__NO_OFFSET, "%s: closing: %s",
                        db->tmp, why(db, NULL));
    db->db = NULL;
    if (put_trees(db, roots, T_SUMMARY, T_N, err) != 0)
        return RHEAP_CONVERT_E_OUTPUT;
    struct stat now;
    if (sqlite3_open_v2(db->tmp, &db->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) !=
        SQLITE_OK)
        return cv__fail(err, RHEAP_CONVERT_E_OUTPUT, db->tmp, CV__NO_OFFSET,
                        "%s: opening again after putting the summary tables in: %s", db->tmp,
                        why(db, NULL));
    if (lstat(db->tmp, &now) != 0 || now.st_dev != db->tmp_dev || now.st_ino != db->tmp_ino)
        return cv__fail(err, RHEAP_CONVERT_E_OUTPUT, db->tmp, CV__NO_OFFSET,
                        "%s: replaced by another file while the database was being written; "
                        "refused",
                        db->tmp);
    if (set_pragmas(db, err) != RHEAP_CONVERT_OK || begin_load(db, err) != RHEAP_CONVERT_OK)
        return RHEAP_CONVERT_E_OUTPUT;
    return RHEAP_CONVERT_OK;
}

rheap_convert_status_t cv__db_settle(cv__db_t *db, cv__err_t *err)
{
    if (!db->tree[T_SUMMARY])
        return RHEAP_CONVERT_OK;
    if (enter(db) != 0)
        return cv__fail(err, RHEAP_CONVERT_E_OUTPUT, db->tmp, CV__NO_OFFSET,
                        "%s: writing the database: %s", db->tmp,
                        db->main_failed ? db->main_error : db->error);
    rheap_convert_status_t st = settle(db, err);
    if (st != RHEAP_CONVERT_OK)
        failed_here(db, err->message);
    give_turn(db);
    return st;
}

rheap_convert_status_t cv__db_finish_start(cv__db_t *db, cv__err_t *err)
{
    if (drain(db) != 0) {
        cv__fail(err, RHEAP_CONVERT_E_OUTPUT, db->tmp, CV__NO_OFFSET,
                 "%s: writing allocations: %s", db->tmp, db->error);
        goto fail;
    }
    stop_writer(db, 0);
    if (flush_rows(db) != 0) {
        cv__fail(err, RHEAP_CONVERT_E_OUTPUT, db->tmp, CV__NO_OFFSET,
                 "%s: writing allocations: %s", db->tmp, db->error);
        goto fail;
    }
    if (flush_kept(db) != 0) {
        cv__fail(err, RHEAP_CONVERT_E_OUTPUT, db->tmp, CV__NO_OFFSET,
                 "%s: writing allocations: %s", db->tmp, why(db, NULL));
        goto fail;
    }
    if (run_schema(db, 1, err) != RHEAP_CONVERT_OK)
        goto fail;
    if (commit(db, err) != 0)
        goto fail;
    /* The summary tables too, when cv__db_settle did not put them in. */
    db->end_trees = db->tree[T_SUMMARY] ? T_N : T_SUMMARY;
    if (db->tree[T_ROWS]) {
        if (tree_roots(db, db->roots, T_ROWS, db->end_trees, err) != 0)
            goto fail;
        /* A second core copies the pages while the caller reads (a build's 0.9 GB took 1.6 to
         * 3.6 s, as long as rheap run's summary); without a thread, here and now. */
        db->appending = pthread_create(&db->appender, NULL, append_trees, db) == 0;
        if (!db->appending)
            append_trees(db);
    }
    return RHEAP_CONVERT_OK;
fail:
    cv__db_abort(db);
    return RHEAP_CONVERT_E_OUTPUT;
}

sqlite3 *cv__db_reader(cv__db_t *db)
{
    return db->db;
}

rheap_convert_status_t cv__db_finish_end(cv__db_t *db, cv__err_t *err)
{
    if (join_appender(db) != 0) {
        cv__fail(err, RHEAP_CONVERT_E_OUTPUT, db->tmp, CV__NO_OFFSET, "%s", db->append_msg);
        goto fail;
    }
    if (sqlite3_close(db->db) != SQLITE_OK) {
        cv__fail(err, RHEAP_CONVERT_E_OUTPUT, db->tmp, CV__NO_OFFSET, "%s: closing: %s",
                 db->tmp, why(db, NULL));
        goto fail;
    }
    db->db = NULL;
    if (db->tree[T_ROWS] && link_trees(db, err) != 0)
        goto fail;
    rheap_convert_status_t st = install(db, err);
    if (st != RHEAP_CONVERT_OK)
        goto fail_status;
    destroy(db);
    return RHEAP_CONVERT_OK;
fail:
    st = RHEAP_CONVERT_E_OUTPUT;
fail_status:
    cv__db_abort(db);
    return st;
}

void cv__db_abort(cv__db_t *db)
{
    if (!db)
        return;
    join_appender(db);
    close_all(db);
    unlink(db->tmp);
    destroy(db);
}

int cv__db_update_process(cv__db_t *db, uint32_t pid, uint32_t recording, const char *set,
                          const char *text, int64_t number)
{
    sqlite3 *h = cv__db_enter(db);
    if (!h)
        return -1;
    char sql[256];
    snprintf(sql, sizeof sql, "UPDATE processes SET %s WHERE pid = ?1 AND recording = ?2", set);
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(h, sql, -1, &st, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, pid);
        sqlite3_bind_int64(st, 2, recording);
        if (text)
            sqlite3_bind_text(st, 3, text, -1, SQLITE_TRANSIENT);
        else
            sqlite3_bind_int64(st, 3, number);
        rc = sqlite3_step(st);
        if (rc != SQLITE_DONE)
            cv__db_failed(db);
        sqlite3_finalize(st);
    } else {
        cv__db_failed(db);
    }
    cv__db_leave(db);
    return rc == SQLITE_DONE ? 0 : -1;
}

/* Names, in the process's row, an allocator the tracer found and did not record. */
int cv__db_unrecorded(cv__db_t *db, uint32_t pid, uint32_t recording, const char *what)
{
    return cv__db_update_process(db, pid, recording, "unrecorded = ?3", what, 0);
}
