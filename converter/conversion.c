/*
 * conversion.c: a whole conversion, from recording directories to the finished database.
 *
 * Recordings are converted one after the other, by one worker, or under rheap run by two at
 * once (shared_t, below); inside one recording the thread files are read
 * as parallel streams and merged by time (merge.c), so each event is seen once, in order, and
 * dropped; a big finished recording is read and merged by a thread of its own, which hands the
 * merged events to the worker's thread through a ring (Two threads per recording, below). What
 * stays in memory is the live blocks of the current process (pair.c), the distinct stacks
 * (stacks.c) and the distinct resolved addresses (symbolize.c): bounded by what the program kept
 * and how much code allocated, never by the length of the recording.
 *
 * A block becomes a row when it is freed (or at the end, if it never is), so every row is
 * written once and complete; row ids follow that order and run on across recordings (each
 * recording's rows one range of ids), so they stay unique in a database that holds a whole
 * process tree.
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <rip.h>

#include "converter.h"
#include "varint.h"

#define NO_OFFSET CV__NO_OFFSET

/* ---- Per-recording state ---- */

typedef struct {
    uint64_t start, end;
    int file_id;
    uint64_t bias;
    size_t mod;              /* its modules row, ctx_t.mods */
} seg_t;

typedef struct {
    char *path;
    uint64_t bias;
    char *build_id_hex;
    int file_id;
    int used;                /* a stack of the recording has a frame in it */
    const char *status;      /* the symbolizer's, at the recording's end */
} modrow_t;

/* A pool's blocks are kept in the live map under their address with the pool's number (its
 * pools.id, from 1) in the bits above 48, which no user-space address uses: a pool block is thus
 * never paired with a malloc block or another pool's at the same address, and a pool's blocks
 * are the keys of one range. */
#define POOL_SHIFT 48
#define POOL_MAX 65535u
#define ADDR_MASK ((1ull << POOL_SHIFT) - 1)

/* A pool of the program's (rheap_pool.h), a row of `pools`. */
typedef struct {
    uint32_t pid, recording;
    uint64_t pool;           /* the program's id */
    uint64_t t;              /* created (or first seen) */
    char *name;              /* NULL until a create names it */
} pool_t;

/* What an event is (event_t.is_free): an allocation (0, or a realloc's two halves), a free, a
 * pool's destruction (addr: its key range's base), or one of the program's own mappings: mapped
 * (addr, size, stack), unmapped (addr, size) or remapped (old_addr, old_size to addr, size). */
enum { EV_ALLOC, EV_FREE, EV_DESTROY, EV_MAP, EV_UNMAP, EV_REMAP };

/* What else a cell of the ring between the two threads of a recording (cv__merged_t.kind) can
 * be: the first half of a realloc (the old block's release, at old_t), a marker (t), an
 * allocation whose stack the file never defined (addr: the file offset of its block, size: the
 * stack id), and the reading thread's end (size: 1 when it failed, having said why). */
enum { EV_RELEASE = 8, EV_MARKER, EV_UNDEFINED, EV_END };

/* An allocation or free copied out of the reader. */
typedef struct {
    int is_free;             /* EV_* */
    rip_call_t call;
    uint64_t t, addr, size, stack, align, old_addr, old_t;
    uint64_t old_size;       /* EV_REMAP: the length of the range it came from */
    uint64_t offset;         /* file offset of its block */
} event_t;

/* Events a stream decodes ahead of the one being applied (see advance). */
#define LOOKAHEAD 64

typedef struct {
    char *path;
    rip_reader_t *r;
    uint32_t tid, serial;
    uint32_t id;             /* threads.id */
    uint64_t addr_base;      /* threads.addr_base: the address of its first allocation, 0 before */
    seg_t *segs;
    size_t nsegs, capsegs;
    int segs_sorted;
    uint32_t mods_expected;  /* module records still to come for the current list */
    cv__u64map_t stacks;  /* the file's stack ids to global backtrace ids */
    /* The next event to apply, and the ones decoded after it. */
    event_t ev;
    int phase;               /* realloc: 0 = old block not yet released */
    uint64_t old_id;         /* row id of the block this realloc released */
    event_t ahead[LOOKAHEAD];
    unsigned ahead_head, ahead_n;
    int ended;               /* no more events to decode */
    int opened;              /* its header was read (r set), or found missing for good */
    int waiting;             /* live: no event to apply until more of the file is written */
    int done;                /* every event applied */
    uint64_t bound;          /* waiting: none of its events to come is earlier */
    char *name;
    uint64_t events, lost;
    rip_record_t totals;     /* profile mode: the file's last totals record (kind set if any) */
    int checkpoint;          /* the recording's checkpoint (FORMAT.md section 3b) */
    uint32_t segment;        /* the header's: 2 or more for a segment of a thread */
    int skipped;             /* a file the checkpoint replaces: not read */
    uint64_t offset;         /* file offset of the block being read, for progress */
    uint64_t file_size;
} stream_t;

/* An input recording. */
typedef struct {
    char *dir;
    rip_recording_t *rec;
    uint32_t pid, recording;
    int skip;                /* its process file holds no complete block */
    dev_t dev;               /* the directory's, to find one given twice */
    ino_t ino;
} input_t;

/* Rows of a recording not yet in the database (see shared_t) are kept as the writer takes
 * them (cv__row_t), numbered within the recording: ids from 1, threads.id from 0 (and pools.id
 * from 1), made global when written. The rare facts a row's table does not hold, a pool's
 * block or a piece of a mapping, wait beside them. */
typedef struct {
    uint64_t id;             /* the row's, within the recording */
    uint64_t pool;           /* pools.id of a pool's block, else 0 */
    uint64_t piece_of;       /* a piece of a mapping: the row it was cut from, else 0 */
} side_t;

/* A recording's rows wait here in batches of STAGE_BATCH (a chunk of the writer's queue) while
 * it holds the turn; a worker whose recording waits for its turn keeps up to STAGE_MAX of them
 * (4 MiB) in memory, then takes the turn if nobody else converts, else moves them to its
 * overflow file, packed (up to OVERFLOW_MAX rows, about 100 MiB; then it waits for the turn). */
#define STAGE_BATCH 1024u
#define STAGE_MAX 65536u
#define OVERFLOW_MAX (64u * STAGE_MAX)

/* The overflow file holds each row as the LEB128 numbers of its OVER_FIELDS fields, each the
 * zigzagged difference from the same field of the row before: times and addresses move little
 * from one row to the next, most other fields repeat, so a row takes about 25 bytes where it
 * took 64 in memory (112 as it was kept before). On a build tree two workers moved 16.6 M rows
 * there and back as structs, 1.9 GB each way: the kernel's copies were a sixth of their CPU.
 * The rows go out and come back through a buffer of OVER_BUF bytes. */
#define OVER_FIELDS 11
#define OVER_ROW_MAX (OVER_FIELDS * 10)
#define OVER_BUF (256u * 1024u)

/* What the workers of a conversion share (two of them under rheap run; one for rheap convert).
 *
 * Each worker converts a whole recording at a time with a context of its own (ctx_t): its
 * thread files, merge, live-block store, summaries, mappings and pools. A recording's rows
 * enter the database together, so that its row ids are one range (the summaries' checkpoints
 * name ranges of ids): one recording at a time holds the turn, from its first row written to
 * its end. A worker keeps its recording's rows (numbered within the recording) until it takes
 * the turn: at the recording's end, or when it has STAGE_MAX rows and no other worker converts
 * (else they go to an overflow file and it converts on: stage_full); then it writes them with
 * the ids, threads.id and pools.id of the recordings written before added (row_base,
 * thread_base, pool_base), and the rest as it makes them. Its summaries take the same offsets.
 * A worker whose small recording ends while the other's larger one is still being read (its
 * rows kept) takes the turn at once and goes on with the next: recordings enter the database in the order they end, not
 * the order they were handed out, so row ids differ from a conversion by one worker by whole
 * recordings, and backtrace ids by the order in which the workers met the stacks.
 *
 * The parts both use are behind short locks, always taken in this order:
 *   sym_mu   the symbolizer, and the stacks table and its sites (changed with db_mu held too);
 *   db_mu    the database's writing side (cv__db_*: queued rows, kept stack rows, the
 *            connection's turns with the writer thread), and the sites to read;
 *   diag_mu  the caller's diag and progress callbacks, and the counts of warnings and errors.
 * in_mu guards the inputs and the turn; next_mu the caller's next_input, which may wait for a
 * process to end. */
typedef struct shared {
    pthread_mutex_t sym_mu, db_mu, diag_mu, in_mu, next_mu;
    pthread_cond_t turn_cv;
    int turn_taken;          /* a recording's rows are going to the database (in_mu) */
    size_t next_in;          /* the next input to take */
    int inputs_over;         /* next_input said there are no more */
    uint64_t row_base;       /* rows, threads and pools of the recordings written so far */
    uint32_t thread_base;
    uint64_t pool_base;
    _Atomic int stop;        /* an error (or a live restart): every worker ends */
    size_t usable;           /* inputs that are not skipped (in_mu) */
    int warnings, fatal;     /* diag_mu */
    int busy;                /* workers inside a recording (in_mu) */
    uint64_t overlapped;     /* recordings begun while another was being converted (in_mu) */
    _Atomic uint64_t bytes_done, events; /* progress: recordings done */
} shared_t;

typedef struct ctx {
    const rheap_convert_opts_t *o;  /* the callbacks */
    shared_t *sh;
    struct ctx *main;         /* a worker's: the conversion's context, which holds the inputs */
    const char *dir;          /* a worker's: the recording being converted */
    int live;                 /* the inputs come from next_input */
    int has_turn;             /* its rows go to the database now, with these offsets: */
    uint64_t row_base, pool_base;
    uint32_t thread_base;
    cv__row_t *stage;         /* rows not written yet, the first with id next_id - nstage + 1 */
    size_t nstage, capstage;
    side_t *side;             /* their pools' blocks and mappings' pieces, in id order */
    size_t nside, capside;
    int over_fd;              /* rows not written yet, before those of stage: an unnamed file */
    uint64_t over_rows;       /* (-1 until first needed) and how many rows it holds */
    uint64_t over_bytes;      /* its length, with the buffer's bytes not yet written */
    uint8_t *over_buf;        /* OVER_BUF bytes, made when first needed */
    size_t over_used;
    uint64_t over_prev[OVER_FIELDS]; /* the last row packed, as over_fields gives it */
    char over_name[4200];     /* how messages call it */
    size_t format_from;       /* the input whose process file set format_version, + 1 */
    input_t *in;
    size_t nin, capin;
    int restart;              /* live: the merge went too far; convert again from the start */
    cv__db_t *db;
    cv__sym_t *sym;
    cv__stacks_t *stacks;
    cv__summary_t *sum;       /* a worker's own */
    int fatal;                /* the rheap_convert_status_t of the first error, 0 while none
                                 (warnings are counted in shared_t) */
    uint64_t next_id;         /* a worker's: rows of its recording so far (their ids from 1) */
    uint32_t next_thread;     /* the next threads.id to hand out within the recording (from 0) */
    uint64_t events, rows, leaked, unmatched_frees, reused_live, null_allocs, lost, truncated;
    uint64_t live_events;     /* events applied while their recording was still growing */
    uint64_t budget;          /* of each recording's live-block store; 0: none (pair.c) */
    uint64_t pipe_min;        /* thread files of a recording given a reading thread (pipe_pays) */
    uint64_t spilled, spill_bytes; /* what the stores wrote to their spill files */
    uint64_t turn_rows;       /* rows moved to the overflow file (stage_full) */
    uint64_t compacted_files; /* thread files replaced by the recordings' checkpoints */
    uint64_t compacted_before; /* the latest checkpoint's time (ns since its recording began) */
    char format_version[32];
    /* progress */
    uint64_t bytes_total;
    uint64_t events_told;     /* of events, those added to shared_t's */
    struct timespec t0;
    /* the recording being converted */
    uint32_t pid, recording;
    stream_t *streams;        /* its thread files: streams[i] has threads.id first_thread + i
                                 (a segment takes its thread's first file's id) */
    const struct streams *cur_streams; /* all of them, with the checkpoint's list */
    uint32_t first_thread;
    modrow_t *mods;
    size_t nmods, capmods;
    const cv__loc_t **locs; /* scratch, RIP_MAX_DEPTH */
    /* the program's pools: pools[i] has pools.id i + 1; their ids in the current recording */
    pool_t *pools;
    size_t npools, cappools;
    cv__u64map_t pool_ids;   /* pool id + 1 -> pools.id; id UINT64_MAX in pool_last */
    /* the recording's mappings still mapped, sorted by address, none overlapping (addr, size:
     * the range; realloc_of: for a piece, the row it was cut from) */
    cv__live_t *maps;
    size_t nmaps, capmaps;
    /* and their figures: calls that mapped (mmap, mremap) and their bytes, bytes mapped now,
     * the most ever mapped at once and when (the first moment) */
    uint64_t map_calls, map_bytes, map_live, map_peak, map_peak_t;
    /* the recording's samples of resident memory, written sorted by time at its end */
    rip_record_t *rss;
    size_t nrss, caprss;
    uint64_t pool_last;
    int pools_full_said;
    /* Set while a reading thread of the worker's own decodes and merges its recording (see
     * Two threads per recording): the ring it hands merged events and markers into. */
    cv__ring_t *feed;
} ctx_t;

/* Every warning and error of the conversion, its own and its parts' (cv__err_t, errors.c),
 * reaches the caller here: warnings are counted, and the first error decides the status. */
static void report(ctx_t *c, const cv__err_t *e)
{
    shared_t *sh = c->sh;
    pthread_mutex_lock(&sh->diag_mu);
    if (e->status == RHEAP_CONVERT_WARNINGS) {
        sh->warnings++;
    } else {
        if (!c->fatal)
            c->fatal = (int)e->status;
        if (!sh->fatal)
            sh->fatal = (int)e->status;
        atomic_store(&sh->stop, 1);
    }
    cv__err_report(e, c->o->diag, c->o->user);
    pthread_mutex_unlock(&sh->diag_mu);
}

static void vsay(ctx_t *c, rheap_convert_status_t status, const char *file, uint64_t offset,
                 const char *f, va_list ap)
{
    static _Thread_local cv__err_t e; /* 8 KiB kept off the stack; one per worker */
    char msg[sizeof e.message];
    vsnprintf(msg, sizeof msg, f, ap);
    cv__fail(&e, status, file, offset, "%s", msg);
    report(c, &e);
}

/* Lost-event counts add up without wrapping: a sum that would pass 2^63 - 1 (more events than
 * any process can make: only a damaged or crafted recording claims that) stays at 2^63 - 1, the
 * largest count SQLite keeps as an exact integer, and is said to be so. */
#define LOST_MAX ((uint64_t)INT64_MAX)
static uint64_t add_lost(uint64_t sum, uint64_t n)
{
    if (sum > LOST_MAX)
        sum = LOST_MAX;
    return n > LOST_MAX - sum ? LOST_MAX : sum + n;
}

static void warnf(ctx_t *c, const char *file, uint64_t offset, const char *f, ...)
    __attribute__((format(printf, 4, 5)));
static void warnf(ctx_t *c, const char *file, uint64_t offset, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    vsay(c, RHEAP_CONVERT_WARNINGS, file, offset, f, ap);
    va_end(ap);
}

/* Reports an error that ends the conversion; the first one decides its status. */
static void errorf(ctx_t *c, int status, const char *file, uint64_t offset, const char *f, ...)
    __attribute__((format(printf, 5, 6)));
static void errorf(ctx_t *c, int status, const char *file, uint64_t offset, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    vsay(c, (rheap_convert_status_t)status, file, offset, f, ap);
    va_end(ap);
}

/* The symbolizer's warnings (a module file gone or rebuilt) count like the converter's own. */
static void sym_warning(void *user, const cv__err_t *w)
{
    report(user, w);
}

static void rip_fail(ctx_t *c, const rip_error_t *e)
{
    char buf[1024];
    errorf(c, RHEAP_CONVERT_E_INPUT, e->path, e->offset, "%s", rip_error_format(e, buf, sizeof buf));
}

/* A truncated file: a warning naming the file and the offset of its incomplete block, with
 * what became of it. */
static void rip_truncated(ctx_t *c, const rip_error_t *e, const char *consequence)
{
    char buf[1024];
    warnf(c, e->path, e->offset, "%s; %s", rip_error_format(e, buf, sizeof buf), consequence);
    c->truncated++;
}

static void db_fail(ctx_t *c, const char *what)
{
    static _Thread_local cv__err_t e;
    pthread_mutex_lock(&c->sh->db_mu);
    cv__db_error(c->db, what, &e);
    pthread_mutex_unlock(&c->sh->db_mu);
    report(c, &e);
}

static void nomem(ctx_t *c, const char *while_doing)
{
    errorf(c, RHEAP_CONVERT_E_OUTPUT, NULL, NO_OFFSET, "out of memory%s", while_doing);
}

/* Tells the caller how far the conversion is: the thread files already done, plus the offset
 * each open stream has reached, and `events`, the worker's events so far (c->events, or the
 * reading thread's count of the events it handed on). */
static void progress(ctx_t *c, const stream_t *s, size_t n, uint64_t events, int final)
{
    if (!c->o->progress)
        return;
    shared_t *sh = c->sh;
    ctx_t *m = c->main ? c->main : c;
    pthread_mutex_lock(&sh->in_mu);
    uint64_t total = m->bytes_total;
    pthread_mutex_unlock(&sh->in_mu);
    /* Each worker adds its events here as it tells them. */
    if (events > c->events_told) {
        atomic_fetch_add(&sh->events, events - c->events_told);
        c->events_told = events;
    }
    rheap_convert_progress_t p = {atomic_load(&sh->bytes_done), total, atomic_load(&sh->events),
                                  final};
    for (size_t i = 0; i < n; i++)
        p.bytes_done += s[i].offset;
    pthread_mutex_lock(&sh->diag_mu);
    c->o->progress(c->o->user, &p);
    pthread_mutex_unlock(&sh->diag_mu);
}

static char *hex(const uint8_t *p, size_t n)
{
    if (!n)
        return NULL;
    char *s = malloc(2 * n + 1);
    if (!s)
        return NULL;
    for (size_t i = 0; i < n; i++)
        sprintf(s + 2 * i, "%02x", p[i]);
    return s;
}

static int seg_cmp(const void *a, const void *b)
{
    const seg_t *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* A module record of the stream's current list. */
static int add_module(ctx_t *c, stream_t *s, const rip_record_t *rec)
{
    pthread_mutex_lock(&c->sh->sym_mu);
    int fid = cv__sym_file(c->sym, rec->u.module.path.ptr, rec->u.module.path.len,
                              (const uint8_t *)rec->u.module.build_id.ptr,
                              rec->u.module.build_id.len);
    const char *fpath = fid < 0 ? NULL : cv__sym_file_path(c->sym, fid);
    pthread_mutex_unlock(&c->sh->sym_mu);
    if (fid < 0)
        return -1;
    uint64_t bias = rec->u.module.bias;
    /* The modules table lists each (path, bias) of the process once. */
    size_t mod = 0;
    while (mod < c->nmods && !(c->mods[mod].file_id == fid && c->mods[mod].bias == bias))
        mod++;
    if (mod == c->nmods) {
        if (rheap_grow(&c->mods, &c->capmods, c->nmods, sizeof *c->mods, 32) != 0)
            return -1;
        modrow_t *m = &c->mods[c->nmods++];
        m->path = strdup(fpath);
        m->bias = bias;
        m->build_id_hex =
            hex((const uint8_t *)rec->u.module.build_id.ptr, rec->u.module.build_id.len);
        m->file_id = fid;
        m->used = 0;
        if (!m->path)
            return -1;
    }
    for (uint32_t i = 0; i < rec->u.module.nseg; i++) {
        if (rheap_grow(&s->segs, &s->capsegs, s->nsegs, sizeof *s->segs, 64) != 0)
            return -1;
        seg_t *g = &s->segs[s->nsegs++];
        g->start = rec->u.module.segs[i].start;
        g->end = g->start + rec->u.module.segs[i].size;
        g->file_id = fid;
        g->bias = bias;
        g->mod = mod;
    }
    s->segs_sorted = 0;
    return 0;
}

static const seg_t *find_seg(stream_t *s, uint64_t ip)
{
    if (!s->segs_sorted) {
        qsort(s->segs, s->nsegs, sizeof *s->segs, seg_cmp);
        s->segs_sorted = 1;
    }
    size_t lo = cv__upper_bound(s->segs, s->nsegs, sizeof *s->segs, offsetof(seg_t, start), ip);
    if (lo == 0)
        return NULL;
    const seg_t *g = &s->segs[lo - 1];
    return ip < g->end ? g : NULL;
}

static int define_stack(ctx_t *c, stream_t *s, const rip_record_t *rec)
{
    uint32_t n = rec->u.stack.depth;
    if (n > RIP_MAX_DEPTH)
        n = RIP_MAX_DEPTH;
    /* The symbolizer and the stacks are the workers' to share: the symbolizer resolves each
     * (module file, offset) once for the whole conversion. */
    pthread_mutex_lock(&c->sh->sym_mu);
    for (uint32_t i = 0; i < n; i++) {
        uint64_t ip = rec->u.stack.ips[i];
        const seg_t *g = find_seg(s, ip);
        if (g)
            c->mods[g->mod].used = 1;
        const cv__loc_t *l = g ? cv__sym_resolve(c->sym, g->file_id, ip - g->bias)
                                  : cv__sym_resolve(c->sym, -1, ip);
        if (!l) {
            pthread_mutex_unlock(&c->sh->sym_mu);
            nomem(c, " while symbolizing");
            return -1;
        }
        c->locs[i] = l;
    }
    pthread_mutex_lock(&c->sh->db_mu);
    uint64_t bt = cv__stacks_intern(c->stacks, c->db, c->sym, c->locs, n);
    pthread_mutex_unlock(&c->sh->db_mu);
    pthread_mutex_unlock(&c->sh->sym_mu);
    if (!bt) {
        db_fail(c, "backtraces");
        return -1;
    }
    if (cv__u64map_put(&s->stacks, rec->u.stack.id, bt) != 0) {
        nomem(c, "");
        return -1;
    }
    return 0;
}

/* A thread file that ends inside a block. If it has grown since it was opened, the program
 * is still writing it: the conversion is a snapshot of the moment it started, and the cut is
 * where the snapshot ends, not damage. */
static void stream_cut(ctx_t *c, const stream_t *s, const rip_error_t *e)
{
    struct stat sb;
    if (stat(s->path, &sb) == 0 && (uint64_t)sb.st_size > s->file_size) {
        warnf(c, s->path, e->offset,
              "%s: offset %llu: still being written; converted what it held when the conversion "
              "started (%llu bytes), the events written since are not in the database",
              s->path, (unsigned long long)e->offset, (unsigned long long)s->file_size);
        return;
    }
    rip_truncated(c, e, "converting the complete blocks before it");
}

/* v, read as one 8-byte load. The reader has just stored the record's fields 8 bytes at a time;
 * the compiler would copy them two by two with 16-byte loads, and such a load cannot take its
 * bytes from two pending stores: it waits for both to reach the cache (a store-forwarding
 * stall; perf put a sixth of the reading thread's samples on this copy). */
static inline uint64_t scalar(uint64_t v)
{
    __asm__("" : "+r"(v));
    return v;
}

/* The pools.id of the recording's pool `pool`, made at its first record; 0 when there are too
 * many pools to tell apart (said once) or no memory (-1 in *fatal). */
static uint64_t pool_number(ctx_t *c, const stream_t *s, uint64_t pool, uint64_t t, int *fatal)
{
    uint64_t n = 0;
    if (pool == UINT64_MAX ? (n = c->pool_last) != 0 : cv__u64map_get(&c->pool_ids, pool + 1, &n))
        return n;
    if (c->npools >= POOL_MAX) {
        if (!c->pools_full_said)
            warnf(c, s->path, RIP_NO_OFFSET,
                  "%s: more than %u pools: the blocks of the later ones are not recorded",
                  s->path, POOL_MAX);
        c->pools_full_said = 1;
        return 0;
    }
    if (c->npools == c->cappools) {
        size_t cap = c->cappools ? 2 * c->cappools : 16;
        pool_t *np = realloc(c->pools, cap * sizeof *np);
        if (!np) {
            *fatal = 1;
            return 0;
        }
        c->pools = np;
        c->cappools = cap;
    }
    n = c->npools + 1;
    if (pool == UINT64_MAX)
        c->pool_last = n;
    else if (cv__u64map_put(&c->pool_ids, pool + 1, n) != 0) {
        *fatal = 1;
        return 0;
    }
    c->pools[c->npools++] = (pool_t){c->pid, c->recording, pool, t, NULL};
    return n;
}

/* Reads the stream up to its next event, into *ev. 1: an event was read; 0: the stream ended
 * (cleanly or truncated, which is a warning); 2: live, nothing more written yet; -1: fatal. */
static int decode_next(ctx_t *c, stream_t *s, event_t *ev)
{
    rip_record_t rec;
    rip_error_t e;
    for (;;) {
        rip_status_t st = rip_reader_next(s->r, &rec, &e);
        if (st == RIP_AGAIN)
            return 2;
        if (st == RIP_END) {
            s->offset = s->file_size;
            return 0;
        }
        if (st == RIP_E_TRUNCATED) {
            stream_cut(c, s, &e);
            s->offset = s->file_size;
            return 0;
        }
        if (st != RIP_OK) {
            rip_fail(c, &e);
            return -1;
        }
        s->offset = rec.offset;
        switch (rec.kind) {
        case RIP_REC_ALLOC:
            ev->is_free = 0;
            ev->call = rec.u.alloc.call;
            ev->t = scalar(rec.t);
            ev->addr = scalar(rec.u.alloc.addr);
            ev->size = scalar(rec.u.alloc.size);
            ev->stack = scalar(rec.u.alloc.stack);
            ev->align = scalar(rec.u.alloc.align);
            ev->old_addr = scalar(rec.u.alloc.old_addr);
            ev->old_t = scalar(rec.u.alloc.old_t);
            ev->offset = scalar(rec.offset);
            s->events++;
            return 1;
        case RIP_REC_FREE:
            ev->is_free = 1;
            ev->call = RIP_CALL_MALLOC;
            ev->t = scalar(rec.t);
            ev->addr = scalar(rec.u.free.addr);
            ev->size = ev->stack = ev->align = ev->old_addr = ev->old_t = 0;
            ev->offset = scalar(rec.offset);
            s->events++;
            return 1;
        case RIP_REC_POOL: {
            int fatal = 0;
            uint64_t n = pool_number(c, s, rec.u.pool.pool, rec.t, &fatal);
            if (fatal) {
                nomem(c, "");
                return -1;
            }
            if (!n)
                break;
            if (rec.u.pool.op == RIP_POOL_CREATE) {
                pool_t *pl = &c->pools[n - 1];
                if (!pl->name) {
                    pl->name = strndup(rec.u.pool.name.ptr, rec.u.pool.name.len);
                    pl->t = rec.t;
                    if (!pl->name) {
                        nomem(c, "");
                        return -1;
                    }
                }
                break;
            }
            if ((rec.u.pool.op != RIP_POOL_DESTROY && !rec.u.pool.addr) ||
                rec.u.pool.addr > ADDR_MASK)
                break; /* no block, or one no user-space address can be */
            ev->is_free = rec.u.pool.op == RIP_POOL_ALLOC ? 0
                          : rec.u.pool.op == RIP_POOL_FREE ? 1 : 2;
            ev->call = RIP_CALL_POOL_ALLOC;
            ev->t = rec.t;
            ev->addr = n << POOL_SHIFT | rec.u.pool.addr;
            ev->size = rec.u.pool.size;
            ev->stack = rec.u.pool.stack;
            ev->align = ev->old_addr = ev->old_t = 0;
            ev->offset = rec.offset;
            s->events++;
            return 1;
        }
        case RIP_REC_MAP:
            if (!rec.u.map.addr || !rec.u.map.len || rec.u.map.addr + rec.u.map.len < rec.u.map.addr)
                break; /* no range, or one no address space holds */
            ev->is_free = rec.u.map.op == RIP_MAP_MAP     ? EV_MAP
                          : rec.u.map.op == RIP_MAP_UNMAP ? EV_UNMAP
                                                          : EV_REMAP;
            ev->call = rec.u.map.op == RIP_MAP_REMAP ? RIP_CALL_MREMAP : RIP_CALL_MMAP;
            ev->t = rec.t;
            ev->addr = rec.u.map.addr;
            ev->size = rec.u.map.len;
            ev->stack = rec.u.map.stack;
            ev->align = ev->old_t = 0;
            ev->old_addr = rec.u.map.old;
            ev->old_size = rec.u.map.old_len;
            ev->offset = rec.offset;
            s->events++;
            return 1;
        case RIP_REC_RSS:
            if (c->nrss == c->caprss) {
                size_t cap = c->caprss ? 2 * c->caprss : 64;
                rip_record_t *n = realloc(c->rss, cap * sizeof *n);
                if (!n) {
                    nomem(c, "");
                    return -1;
                }
                c->rss = n;
                c->caprss = cap;
            }
            c->rss[c->nrss++] = rec;
            break;
        case RIP_REC_STACK:
            if (define_stack(c, s, &rec) != 0)
                return -1;
            break;
        case RIP_REC_MODULES:
            s->nsegs = 0;
            s->segs_sorted = 0;
            s->mods_expected = rec.u.modules.count;
            break;
        case RIP_REC_MODULE:
            if (add_module(c, s, &rec) != 0) {
                nomem(c, "");
                return -1;
            }
            break;
        case RIP_REC_THREAD_NAME:
            free(s->name);
            s->name = strndup(rec.u.name.text.ptr, rec.u.name.text.len);
            break;
        case RIP_REC_MARK:
            if (c->feed) {
                /* The summaries are the converting thread's: the marker goes to them in its
                 * place among the events, where the one-thread merge would count it. */
                cv__merged_t *m = cv__ring_put(c->feed);
                if (!m)
                    return -1;
                m->kind = EV_MARKER;
                m->t = rec.t;
                cv__ring_commit(c->feed);
            } else {
                cv__summary_marker(c->sum, rec.t);
            }
            pthread_mutex_lock(&c->sh->db_mu);
            int mrc = cv__db_marker(c->db, c->pid, c->recording, s->tid, rec.t,
                                    rec.u.name.text.ptr, rec.u.name.text.len);
            pthread_mutex_unlock(&c->sh->db_mu);
            if (mrc != 0) {
                db_fail(c, "markers");
                return -1;
            }
            break;
        case RIP_REC_LOST:
            s->lost = add_lost(s->lost, rec.u.lost.count);
            break;
        case RIP_REC_TOTALS:
            s->totals = rec;
            break;
        default:
            /* Process-file records in a thread file and unknown extended records carry
             * nothing a thread stream needs. */
            break;
        }
    }
}

/* Makes the stream's next event current. 1: there is one; 0: the stream ended; 2: live, none
 * written yet; -1: fatal.
 *
 * The stream decodes LOOKAHEAD events ahead and prefetches each one's slot in the live map as it
 * is decoded: the map is larger than the caches, and without this a single-thread recording
 * would apply each event right after decoding it and wait for memory on every one. Stack
 * definitions and other records between events are handled as they are decoded, so ahead of
 * the events before them; nothing those events use changes (a file never redefines a stack id,
 * and module lists only serve stacks defined after them). */
static int advance(ctx_t *c, stream_t *s, const cv__pairs_t *live)
{
    while (!s->ended && s->ahead_n < LOOKAHEAD) {
        event_t *e = &s->ahead[(s->ahead_head + s->ahead_n) % LOOKAHEAD];
        int a = decode_next(c, s, e);
        if (a < 0)
            return -1;
        if (a == 2)
            break;
        if (a == 0) {
            s->ended = 1;
            break;
        }
        s->ahead_n++;
        if (!live)
            continue; /* a reading thread: the converting thread prefetches (convert_ring) */
        cv__pairs_prefetch(live, e->addr);
        if (e->old_addr)
            cv__pairs_prefetch(live, e->old_addr);
        if (s->ahead_n > LOOKAHEAD / 2) {
            /* The event decoded half the lookahead before: its tags have come in by now. */
            const event_t *o = &s->ahead[(s->ahead_head + s->ahead_n - 1 - LOOKAHEAD / 2) % LOOKAHEAD];
            cv__pairs_prefetch_slot(live, o->addr);
            if (o->old_addr)
                cv__pairs_prefetch_slot(live, o->old_addr);
        }
    }
    if (!s->ahead_n)
        return s->ended ? 0 : 2;
    s->ev = s->ahead[s->ahead_head];
    s->ahead_head = (s->ahead_head + 1) % LOOKAHEAD;
    s->ahead_n--;
    s->phase = !s->ev.is_free && s->ev.old_addr ? 0 : 1;
    s->old_id = 0;
    return 1;
}

/* Writes n rows, the first of local id `first`, and their side facts side[0..nside), with the
 * offsets of the recording's turn (shared_t): ids, pools.id and map_pieces' rows by adding
 * the recording's first; threads.id, in the rows themselves, only when they were made before
 * the turn (`based` 0; a row made with the turn has them already). db_mu held. 0, or -1 (not
 * said). */
static int write_staged_rows(ctx_t *c, cv__row_t *rows, size_t n, uint64_t first,
                             const side_t *side, size_t nside, int based)
{
    if (!based && c->thread_base)
        for (size_t i = 0; i < n; i++) {
            rows[i].who += c->thread_base << CV__ROW_THREAD_SHIFT;
            if (rows[i].free_thread != RHEAP_NO_THREAD)
                rows[i].free_thread += c->thread_base;
        }
    if (n && cv__db_rows(c->db, first + c->row_base, rows, n) != 0)
        return -1;
    for (size_t i = 0; i < nside; i++) {
        uint64_t id = side[i].id + c->row_base;
        if (side[i].pool && cv__db_pool_block(c->db, id, side[i].pool + c->pool_base) != 0)
            return -1;
        if (side[i].piece_of && cv__db_map_piece(c->db, id, side[i].piece_of + c->row_base) != 0)
            return -1;
    }
    return 0;
}

/* The staged rows written (write_staged_rows). db_mu held. 0, or -1 (not said). */
static int write_staged(ctx_t *c, int based)
{
    int rc = write_staged_rows(c, c->stage, c->nstage, c->next_id - c->nstage + 1, c->side,
                               c->nside, based);
    c->nstage = c->nside = 0;
    return rc;
}

static int wait_turn(ctx_t *c);

/* A row's fields as numbers, in the overflow file's order, and back. */
static void over_fields(const cv__row_t *r, uint64_t pool, uint64_t piece_of,
                        uint64_t f[OVER_FIELDS])
{
    f[0] = r->alloc_t;
    f[1] = r->dealloc_t;
    f[2] = r->size;
    f[3] = r->addr;
    f[4] = r->bt;
    f[5] = r->align;
    f[6] = r->back;
    f[7] = r->who;
    f[8] = r->free_thread;
    f[9] = pool;
    f[10] = piece_of;
}

static void over_row(const uint64_t f[OVER_FIELDS], cv__row_t *r)
{
    r->alloc_t = f[0];
    r->dealloc_t = f[1];
    r->size = f[2];
    r->addr = f[3];
    r->bt = f[4];
    r->align = f[5];
    r->back = f[6];
    r->who = (uint32_t)f[7];
    r->free_thread = (uint32_t)f[8];
}

/* Writes the packed rows of the buffer at the file's end. 0, or -1 (said). */
static int over_write(ctx_t *c)
{
    off_t at = (off_t)(c->over_bytes - c->over_used);
    for (size_t put = 0; put < c->over_used;) {
        ssize_t w = pwrite(c->over_fd, c->over_buf + put, c->over_used - put, at + (off_t)put);
        if (w <= 0) {
            errorf(c, RHEAP_CONVERT_E_OUTPUT, c->over_name, (uint64_t)at + put,
                   "%s: offset %llu: writing rows kept for their turn: %s", c->over_name,
                   (unsigned long long)(at + (off_t)put), w < 0 ? strerror(errno) : "nothing written");
            return -1;
        }
        put += (size_t)w;
    }
    c->over_used = 0;
    return 0;
}

/* The rows moved to the overflow file (local ids 1 to over_rows, before the staged rows), back
 * in order and written, STAGE_BATCH at a time. The turn held. 0, or -1 (said). */
static int write_overflow(ctx_t *c)
{
    if (!c->over_rows)
        return 0;
    if (c->over_used && over_write(c) != 0)
        return -1;
    cv__row_t *buf = malloc(STAGE_BATCH * sizeof *buf);
    side_t *side = malloc(STAGE_BATCH * sizeof *side);
    if (!buf || !side) {
        free(buf);
        free(side);
        nomem(c, "");
        return -1;
    }
    uint64_t prev[OVER_FIELDS] = {0};
    uint64_t at = 0;    /* the file's offset of over_buf[0] */
    size_t have = 0, pos = 0;
    int rc = 0;
    for (uint64_t done = 0; rc == 0 && done < c->over_rows;) {
        size_t n = 0, nside = 0;
        while (n < STAGE_BATCH && done + n < c->over_rows) {
            /* Less than a whole row's room left in the buffer: the rest moved to its start
             * and the file read on behind it. */
            if (have - pos < OVER_ROW_MAX && at + have < c->over_bytes) {
                memmove(c->over_buf, c->over_buf + pos, have - pos);
                at += pos;
                have -= pos;
                pos = 0;
                uint64_t want = c->over_bytes - (at + have);
                if (want > OVER_BUF - have)
                    want = OVER_BUF - have;
                ssize_t got = pread(c->over_fd, c->over_buf + have, (size_t)want,
                                    (off_t)(at + have));
                if (got != (ssize_t)want) {
                    errorf(c, RHEAP_CONVERT_E_OUTPUT, c->over_name, at + have,
                           "%s: offset %llu: reading back rows kept for their turn: %s",
                           c->over_name, (unsigned long long)(at + have),
                           got < 0 ? strerror(errno) : "the file is shorter");
                    rc = -1;
                    break;
                }
                have += (size_t)want;
            }
            const uint8_t *p = c->over_buf + pos, *end = c->over_buf + have;
            uint64_t f[OVER_FIELDS];
            for (int k = 0; k < OVER_FIELDS && rc == 0; k++) {
                uint64_t z;
                if (rip__get_varint(&p, end, &z) != RIP__VARINT_OK) {
                    errorf(c, RHEAP_CONVERT_E_OUTPUT, c->over_name, at + pos,
                           "%s: offset %llu: reading back rows kept for their turn: expected "
                           "row %llu of %llu, the bytes end inside it", c->over_name,
                           (unsigned long long)(at + pos), (unsigned long long)(done + n + 1),
                           (unsigned long long)c->over_rows);
                    rc = -1;
                }
                f[k] = prev[k] += (uint64_t)rip__unzigzag(z);
            }
            if (rc != 0)
                break;
            pos = (size_t)(p - c->over_buf);
            over_row(f, &buf[n]);
            if (f[9] || f[10])
                side[nside++] = (side_t){done + n + 1, f[9], f[10]};
            n++;
        }
        if (rc != 0)
            break;
        pthread_mutex_lock(&c->sh->db_mu);
        rc = write_staged_rows(c, buf, n, done + 1, side, nside, 0);
        pthread_mutex_unlock(&c->sh->db_mu);
        if (rc != 0)
            db_fail(c, "allocations");
        done += n;
    }
    free(buf);
    free(side);
    c->over_rows = c->over_bytes = 0;
    c->over_used = 0;
    return rc;
}

/* Hands the staged rows to the database, after waiting for the recording's turn (the rows
 * staged before it get its threads.id offset then). 0, or -1 (said). */
static int flush_staged(ctx_t *c)
{
    int based = c->has_turn;
    if (!c->has_turn && (wait_turn(c) != 0 || write_overflow(c) != 0))
        return -1;
    pthread_mutex_lock(&c->sh->db_mu);
    int rc = write_staged(c, based);
    pthread_mutex_unlock(&c->sh->db_mu);
    if (rc != 0) {
        db_fail(c, "allocations");
        return -1;
    }
    return 0;
}

/* STAGE_MAX rows kept and no turn. Taking the turn now would hold it for the rest of the
 * recording: a worker whose recording ends meanwhile would wait that long, idle (on a build
 * tree, where 90 compilers make 70% of the rows, one worker in five waited so). So the turn is
 * taken only when no other worker converts and it is free; else the rows go to the overflow
 * file, the worker converts on, and its recording takes the turn at its end. 0, or -1
 * (said). */
static int stage_full(ctx_t *c)
{
    shared_t *sh = c->sh;
    pthread_mutex_lock(&sh->in_mu);
    int alone = sh->busy <= 1 && !sh->turn_taken;
    pthread_mutex_unlock(&sh->in_mu);
    if (alone || c->over_rows >= OVERFLOW_MAX)
        return flush_staged(c);
    if (c->over_fd < 0 &&
        (c->over_fd = cv__temp_open(c->o->output, "turn", c->over_name, sizeof c->over_name)) < 0) {
        errorf(c, RHEAP_CONVERT_E_OUTPUT, c->over_name, NO_OFFSET,
               "%s: making a temporary file for rows kept for their turn: %s", c->over_name,
               strerror(errno));
        return -1;
    }
    if (!c->over_buf && !(c->over_buf = malloc(OVER_BUF))) {
        nomem(c, "");
        return -1;
    }
    if (c->over_rows == 0)
        memset(c->over_prev, 0, sizeof c->over_prev);
    uint64_t first = c->next_id - c->nstage + 1;
    size_t k = 0; /* the next side fact */
    for (size_t i = 0; i < c->nstage; i++) {
        if (OVER_BUF - c->over_used < OVER_ROW_MAX && over_write(c) != 0)
            return -1;
        uint64_t f[OVER_FIELDS], pool = 0, piece_of = 0;
        if (k < c->nside && c->side[k].id == first + i) {
            pool = c->side[k].pool;
            piece_of = c->side[k].piece_of;
            k++;
        }
        over_fields(&c->stage[i], pool, piece_of, f);
        uint8_t *p = c->over_buf + c->over_used, *start = p;
        for (int j = 0; j < OVER_FIELDS; j++) {
            p += rip__put_varint(p, rip__zigzag((int64_t)(f[j] - c->over_prev[j])));
            c->over_prev[j] = f[j];
        }
        c->over_used += (size_t)(p - start);
        c->over_bytes += (uint64_t)(p - start);
    }
    c->over_rows += c->nstage;
    c->turn_rows += c->nstage;
    c->nstage = c->nside = 0;
    return 0;
}

/* The row of block b, ended (freed, at dealloc_t, by threads.id free_thread: RHEAP_NO_THREAD
 * when none was recorded) or not, staged as the writer takes it: its fields copied, the address
 * relative to its thread's first, the thread with the turn's offset when the recording has it.
 * The row is numbered within its recording (shared_t); *id_out gets its id. About 40
 * instructions: every allocation of a program comes through here once. */
static int write_row(ctx_t *c, const cv__live_t *b, int freed, uint64_t dealloc_t,
                     uint32_t free_thread, uint64_t *id_out)
{
    if (c->nstage >= (c->has_turn ? STAGE_BATCH : STAGE_MAX) &&
        (c->has_turn ? flush_staged(c) : stage_full(c)) != 0)
        return -1;
    if (c->nstage == c->capstage &&
        rheap_grow(&c->stage, &c->capstage, c->nstage, sizeof *c->stage, STAGE_BATCH) != 0) {
        nomem(c, "");
        return -1;
    }
    uint64_t id = ++c->next_id;
    uint32_t base = c->has_turn ? c->thread_base : 0;
    /* A piece of a mapping keeps the row it was cut from in map_pieces: mmap resizes nothing,
     * so its row has no realloc_of. */
    uint64_t of = b->call == RIP_CALL_MMAP ? 0 : b->realloc_of;
    cv__row_t *r = &c->stage[c->nstage++];
    r->alloc_t = b->t;
    r->dealloc_t = dealloc_t;
    r->size = b->size;
    r->addr = (b->addr & ADDR_MASK) ^ c->streams[b->thread - c->first_thread].addr_base;
    r->bt = b->bt;
    r->align = b->align;
    r->back = of ? id - of : 0;
    r->who = (b->thread + base) << CV__ROW_THREAD_SHIFT | (freed ? CV__ROW_FREED : 0) |
             (b->call & 63u);
    r->free_thread = free_thread == RHEAP_NO_THREAD ? free_thread : free_thread + base;
    uint64_t pool = b->addr >> POOL_SHIFT, piece_of = b->call == RIP_CALL_MMAP ? b->realloc_of : 0;
    if (pool | piece_of) {
        if (rheap_grow(&c->side, &c->capside, c->nside, sizeof *c->side, 64) != 0) {
            nomem(c, "");
            return -1;
        }
        c->side[c->nside++] = (side_t){id, pool, piece_of};
    }
    c->rows++;
    if (!freed)
        c->leaked++;
    if (id_out)
        *id_out = id;
    return 0;
}

/* ---- The program's own mappings ----
 *
 * Kept apart from the live map: an unmap names a range, not a block, and may cover part of a
 * mapping, or several. A sorted array, since a program's own mappings are few (a block of the
 * live map per mapping would also pair a free of the same address with it). */

/* The index of the first mapping that ends after addr. */
static size_t maps_find(const ctx_t *c, uint64_t addr)
{
    size_t lo = 0, hi = c->nmaps;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->maps[mid].addr + c->maps[mid].size <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Puts mapping b at index i (the sorted place). 0, or -1 (no memory, said). */
static int maps_put(ctx_t *c, size_t i, const cv__live_t *b)
{
    if (c->nmaps == c->capmaps) {
        size_t cap = c->capmaps ? 2 * c->capmaps : 64;
        cv__live_t *n = realloc(c->maps, cap * sizeof *n);
        if (!n) {
            nomem(c, "");
            return -1;
        }
        c->maps = n;
        c->capmaps = cap;
    }
    memmove(&c->maps[i + 1], &c->maps[i], (c->nmaps - i) * sizeof *c->maps);
    c->maps[i] = *b;
    c->nmaps++;
    return 0;
}

/* The range [lo, hi) is unmapped at time t by the thread of stream s: every mapping it overlaps
 * ends there (its row, freed), and the parts of it outside the range go on as pieces, new rows
 * from t with its stack and thread, cut from it. *first (when given) gets the row id of the
 * first mapping it overlapped, else stays 0. 0, or -1 (said). */
static int maps_cut(ctx_t *c, const stream_t *s, uint64_t lo, uint64_t hi, uint64_t t,
                    uint64_t *first)
{
    for (size_t i = maps_find(c, lo); i < c->nmaps && c->maps[i].addr < hi;) {
        cv__live_t m = c->maps[i];
        memmove(&c->maps[i], &c->maps[i + 1], (c->nmaps - i - 1) * sizeof *c->maps);
        c->nmaps--;
        uint64_t cut_lo = m.addr > lo ? m.addr : lo;
        uint64_t cut_hi = m.addr + m.size < hi ? m.addr + m.size : hi;
        c->map_live -= cut_hi - cut_lo;
        uint64_t id = 0;
        if (write_row(c, &m, 1, t, s->id, &id) != 0)
            return -1;
        if (first && !*first)
            *first = id;
        cv__live_t piece = m;
        piece.t = t;
        piece.call = RIP_CALL_MMAP;
        piece.align = 0;
        piece.realloc_of = id;
        if (m.addr < lo) {
            piece.addr = m.addr;
            piece.size = lo - m.addr;
            if (maps_put(c, i++, &piece) != 0)
                return -1;
        }
        if (m.addr + m.size > hi) {
            piece.addr = hi;
            piece.size = m.addr + m.size - hi;
            if (maps_put(c, i++, &piece) != 0)
                return -1;
        }
    }
    return 0;
}

/* A map, unmap or remap event e of stream s (FORMAT.md, "Mappings"), with its backtrace id
 * bt. */
static int apply_map(ctx_t *c, stream_t *s, const event_t *e, uint64_t bt)
{
    uint64_t first = 0;
    if (e->is_free == EV_UNMAP)
        return maps_cut(c, s, e->addr, e->addr + e->size, e->t, NULL);
    if (e->is_free == EV_REMAP) {
        if (maps_cut(c, s, e->old_addr, e->old_addr + e->old_size, e->t, &first) != 0)
            return -1;
        if (!first)
            return 0; /* a range the program did not map itself (a file, the allocator's) */
    }
    /* Whatever lay where the new range is (MAP_FIXED, MREMAP_FIXED) is replaced. */
    if (maps_cut(c, s, e->addr, e->addr + e->size, e->t, NULL) != 0)
        return -1;
    cv__live_t b = {
        .addr = e->addr,
        .t = e->t,
        .size = e->size,
        .bt = bt,
        .realloc_of = first,
        .tid = s->tid,
        .thread = s->id,
        .call = (uint8_t)e->call,
    };
    if (!s->addr_base)
        s->addr_base = b.addr;
    c->map_calls++;
    c->map_bytes += b.size;
    c->map_live += b.size;
    if (c->map_live > c->map_peak) {
        c->map_peak = c->map_live;
        c->map_peak_t = b.t;
    }
    return maps_put(c, maps_find(c, b.addr), &b);
}

static int by_time(const void *a, const void *b)
{
    const cv__live_t *x = a, *y = b;
    return x->t < y->t ? -1 : x->t > y->t ? 1 : x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int rss_by_time(const void *a, const void *b)
{
    const rip_record_t *x = a, *y = b;
    return x->t < y->t ? -1 : x->t > y->t;
}

/* The recording's end: the mappings still mapped, as rows never freed in the order they were
 * made. 0, or -1 (said). */
static int end_maps(ctx_t *c)
{
    if (c->nmaps)
        qsort(c->maps, c->nmaps, sizeof *c->maps, by_time);
    for (size_t i = 0; i < c->nmaps; i++)
        if (write_row(c, &c->maps[i], 0, 0, RHEAP_NO_THREAD, NULL) != 0)
            return -1;
    c->nmaps = 0;
    return 0;
}

/* The figures of the program's own mappings, and its samples of resident memory in time order.
 * db_mu held. 0, or -1 (said). */
static int write_map_rows(ctx_t *c)
{
    if (c->map_calls && cv__db_map_stats(c->db, c->pid, c->recording, c->map_calls, c->map_bytes,
                                         c->map_peak, c->map_peak_t, c->map_live) != 0) {
        db_fail(c, "mapping_stats");
        return -1;
    }
    if (c->nrss)
        qsort(c->rss, c->nrss, sizeof *c->rss, rss_by_time);
    for (size_t i = 0; i < c->nrss; i++) {
        const rip_record_t *r = &c->rss[i];
        if (cv__db_rss(c->db, c->pid, c->recording, r->t, r->u.rss.rss, r->u.rss.anon,
                       r->u.rss.file, r->u.rss.swap) != 0) {
            db_fail(c, "rss");
            return -1;
        }
    }
    c->nrss = 0;
    return 0;
}

/* The live-block store failed: its spill file (a sentence naming it), else out of memory. */
static void store_fail(ctx_t *c, const cv__pairs_t *live)
{
    const char *why = cv__pairs_failure(live);
    if (why)
        errorf(c, RHEAP_CONVERT_E_OUTPUT, NULL, NO_OFFSET, "%s", why);
    else
        nomem(c, "");
}

/* A pool's destruction: every block of it still live is freed at its time, by its thread. */
static int destroy_pool(ctx_t *c, cv__pairs_t *live, const stream_t *s, const event_t *e)
{
    uint64_t lo = e->addr, hi = lo + (1ull << POOL_SHIFT), addrs[256];
    size_t n;
    do {
        n = cv__pairs_find_range(live, lo, hi, addrs, sizeof addrs / sizeof addrs[0]);
        for (size_t i = 0; i < n; i++) {
            cv__live_t b;
            if (!cv__pairs_take(live, addrs[i], &b))
                continue;
            cv__summary_free(c->sum, &b, e->t, s->tid, c->next_id + 1);
            if (write_row(c, &b, 1, e->t, s->id, NULL) != 0)
                return -1;
        }
    } while (n == sizeof addrs / sizeof addrs[0]);
    return 0;
}

/* The release half of a realloc, event e of stream s: the old block ends when realloc released
 * it; *old_id gets its row id (stays 0 when it was not live). 0, or -1: fatal. */
static int apply_release(ctx_t *c, cv__pairs_t *live, const stream_t *s, const event_t *e,
                         uint64_t *old_id)
{
    cv__live_t b;
    if (cv__pairs_take(live, e->old_addr, &b)) {
        cv__summary_free(c->sum, &b, e->old_t, s->tid, c->next_id + 1);
        return write_row(c, &b, 1, e->old_t, s->id, old_id);
    }
    c->unmatched_frees++;
    return 0;
}

/* An allocation or mapping names a stack the file never defined. */
static void undefined_stack(ctx_t *c, const stream_t *s, uint64_t offset, uint64_t stack)
{
    errorf(c, RHEAP_CONVERT_E_INPUT, s->path, offset,
           "%s: offset %llu: allocation names stack id %llu, which the file never defined",
           s->path, (unsigned long long)offset, (unsigned long long)stack);
}

/* Whether event e needs its stack's backtrace id: an allocation (its second half, for a
 * realloc) or a new mapping. */
static inline int needs_stack(const event_t *e)
{
    return (e->is_free == EV_ALLOC || e->is_free == EV_MAP || e->is_free == EV_REMAP) && e->stack;
}

/* Applies event e of stream s to the live map, all of it but a realloc's release half
 * (apply_release, before): bt is its backtrace id, old_id the row id of the block its realloc
 * released (0: none). 0, or -1: fatal. */
static int apply(ctx_t *c, cv__pairs_t *live, stream_t *s, const event_t *e, uint64_t bt,
                 uint64_t old_id)
{
    cv__live_t b;
    if (e->is_free == EV_DESTROY)
        return destroy_pool(c, live, s, e);
    if (e->is_free == EV_UNMAP)
        return apply_map(c, s, e, 0);
    if (e->is_free == EV_FREE) {
        if (cv__pairs_take(live, e->addr, &b)) {
            cv__summary_free(c->sum, &b, e->t, s->tid, c->next_id + 1);
            return write_row(c, &b, 1, e->t, s->id, NULL);
        }
        c->unmatched_frees++;
        return 0;
    }
    if (e->is_free == EV_MAP || e->is_free == EV_REMAP)
        return apply_map(c, s, e, bt);
    if (!e->addr) {
        c->null_allocs++;
        return 0;
    }
    b.addr = e->addr;
    b.t = e->t;
    b.size = e->size;
    b.bt = bt;
    b.align = e->align;
    b.realloc_of = old_id;
    b.tid = s->tid;
    b.thread = s->id;
    b.call = (uint8_t)e->call;
    /* The thread's base, shared by its segments: the base of its first allocation in any. */
    stream_t *th = &c->streams[s->id - c->first_thread];
    if (!th->addr_base)
        th->addr_base = b.addr & ADDR_MASK; /* never 0: allocations that returned NULL were skipped above */
    cv__live_t old;
    int rc = cv__pairs_insert(live, &b, &old);
    if (rc < 0) {
        store_fail(c, live);
        return -1;
    }
    if (rc == 1) {
        /* The address was handed out again, so the earlier block was freed by then, but its
         * free was not recorded: close it at the reuse, with no freeing thread. */
        c->reused_live++;
        cv__summary_free(c->sum, &old, e->t, 0, c->next_id + 1);
        cv__summary_alloc(c->sum, &b);
        return write_row(c, &old, 1, e->t, RHEAP_NO_THREAD, NULL);
    }
    cv__summary_alloc(c->sum, &b);
    return 0;
}

/* Applies the stream's current event: 0, it is consumed; 1, only the release half of a realloc
 * was applied, its allocation half is still to come; -1, fatal. */
static int apply_current(ctx_t *c, cv__pairs_t *live, stream_t *s)
{
    if (s->phase == 0) {
        s->phase = 1;
        return apply_release(c, live, s, &s->ev, &s->old_id) == 0 ? 1 : -1;
    }
    uint64_t bt = 0;
    if (needs_stack(&s->ev) && !cv__u64map_get(&s->stacks, s->ev.stack, &bt)) {
        undefined_stack(c, s, s->ev.offset, s->ev.stack);
        return -1;
    }
    return apply(c, live, s, &s->ev, bt, s->old_id);
}

static char *join_args(const rip_record_t *rec)
{
    size_t len = 1;
    for (uint32_t i = 0; i < rec->u.process.argc; i++)
        len += rec->u.process.argv[i].len + 1;
    char *s = malloc(len), *p = s;
    if (!s)
        return NULL;
    for (uint32_t i = 0; i < rec->u.process.argc; i++) {
        if (i)
            *p++ = ' ';
        memcpy(p, rec->u.process.argv[i].ptr, rec->u.process.argv[i].len);
        p += rec->u.process.argv[i].len;
    }
    *p = 0;
    return s;
}

typedef struct {
    uint64_t t;
    char *how;
    int on;
} onoff_t;

/* Reads process.rip and writes the processes and windows rows (the counters come later, so
 * the process row is written at the end of the recording). */
typedef struct {
    uint32_t pid, recording, ppid, page_size, depth, sample_ppm;
    unsigned major;          /* the format's: from 3 on, thread files stage their last events */
    int has_config;
    uint64_t start_ns, wall_ns;
    uint64_t interval;       /* profile mode's sampling interval; 0 in trace mode */
    char *exe, *cmdline;
    onoff_t *ev;
    size_t nev;
    uint64_t lost;           /* events of threads that had no file (the process file's lost) */
    char *unseen;            /* an allocator the tracer found and did not record, described */
} procinfo_t;

static void procinfo_free(procinfo_t *p)
{
    free(p->exe);
    free(p->cmdline);
    free(p->unseen);
    for (size_t i = 0; i < p->nev; i++)
        free(p->ev[i].how);
    free(p->ev);
}

static int read_process(ctx_t *c, const char *path, procinfo_t *p)
{
    rip_reader_t *r;
    rip_error_t e;
    if (rip_reader_open(path, &r, &e) != RIP_OK) {
        rip_fail(c, &e);
        return -1;
    }
    const rip_header_t *h = rip_reader_header(r);
    if (!h->is_process) {
        errorf(c, RHEAP_CONVERT_E_INPUT, path, 0,
               "%s: offset 0: a thread file where the process file was expected", path);
        rip_reader_close(r);
        return -1;
    }
    p->pid = h->pid;
    p->recording = h->recording;
    p->start_ns = h->start_ns;
    p->major = h->major;
    snprintf(c->format_version, sizeof c->format_version, "%u.%u", h->major, h->minor);
    rip_record_t rec;
    rip_status_t st;
    while ((st = rip_reader_next(r, &rec, &e)) == RIP_OK) {
        switch (rec.kind) {
        case RIP_REC_PROCESS:
            p->ppid = rec.u.process.ppid;
            free(p->exe);
            free(p->cmdline);
            p->exe = strndup(rec.u.process.exe.ptr, rec.u.process.exe.len);
            p->cmdline = join_args(&rec);
            p->wall_ns = rec.u.process.wall_ns;
            p->page_size = rec.u.process.page_size;
            break;
        case RIP_REC_CONFIG:
            p->depth = rec.u.config.depth;
            p->sample_ppm = rec.u.config.sample_ppm;
            p->has_config = 1;
            break;
        case RIP_REC_SAMPLING:
            p->interval = rec.u.sampling.interval;
            break;
        case RIP_REC_ON:
        case RIP_REC_OFF: {
            onoff_t *n = realloc(p->ev, (p->nev + 1) * sizeof *n);
            if (!n)
                break;
            p->ev = n;
            n[p->nev].t = rec.t;
            n[p->nev].how = strndup(rec.u.onoff.how.ptr, rec.u.onoff.how.len);
            n[p->nev].on = rec.kind == RIP_REC_ON;
            p->nev++;
            break;
        }
        case RIP_REC_LOST:
            p->lost = add_lost(p->lost, rec.u.lost.count);
            break;
        case RIP_REC_UNSEEN: {
            const rip_str_t *a = &rec.u.unseen.allocator, *m = &rec.u.unseen.module,
                            *s = &rec.u.unseen.symbol;
            size_t n = a->len + m->len + s->len + sizeof " in  ()";
            char *d = malloc(n);
            if (d) {
                snprintf(d, n, "%.*s in %.*s (%.*s)", (int)a->len, a->ptr, (int)m->len, m->ptr,
                         (int)s->len, s->ptr);
                free(p->unseen);
                p->unseen = d;
            }
            break;
        }
        default:
            break;
        }
    }
    rip_reader_close(r);
    if (st == RIP_E_TRUNCATED) {
        rip_truncated(c, &e, "using the complete blocks before it");
    } else if (st != RIP_END) {
        rip_fail(c, &e);
        return -1;
    }
    return 0;
}

static int write_windows(ctx_t *c, const procinfo_t *p, const char *dir)
{
    /* The tracer writes "off" when recording ends (disable, signal, exit, exec, error). A
     * recording without it was cut: the process was killed, or is still recording. */
    if (p->nev == 0 || p->ev[p->nev - 1].on)
        warnf(c, dir, NO_OFFSET, "%s: the recording has no end (process %u was killed or is still recording); %s",
              dir, p->pid,
              p->major >= 3 ? "its events up to then are here, kept in its thread files' staging areas"
                            : "events it had not yet written are missing");
    /* An end the recorder chose because it could not go on ("error: WHAT"): the process went on
     * unrecorded, so what it freed afterwards looks live here. */
    for (size_t i = 0; i < p->nev; i++)
        if (!p->ev[i].on && p->ev[i].how && !strncmp(p->ev[i].how, "error: ", 7))
            warnf(c, dir, NO_OFFSET,
                  "%s: the recording was stopped by an error (%s); process %u went on "
                  "unrecorded, so blocks live at that moment may have been freed later",
                  dir, p->ev[i].how + 7, p->pid);
    for (size_t i = 0; i < p->nev; i++) {
        if (!p->ev[i].on)
            continue;
        size_t j = i + 1;
        while (j < p->nev && p->ev[j].on)
            j++;
        /* An on followed by another on (or by nothing) has no known end. */
        int has_off = j == i + 1 && j < p->nev;
        if (cv__db_window(c->db, p->pid, p->recording, p->ev[i].t, p->ev[i].how, has_off,
                             has_off ? p->ev[j].t : 0, has_off ? p->ev[j].how : NULL) != 0) {
            db_fail(c, "windows");
            return -1;
        }
    }
    return 0;
}

static uint64_t file_size(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (uint64_t)sb.st_size : 0;
}

static int serial_cmp(const void *a, const void *b)
{
    const stream_t *x = *(const stream_t *const *)a, *y = *(const stream_t *const *)b;
    return x->serial < y->serial ? -1 : x->serial > y->serial;
}

/* ---- One recording: its thread files merged by time ---- */

/* Live conversion: a thread file not yet in the directory holds no event earlier than the
 * moment the directory was listed without it, and a thread whose committed records were all
 * read (its file has a staging area) stamps none earlier than the moment it was read, as
 * CLOCK_MONOTONIC told the converter; the tracer's clock follows CLOCK_MONOTONIC to a few parts
 * per million. The margin covers that drift and the time between a stamp and its record's
 * commit (or its file's creation); if an event older than what was applied still comes, the
 * conversion starts over (rheap_convert). */
#define UNSEEN_MARGIN_NS 50000000ull

/* The streams of the recording being converted. */
typedef struct streams {
    stream_t *s;
    size_t n, cap;
    cv__merge_t *m;
    const char *dir;
    uint64_t start_ns;
    int live;                /* the recording may still grow: see follow() */
    int was_live;
    uint64_t unseen;         /* live: no file found later holds an event before this time */
    uint64_t w;              /* live: only events before this time may be applied */
    struct timespec dir_mtime; /* the directory's when it was last listed */
    time_t listed;           /* CLOCK_REALTIME seconds of that listing */
    /* The last event applied (its merge key and stream), which no later one may precede. */
    uint64_t last_t;
    int last_cls;
    size_t last_i;
    int applied;
    /* The checkpoint's list of the files it replaces (serial ranges), if it has one. */
    rip_range_t *skip;
    size_t nskip;
} streams_t;

/* Whether the recording's checkpoint replaces the thread file with this serial. */
static int replaced(const streams_t *v, uint32_t serial)
{
    return rip_ranges_have(v->skip, v->nskip, serial);
}

/* The tracer numbers the thread files of a recording 1, 2, ... as it opens them (the header's
 * serial). Two files with one serial are one file twice (a copy would double its rows): an
 * error. A serial missing below the highest is a file moved or deleted: a warning, as the
 * rest converts; files without a header (no serial known) may account for the missing. */
static int check_serials(ctx_t *c, const streams_t *v)
{
    const stream_t *s = v->s;
    size_t n = v->n;
    const char *dir = v->dir;
    const stream_t **by = malloc((n ? n : 1) * sizeof *by);
    if (!by) {
        nomem(c, "");
        return -1;
    }
    size_t k = 0, headerless = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i].checkpoint)
            continue;
        if (s[i].r || s[i].skipped)
            by[k++] = &s[i];
        else
            headerless++;
    }
    if (k)
        qsort(by, k, sizeof *by, serial_cmp);
    uint64_t missing = 0;
    uint32_t first_missing = 0;
    for (size_t i = 0; i < k; i++) {
        uint32_t prev = i ? by[i - 1]->serial : 0;
        if (i && by[i]->serial == prev) {
            errorf(c, RHEAP_CONVERT_E_INPUT, by[i]->path, 0,
                   "%s: offset 0: file number %u of the recording (thread %u), the same number "
                   "as %s (thread %u): one is a copy; remove it and convert again",
                   by[i]->path, by[i]->serial, by[i]->tid, by[i - 1]->path, by[i - 1]->tid);
            free(by);
            return -1;
        }
        /* Files a checkpoint replaced are not missing. */
        for (uint32_t m = prev + 1; m < by[i]->serial; m++)
            if (!replaced(v, m)) {
                if (!missing)
                    first_missing = m;
                missing++;
            }
    }
    uint32_t last = k ? by[k - 1]->serial : 0;
    free(by);
    if (missing > headerless)
        warnf(c, dir, NO_OFFSET,
              "%s: %llu thread file(s) missing (the tracer numbered its files 1 to %u, number %u "
              "is the first not found): moved or deleted, their events are not in the database",
              dir, (unsigned long long)(missing - headerless), last, first_missing);
    return 0;
}

static void key_of(const stream_t *s, uint64_t *t, int *cls)
{
    *t = s->ev.is_free ? s->ev.t : s->phase == 0 ? s->ev.old_t : s->ev.t;
    /* A mapping sorts as an allocation, after an unmap of the same time. */
    *cls = (s->ev.is_free && s->ev.is_free != EV_MAP && s->ev.is_free != EV_REMAP) ||
                   s->phase == 0
               ? 0
               : 1;
}

static void stream_key(cv__merge_t *m, size_t i, const stream_t *s)
{
    uint64_t t;
    int cls;
    key_of(s, &t, &cls);
    cv__merge_set(m, i, t, cls);
}

/* Opens a thread file for its header and checks it belongs to the recording. 0: open (or, not
 * live, left without a reader when it holds no complete block, with a warning); 1: live, and it
 * does not open yet; -1: fatal. */
static int open_stream(ctx_t *c, stream_t *s, const procinfo_t *p, int live)
{
    rip_error_t e;
    if (rip_reader_open(s->path, &s->r, &e) != RIP_OK) {
        /* A file being created may not have its staging area or first block yet: only once
         * the recording is complete does a file that does not open say something. */
        if (live && e.code != RIP_E_NOMEM)
            return 1;
        if (e.code == RIP_E_TRUNCATED) {
            /* Not even the first block made it to disk: nothing to convert here. */
            rip_truncated(c, &e, "the file holds no complete block");
            s->file_size = file_size(s->path);
            s->offset = s->file_size;
            return 0;
        }
        rip_fail(c, &e);
        return -1;
    }
    /* Detached: it holds no descriptor between the reads of its blocks, so a program that ran
     * thousands of threads converts under any limit of open files. */
    rip_reader_detach(s->r);
    if (live)
        rip_reader_follow(s->r, 1);
    s->file_size = rip_reader_size(s->r);
    const rip_header_t *h = rip_reader_header(s->r);
    if (h->is_process) {
        errorf(c, RHEAP_CONVERT_E_INPUT, s->path, 0,
               "%s: offset 0: a process file where a thread file was expected", s->path);
        return -1;
    }
    if (h->pid != p->pid || h->start_ns != p->start_ns) {
        errorf(c, RHEAP_CONVERT_E_INPUT, s->path, 0,
               "%s: offset 0: belongs to process %u started at %llu, not to this recording "
               "(process %u started at %llu)",
               s->path, h->pid, (unsigned long long)h->start_ns, p->pid,
               (unsigned long long)p->start_ns);
        return -1;
    }
    s->tid = h->tid;
    s->serial = h->serial;
    s->segment = h->segment;
    /* A segment continues its thread (FORMAT.md section 3a): its events go under the thread
     * of its first file, when that file is still there. */
    for (size_t j = 0; h->segment >= 2 && c->cur_streams && j < c->cur_streams->n; j++) {
        const stream_t *f = &c->cur_streams->s[j];
        if (f != s && (f->r || f->done) && !f->skipped && !f->checkpoint &&
            f->serial == h->first_serial && f->tid == h->tid && f->segment < 2) {
            s->id = f->id;
            break;
        }
    }
    if (!s->checkpoint && c->cur_streams && replaced(c->cur_streams, s->serial)) {
        /* Left by a crash between the checkpoint's rename and the deletion of what it
         * replaces: its events are in the checkpoint. */
        rip_reader_close(s->r);
        s->r = NULL;
        s->skipped = 1;
    }
    return 0;
}

/* The checkpoint's list of the files it replaces and its time, from its first record. 0, or -1
 * (said). */
static int read_checkpoint(ctx_t *c, streams_t *v, const char *path)
{
    rip_reader_t *r;
    rip_error_t e;
    rip_record_t rec;
    if (rip_reader_open(path, &r, &e) != RIP_OK) {
        rip_fail(c, &e);
        return -1;
    }
    rip_status_t st = rip_reader_next(r, &rec, &e);
    if (st != RIP_OK || rec.kind != RIP_REC_CHECKPOINT) {
        if (st != RIP_OK)
            rip_fail(c, &e);
        else
            errorf(c, RHEAP_CONVERT_E_INPUT, path, 0,
                   "%s: offset 0: a checkpoint file whose first record is not a checkpoint "
                   "record", path);
        rip_reader_close(r);
        return -1;
    }
    v->nskip = rec.u.checkpoint.nranges;
    v->skip = malloc((v->nskip ? v->nskip : 1) * sizeof *v->skip);
    if (!v->skip) {
        rip_reader_close(r);
        nomem(c, "");
        return -1;
    }
    memcpy(v->skip, rec.u.checkpoint.ranges, v->nskip * sizeof *v->skip);
    c->compacted_files += rec.u.checkpoint.nfiles;
    if (rec.t > c->compacted_before)
        c->compacted_before = rec.t;
    rip_reader_close(r);
    return 0;
}

/* Adds the file at path as a stream unless it is one already. A new stream waits (see follow)
 * with `bound`: no event of it comes before. 0, or -1 after an error. */
static int add_stream(ctx_t *c, streams_t *v, const char *path, uint64_t bound)
{
    for (size_t i = 0; i < v->n; i++)
        if (strcmp(v->s[i].path, path) == 0)
            return 0;
    pthread_mutex_lock(&c->sh->in_mu);
    uint64_t before = c->has_turn ? c->thread_base : c->sh->thread_base;
    pthread_mutex_unlock(&c->sh->in_mu);
    if (before + c->next_thread >= RHEAP_MAX_THREADS) {
        errorf(c, RHEAP_CONVERT_E_INPUT, v->dir, NO_OFFSET,
               "%s: more than %u thread files in the recordings, more than a database holds",
               v->dir, RHEAP_MAX_THREADS);
        return -1;
    }
    if (v->n == v->cap) {
        size_t cap = v->cap ? 2 * v->cap : 8;
        stream_t *s = realloc(v->s, cap * sizeof *s);
        cv__merge_t *m = cv__merge_create(cap);
        if (!s || !m) {
            if (s)
                v->s = s;
            cv__merge_destroy(m);
            nomem(c, "");
            return -1;
        }
        memset(s + v->cap, 0, (cap - v->cap) * sizeof *s);
        /* The new heap takes the streams of the old one. */
        for (size_t i = 0; i < v->n; i++)
            if (!s[i].waiting && !s[i].done)
                stream_key(m, i, &s[i]);
        cv__merge_destroy(v->m);
        v->s = s;
        v->m = m;
        v->cap = cap;
        c->streams = s;
    }
    stream_t *s = &v->s[v->n];
    memset(s, 0, sizeof *s);
    s->id = c->next_thread++;
    s->waiting = 1;
    s->bound = bound;
    v->n++;
    if (!(s->path = strdup(path)) || cv__u64map_init(&s->stacks) != 0) {
        nomem(c, "");
        return -1;
    }
    return 0;
}

/* Adds the thread files of the directory listing that are not streams yet. 0, or -1 after an
 * error. */
static int add_streams(ctx_t *c, streams_t *v, rip_recording_t *rr, uint64_t bound)
{
    size_t total = rip_recording_thread_count(rr);
    for (size_t k = 0; k < total; k++)
        if (add_stream(c, v, rip_recording_thread_path(rr, k), bound) != 0)
            return -1;
    return 0;
}

/* Makes a waiting stream current if it has an event now. 0: it has, or it ended, or it still
 * waits (s->waiting stays set); -1: fatal. An event that sorts before the last one applied can
 * only come from a file found late: the merge went too far, and the conversion starts over. */
static int wake(ctx_t *c, streams_t *v, size_t i, const procinfo_t *p, cv__pairs_t *live)
{
    stream_t *s = &v->s[i];
    if (!s->opened) {
        int o = open_stream(c, s, p, v->live);
        if (o < 0)
            return -1;
        if (o > 0)
            return 0;
        s->opened = 1;
    }
    if (!s->r) {
        s->waiting = 0;
        s->done = 1;
        return 0;
    }
    int a = advance(c, s, live);
    if (a < 0)
        return -1;
    if (a == 2)
        return 0;
    s->waiting = 0;
    if (a == 0) {
        s->done = 1;
        return 0;
    }
    uint64_t t;
    int cls;
    key_of(s, &t, &cls);
    if (v->applied && cv__merge_before(t, cls, i, v->last_t, v->last_cls, v->last_i)) {
        c->restart = 1;
        atomic_store(&c->sh->stop, 1);
        return -1;
    }
    stream_key(v->m, i, s);
    return 0;
}

/* Live conversion: called when no event can be applied yet. Waits a moment (the caller's
 * `growing` does), then takes what was written since: new thread files, new blocks of the
 * waiting streams. Once the recording can no longer grow, every file is read to its end, and
 * the merge goes on as for a finished recording. 0, or -1 after an error. */
static int follow(ctx_t *c, streams_t *v, rip_recording_t **rr, const procinfo_t *p,
                  cv__pairs_t *live)
{
    if (!c->o->growing(c->o->live_user, v->dir, 1))
        v->live = 0;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    uint64_t now_ns = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
    /* The directory is listed again unless it is unchanged since a listing made well after its
     * last change (its time stamps are coarse: a file created just after a listing may leave
     * them as they were). */
    struct stat sb = {0};
    struct timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall);
    int same = stat(v->dir, &sb) == 0 && sb.st_mtim.tv_sec == v->dir_mtime.tv_sec &&
               sb.st_mtim.tv_nsec == v->dir_mtime.tv_nsec && v->listed > sb.st_mtim.tv_sec + 1;
    if (!same || !v->live) {
        v->listed = wall.tv_sec;
        rip_recording_t *fresh;
        rip_error_t e;
        if (rip_recording_open(v->dir, &fresh, &e) != RIP_OK) {
            rip_fail(c, &e);
            return -1;
        }
        rip_recording_close(*rr);
        *rr = fresh;
        v->dir_mtime = sb.st_mtim;
        if (add_streams(c, v, *rr, v->unseen) != 0)
            return -1;
    }
    /* Files listed from now on were created after this moment, less the margin. */
    uint64_t margin = UNSEEN_MARGIN_NS + (now_ns - v->start_ns) / 1000;
    if (now_ns > v->start_ns + margin)
        v->unseen = now_ns - v->start_ns - margin;
    v->w = v->live ? v->unseen : UINT64_MAX;
    for (size_t i = 0; i < v->n; i++) {
        stream_t *s = &v->s[i];
        if (!v->live && s->r) {
            rip_reader_follow(s->r, 0);
            s->file_size = rip_reader_size(s->r);
        }
        if (!s->waiting)
            continue;
        if (wake(c, v, i, p, live) != 0)
            return -1;
        /* A thread whose every committed record was just read (its file has a staging area)
         * stamps its next event now or later, less the time an event may take to commit. */
        if (s->waiting && s->r && rip_reader_staged(s->r) && s->bound < v->unseen)
            s->bound = v->unseen;
        if (s->waiting && s->bound < v->w)
            v->w = s->bound;
    }
    return 0;
}

/* The start of a recording: its process file read into *p, the context and the summary set
 * for it, its thread files opened and their first events decoded. 0, or -1 (said). */
static int begin_recording(ctx_t *c, streams_t *v, rip_recording_t *rec, procinfo_t *p,
                           cv__pairs_t *live_map, int live)
{
    if (read_process(c, rip_recording_process_path(rec), p) != 0)
        return -1;
    c->pid = p->pid;
    c->recording = p->recording;
    c->first_thread = c->next_thread;
    v->start_ns = p->start_ns;
    if (!(v->m = cv__merge_create(0)) || cv__summary_begin(c->sum, p->pid, p->recording) != 0) {
        nomem(c, "");
        return -1;
    }
    cv__summary_sampling(c->sum, p->interval);
    cv__summary_wall(c->sum, p->wall_ns);
    for (size_t i = 0; i < c->nmods; i++) {
        free(c->mods[i].path);
        free(c->mods[i].build_id_hex);
    }
    c->nmods = 0;

    c->cur_streams = v;
    /* A compacted recording: its checkpoint first, as a thread file of its own. */
    const char *ckpt = rip_recording_checkpoint_path(rec);
    if (ckpt) {
        if (read_checkpoint(c, v, ckpt) != 0 || add_stream(c, v, ckpt, 0) != 0)
            return -1;
        v->s[v->n - 1].checkpoint = 1;
        if (!(v->s[v->n - 1].name = strdup("checkpoint"))) {
            nomem(c, "");
            return -1;
        }
    }
    if (add_streams(c, v, rec, 0) != 0)
        return -1;
    for (size_t i = 0; i < v->n; i++) {
        int o = open_stream(c, &v->s[i], p, live);
        if (o < 0)
            return -1;
        v->s[i].opened = o == 0;
    }
    if (!live && check_serials(c, v) != 0)
        return -1;
    v->w = live ? 0 : UINT64_MAX;
    for (size_t i = 0; i < v->n; i++)
        if (wake(c, v, i, p, live_map) != 0)
            return -1;
    return 0;
}

/* ---- Two threads per recording ----
 *
 * A big finished recording is converted over two cores: a reading thread of its own decodes the
 * thread files (LZ4, records, stack definitions to backtrace ids, module lists, pools), merges
 * them and hands the merged events to the worker's thread through a ring (ring.c); the worker
 * pairs them (it alone touches the live-block store), counts them in the summaries and makes
 * the rows. What the decoding meets between events and the converting side needs (markers) goes
 * through the ring as cells of their own, in the place where the one-thread merge meets it, so
 * the database is the one a single thread makes. The reading thread is the same code as the
 * one-thread merge (advance, decode_next), without the store's prefetches, which move to the
 * converting side, reading ahead in the ring. A live recording (still growing) keeps one thread,
 * as do the two workers of a live conversion (they have the two cores already) and a small
 * recording, where a thread and its ring cost more than they give. */

/* Thread files smaller than this in all convert on one thread (RHEAP_CONVERT_READER changes
 * it: reader_of). */
#define PIPE_MIN_BYTES (1ull << 20)

/* How far ahead of the event being applied the converting thread prefetches the store's tags of
 * an event (in cells), and how far the slot they name (see advance). */
#define RING_TAGS_AHEAD 64u
#define RING_SLOT_AHEAD 32u

/* Whether the recording is worth a reading thread of its own. */
static int pipe_pays(const ctx_t *c, const streams_t *v)
{
    if (c->live || v->live || v->was_live || sysconf(_SC_NPROCESSORS_ONLN) < 2)
        return 0;
    uint64_t bytes = 0;
    for (size_t i = 0; i < v->n; i++)
        bytes += v->s[i].file_size;
    return bytes >= c->pipe_min;
}

/* The reading thread: merges the streams and hands each event on, as merge_events applies them.
 * 0 at the merge's end; -1 when it failed (said), found an undefined stack (the converting
 * thread says it, at its place) or the converting thread closed the ring. base: the worker's
 * events before the recording's (its progress counts on from there). */
static int feed(ctx_t *c, streams_t *v, cv__ring_t *ring, uint64_t base)
{
    uint64_t tick = 0;
    for (;;) {
        long top = cv__merge_top(v->m);
        if (top < 0)
            return 0;
        stream_t *cur = &v->s[top];
        const event_t *e = &cur->ev;
        cv__merged_t *m = cv__ring_put(ring);
        if (!m)
            return -1;
        m->call = (uint8_t)e->call;
        m->stream = (uint32_t)top;
        m->t = e->t;
        m->addr = e->addr;
        m->size = e->size;
        m->bt = 0;
        /* A mapping has no alignment; a remap's old length takes its place. */
        m->align = e->is_free == EV_REMAP ? e->old_size : e->align;
        m->old_addr = e->old_addr;
        m->old_t = e->old_t;
        if (cur->phase == 0) {
            m->kind = EV_RELEASE;
            cv__ring_commit(ring);
            cur->phase = 1;
            stream_key(v->m, (size_t)top, cur);
            continue;
        }
        m->kind = (uint8_t)e->is_free;
        if (needs_stack(e) && !cv__u64map_get(&cur->stacks, e->stack, &m->bt)) {
            m->kind = EV_UNDEFINED;
            m->addr = e->offset;
            m->size = e->stack;
            cv__ring_commit(ring);
            return -1;
        }
        cv__ring_commit(ring);
        int more = advance(c, cur, NULL);
        if (more < 0)
            return -1;
        if (more == 1) {
            stream_key(v->m, (size_t)top, cur);
        } else {
            cv__merge_remove(v->m, (size_t)top);
            cur->done = 1;
        }
        if ((++tick & 0xffff) == 0)
            progress(c, v->s, v->n, base + tick, 0);
    }
}

typedef struct {
    ctx_t *c;
    streams_t *v;
    uint64_t events;         /* the worker's before the recording */
} reader_t;

static void *reader_main(void *arg)
{
    reader_t *r = arg;
    ctx_t *c = r->c;
    cv__ring_t *ring = c->feed;
    int rc = feed(c, r->v, ring, r->events);
    cv__merged_t *m = cv__ring_put(ring);
    if (m) {
        m->kind = EV_END;
        m->size = rc != 0;
        cv__ring_commit(ring);
    }
    cv__ring_flush(ring);
    return NULL;
}

/* The converting thread: applies the cells of the ring until the reading thread's end, with
 * old_ids[i] the row id of the block the current realloc of stream i released. 0, or -1 (said,
 * by one thread or the other). */
static int convert_ring(ctx_t *c, streams_t *v, cv__pairs_t *live, cv__ring_t *ring,
                        uint64_t *old_ids)
{
    const cv__merged_t *cells = cv__ring_cells(ring);
    const uint64_t mask = CV__RING_SIZE - 1;
    uint64_t pos = 0, end = 0, tags = 0, slots = 0;
    for (;;) {
        if (pos == end)
            end = cv__ring_wait(ring, pos);
        /* Each event's tags RING_TAGS_AHEAD cells ahead, its slot RING_SLOT_AHEAD ahead, as the
         * one-thread merge prefetches them as it decodes (advance). */
        uint64_t lim = end - pos > RING_TAGS_AHEAD ? pos + RING_TAGS_AHEAD : end;
        for (; tags < lim; tags++) {
            const cv__merged_t *x = &cells[tags & mask];
            cv__pairs_prefetch(live, x->kind == EV_RELEASE ? x->old_addr : x->addr);
        }
        lim = end - pos > RING_SLOT_AHEAD ? pos + RING_SLOT_AHEAD : end;
        for (; slots < lim; slots++) {
            const cv__merged_t *x = &cells[slots & mask];
            cv__pairs_prefetch_slot(live, x->kind == EV_RELEASE ? x->old_addr : x->addr);
        }
        cv__merged_t m = cells[pos & mask];
        if ((++pos & (CV__RING_BATCH - 1)) == 0)
            cv__ring_release(ring, pos, 0);
        if (m.kind == EV_END)
            return m.size ? -1 : 0;
        if (m.kind == EV_MARKER) {
            cv__summary_marker(c->sum, m.t);
            continue;
        }
        stream_t *s = &v->s[m.stream];
        if (m.kind == EV_UNDEFINED) {
            undefined_stack(c, s, m.addr, m.size);
            return -1;
        }
        event_t e = {
            .is_free = m.kind == EV_RELEASE ? EV_ALLOC : m.kind,
            .call = (rip_call_t)m.call,
            .t = m.t,
            .addr = m.addr,
            .size = m.size,
            .align = m.kind == EV_REMAP ? 0 : m.align,
            .old_addr = m.old_addr,
            .old_t = m.old_t,
            .old_size = m.kind == EV_REMAP ? m.align : 0,
        };
        int a;
        if (m.kind == EV_RELEASE) {
            old_ids[m.stream] = 0;
            a = apply_release(c, live, s, &e, &old_ids[m.stream]);
        } else {
            a = apply(c, live, s, &e, m.bt,
                      m.kind == EV_ALLOC && m.old_addr ? old_ids[m.stream] : 0);
        }
        if (a < 0)
            return -1;
        /* A take that could not read the spill file found nothing: the rows would be wrong. */
        if (cv__pairs_failure(live)) {
            store_fail(c, live);
            return -1;
        }
        if (m.kind != EV_RELEASE)
            c->events++;
    }
}

/* The recording's events over two threads (above). 0, or -1 (said); 1 when the reading thread
 * could not be started (nothing done: the caller merges on one thread). */
static int merge_pipe(ctx_t *c, streams_t *v, cv__pairs_t *live_map)
{
    cv__ring_t *ring = cv__ring_create();
    uint64_t *old_ids = calloc(v->n ? v->n : 1, sizeof *old_ids);
    reader_t r = {c, v, c->events};
    pthread_t reader;
    c->feed = ring;
    if (!ring || !old_ids || pthread_create(&reader, NULL, reader_main, &r) != 0) {
        c->feed = NULL;
        cv__ring_destroy(ring);
        free(old_ids);
        return 1;
    }
    /* Named, so that top -H and /proc/PID/task tell the two threads' CPU apart. */
    pthread_setname_np(reader, "rheap reader");
    int rc = convert_ring(c, v, live_map, ring, old_ids);
    /* However it ended, the reading thread stops at its next cell. */
    cv__ring_close(ring);
    pthread_join(reader, NULL);
    c->feed = NULL;
    cv__ring_destroy(ring);
    free(old_ids);
    return rc;
}

/* Applies every event of the recording in merge order, following the files while they grow
 * (live); then, after a live recording, reads its process file again for the records written
 * last. 0, or -1 (said). */
static int merge_events(ctx_t *c, streams_t *v, rip_recording_t **rr, procinfo_t *p,
                        cv__pairs_t *live_map)
{
    if (pipe_pays(c, v)) {
        int rc = merge_pipe(c, v, live_map);
        if (rc <= 0)
            return rc;
    }
    uint64_t tick = 0;
    for (;;) {
        long top = cv__merge_top(v->m);
        if (v->live) {
            uint64_t t;
            int cls;
            if (top >= 0)
                key_of(&v->s[top], &t, &cls);
            if (top < 0 || t >= v->w) {
                if (follow(c, v, rr, p, live_map) != 0)
                    return -1;
                continue;
            }
        } else if (top < 0) {
            break;
        }
        stream_t *cur = &v->s[top];
        key_of(cur, &v->last_t, &v->last_cls);
        v->last_i = (size_t)top;
        v->applied = 1;
        int a = apply_current(c, live_map, cur);
        if (a < 0)
            return -1;
        /* A take that could not read the spill file found nothing: the rows would be wrong. */
        if (cv__pairs_failure(live_map)) {
            store_fail(c, live_map);
            return -1;
        }
        if (a == 1) {
            stream_key(v->m, (size_t)top, cur);
            continue;
        }
        c->events++;
        c->live_events += (uint64_t)v->live;
        int more = advance(c, cur, live_map);
        if (more < 0)
            return -1;
        if (more == 1) {
            stream_key(v->m, (size_t)top, cur);
        } else {
            cv__merge_remove(v->m, (size_t)top);
            if (more == 0) {
                cur->done = 1;
            } else {
                /* No complete block after this event yet: nothing of it comes before it. */
                cur->waiting = 1;
                cur->bound = v->last_t;
                if (cur->bound < v->w)
                    v->w = cur->bound;
            }
        }
        if ((++tick & 0xffff) == 0 && !v->was_live)
            progress(c, v->s, v->n, c->events, 0);
    }
    if (v->was_live) {
        /* The process file's last records (off, lost) were written after it was first read. */
        procinfo_t q = {0};
        if (read_process(c, rip_recording_process_path(*rr), &q) != 0) {
            procinfo_free(&q);
            return -1;
        }
        procinfo_free(p);
        *p = q;
        if (check_serials(c, v) != 0)
            return -1;
    }
    return 0;
}

/* The blocks still live at the end, never freed while recording, as rows in allocation order;
 * then the recording's summary rows. 0, or -1 (said). */
static int end_blocks(ctx_t *c, const streams_t *v, cv__pairs_t *live_map)
{
    if (cv__pairs_drain_begin(live_map) != 0) {
        store_fail(c, live_map);
        return -1;
    }
    /* The summaries take them a batch at a time (a call per block was a tenth of their
     * counting); each batch's rows are written after, with the ids the summaries were given. */
    cv__live_t rest[128];
    size_t n = 0;
    int more;
    do {
        more = cv__pairs_drain_next(live_map, &rest[n]);
        if (more > 0 && ++n < sizeof rest / sizeof *rest)
            continue;
        cv__summary_leaked_batch(c->sum, rest, n, c->next_id + 1);
        for (size_t i = 0; i < n; i++)
            if (write_row(c, &rest[i], 0, 0, RHEAP_NO_THREAD, NULL) != 0)
                return -1;
        n = 0;
    } while (more > 0);
    if (more < 0) {
        store_fail(c, live_map);
        return -1;
    }
    if (end_maps(c) != 0)
        return -1;
    for (size_t i = 0; i < v->n; i++)
        if (v->s[i].totals.kind == RIP_REC_TOTALS)
            cv__summary_counted(c->sum, v->s[i].tid, v->s[i].totals.u.totals.allocs,
                                   v->s[i].totals.u.totals.bytes);
    return 0;
}

/* The recording's summary rows, with the ids of its rows as written. db_mu held. 0, or -1
 * (said). */
static int write_summary(ctx_t *c)
{
    int sr = cv__summary_end(c->sum, c->db, cv__stacks_sites(c->stacks), c->row_base);
    if (sr > 0) {
        nomem(c, "");
        return -1;
    }
    if (sr < 0) {
        db_fail(c, "summaries");
        return -1;
    }
    return 0;
}

/* The rows that describe the recording: its threads, its process (with every lost event and
 * the frees of blocks it never saw allocated), its modules and its windows. 0, or -1 (said). */
static int write_recording_rows(ctx_t *c, const streams_t *v, const procinfo_t *p,
                                uint64_t unmatched_frees)
{
    const char *dir = v->dir;
    /* Lost events of every cause: those the thread files report, and those of threads that got
     * no file at all (more threads than max_threads), which the process file reports. */
    uint64_t lost = p->lost;
    /* A thread's row counts the events of all its files (its segments' streams carry its id),
     * and takes the name its last file gave it. */
    uint64_t *events = calloc(v->n ? v->n : 1, sizeof *events);
    uint64_t *tlost = calloc(v->n ? v->n : 1, sizeof *tlost);
    const char **names = calloc(v->n ? v->n : 1, sizeof *names);
    if (!events || !tlost || !names) {
        free(events);
        free(tlost);
        free(names);
        nomem(c, "");
        return -1;
    }
    for (size_t i = 0; i < v->n; i++) {
        const stream_t *s = &v->s[i];
        size_t th = s->id - c->first_thread;
        if (th >= v->n)
            continue;
        events[th] += s->events;
        tlost[th] = add_lost(tlost[th], s->lost);
        if (s->name)
            names[th] = s->name;
    }
    int failed = 0;
    for (size_t i = 0; i < v->n && !failed; i++) {
        stream_t *s = &v->s[i];
        lost = add_lost(lost, s->lost);
        atomic_fetch_add(&c->sh->bytes_done, s->file_size);
        if (s->skipped || (s->tid == 0 && !s->checkpoint) || s->id != c->first_thread + i)
            continue; /* not even its header was written (warned above), or a segment: no row */
        if (cv__db_thread(c->db, s->id + c->thread_base, p->pid, p->recording, s->tid, names[i], s->serial,
                             s->path, events[i], tlost[i], s->addr_base) != 0) {
            db_fail(c, "threads");
            failed = 1;
        }
    }
    free(events);
    free(tlost);
    free(names);
    if (failed)
        return -1;
    c->lost = add_lost(c->lost, lost);
    if (lost == LOST_MAX)
        warnf(c, dir, NO_OFFSET,
              "%s: the recording of process %u claims %llu or more lost events, more than any "
              "process can make (a damaged or crafted file?); lost_events holds %llu",
              dir, p->pid, (unsigned long long)LOST_MAX, (unsigned long long)LOST_MAX);
    else if (lost)
        warnf(c, dir, NO_OFFSET,
              "%s: %llu events of process %u were not recorded; the database counts them in "
              "lost_events (meta, processes, and threads for those a thread file reports)",
              dir, (unsigned long long)lost, p->pid);
    cv__process_row_t row = {
        .pid = p->pid, .recording = p->recording, .ppid = p->ppid,
        .exe = p->exe, .cmdline = p->cmdline, .dir = dir,
        .start_ns = p->start_ns, .wall_ns = p->wall_ns,
        .page_size = p->page_size, .depth = p->depth, .sample_ppm = p->sample_ppm,
        .has_config = p->has_config, .unmatched_frees = unmatched_frees, .lost = lost,
    };
    if (cv__db_process(c->db, &row) != 0 ||
        (p->interval && cv__profile_process(c->db, p->pid, p->recording, p->interval) != 0)) {
        db_fail(c, "processes");
        return -1;
    }
    if (p->unseen) {
        warnf(c, dir, NO_OFFSET,
              "%s: process %u allocates through an allocator rheap does not record, %s: its "
              "blocks are missing from the database (processes.unrecorded)",
              dir, p->pid, p->unseen);
        if (cv__db_unrecorded(c->db, p->pid, p->recording, p->unseen) != 0) {
            db_fail(c, "processes");
            return -1;
        }
    }
    for (size_t i = 0; i < c->nmods; i++) {
        /* The symbolizer's status is of the file, over every recording so far. */
        if (cv__db_module(c->db, p->pid, p->recording, c->mods[i].path, c->mods[i].bias,
                             c->mods[i].build_id_hex,
                             c->mods[i].used ? c->mods[i].status : "unused") != 0) {
            db_fail(c, "modules");
            return -1;
        }
    }
    return write_windows(c, p, dir);
}

/* What is written once the recording's turn has come: its last rows, its summaries, the rows
 * that describe it and its pools. 0, or -1 (said). */
static int write_recording(ctx_t *c, const streams_t *v, const procinfo_t *p,
                           uint64_t unmatched_frees)
{
    /* The symbolizer's status is of the file, over every recording so far. */
    pthread_mutex_lock(&c->sh->sym_mu);
    for (size_t i = 0; i < c->nmods; i++)
        c->mods[i].status = cv__sym_file_status(c->sym, c->mods[i].file_id);
    pthread_mutex_unlock(&c->sh->sym_mu);
    if (flush_staged(c) != 0)
        return -1;
    pthread_mutex_lock(&c->sh->db_mu);
    int rc = write_map_rows(c) == 0 && write_summary(c) == 0 &&
                     write_recording_rows(c, v, p, unmatched_frees) == 0
                 ? 0
                 : -1;
    for (size_t i = 0; rc == 0 && i < c->npools; i++) {
        const pool_t *pl = &c->pools[i];
        if (cv__db_pool(c->db, c->pool_base + i + 1, pl->pid, pl->recording, pl->pool, pl->t,
                        pl->name) != 0) {
            db_fail(c, "pools");
            rc = -1;
        }
    }
    pthread_mutex_unlock(&c->sh->db_mu);
    return rc;
}

/* One recording, from its process file to its last rows: begin, merge, end, describe. Its
 * rows, threads and pools are numbered from the start (shared_t). */
static int convert_recording(ctx_t *c, const char *dir, rip_recording_t **rr, int live)
{
    procinfo_t p = {0};
    streams_t v = {0};
    cv__pairs_t *live_map = cv__pairs_create();
    uint64_t unmatched_before = c->unmatched_frees;
    c->next_id = 0;
    c->next_thread = 0;
    c->nstage = c->nside = 0;
    c->over_fd = -1;
    c->over_rows = c->over_bytes = 0;
    c->over_used = 0;
    for (size_t i = 0; i < c->npools; i++)
        free(c->pools[i].name);
    c->npools = 0;
    c->pools_full_said = 0;
    /* Pool ids are the program's, and mean a pool within one recording only. */
    cv__u64map_free(&c->pool_ids);
    c->pool_last = 0;
    c->nmaps = c->nrss = 0;
    c->map_calls = c->map_bytes = c->map_live = c->map_peak = c->map_peak_t = 0;
    if (cv__u64map_init(&c->pool_ids) != 0) {
        nomem(c, "");
        cv__pairs_destroy(live_map);
        return -1;
    }
    v.dir = dir;
    v.live = v.was_live = live;
    int rc = -1;
    if (live_map)
        cv__pairs_spill(live_map, c->budget, c->o->output);
    if (!live_map)
        nomem(c, "");
    else if (begin_recording(c, &v, *rr, &p, live_map, live) == 0 &&
             merge_events(c, &v, rr, &p, live_map) == 0 && end_blocks(c, &v, live_map) == 0 &&
             write_recording(c, &v, &p, c->unmatched_frees - unmatched_before) == 0)
        rc = 0;
    procinfo_free(&p);
    for (size_t i = 0; i < v.n; i++) {
        rip_reader_close(v.s[i].r);
        cv__u64map_free(&v.s[i].stacks);
        free(v.s[i].segs);
        free(v.s[i].name);
        free(v.s[i].path);
    }
    free(v.s);
    free(v.skip);
    c->streams = NULL;
    cv__merge_destroy(v.m);
    if (live_map) {
        uint64_t blocks, bytes;
        cv__pairs_spilled(live_map, &blocks, &bytes);
        c->spilled += blocks;
        c->spill_bytes += bytes;
    }
    cv__pairs_destroy(live_map);
    if (c->over_fd >= 0)
        close(c->over_fd);
    c->over_fd = -1;
    c->over_rows = c->over_bytes = 0;
    c->over_used = 0;
    return rc;
}

static int write_meta(ctx_t *c, size_t ninputs)
{
    char when[64] = "";
    time_t now = time(NULL);
    struct tm tm;
    if (gmtime_r(&now, &tm))
        strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    struct {
        const char *key;
        int64_t v;
    } ints[] = {
        {"schema_version", RHEAP_SCHEMA_VERSION},
        {"recordings", (int64_t)ninputs},
        {"events", (int64_t)c->events},
        {"allocations", (int64_t)c->rows},
        {"never_freed", (int64_t)c->leaked},
        {"backtraces", (int64_t)cv__stacks_count(c->stacks)},
        {"unmatched_frees", (int64_t)c->unmatched_frees},
        {"reused_live", (int64_t)c->reused_live},
        {"null_allocations", (int64_t)c->null_allocs},
        {"lost_events", (int64_t)c->lost},
        {"truncated_files", (int64_t)c->truncated},
        {"live_events", (int64_t)c->live_events},
        {"compacted_files", (int64_t)c->compacted_files},
        {"compacted_before_ns", (int64_t)c->compacted_before},
        {"warnings", (int64_t)c->sh->warnings},
        {"overlapped_recordings", (int64_t)c->sh->overlapped},
    };
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
        if (cv__db_meta_int(c->db, ints[i].key, ints[i].v) != 0)
            return -1;
    char fmtv[32];
    snprintf(fmtv, sizeof fmtv, "%d.%d", RIP_FORMAT_MAJOR, RIP_FORMAT_MINOR);
    if (cv__db_meta_text(c->db, "rheap_version", RHEAP_VERSION_STRING) != 0 ||
        cv__db_meta_text(c->db, "reader_format_version", fmtv) != 0 ||
        cv__db_meta_text(c->db, "format_version", c->format_version) != 0 ||
        cv__db_meta_text(c->db, "time_unit", "ns") != 0 ||
        cv__db_meta_text(c->db, "converted_at", when) != 0)
        return -1;
    return 0;
}

/* The pid a recording directory's name gives (rip-<pid> or rip-<pid>-<n>, read by the format
 * library's one parser), 0 for another name. */
static uint32_t pid_of_name(const char *dir)
{
    size_t len = strlen(dir);
    while (len > 1 && dir[len - 1] == '/')
        len--;
    size_t b = len;
    while (b > 0 && dir[b - 1] != '/')
        b--;
    char name[64];
    uint32_t pid, n;
    if (len - b >= sizeof name)
        return 0;
    memcpy(name, dir + b, len - b);
    name[len - b] = 0;
    return rip_recording_name_parse(name, &pid, &n) == 0 ? pid : 0;
}

/* A recording in a directory others can write to (a shared RHEAP_DIR) may not be what it
 * seems: warns when the directory's name gives another pid than its process file, and when the
 * directory or one of its files belongs to another user than the one converting. */
static void check_origin(ctx_t *c, const char *in, rip_recording_t *rec, uint32_t pid)
{
    uint32_t named = pid_of_name(in);
    if (named && named != pid)
        warnf(c, rip_recording_process_path(rec), 0,
              "%s: offset 0: records process %u, but its directory is named for process %u "
              "(renamed, or placed there by someone else)",
              rip_recording_process_path(rec), pid, named);
    uid_t me = geteuid();
    struct stat sb;
    const char *odd = NULL;
    uid_t owner = me;
    size_t others = 0, n = rip_recording_thread_count(rec);
    for (size_t j = 0; j < n + 2; j++) {
        const char *path = j == 0   ? in
                           : j == 1 ? rip_recording_process_path(rec)
                                    : rip_recording_thread_path(rec, j - 2);
        if (stat(path, &sb) == 0 && sb.st_uid != me) {
            if (!odd) {
                odd = path;
                owner = sb.st_uid;
            }
            others++;
        }
    }
    if (odd)
        warnf(c, odd, NO_OFFSET,
              "%s: owned by user %u, not by the user converting (%u), like %zu of the "
              "recording's files: it may have been placed there by someone else",
              odd, (unsigned)owner, (unsigned)me, others);
}

/* A recording directory holds the tracer's files only: a database written into one (even with
 * --force) could replace its process file. 0, or -1 after an error. */
static int check_output_place(ctx_t *c)
{
    const char *out = c->o->output;
    const char *slash = strrchr(out, '/');
    char parent[4096];
    if (!slash)
        snprintf(parent, sizeof parent, ".");
    else
        snprintf(parent, sizeof parent, "%.*s", (int)(slash - out == 0 ? 1 : slash - out), out);
    struct stat ps, is;
    if (stat(parent, &ps) != 0)
        return 0; /* the database cannot be created there: db.c says so */
    for (size_t i = 0; i < c->nin; i++) {
        if (stat(c->in[i].dir, &is) == 0 && is.st_dev == ps.st_dev && is.st_ino == ps.st_ino) {
            errorf(c, RHEAP_CONVERT_E_REFUSED, out, NO_OFFSET,
                   "%s: inside the recording %s, which is an input; write the database "
                   "elsewhere",
                   out, c->in[i].dir);
            return -1;
        }
    }
    return 0;
}

/* Appends an input to c->in. 0, or -1 after an error. */
static int add_input(ctx_t *c, const char *dir)
{
    if (rheap_grow(&c->in, &c->capin, c->nin, sizeof *c->in, 8) != 0) {
        nomem(c, "");
        return -1;
    }
    memset(&c->in[c->nin], 0, sizeof c->in[c->nin]);
    if (!(c->in[c->nin].dir = strdup(dir))) {
        nomem(c, "");
        return -1;
    }
    c->nin++;
    return 0;
}

/* Checks input i before anything of it is converted, so a typo costs nothing, and adds its
 * thread files' sizes for progress. in[i].skip is set for a recording
 * whose process file holds no complete block. 0, or -1 after an error. */
static int check_input(ctx_t *c, size_t i)
{
    input_t *x = &c->in[i];
    x->skip = 0;
    const char *in = x->dir;
    rip_error_t e;
    struct stat sb;
    if (stat(in, &sb) != 0) {
        errorf(c, RHEAP_CONVERT_E_INPUT, in, NO_OFFSET, "%s: %s", in, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(sb.st_mode)) {
        errorf(c, RHEAP_CONVERT_E_INPUT, in, NO_OFFSET,
               "%s: not a directory; expected a recording directory (rip-<pid>)", in);
        return -1;
    }
    /* The same recording twice would double every row. Each input's directory is kept as it
     * was checked: a look at every earlier one cost a system call per input already checked,
     * for each input (two million on a tree of 2,000 recordings). */
    x->dev = sb.st_dev;
    x->ino = sb.st_ino;
    for (size_t j = 0; j < i; j++) {
        if (c->in[j].dev == sb.st_dev && c->in[j].ino == sb.st_ino) {
            errorf(c, RHEAP_CONVERT_E_REFUSED, in, NO_OFFSET, "%s: given twice (as %s)", in,
                   c->in[j].dir);
            return -1;
        }
    }
    if (rip_recording_open(in, &x->rec, &e) != RIP_OK) {
        rip_fail(c, &e);
        return -1;
    }
    /* Who the recording is: a process file without one complete block (the process was
     * killed as recording started) leaves nothing to convert; the same recording of the
     * same process twice (a copy, or a pid reused across runs) would merge two processes. */
    rip_reader_t *pr;
    rip_status_t ps = rip_reader_open(rip_recording_process_path(x->rec), &pr, &e);
    if (ps == RIP_E_TRUNCATED) {
        char buf[1024];
        warnf(c, e.path, e.offset, "%s; the recording is skipped (nothing of it was written)",
              rip_error_format(&e, buf, sizeof buf));
        x->skip = 1;
        rip_recording_close(x->rec);
        x->rec = NULL;
        return 0;
    }
    if (ps != RIP_OK) {
        rip_fail(c, &e);
        return -1;
    }
    x->pid = rip_reader_header(pr)->pid;
    x->recording = rip_reader_header(pr)->recording;
    rip_reader_close(pr);
    check_origin(c, in, x->rec, x->pid);
    for (size_t j = 0; j < i; j++) {
        if (!c->in[j].skip && c->in[j].pid == x->pid && c->in[j].recording == x->recording) {
            errorf(c, RHEAP_CONVERT_E_INPUT, in, NO_OFFSET,
                   "%s and %s are both recording %u of process %u (a copy, or a pid reused "
                   "by another run); convert them into separate databases",
                   c->in[j].dir, in, x->recording, x->pid);
            return -1;
        }
    }
    for (size_t j = 0; j < rip_recording_thread_count(x->rec); j++)
        c->bytes_total += file_size(rip_recording_thread_path(x->rec, j));
    /* Opened again when its turn comes: a tree of thousands of processes would otherwise hold
     * a directory open per recording, past the usual limit of 1,024 open files. */
    rip_recording_close(x->rec);
    x->rec = NULL;
    return 0;
}

static void no_input(ctx_t *c)
{
    errorf(c, RHEAP_CONVERT_E_INPUT, NULL, NO_OFFSET,
           "nothing to convert: no recording has a complete process file");
}

const char *rheap_convert_status_str(int status)
{
#define STATUS_CASE(name, code, text) \
    case code:                        \
        return text;
    switch (status) {
        RHEAP_CONVERT_STATUS_LIST(STATUS_CASE)
    }
#undef STATUS_CASE
    return "unknown status";
}

int rheap_convert_schema_version(void)
{
    return RHEAP_SCHEMA_VERSION;
}

/* Frees what one attempt of the conversion holds; the input list stays. */
static void release(ctx_t *c)
{
    cv__db_abort(c->db);
    c->db = NULL;
    cv__stacks_destroy(c->stacks);
    cv__summary_destroy(c->sum);
    cv__sym_destroy(c->sym);
    free(c->locs);
    for (size_t i = 0; i < c->npools; i++)
        free(c->pools[i].name);
    free(c->pools);
    c->pools = NULL;
    c->npools = c->cappools = 0;
    c->pools_full_said = 0;
    cv__u64map_free(&c->pool_ids);
    free(c->maps);
    c->maps = NULL;
    c->nmaps = c->capmaps = 0;
    free(c->rss);
    c->rss = NULL;
    c->nrss = c->caprss = 0;
    for (size_t i = 0; i < c->nmods; i++) {
        free(c->mods[i].path);
        free(c->mods[i].build_id_hex);
    }
    free(c->mods);
    for (size_t i = 0; i < c->nin; i++) {
        rip_recording_close(c->in[i].rec);
        c->in[i].rec = NULL;
    }
}

/* ---- The workers (shared_t) ---- */

/* Waits until no other recording's rows are going to the database, then takes the turn and
 * the offsets of the recording's ids. 0, or -1 when the conversion ends meanwhile (an error,
 * said by whoever met it). */
static int wait_turn(ctx_t *c)
{
    shared_t *sh = c->sh;
    pthread_mutex_lock(&sh->in_mu);
    while (sh->turn_taken && !atomic_load(&sh->stop))
        pthread_cond_wait(&sh->turn_cv, &sh->in_mu);
    int ok = !sh->turn_taken && !atomic_load(&sh->stop);
    if (ok) {
        sh->turn_taken = 1;
        c->row_base = sh->row_base;
        c->thread_base = sh->thread_base;
        c->pool_base = sh->pool_base;
        c->has_turn = 1;
    }
    pthread_mutex_unlock(&sh->in_mu);
    if (!ok)
        return -1;
    if ((uint64_t)c->thread_base + c->next_thread > RHEAP_MAX_THREADS) {
        errorf(c, RHEAP_CONVERT_E_INPUT, c->dir, NO_OFFSET,
               "%s: more than %u thread files in the recordings, more than a database holds",
               c->dir, RHEAP_MAX_THREADS);
        return -1;
    }
    return 0;
}

/* The worker's recording is converted (or skipped, or failed): the turn, if it had it, is free
 * again. */
static void finish_input(ctx_t *c, int failed)
{
    shared_t *sh = c->sh;
    pthread_mutex_lock(&sh->in_mu);
    if (c->has_turn) {
        sh->row_base += c->next_id;
        sh->thread_base += c->next_thread;
        sh->pool_base += c->npools;
        sh->turn_taken = 0;
        c->has_turn = 0;
    }
    if (failed)
        atomic_store(&sh->stop, 1);
    pthread_cond_broadcast(&sh->turn_cv);
    pthread_mutex_unlock(&sh->in_mu);
}

/* The next input for worker c: one given but not yet taken, else (live) the next one the
 * caller hands out, checked. 1 with *i, *dir, *skip and *growing set; 0 when there are no more
 * (or the conversion ends); -1 after an error (said). */
static int take_input(ctx_t *c, size_t *i, const char **dir, int *skip, int *growing)
{
    shared_t *sh = c->sh;
    ctx_t *m = c->main;
    const rheap_convert_opts_t *o = c->o;
    int got = 0;
    pthread_mutex_lock(&sh->next_mu);
    pthread_mutex_lock(&sh->in_mu);
    if (!atomic_load(&sh->stop) && sh->next_in < m->nin)
        got = 1;
    pthread_mutex_unlock(&sh->in_mu);
    if (!got && m->live && !sh->inputs_over && !atomic_load(&sh->stop)) {
        /* Outside in_mu: the caller may wait here for a process to end, while the other
         * worker goes on and passes turns. */
        const char *next = o->next_input(o->live_user);
        if (!next) {
            sh->inputs_over = 1;
        } else {
            pthread_mutex_lock(&sh->in_mu);
            got = add_input(m, next) == 0 && check_input(m, m->nin - 1) == 0 ? 1 : -1;
            if (got == 1)
                sh->usable += !m->in[m->nin - 1].skip;
            pthread_mutex_unlock(&sh->in_mu);
        }
    }
    if (got == 1) {
        pthread_mutex_lock(&sh->in_mu);
        *i = sh->next_in++;
        *dir = m->in[*i].dir;
        *skip = m->in[*i].skip;
        pthread_mutex_unlock(&sh->in_mu);
        *growing = m->live && !*skip && o->growing(o->live_user, *dir, 0);
    }
    pthread_mutex_unlock(&sh->next_mu);
    return got;
}

/* A worker: takes recordings one at a time and converts each, until there are no more or the
 * conversion fails. Its counts are added to the conversion's when it ends (run_workers). */
static void *worker_main(void *arg)
{
    ctx_t *c = arg;
    shared_t *sh = c->sh;
    size_t i;
    const char *dir;
    int skip, growing, got;
    while ((got = take_input(c, &i, &dir, &skip, &growing)) == 1) {
        c->dir = dir;
        c->has_turn = 0;
        if (skip) {
            finish_input(c, 0);
            continue;
        }
        pthread_mutex_lock(&sh->in_mu);
        sh->overlapped += sh->busy > 0;
        sh->busy++;
        pthread_mutex_unlock(&sh->in_mu);
        rip_error_t e;
        rip_recording_t *rec = NULL;
        int rc = -1;
        if (rip_recording_open(dir, &rec, &e) != RIP_OK)
            rip_fail(c, &e);
        else
            rc = convert_recording(c, dir, &rec, growing);
        rip_recording_close(rec);
        if (rc == 0)
            c->format_from = i + 1;
        pthread_mutex_lock(&sh->in_mu);
        sh->busy--;
        pthread_mutex_unlock(&sh->in_mu);
        finish_input(c, rc != 0);
        if (rc != 0)
            break;
    }
    if (got < 0) {
        atomic_store(&sh->stop, 1);
        pthread_mutex_lock(&sh->in_mu);
        pthread_cond_broadcast(&sh->turn_cv);
        pthread_mutex_unlock(&sh->in_mu);
    }
    return NULL;
}

/* What a worker holds of its own. */
static void worker_release(ctx_t *w)
{
    cv__summary_destroy(w->sum);
    free(w->locs);
    for (size_t i = 0; i < w->npools; i++)
        free(w->pools[i].name);
    free(w->pools);
    cv__u64map_free(&w->pool_ids);
    free(w->maps);
    free(w->rss);
    for (size_t i = 0; i < w->nmods; i++) {
        free(w->mods[i].path);
        free(w->mods[i].build_id_hex);
    }
    free(w->mods);
    free(w->stage);
    free(w->side);
    free(w->over_buf);
}

/* Converts every input with n workers (1 or 2): this thread is the first, a thread of its own
 * the second. The live-block store's memory budget is the whole conversion's: each worker's
 * store gets its share. The workers' counts are added up into c. 0, or -1 after an error. */
static int run_workers(ctx_t *c, unsigned n)
{
    ctx_t w[2];
    memset(w, 0, sizeof w);
    int failed = 0;
    for (unsigned k = 0; k < n; k++) {
        w[k].o = c->o;
        w[k].sh = c->sh;
        w[k].main = c;
        w[k].db = c->db;
        w[k].sym = c->sym;
        w[k].stacks = c->stacks;
        w[k].budget = c->budget / n;
        w[k].pipe_min = c->pipe_min;
        w[k].live = c->live;
        w[k].t0 = c->t0;
        w[k].sum = cv__summary_create();
        w[k].locs = malloc(RIP_MAX_DEPTH * sizeof *w[k].locs);
        if (!w[k].sum || !w[k].locs)
            failed = 1;
    }
    pthread_t second;
    int started = 0;
    if (failed) {
        nomem(c, "");
    } else {
        started = n > 1 && pthread_create(&second, NULL, worker_main, &w[1]) == 0;
        /* Named, so that top -H and /proc/PID/task tell the workers' CPU apart. */
        if (started)
            pthread_setname_np(second, "rheap worker 2");
        worker_main(&w[0]);
        if (started)
            pthread_join(second, NULL);
    }
    /* The totals over every recording (stack_totals), written at the end from the first
     * worker's summary with the second's added. */
    if (!failed && n > 1 && cv__summary_totals_merge(w[0].sum, w[1].sum) != 0)
        nomem(c, "");
    if (!failed) {
        c->sum = w[0].sum;
        w[0].sum = NULL;
    }
    for (unsigned k = 0; k < n; k++) {
        ctx_t *x = &w[k];
        c->events += x->events;
        c->rows += x->rows;
        c->leaked += x->leaked;
        c->unmatched_frees += x->unmatched_frees;
        c->reused_live += x->reused_live;
        c->null_allocs += x->null_allocs;
        c->lost = add_lost(c->lost, x->lost);
        c->truncated += x->truncated;
        c->live_events += x->live_events;
        c->spilled += x->spilled;
        c->spill_bytes += x->spill_bytes;
        c->turn_rows += x->turn_rows;
        c->compacted_files += x->compacted_files;
        if (x->compacted_before > c->compacted_before)
            c->compacted_before = x->compacted_before;
        if (x->format_from > c->format_from) {
            c->format_from = x->format_from;
            memcpy(c->format_version, x->format_version, sizeof c->format_version);
        }
        c->restart |= x->restart;
        worker_release(x);
    }
    c->fatal = c->sh->fatal;
    atomic_store(&c->sh->events, c->events);
    c->events_told = c->events;
    return c->fatal || c->restart ? -1 : 0;
}

/* One attempt: every input of c->in (live: then those o->next_input hands out, as it hands them
 * out) into the database. 0, or -1 after an error or when a live conversion must start over
 * (c->restart). */
static int convert_all(ctx_t *c, int live, rheap_convert_result_t *result)
{
    const rheap_convert_opts_t *o = c->o;
    size_t usable = 0;
    c->live = live;
    for (size_t i = 0; i < c->nin; i++) {
        if (check_input(c, i) != 0)
            return -1;
        usable += !c->in[i].skip;
    }
    c->sh->usable = usable;
    if (!live && usable == 0) {
        no_input(c);
        return -1;
    }
    if (check_output_place(c) != 0)
        return -1;
    static cv__err_t err;
    int st = cv__db_create(o->output, o->force, live, &c->db, &err);
    if (st != RHEAP_CONVERT_OK) {
        report(c, &err);
        return -1;
    }
    c->sym = cv__sym_create(sym_warning, c);
    c->stacks = cv__stacks_create();
    if (!c->sym || !c->stacks) {
        nomem(c, "");
        return -1;
    }
    clock_gettime(CLOCK_MONOTONIC, &c->t0);

    if (run_workers(c, live ? 2 : 1) != 0)
        return -1;
    /* Every recording's summary rows are in: the tables laid into pages go into the file, where
     * the totals below and the summary callback read them. */
    st = cv__db_settle(c->db, &err);
    if (st != RHEAP_CONVERT_OK) {
        report(c, &err);
        return -1;
    }
    usable = c->sh->usable;
    if (!c->fatal && usable == 0)
        no_input(c);
    if (!c->fatal && write_meta(c, c->nin) != 0)
        db_fail(c, "meta");
    if (!c->fatal) {
        /* The sites of stacks no recording's summary has written yet. */
        struct sqlite3 *h = cv__db_enter(c->db);
        if (!h || cv__sites_write(cv__stacks_sites(c->stacks), h) != 0) {
            if (h)
                cv__db_failed(c->db);
            db_fail(c, "sites");
        }
        /* The distinct frames of every stack (the stacks' own lists went with their rows). */
        if (h && !c->fatal && cv__uframes_write(cv__stacks_uframes(c->stacks), h) != 0) {
            cv__db_failed(c->db);
            db_fail(c, "unique_frames");
        }
        /* The totals over every recording, from what the summaries added up as they went. */
        int tr = h && !c->fatal ? cv__summary_totals_write(c->sum, c->db, h) : 0;
        /* And the timeline of every recording together. */
        if (tr == 0 && h && !c->fatal)
            tr = cv__summary_treeline_write(c->sum, h);
        if (tr < 0) {
            cv__db_failed(c->db);
            db_fail(c, "stack_totals");
        } else if (tr > 0) {
            nomem(c, "");
        }
        if (h)
            cv__db_leave(c->db);
    }
    if (c->fatal)
        return -1; /* the error said what went wrong; the temporary database goes away */
    progress(c, NULL, 0, c->events, 1);
    cv__db_t *db = c->db;
    c->db = NULL;
    st = cv__db_finish_start(db, &err);
    if (st != RHEAP_CONVERT_OK) {
        report(c, &err);
        return -1;
    }
    /* While the allocations' pages go into the file: the summary, and the freeing of what
     * only the conversion needed (a build's stacks, symbols and sums take a tenth of a second
     * or more). */
    if (o->summary)
        o->summary(o->user, cv__db_reader(db));
    uint64_t nstacks = cv__stacks_count(c->stacks);
    cv__stacks_destroy(c->stacks);
    c->stacks = NULL;
    cv__sym_destroy(c->sym);
    c->sym = NULL;
    cv__summary_destroy(c->sum);
    c->sum = NULL;
    st = cv__db_finish_end(db, &err);
    if (st != RHEAP_CONVERT_OK) {
        report(c, &err);
        return -1;
    }
    if (result) {
        struct timespec t1;
        clock_gettime(CLOCK_MONOTONIC, &t1);
        result->events = c->events;
        result->live_events = c->live_events;
        result->allocations = c->rows;
        result->never_freed = c->leaked;
        result->stacks = nstacks;
        result->warnings = (uint64_t)c->sh->warnings;
        result->overlapped = c->sh->overlapped;
        result->spilled = c->spilled;
        result->spill_bytes = c->spill_bytes;
        result->turn_rows = c->turn_rows;
        result->seconds =
            (double)(t1.tv_sec - c->t0.tv_sec) + (double)(t1.tv_nsec - c->t0.tv_nsec) / 1e9;
    }
    return 0;
}

/* The budget of the live-block store: the option, else RHEAP_CONVERT_MEMORY, else the default
 * (spill.c); 0 for none. -1 when the variable is not a size (said). */
static int budget_of(ctx_t *c, uint64_t *budget)
{
    uint64_t b = c->o->memory;
    const char *env = getenv("RHEAP_CONVERT_MEMORY");
    if (!b && env && *env && rheap_convert_parse_memory(env, &b) != 0) {
        errorf(c, RHEAP_CONVERT_E_REFUSED, NULL, NO_OFFSET,
               "RHEAP_CONVERT_MEMORY=%s: expected a size (a number of bytes with K, M, G or T) "
               "or none", env);
        return -1;
    }
    if (!b)
        b = cv__spill_default_budget();
    *budget = b == RHEAP_CONVERT_MEMORY_NONE ? 0 : b;
    return 0;
}

/* RHEAP_CONVERT_READER: `0`, every recording on one thread; `1`, every finished one with a
 * reading thread, however small (the tests compare the two); unset or `auto`, those of
 * PIPE_MIN_BYTES of thread files or more. 0, or -1 (said). */
static int reader_of(ctx_t *c, uint64_t *pipe_min)
{
    const char *env = getenv("RHEAP_CONVERT_READER");
    if (!env || !*env || !strcmp(env, "auto"))
        *pipe_min = PIPE_MIN_BYTES;
    else if (!strcmp(env, "0"))
        *pipe_min = UINT64_MAX;
    else if (!strcmp(env, "1"))
        *pipe_min = 0;
    else {
        errorf(c, RHEAP_CONVERT_E_REFUSED, NULL, NO_OFFSET,
               "RHEAP_CONVERT_READER=%s: expected 0 (one thread), 1 (a reading thread for every "
               "recording) or auto", env);
        return -1;
    }
    return 0;
}

static int shared_init(shared_t *sh)
{
    memset(sh, 0, sizeof *sh);
    pthread_mutexattr_t rec;
    /* db_mu is taken again by db_fail, inside the sections that write a recording's end. */
    if (pthread_mutexattr_init(&rec) != 0)
        return -1;
    pthread_mutexattr_settype(&rec, PTHREAD_MUTEX_RECURSIVE);
    int rc = pthread_mutex_init(&sh->db_mu, &rec);
    pthread_mutexattr_destroy(&rec);
    if (rc != 0)
        return -1;
    pthread_mutex_init(&sh->sym_mu, NULL);
    pthread_mutex_init(&sh->diag_mu, NULL);
    pthread_mutex_init(&sh->in_mu, NULL);
    pthread_mutex_init(&sh->next_mu, NULL);
    pthread_cond_init(&sh->turn_cv, NULL);
    return 0;
}

static void shared_destroy(shared_t *sh)
{
    pthread_mutex_destroy(&sh->db_mu);
    pthread_mutex_destroy(&sh->sym_mu);
    pthread_mutex_destroy(&sh->diag_mu);
    pthread_mutex_destroy(&sh->in_mu);
    pthread_mutex_destroy(&sh->next_mu);
    pthread_cond_destroy(&sh->turn_cv);
}

rheap_convert_status_t rheap_convert(const rheap_convert_opts_t *o, rheap_convert_result_t *result)
{
    ctx_t c = {0};
    shared_t sh;
    if (shared_init(&sh) != 0) {
        if (o->diag) {
            static cv__err_t e;
            cv__fail(&e, RHEAP_CONVERT_E_OUTPUT, NULL, NO_OFFSET, "out of memory");
            cv__err_report(&e, o->diag, o->user);
        }
        return RHEAP_CONVERT_E_OUTPUT;
    }
    c.o = o;
    c.sh = &sh;
    uint64_t budget = 0, pipe_min = 0;
    if (budget_of(&c, &budget) != 0 || reader_of(&c, &pipe_min) != 0)
        return (rheap_convert_status_t)c.fatal;
    c.budget = budget;
    c.pipe_min = pipe_min;
    int live = o->next_input != NULL;
    for (size_t i = 0; !live && i < o->ninputs; i++)
        if (add_input(&c, o->inputs[i]) != 0)
            break;
    if (!c.fatal && convert_all(&c, live, result) != 0 && c.restart) {
        /* A thread file found late held events older than some the live merge had applied:
         * start over once every recording is complete, in the order they were handed out.
         * Nothing was said yet, so the caller sees one conversion. */
        release(&c);
        shared_destroy(&sh);
        shared_init(&sh);
        ctx_t again = {0};
        again.o = o;
        again.sh = &sh;
        again.in = c.in;
        again.nin = c.nin;
        again.capin = c.capin;
        c = again;
        c.budget = budget;
        c.pipe_min = pipe_min;
        for (const char *next; !c.fatal && (next = o->next_input(o->live_user));)
            add_input(&c, next);
        for (size_t i = 0; i < c.nin; i++)
            while (o->growing(o->live_user, c.in[i].dir, 1))
                ;
        if (!c.fatal)
            convert_all(&c, 0, result);
    }
    release(&c);
    for (size_t i = 0; i < c.nin; i++)
        free(c.in[i].dir);
    free(c.in);
    int warnings = sh.warnings;
    shared_destroy(&sh);
    if (c.fatal)
        return (rheap_convert_status_t)c.fatal;
    return warnings ? RHEAP_CONVERT_WARNINGS : RHEAP_CONVERT_OK;
}
