/*
 * heap.c: the live heap of every process recording under some directories, kept up to date as
 * the recordings are written, for `rheap serve` and `rheap snapshot`.
 *
 * Each thread file is followed with the format reader's follow mode (rip_reader_follow): a scan
 * reads only the records committed since the last one, so the cost of keeping a process's heap
 * is the cost of its new events, never of its whole recording. Per process, the collector keeps
 * the blocks live now (address, time, size, stack) and, per distinct stack, what was allocated
 * and what is live; it writes no database. Stacks are kept as module offsets and symbolized
 * only when a profile is asked for (rheap_symbols_t, the conversion's symbolizer).
 *
 * Threads write their files independently, so one scan can read a free from one thread before
 * the allocation, in another thread, of the block it ends, or an allocation before the free of
 * the previous block at that address. The time stamps decide (on_free, on_alloc): an address
 * keeps only its newest block; every free raises the address's tombstone, the latest free time
 * read there, and an allocation older than it is dead. Tombstones go once every thread has
 * written past them (prune_tombs). ../docs/COLLECTOR.md tells the rules in full.
 *
 * Profile mode (FORMAT.md section 3a): each sampled block stands for 1/p blocks and size/p
 * bytes (rheap_profile_weight); frees of unsampled addresses find no block and are dropped. The
 * totals records give the exact number of calls and bytes allocated, but only at each flush of
 * a thread's buffer, which a sampled recording fills slowly: the counts are a thread's last
 * totals plus the estimates of the samples read after it.
 */
#define _GNU_SOURCE /* strndup, memmem */
#include <dirent.h>
#include <inttypes.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <rip.h>

#include "rheap_analysis.h"

#include "collector.h"

/* A block live now. */
typedef struct {
    uint64_t addr;             /* 0: empty slot */
    uint64_t t;
    /* 56 bits: no live block is 64 PiB. The call goes into a checkpoint with the block; in the
     * size's top byte, a block stays 32 bytes. */
    uint64_t size : 56;
    uint64_t call : 8;         /* rip_call_t (every code is below 256) */
    uint32_t stack;            /* index into the process's stacks + 1; 0: no backtrace */
    uint32_t thread;           /* index of the thread file it was read from */
} block_t;

/* Open addressing by address, linear probing, deletion by backward shift. */
typedef struct {
    block_t *slots;
    size_t mask, used;
} blockmap_t;

typedef struct {
    uint64_t start, end;
    int module;
    uint64_t bias;
} seg_t;

typedef struct {
    char *name;                /* t*.rip */
    rip_reader_t *r;           /* NULL until its first block is written */
    int done;                  /* read to its end */
    uint64_t last_t;           /* the latest event read */
    uint64_t floor;            /* no event of the file is older: see prune_tombs */
    int caught_up;             /* the last read took every record committed (staged file) */
    uint64_t caught_up_at;     /* when, in the recording's time */
    uint32_t *ids;             /* the file's stack ids -> stack index + 1 */
    size_t nids;
    seg_t *segs;
    size_t nsegs, capsegs;
    int sorted;
    uint64_t counted_allocs, counted_bytes, counted_frees; /* the last totals record */
    double est_allocs, est_bytes; /* profile mode: the sampled allocations read after it */
    /* From the header, once read (have_header): the file's serial, and for a segment its place
     * in its thread and the serial of the thread's first file (FORMAT.md section 3a). */
    int have_header;
    uint32_t tid, serial, segment, first_serial;
    int closed;                /* a later segment of its thread exists: it is complete */
    int checkpoint;            /* a checkpoint file (FORMAT.md section 3b) */
    int skipped;               /* replaced by the checkpoint: not read */
    uint64_t disk;             /* its size once read to its end */
} thread_t;

struct rc__proc {
    char *dir;
    uint32_t pid, recording;
    char *exe, *cmdline;
    uint64_t start_wall_ns, interval;
    uint64_t start_ns;         /* CLOCK_MONOTONIC when recording began: event times count from it */
    uint64_t unseen;           /* thread files found from now on hold no event before this */
    int have_process;          /* the process file's process record was read */
    off_t process_size;        /* the process file's size when last read */
    rc_state_t state;
    int dropped;               /* no longer followed: its state passed the host's budget */
    double ended_at;           /* monotonic seconds */
    thread_t *threads;
    size_t nthreads, capthreads;
    rc__stack_t *stacks;
    size_t nstacks, capstacks;
    uint32_t *stack_slots;     /* hash of frames -> stack index + 1 */
    size_t stack_mask;
    blockmap_t live, tombs;    /* tombs: size unused, t the free's time */
    double live_bytes, live_blocks, alloc_bytes, alloc_blocks, high_bytes;
    double rate, rate_t0, rate_bytes0;
    uint64_t frames_bytes;
    /* Checkpoints (compaction): the newest one's number, the time before which events were
     * compacted, the serials of the files it replaces (sorted). */
    uint64_t ckpt_num, ckpt_t;
    rip_range_t *skip;
    size_t nskip;
    int listed;                /* the directory was listed once: later checkpoints are ours */
    int no_compact;            /* a compaction failed: said once, not tried again */
    uint64_t compactions;
    uint64_t compact_waits;    /* compactions put off while a conversion read the recording */
};

struct rc_host {
    char **dirs;
    size_t ndirs;
    /* Recordings not followed: their process had ended when they were found (a directory of
     * old recordings is not read again and again), or they were forgotten after it ended. */
    char **ignored;
    unsigned char *ignored_seen; /* found again by the current scan's listing */
    size_t nignored, capignored, capseen;
    rc__proc_t **procs;
    size_t nprocs, capprocs;
    rheap_symbols_t *sym;
    uint64_t budget;           /* most bytes of state per process; 0: no limit */
    uint64_t disk_budget;      /* closed segments a process may keep before compaction; 0: none */
    void *ckpt_mem;            /* the checkpoint writer's memory, made at the first compaction */
    /* The build ids of the symbolizer's modules, by id, for the checkpoints' module lists. */
    struct {
        uint8_t *id;
        size_t len;
    } *bids;
    size_t nbids, capbids;
    rc_log_t log;
    char hostname[256];
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- The block map ---- */

static size_t slot_of(uint64_t addr, size_t mask)
{
    return (size_t)((addr * 0x9E3779B97F4A7C15ull) >> 20) & mask;
}

static block_t *bm_find(const blockmap_t *m, uint64_t addr)
{
    if (!m->slots)
        return NULL;
    for (size_t i = slot_of(addr, m->mask);; i = (i + 1) & m->mask) {
        if (m->slots[i].addr == addr)
            return &m->slots[i];
        if (!m->slots[i].addr)
            return NULL;
    }
}

static int bm_grow(blockmap_t *m)
{
    size_t n = m->slots ? (m->mask + 1) * 2 : 1024;
    block_t *s = calloc(n, sizeof *s);
    if (!s)
        return -1;
    for (size_t i = 0; m->slots && i <= m->mask; i++) {
        if (!m->slots[i].addr)
            continue;
        size_t j = slot_of(m->slots[i].addr, n - 1);
        while (s[j].addr)
            j = (j + 1) & (n - 1);
        s[j] = m->slots[i];
    }
    free(m->slots);
    m->slots = s;
    m->mask = n - 1;
    return 0;
}

/* Puts b in (its address must not be there). 0 or -1. */
static int bm_put(blockmap_t *m, const block_t *b)
{
    if (!m->slots || (m->used + 1) * 4 > (m->mask + 1) * 3) {
        if (bm_grow(m) != 0)
            return -1;
    }
    size_t i = slot_of(b->addr, m->mask);
    while (m->slots[i].addr)
        i = (i + 1) & m->mask;
    m->slots[i] = *b;
    m->used++;
    return 0;
}

static void bm_del(blockmap_t *m, block_t *b)
{
    size_t i = (size_t)(b - m->slots);
    m->slots[i].addr = 0;
    m->used--;
    /* Backward shift: move up every later entry of the run that the hole cuts off from its
     * home slot. */
    for (size_t j = (i + 1) & m->mask; m->slots[j].addr; j = (j + 1) & m->mask) {
        size_t home = slot_of(m->slots[j].addr, m->mask);
        int between = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (between)
            continue;
        m->slots[i] = m->slots[j];
        m->slots[j].addr = 0;
        i = j;
    }
}

/* ---- Stacks ---- */

static uint64_t frames_hash(const rc__frame_t *f, uint32_t n)
{
    uint64_t h = 1469598103934665603ull ^ n;
    for (uint32_t i = 0; i < n; i++) {
        h = (h ^ (uint64_t)(uint32_t)f[i].module) * 1099511628211ull;
        h = (h ^ f[i].offset) * 1099511628211ull;
    }
    return h ? h : 1;
}

static int stacks_rehash(rc__proc_t *p, size_t n)
{
    uint32_t *s = calloc(n, sizeof *s);
    if (!s)
        return -1;
    for (size_t k = 0; k < p->nstacks; k++) {
        size_t j = (size_t)p->stacks[k].hash & (n - 1);
        while (s[j])
            j = (j + 1) & (n - 1);
        s[j] = (uint32_t)k + 1;
    }
    free(p->stack_slots);
    p->stack_slots = s;
    p->stack_mask = n - 1;
    return 0;
}

/* The index + 1 of the stack of these frames, made when new; 0 when out of memory. */
static uint32_t stack_intern(rc__proc_t *p, const rc__frame_t *f, uint32_t n)
{
    uint64_t h = frames_hash(f, n);
    if (p->stack_slots) {
        for (size_t j = (size_t)h & p->stack_mask; p->stack_slots[j]; j = (j + 1) & p->stack_mask) {
            const rc__stack_t *s = &p->stacks[p->stack_slots[j] - 1];
            if (s->hash == h && s->nframes == n && !memcmp(s->frames, f, n * sizeof *f))
                return p->stack_slots[j];
        }
    }
    if ((p->nstacks + 1) * 2 > (p->stack_slots ? p->stack_mask + 1 : 0) &&
        stacks_rehash(p, p->stack_slots ? (p->stack_mask + 1) * 2 : 256) != 0)
        return 0;
    if (rheap_grow(&p->stacks, &p->capstacks, p->nstacks, sizeof *p->stacks, 64) != 0)
        return 0;
    rc__stack_t *s = &p->stacks[p->nstacks];
    memset(s, 0, sizeof *s);
    s->frames = malloc((n ? n : 1) * sizeof *f);
    if (!s->frames)
        return 0;
    memcpy(s->frames, f, n * sizeof *f);
    s->nframes = n;
    s->hash = h;
    p->frames_bytes += n * sizeof *f;
    size_t j = (size_t)h & p->stack_mask;
    while (p->stack_slots[j])
        j = (j + 1) & p->stack_mask;
    p->stack_slots[j] = (uint32_t)++p->nstacks;
    return (uint32_t)p->nstacks;
}

static int seg_cmp(const void *a, const void *b)
{
    const seg_t *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

static const seg_t *find_seg(thread_t *t, uint64_t ip)
{
    if (!t->sorted) {
        if (t->nsegs > 1)
            qsort(t->segs, t->nsegs, sizeof *t->segs, seg_cmp);
        t->sorted = 1;
    }
    size_t lo = 0, hi = t->nsegs;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (t->segs[mid].start <= ip)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0 || ip >= t->segs[lo - 1].end)
        return NULL;
    return &t->segs[lo - 1];
}

static int define_stack(rc_host_t *h, rc__proc_t *p, thread_t *t, const rip_record_t *rec)
{
    uint32_t n = rec->u.stack.depth;
    if (n > RIP_MAX_DEPTH)
        n = RIP_MAX_DEPTH;
    rc__frame_t f[RIP_MAX_DEPTH];
    (void)h;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t ip = rec->u.stack.ips[i];
        const seg_t *g = find_seg(t, ip);
        f[i].module = g ? g->module : -1;
        f[i].offset = g ? ip - g->bias : ip;
    }
    uint32_t idx = stack_intern(p, f, n);
    if (!idx)
        return -1;
    uint64_t id = rec->u.stack.id;
    if (id > (uint64_t)64 << 20)
        return 0; /* a hostile id: its allocations go without a stack */
    if (id >= t->nids) {
        size_t nn = t->nids ? t->nids : 64;
        while (nn <= id)
            nn *= 2;
        uint32_t *ids = realloc(t->ids, nn * sizeof *ids);
        if (!ids)
            return -1;
        memset(ids + t->nids, 0, (nn - t->nids) * sizeof *ids);
        t->ids = ids;
        t->nids = nn;
    }
    t->ids[id] = idx;
    return 0;
}

/* ---- Events ---- */

static void block_add(rc__proc_t *p, const block_t *b, double sign)
{
    double w = rheap_profile_weight(b->size, p->interval);
    p->live_blocks += sign * w;
    p->live_bytes += sign * w * (double)b->size;
    if (b->stack) {
        rc__vals_t *v = &p->stacks[b->stack - 1].v;
        v->live_blocks += sign * w;
        v->live_bytes += sign * w * (double)b->size;
    }
}

/* A free of addr at time t read from thread file `thread`. The time stamps order it against the
 * blocks at addr (FORMAT.md: a free is stamped before the real free, an allocation after the
 * real allocation; at equal times, a free of another thread comes first, as the converter's
 * merge orders them, and one of the same thread in its file's order). */
static void on_free(rc__proc_t *p, uint64_t addr, uint64_t t, uint32_t thread)
{
    /* The latest free of the address: an allocation there older than it is dead, whichever
     * free ended it (several can be pending when threads are read unevenly). */
    block_t *tb = bm_find(&p->tombs, addr);
    if (tb) {
        if (t > tb->t)
            tb->t = t;
    } else {
        block_t nt = {.addr = addr, .t = t};
        bm_put(&p->tombs, &nt); /* out of memory: only less ordering knowledge */
    }
    block_t *b = bm_find(&p->live, addr);
    if (b && (b->t < t || (b->t == t && b->thread == thread))) {
        block_add(p, b, -1);
        bm_del(&p->live, b);
    }
    /* Else the free of an older block, replaced already, or of a block in a file not read this
     * far (or never sampled): the tombstone answers for it. */
}

static int on_alloc(rc__proc_t *p, thread_t *th, uint32_t thread, const rip_record_t *rec)
{
    if (rec->u.alloc.old_addr)
        on_free(p, rec->u.alloc.old_addr, rec->u.alloc.old_t, thread);
    block_t b = {.addr = rec->u.alloc.addr, .t = rec->t, .size = rec->u.alloc.size,
                 .call = (uint8_t)rec->u.alloc.call, .thread = thread};
    uint64_t id = rec->u.alloc.stack;
    if (id && id < th->nids)
        b.stack = th->ids[id];
    double w = rheap_profile_weight(b.size, p->interval);
    if (!p->interval) {
        p->alloc_blocks += 1;
        p->alloc_bytes += (double)b.size;
    } else {
        th->est_allocs += w;
        th->est_bytes += w * (double)b.size;
    }
    if (b.stack) {
        rc__vals_t *v = &p->stacks[b.stack - 1].v;
        v->alloc_blocks += w;
        v->alloc_bytes += w * (double)b.size;
    }
    if (!b.addr)
        return 0;
    block_t *tb = bm_find(&p->tombs, b.addr);
    if (tb && b.t < tb->t)
        return 0; /* freed already: a later free of its address was read */
    block_t *old = bm_find(&p->live, b.addr);
    if (old) {
        if (old->t > b.t)
            return 0; /* an older block, replaced before we read it */
        /* Its free is in a file not read this far (or was not recorded). */
        block_add(p, old, -1);
        bm_del(&p->live, old);
    }
    if (bm_put(&p->live, &b) != 0)
        return -1;
    block_add(p, &b, 1);
    return 0;
}

/* Now, in the recording's time (ns since it began). */
static uint64_t rel_now(const rc__proc_t *p)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    return now > p->start_ns ? now - p->start_ns : 0;
}

/* How far a stamp may lie behind the moment its record can be seen: the converter's margin
 * (conversion.c, UNSEEN_MARGIN_NS), 50 ms and a millionth of the time recorded, for clock drift
 * and the time between a stamp and its commit or its file's creation. */
static uint64_t margin(uint64_t rel)
{
    return 50000000u + rel / 1000;
}

/* One warning for a thread file the collector stops reading: where and why. */
static void say_unread(const rc_host_t *h, const rip_error_t *e)
{
    char msg[1024];
    rc__log(&h->log, RC_LOG_WARNING, "%s; the collector reads no further in this file",
            rip_error_format(e, msg, sizeof msg));
}

/* Whether the current checkpoint replaces the file with this serial. */
static int skipped_serial(const rc__proc_t *p, uint32_t serial)
{
    return rip_ranges_have(p->skip, p->nskip, serial);
}

/* A file read to its end: what only reading needed goes (a week of segments keeps no table of
 * each), its size is kept for the disk budget. */
static void thread_finished(const rc__proc_t *p, thread_t *t)
{
    char path[PATH_MAX];
    struct stat sb;
    snprintf(path, sizeof path, "%s/%s", p->dir, t->name);
    t->disk = stat(path, &sb) == 0 ? (uint64_t)sb.st_blocks * 512 : 0;
    free(t->ids);
    free(t->segs);
    t->ids = NULL;
    t->segs = NULL;
    t->nids = t->nsegs = t->capsegs = 0;
}

/* Keeps the build id of module m, for the checkpoints' module lists. */
static int keep_build_id(rc_host_t *h, int m, const rip_record_t *rec)
{
    if ((size_t)m < h->nbids)
        return 0;
    if (rheap_grow(&h->bids, &h->capbids, (size_t)m + 1, sizeof *h->bids, 64) != 0)
        return -1;
    while (h->nbids <= (size_t)m) {
        h->bids[h->nbids].id = NULL;
        h->bids[h->nbids++].len = 0;
    }
    size_t n = rec->u.module.build_id.len;
    if (n && (h->bids[m].id = malloc(n))) {
        memcpy(h->bids[m].id, rec->u.module.build_id.ptr, n);
        h->bids[m].len = n;
    }
    return 0;
}

/* Reads what thread file t holds now. 0, or -1 when out of memory. */
static int read_thread(rc_host_t *h, rc__proc_t *p, thread_t *t, int final)
{
    if (t->done)
        return 0;
    if (!t->r) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", p->dir, t->name);
        rip_error_t e;
        if (rip_reader_open(path, &t->r, &e) != RIP_OK) {
            t->r = NULL;
            /* Nothing written yet: looked at again next time unless the process has ended.
             * Anything else is no thread file this collector can read: said once. */
            if (e.code != RIP_E_TRUNCATED)
                say_unread(h, &e);
            if (final || e.code != RIP_E_TRUNCATED)
                t->done = 1;
            return 0;
        }
        rip_reader_detach(t->r);
        const rip_header_t *hd = rip_reader_header(t->r);
        if (hd->is_process) {
            t->done = 1;
            return 0;
        }
        t->have_header = 1;
        t->tid = hd->tid;
        t->serial = hd->serial;
        t->segment = hd->segment;
        t->first_serial = hd->first_serial;
        if (!t->checkpoint && skipped_serial(p, t->serial)) {
            /* A file the checkpoint replaces, left by a crash before its deletion. */
            t->done = t->skipped = 1;
            rip_reader_close(t->r);
            t->r = NULL;
            return 0;
        }
    }
    rip_reader_follow(t->r, !final);
    rip_record_t rec;
    rip_error_t e;
    for (;;) {
        rip_status_t st = rip_reader_next(t->r, &rec, &e);
        if (st == RIP_AGAIN) {
            /* Every committed record was read: the thread's next one is stamped after about
             * now (a record is committed right after its stamp). */
            t->caught_up = rip_reader_staged(t->r);
            t->caught_up_at = rel_now(p);
            return 0;
        }
        if (st != RIP_OK) {
            /* The end, or a cut or damaged file: what was read stands. A file cut inside a
             * block is what a process killed while writing leaves; damage is said. */
            if (st != RIP_END && st != RIP_E_TRUNCATED)
                say_unread(h, &e);
            t->done = 1;
            rip_reader_close(t->r);
            t->r = NULL;
            thread_finished(p, t);
            return 0;
        }
        switch (rec.kind) {
        case RIP_REC_ALLOC:
            if (rec.t > t->last_t)
                t->last_t = rec.t;
            if (on_alloc(p, t, (uint32_t)(t - p->threads), &rec) != 0)
                return -1;
            break;
        case RIP_REC_FREE:
            if (rec.t > t->last_t)
                t->last_t = rec.t;
            on_free(p, rec.u.free.addr, rec.t, (uint32_t)(t - p->threads));
            break;
        case RIP_REC_STACK:
            if (define_stack(h, p, t, &rec) != 0)
                return -1;
            break;
        case RIP_REC_MODULES:
            t->nsegs = 0;
            t->sorted = 0;
            break;
        case RIP_REC_MODULE: {
            int m = rheap_symbols_module(h->sym, rec.u.module.path.ptr, rec.u.module.path.len,
                                         (const uint8_t *)rec.u.module.build_id.ptr,
                                         rec.u.module.build_id.len);
            if (m < 0 || keep_build_id(h, m, &rec) != 0)
                return -1;
            for (uint32_t i = 0; i < rec.u.module.nseg; i++) {
                if (rheap_grow(&t->segs, &t->capsegs, t->nsegs, sizeof *t->segs, 32) != 0)
                    return -1;
                seg_t *g = &t->segs[t->nsegs++];
                g->start = rec.u.module.segs[i].start;
                g->end = g->start + rec.u.module.segs[i].size;
                g->module = m;
                g->bias = rec.u.module.bias;
            }
            t->sorted = 0;
            break;
        }
        case RIP_REC_CHECKPOINT:
            if (t->checkpoint && !p->nskip && rec.u.checkpoint.nranges) {
                p->skip = malloc(rec.u.checkpoint.nranges * sizeof *p->skip);
                if (!p->skip)
                    return -1;
                memcpy(p->skip, rec.u.checkpoint.ranges,
                       rec.u.checkpoint.nranges * sizeof *p->skip);
                p->nskip = rec.u.checkpoint.nranges;
                p->ckpt_t = rec.t;
            }
            break;
        case RIP_REC_TOTALS:
            t->counted_allocs = rec.u.totals.allocs;
            t->counted_bytes = rec.u.totals.bytes;
            t->counted_frees = rec.u.totals.frees;
            t->est_allocs = t->est_bytes = 0;
            if (rec.t > t->last_t)
                t->last_t = rec.t;
            break;
        default:
            break;
        }
    }
}

static char *join_args(const rip_record_t *rec)
{
    size_t len = 1;
    for (uint32_t i = 0; i < rec->u.process.argc; i++)
        len += rec->u.process.argv[i].len + 1;
    char *s = malloc(len), *o = s;
    if (!s)
        return NULL;
    for (uint32_t i = 0; i < rec->u.process.argc; i++) {
        if (i)
            *o++ = ' ';
        memcpy(o, rec->u.process.argv[i].ptr, rec->u.process.argv[i].len);
        o += rec->u.process.argv[i].len;
    }
    *o = 0;
    return s;
}

/* Reads the process file again when it has changed: the process record, the sampling interval
 * and whether recording was turned off. */
static void read_process(rc__proc_t *p)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/process.rip", p->dir);
    struct stat sb;
    if (stat(path, &sb) != 0 || sb.st_size == p->process_size)
        return;
    rip_reader_t *r;
    rip_error_t e;
    if (rip_reader_open(path, &r, &e) != RIP_OK)
        return;
    p->process_size = sb.st_size;
    const rip_header_t *hd = rip_reader_header(r);
    p->pid = hd->pid;
    p->recording = hd->recording;
    p->start_ns = hd->start_ns;
    rip_record_t rec;
    while (rip_reader_next(r, &rec, &e) == RIP_OK) {
        if (rec.kind == RIP_REC_PROCESS && !p->have_process) {
            free(p->exe);
            free(p->cmdline);
            p->exe = strndup(rec.u.process.exe.ptr, rec.u.process.exe.len);
            p->cmdline = join_args(&rec);
            p->start_wall_ns = rec.u.process.wall_ns;
            p->have_process = p->exe && p->cmdline;
        } else if (rec.kind == RIP_REC_SAMPLING) {
            p->interval = rec.u.sampling.interval;
        } else if (rec.kind == RIP_REC_OFF && p->state == RC_RECORDING) {
            p->state = RC_OFF;
        }
    }
    rip_reader_close(r);
}

/* Opens the thread files that appeared in the recording since the last look. The first look also
 * takes the newest checkpoint, written by an earlier collector (FORMAT.md section 3b): it is read
 * first, and the files it replaces are skipped; later ones are this collector's own. */
static int find_threads(rc__proc_t *p)
{
    DIR *d = opendir(p->dir);
    if (!d)
        return 0;
    struct dirent *de;
    int rc = 0;
    char newest[64] = "";
    while ((de = readdir(d))) {
        size_t len = strlen(de->d_name);
        uint64_t k;
        if (!p->listed && rip_checkpoint_name_parse(de->d_name, &k) == 0 && k > p->ckpt_num) {
            p->ckpt_num = k;
            snprintf(newest, sizeof newest, "%s", de->d_name);
            continue;
        }
        if (de->d_name[0] != 't' || len < 5 || strcmp(de->d_name + len - 4, ".rip"))
            continue;
        size_t i = 0;
        while (i < p->nthreads && strcmp(p->threads[i].name, de->d_name))
            i++;
        if (i < p->nthreads)
            continue;
        if (rheap_grow(&p->threads, &p->capthreads, p->nthreads, sizeof *p->threads, 8) != 0) {
            rc = -1;
            break;
        }
        thread_t *t = &p->threads[p->nthreads];
        memset(t, 0, sizeof *t);
        t->floor = p->unseen;
        if (!(t->name = strdup(de->d_name))) {
            rc = -1;
            break;
        }
        p->nthreads++;
    }
    closedir(d);
    if (rc == 0 && newest[0]) {
        if (rheap_grow(&p->threads, &p->capthreads, p->nthreads, sizeof *p->threads, 8) != 0)
            return -1;
        thread_t *t = &p->threads[p->nthreads];
        memset(t, 0, sizeof *t);
        t->checkpoint = 1;
        if (!(t->name = strdup(newest)))
            return -1;
        p->nthreads++;
    }
    p->listed = 1;
    return rc;
}

static void thread_free(thread_t *t)
{
    free(t->name);
    rip_reader_close(t->r);
    free(t->ids);
    free(t->segs);
}

static void proc_free(rc__proc_t *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->nthreads; i++)
        thread_free(&p->threads[i]);
    free(p->threads);
    for (size_t i = 0; i < p->nstacks; i++)
        free(p->stacks[i].frames);
    free(p->stacks);
    free(p->stack_slots);
    free(p->live.slots);
    free(p->tombs.slots);
    free(p->skip);
    free(p->dir);
    free(p->exe);
    free(p->cmdline);
    free(p);
}

/* Tombstones older than any event still to be read can match no allocation: they go. An event
 * still to be read is no older than its file's floor (when it was found), its latest event read,
 * or, when every committed record was read, the moment of that read less the margin; and one in
 * a file not found yet is no older than p->unseen. */
static void prune_tombs(rc__proc_t *p)
{
    if (!p->tombs.used)
        return;
    uint64_t w = p->unseen;
    for (size_t i = 0; i < p->nthreads; i++) {
        const thread_t *t = &p->threads[i];
        if (t->done)
            continue;
        uint64_t bound = t->floor > t->last_t ? t->floor : t->last_t;
        if (t->caught_up && t->caught_up_at > margin(t->caught_up_at) &&
            t->caught_up_at - margin(t->caught_up_at) > bound)
            bound = t->caught_up_at - margin(t->caught_up_at);
        if (bound < w)
            w = bound;
    }
    if (p->state == RC_ENDED)
        w = UINT64_MAX;
    for (size_t i = 0; p->tombs.used && i <= p->tombs.mask;) {
        block_t *b = &p->tombs.slots[i];
        if (b->addr && b->t < w)
            bm_del(&p->tombs, b); /* the shift may move a later entry here: look again */
        else
            i++;
    }
}

/* Whether thread file q's thread is gone, in profile mode: another file of its tid that is not
 * one of its segments came after it (the tid went to a new thread), or the kernel lists no such
 * thread in the process. Its file is then written no more (an ended thread's last events, from
 * libc's cleanup, come before the kernel lets it go), and can be read to its end and
 * compacted like a closed segment. */
static int thread_gone(const rc__proc_t *p, const thread_t *q, uint32_t first)
{
    if (!p->interval || !q->tid)
        return 0;
    for (size_t i = 0; i < p->nthreads; i++) {
        const thread_t *o = &p->threads[i];
        if (o->have_header && !o->checkpoint && o->tid == q->tid && o->serial > q->serial &&
            (o->segment >= 2 ? o->first_serial : o->serial) != first)
            return 1;
    }
    char path[64];
    struct stat sb;
    snprintf(path, sizeof path, "/proc/%" PRIu32 "/task/%" PRIu32, p->pid, q->tid);
    return stat(path, &sb) != 0 && errno == ENOENT;
}

/* Marks the files a later segment of their thread follows (FORMAT.md section 3a: the writer
 * completed them before it made the next), and those of threads that are gone. Returns whether
 * one was newly marked. */
static int mark_closed(rc__proc_t *p)
{
    int marked = 0;
    for (size_t j = 0; j < p->nthreads; j++) {
        thread_t *q = &p->threads[j];
        if (!q->closed && q->have_header && !q->checkpoint && !q->skipped &&
            thread_gone(p, q, q->segment >= 2 ? q->first_serial : q->serial)) {
            q->closed = 1;
            marked = 1;
        }
    }
    for (size_t i = 0; i < p->nthreads; i++) {
        const thread_t *x = &p->threads[i];
        if (!x->have_header || x->segment < 2)
            continue;
        for (size_t j = 0; j < p->nthreads; j++) {
            thread_t *q = &p->threads[j];
            if (q->closed || !q->have_header || q->checkpoint)
                continue;
            uint32_t first = q->segment >= 2 ? q->first_serial : q->serial;
            uint32_t seg = q->segment >= 2 ? q->segment : 1;
            if (first == x->first_serial && seg + 1 == x->segment) {
                q->closed = 1;
                marked = 1;
            }
        }
    }
    return marked;
}

/* Bytes of disk in closed segments read to their end (and files a checkpoint replaced that are
 * still there): what a compaction would give back. */
static uint64_t compact_due(const rc__proc_t *p)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < p->nthreads; i++) {
        const thread_t *t = &p->threads[i];
        if (t->done && !t->checkpoint && (t->closed || t->skipped))
            sum += t->disk;
    }
    return sum;
}

static int u32_cmp(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static int ckblock_cmp(const void *a, const void *b)
{
    const rc__ckpt_block_t *x = a, *y = b;
    return x->t < y->t ? -1 : x->t > y->t;
}

/* The pieces of a checkpoint being made, freed together. */
typedef struct {
    uint32_t *serials;         /* the files this compaction replaces */
    rip_range_t *ranges;       /* with those of the current checkpoint */
    rc__ckpt_block_t *blocks;
    uint32_t *stack_new;       /* process stack index -> checkpoint id, 0: unused */
    uint32_t *stack_old;       /* checkpoint id - 1 -> process stack index */
    int *mod_new;              /* symbolizer module id -> checkpoint module + 1, 0: unused */
    size_t nmod_new;
    rc__ckpt_mod_t *mods;
    uint64_t *ips;
    size_t *stack_at;
    uint32_t *remap;
} ckpt_parts_t;

static void parts_free(ckpt_parts_t *c)
{
    free(c->serials);
    free(c->ranges);
    free(c->blocks);
    free(c->stack_new);
    free(c->stack_old);
    free(c->mod_new);
    free(c->mods);
    free(c->ips);
    free(c->stack_at);
    free(c->remap);
}

/* Stops compacting p after a failure, with one warning. 0. */
static int compact_fail(const rc_host_t *h, rc__proc_t *p, const char *why)
{
    rc__log(&h->log, RC_LOG_WARNING,
            "%s: cannot compact the recording of process %" PRIu32 " (%s); its files are left "
            "as they are and no longer compacted",
            p->dir, p->pid, why);
    p->no_compact = 1;
    return 0;
}

/* Replaces the closed segments read to their end (and the current checkpoint) by a new
 * checkpoint of the blocks they hold that are live now (FORMAT.md section 3b), then deletes them.
 * The collector's own state does not change, but for the files it no longer follows. 0, or -1
 * when out of memory (a failure to write or delete is said and ends compaction of p). */
static int compact_now(rc_host_t *h, rc__proc_t *p)
{
    ckpt_parts_t c = {0};
    size_t n = p->nthreads, ns = p->nskip, nb = 0;
    /* in[i]: 1 when thread file i goes into the checkpoint. */
    unsigned char *in = calloc(n ? n : 1, 1);
    c.serials = malloc((n + 1) * sizeof *c.serials);
    c.ranges = malloc((p->nskip + n + 1) * sizeof *c.ranges);
    c.remap = malloc((n ? n : 1) * sizeof *c.remap);
    if (!in || !c.serials || !c.ranges || !c.remap) {
        free(in);
        parts_free(&c);
        return -1;
    }
    ns = 0;
    uint64_t allocs = 0, bytes = 0, frees = 0, until = p->ckpt_t;
    for (size_t i = 0; i < n; i++) {
        const thread_t *t = &p->threads[i];
        if (!t->done || !(t->checkpoint || t->closed || t->skipped))
            continue;
        in[i] = 1;
        allocs += t->counted_allocs;
        bytes += t->counted_bytes;
        frees += t->counted_frees;
        if (!t->checkpoint && !t->skipped)
            c.serials[ns++] = t->serial;
        if (!t->checkpoint && t->last_t > until)
            until = t->last_t;
    }
    if (ns > 1)
        qsort(c.serials, ns, sizeof *c.serials, u32_cmp);
    /* The current checkpoint's ranges and these serials, merged into ranges (adjacent ones
     * joined): a list as long as the files left between them, not as the files ever made. */
    size_t nr = 0, a = 0, b = 0;
    while (a < p->nskip || b < ns) {
        rip_range_t g;
        if (b >= ns || (a < p->nskip && p->skip[a].first < c.serials[b]))
            g = p->skip[a++];
        else
            g.first = g.last = c.serials[b++];
        if (nr && g.first <= c.ranges[nr - 1].last + 1) {
            if (g.last > c.ranges[nr - 1].last)
                c.ranges[nr - 1].last = g.last;
        } else {
            c.ranges[nr++] = g;
        }
    }
    /* The blocks still live that those files allocated, in time order. */
    c.blocks = malloc((p->live.used + 1) * sizeof *c.blocks);
    c.stack_new = calloc(p->nstacks + 1, sizeof *c.stack_new);
    c.stack_old = malloc((p->nstacks + 1) * sizeof *c.stack_old);
    if (!c.blocks || !c.stack_new || !c.stack_old) {
        free(in);
        parts_free(&c);
        return -1;
    }
    size_t nstk = 0, nframes = 0;
    for (size_t i = 0; p->live.slots && i <= p->live.mask; i++) {
        const block_t *b = &p->live.slots[i];
        if (!b->addr || b->thread >= n || !in[b->thread])
            continue;
        uint32_t id = 0;
        if (b->stack) {
            if (!c.stack_new[b->stack - 1]) {
                c.stack_old[nstk] = b->stack - 1;
                c.stack_new[b->stack - 1] = (uint32_t)++nstk;
                nframes += p->stacks[b->stack - 1].nframes;
            }
            id = c.stack_new[b->stack - 1];
        }
        c.blocks[nb++] = (rc__ckpt_block_t){b->t, b->addr, b->size, id, b->call};
    }
    if (nb > 1)
        qsort(c.blocks, nb, sizeof *c.blocks, ckblock_cmp);
    /* Their stacks, over a module list of their own: each module at a made-up bias, far from
     * any address a program uses, with one segment spanning the offsets its frames use. */
    c.nmod_new = h->nbids + 1;
    c.mod_new = calloc(c.nmod_new, sizeof *c.mod_new);
    c.mods = calloc(c.nmod_new, sizeof *c.mods);
    c.ips = malloc((nframes + 1) * sizeof *c.ips);
    c.stack_at = malloc((nstk + 1) * sizeof *c.stack_at);
    if (!c.mod_new || !c.mods || !c.ips || !c.stack_at) {
        free(in);
        parts_free(&c);
        return -1;
    }
    size_t nmods = 0, k = 0;
    for (size_t s = 0; s < nstk; s++) {
        const rc__stack_t *st = &p->stacks[c.stack_old[s]];
        c.stack_at[s] = k;
        for (uint32_t f = 0; f < st->nframes; f++) {
            int m = st->frames[f].module;
            if (m < 0 || (size_t)m >= c.nmod_new) {
                c.ips[k++] = st->frames[f].offset;
                continue;
            }
            if (!c.mod_new[m]) {
                rc__ckpt_mod_t *md = &c.mods[nmods];
                md->path = rheap_symbols_module_path(h->sym, m);
                if ((size_t)m < h->nbids) {
                    md->build_id = h->bids[m].id;
                    md->build_id_len = h->bids[m].len;
                }
                md->bias = 0x7e0000000000ull + ((uint64_t)nmods << 36);
                c.mod_new[m] = (int)++nmods;
            }
            rc__ckpt_mod_t *md = &c.mods[c.mod_new[m] - 1];
            if (st->frames[f].offset + 1 > md->size)
                md->size = st->frames[f].offset + 1;
            c.ips[k++] = md->bias + st->frames[f].offset;
        }
    }
    c.stack_at[nstk] = k;
    rc__ckpt_t ck = {
        .pid = p->pid, .recording = p->recording, .start_ns = p->start_ns,
        .number = p->ckpt_num + 1, .t = until, .ranges = c.ranges, .nranges = (uint32_t)nr,
        .mods = c.mods, .nmods = nmods, .ips = c.ips, .stack_at = c.stack_at, .nstacks = nstk,
        .blocks = c.blocks, .nblocks = nb, .allocs = allocs, .bytes = bytes, .frees = frees,
    };
    char why[PATH_MAX + 600];
    if (!h->ckpt_mem && !(h->ckpt_mem = aligned_alloc(16, rc__checkpoint_mem_size()))) {
        free(in);
        parts_free(&c);
        return -1;
    }
    if (rc__checkpoint_write(p->dir, &ck, h->ckpt_mem, why, sizeof why) != 0) {
        free(in);
        parts_free(&c);
        return compact_fail(h, p, why);
    }
    /* Durable: the files it replaces go, the older checkpoint last. */
    char path[PATH_MAX];
    int failed = 0;
    for (size_t i = 0; i < n; i++) {
        if (!in[i])
            continue;
        snprintf(path, sizeof path, "%s/%s", p->dir, p->threads[i].name);
        if (unlink(path) != 0 && errno != ENOENT && !failed) {
            failed = 1;
            snprintf(why, sizeof why, "%s: %s", path, strerror(errno));
        }
    }
    /* The collector's view: one done entry for the checkpoint in place of the files. */
    char *name = malloc(64);
    if (!name) {
        free(in);
        parts_free(&c);
        return -1;
    }
    snprintf(name, 64, "checkpoint-%" PRIu64 ".rip", ck.number);
    size_t keep = 0, at = SIZE_MAX;
    for (size_t i = 0; i < n; i++) {
        if (in[i]) {
            if (at == SIZE_MAX) {
                at = keep++;
                c.remap[i] = (uint32_t)at;
                thread_free(&p->threads[i]);
                thread_t *t = &p->threads[at];
                memset(t, 0, sizeof *t);
                t->name = name;
                t->done = t->checkpoint = t->have_header = 1;
                t->counted_allocs = allocs;
                t->counted_bytes = bytes;
                t->counted_frees = frees;
                struct stat sb;
                snprintf(path, sizeof path, "%s/%s", p->dir, name);
                t->disk = stat(path, &sb) == 0 ? (uint64_t)sb.st_blocks * 512 : 0;
                continue;
            }
            c.remap[i] = (uint32_t)at;
            thread_free(&p->threads[i]);
            continue;
        }
        c.remap[i] = (uint32_t)keep;
        if (keep != i)
            p->threads[keep] = p->threads[i];
        keep++;
    }
    p->nthreads = keep;
    for (size_t i = 0; p->live.slots && i <= p->live.mask; i++) {
        block_t *b = &p->live.slots[i];
        if (b->addr && b->thread < n)
            b->thread = c.remap[b->thread];
    }
    free(p->skip);
    p->skip = c.ranges;
    p->nskip = nr;
    c.ranges = NULL;
    p->ckpt_num = ck.number;
    p->ckpt_t = until;
    p->compactions++;
    free(in);
    parts_free(&c);
    return failed ? compact_fail(h, p, why) : 0;
}

/* compact_now under the recording directory's exclusive flock: a conversion reading the
 * recording holds it shared from its listing to its end (rip_recording_open), and would find the
 * files it listed gone. While one reads, compaction waits for a later scan rather than for the
 * reader: the collector goes on following every process meanwhile. */
static int compact(rc_host_t *h, rc__proc_t *p)
{
    int fd = open(p->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return compact_now(h, p); /* as before locks: a file system without them */
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int busy = errno == EWOULDBLOCK || errno == EINTR;
        if (busy) {
            p->compact_waits++;
            close(fd);
            return 0;
        }
    }
    int st = compact_now(h, p);
    close(fd); /* and with it the lock */
    return st;
}

static int proc_scan(rc_host_t *h, rc__proc_t *p, int final)
{
    read_process(p);
    /* A file not in this listing is created after it: its events come later than this. */
    uint64_t rel = rel_now(p), next_unseen = rel > margin(rel) ? rel - margin(rel) : 0;
    if (find_threads(p) != 0)
        return -1;
    p->unseen = next_unseen;
    /* A checkpoint first: it says which files it replaces. It is complete once it has its name. */
    for (size_t i = 0; i < p->nthreads; i++)
        if (p->threads[i].checkpoint && read_thread(h, p, &p->threads[i], 1) != 0)
            return -1;
    for (size_t i = 0; i < p->nthreads; i++)
        if (read_thread(h, p, &p->threads[i], final || p->threads[i].closed) != 0)
            return -1;
    /* Segments whose successor appeared: complete, read to their end now. */
    if (mark_closed(p))
        for (size_t i = 0; i < p->nthreads; i++)
            if (p->threads[i].closed && read_thread(h, p, &p->threads[i], 1) != 0)
                return -1;
    if (p->interval) {
        double allocs = 0, bytes = 0;
        for (size_t i = 0; i < p->nthreads; i++) {
            allocs += (double)p->threads[i].counted_allocs + p->threads[i].est_allocs;
            bytes += (double)p->threads[i].counted_bytes + p->threads[i].est_bytes;
        }
        /* Counters never go down (Prometheus reads a drop as a restart): when a totals record
         * comes in below the estimate it replaces, the figure waits for it. */
        if (allocs > p->alloc_blocks)
            p->alloc_blocks = allocs;
        if (bytes > p->alloc_bytes)
            p->alloc_bytes = bytes;
    }
    prune_tombs(p);
    if (h->disk_budget && p->interval && !final && !p->no_compact &&
        compact_due(p) >= h->disk_budget && compact(h, p) != 0)
        return -1;
    if (p->live_bytes > p->high_bytes)
        p->high_bytes = p->live_bytes;
    double now = now_s();
    if (p->rate_t0 == 0) {
        p->rate_t0 = now;
        p->rate_bytes0 = p->alloc_bytes;
    } else if (now - p->rate_t0 >= 2.0) {
        p->rate = (p->alloc_bytes - p->rate_bytes0) / (now - p->rate_t0);
        p->rate_t0 = now;
        p->rate_bytes0 = p->alloc_bytes;
    }
    return 0;
}

/* The bytes the collector holds for p (its tables, as allocated). */
static uint64_t proc_memory(const rc__proc_t *p)
{
    uint64_t m = (p->live.slots ? (p->live.mask + 1) * sizeof(block_t) : 0) +
                 (p->tombs.slots ? (p->tombs.mask + 1) * sizeof(block_t) : 0) +
                 p->capstacks * sizeof(rc__stack_t) + p->frames_bytes +
                 (p->stack_slots ? (p->stack_mask + 1) * sizeof(uint32_t) : 0) +
                 p->nskip * sizeof(rip_range_t) + p->capthreads * sizeof(thread_t);
    for (size_t k = 0; k < p->nthreads; k++)
        m += p->threads[k].nids * sizeof(uint32_t) + p->threads[k].capsegs * sizeof(seg_t);
    return m;
}

/* Stops following p, whose state passed the budget: its tables go, its figures stay as they
 * were (and say so through `dropped`). */
static void proc_drop(const rc_host_t *h, rc__proc_t *p, uint64_t budget)
{
    char held[32], limit[32];
    ra_human_bytes((long long)proc_memory(p), held, sizeof held);
    ra_human_bytes((long long)budget, limit, sizeof limit);
    rc__log(&h->log, RC_LOG_WARNING,
            "%s: process %" PRIu32 " no longer followed: its live heap took %s of the "
            "collector's memory, more than %s a process (--process-memory)",
            p->dir, p->pid, held, limit);
    for (size_t i = 0; i < p->nthreads; i++)
        thread_free(&p->threads[i]);
    free(p->threads);
    p->threads = NULL;
    p->nthreads = p->capthreads = 0;
    for (size_t i = 0; i < p->nstacks; i++)
        free(p->stacks[i].frames);
    free(p->stacks);
    free(p->stack_slots);
    free(p->live.slots);
    free(p->tombs.slots);
    p->stacks = NULL;
    p->stack_slots = NULL;
    p->nstacks = p->capstacks = p->stack_mask = 0;
    p->live = (blockmap_t){0};
    p->tombs = (blockmap_t){0};
    p->frames_bytes = 0;
    p->dropped = 1;
}

/* ---- The host ---- */

rc_host_t *rc_host_create(const char *const *dirs, size_t ndirs, const rc_log_t *log)
{
    rc_host_t *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    if (log)
        h->log = *log;
    h->dirs = calloc(ndirs ? ndirs : 1, sizeof *h->dirs);
    h->sym = rheap_symbols_create();
    if (!h->dirs || !h->sym) {
        rc_host_destroy(h);
        return NULL;
    }
    for (size_t i = 0; i < ndirs; i++)
        if (!(h->dirs[h->ndirs++] = strdup(dirs[i]))) {
            rc_host_destroy(h);
            return NULL;
        }
    if (gethostname(h->hostname, sizeof h->hostname) != 0)
        strcpy(h->hostname, "localhost");
    h->hostname[sizeof h->hostname - 1] = 0;
    return h;
}

void rc_host_destroy(rc_host_t *h)
{
    if (!h)
        return;
    for (size_t i = 0; i < h->ndirs; i++)
        free(h->dirs[i]);
    free(h->dirs);
    for (size_t i = 0; i < h->nprocs; i++)
        proc_free(h->procs[i]);
    free(h->procs);
    for (size_t i = 0; i < h->nignored; i++)
        free(h->ignored[i]);
    free(h->ignored);
    free(h->ignored_seen);
    rheap_symbols_destroy(h->sym);
    free(h->ckpt_mem);
    for (size_t i = 0; i < h->nbids; i++)
        free(h->bids[i].id);
    free(h->bids);
    free(h);
}

static int proc_cmp(const void *a, const void *b)
{
    const rc__proc_t *x = *(rc__proc_t *const *)a, *y = *(rc__proc_t *const *)b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return x->recording < y->recording ? -1 : x->recording > y->recording;
}

static int ignore(rc_host_t *h, const char *dir)
{
    char *copy = strdup(dir);
    if (!copy || rheap_grow(&h->ignored, &h->capignored, h->nignored, sizeof *h->ignored, 16) ||
        rheap_grow(&h->ignored_seen, &h->capseen, h->nignored, 1, 16)) {
        free(copy);
        return -1;
    }
    h->ignored_seen[h->nignored] = 1;
    h->ignored[h->nignored++] = copy;
    return 0;
}

/* 1 when dir is left alone, which the current listing notes. */
static int ignored(rc_host_t *h, const char *dir)
{
    for (size_t i = 0; i < h->nignored; i++)
        if (!strcmp(h->ignored[i], dir)) {
            h->ignored_seen[i] = 1;
            return 1;
        }
    return 0;
}

/* Forgets the recordings left alone that the last listing did not find (removed), so a week of
 * short processes whose recordings are cleaned up leaves nothing behind. */
static void forget_removed(rc_host_t *h)
{
    size_t keep = 0;
    for (size_t i = 0; i < h->nignored; i++) {
        if (!h->ignored_seen[i]) {
            free(h->ignored[i]);
            continue;
        }
        h->ignored_seen[keep] = 0;
        h->ignored[keep++] = h->ignored[i];
    }
    h->nignored = keep;
}

/* Adds the recordings of dir that are not followed yet. Only directories the user may read and
 * enter are followed: the collector serves nothing the user could not read himself. A recording
 * whose process has already ended when it is found is left alone: its heap is no live heap, and
 * reading it whole could take long (rheap convert is for it). */
static int find_recordings(rc_host_t *h, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *de;
    int rc = 0;
    while ((de = readdir(d))) {
        uint32_t pid, num;
        if (rip_recording_name_parse(de->d_name, &pid, &num) != 0)
            continue;
        char path[PATH_MAX];
        if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, de->d_name) >= sizeof path)
            continue;
        size_t i = 0;
        while (i < h->nprocs && strcmp(h->procs[i]->dir, path))
            i++;
        if (i < h->nprocs || ignored(h, path) || access(path, R_OK | X_OK) != 0)
            continue;
        if (kill((pid_t)pid, 0) != 0 && errno == ESRCH) {
            if (ignore(h, path) != 0)
                rc = -1;
            continue;
        }
        rc__proc_t *p = calloc(1, sizeof *p);
        if (!p || !(p->dir = strdup(path)) ||
            rheap_grow(&h->procs, &h->capprocs, h->nprocs, sizeof *h->procs, 16) != 0) {
            proc_free(p);
            rc = -1;
            break;
        }
        p->pid = (uint32_t)pid;
        p->recording = (uint32_t)num;
        p->process_size = -1;
        read_process(p);
        if (!p->have_process) {
            proc_free(p); /* its process file is not written yet: next time */
            continue;
        }
        h->procs[h->nprocs++] = p;
    }
    closedir(d);
    if (h->nprocs > 1)
        qsort(h->procs, h->nprocs, sizeof *h->procs, proc_cmp);
    return rc;
}

/* A process is gone when kill says so; a recording has ended when its process is gone or a
 * newer recording of the same pid exists (after an exec, or recording turned off and on). */
static int recording_over(const rc_host_t *h, size_t i)
{
    const rc__proc_t *p = h->procs[i];
    if (i + 1 < h->nprocs && h->procs[i + 1]->pid == p->pid)
        return 1;
    return kill((pid_t)p->pid, 0) != 0 && errno == ESRCH;
}

rc_status_t rc_host_scan(rc_host_t *h, double linger_s, rc_err_t *err)
{
    int rc = 0;
    for (size_t i = 0; i < h->nignored; i++)
        h->ignored_seen[i] = 0;
    for (size_t i = 0; i < h->ndirs; i++)
        if (find_recordings(h, h->dirs[i]) != 0)
            rc = -1;
    forget_removed(h);
    double now = now_s();
    size_t keep = 0;
    for (size_t i = 0; i < h->nprocs; i++) {
        rc__proc_t *p = h->procs[i];
        struct stat sb;
        int gone = stat(p->dir, &sb) != 0;
        if (!gone && p->state != RC_ENDED) {
            int over = recording_over(h, i);
            if (!p->dropped && proc_scan(h, p, over) != 0)
                rc = -1;
            if (!p->dropped && h->budget && proc_memory(p) > h->budget)
                proc_drop(h, p, h->budget);
            if (over) {
                p->state = RC_ENDED;
                p->ended_at = now;
                /* What the collector needs no more: the readers and the module maps. */
                for (size_t k = 0; k < p->nthreads; k++) {
                    rip_reader_close(p->threads[k].r);
                    p->threads[k].r = NULL;
                    p->threads[k].done = 1;
                }
                prune_tombs(p);
            }
        }
        if (gone || (p->state == RC_ENDED && now - p->ended_at > linger_s)) {
            if (!gone && ignore(h, p->dir) != 0)
                rc = -1;
            proc_free(p);
            continue;
        }
        h->procs[keep++] = p;
    }
    h->nprocs = keep;
    return rc ? rc__fail(err, RC_E_NOMEM,
                         "out of memory while reading the recordings; what was read stays")
              : RC_OK;
}

size_t rc_host_count(const rc_host_t *h)
{
    return h->nprocs;
}

void rc_host_info(const rc_host_t *h, size_t i, rc_info_t *o)
{
    const rc__proc_t *p = h->procs[i];
    memset(o, 0, sizeof *o);
    o->pid = p->pid;
    o->recording = p->recording;
    o->dir = p->dir;
    o->exe = p->exe ? p->exe : "";
    o->cmdline = p->cmdline ? p->cmdline : "";
    o->state = p->state;
    o->interval = p->interval;
    o->start_wall_ns = p->start_wall_ns;
    o->live_bytes = p->live_bytes < 0.5 ? 0 : p->live_bytes;
    o->live_blocks = p->live_blocks < 0.5 ? 0 : p->live_blocks;
    o->alloc_bytes = p->alloc_bytes;
    o->alloc_blocks = p->alloc_blocks;
    o->rate = p->rate;
    o->high_bytes = p->high_bytes;
    o->nstacks = p->nstacks;
    o->memory = proc_memory(p);
    o->dropped = p->dropped;
    o->compactions = p->compactions;
    o->compactions_deferred = p->compact_waits;
    o->compacted_before_ns = p->ckpt_t;
}

long rc_host_find(const rc_host_t *h, uint32_t pid)
{
    long found = -1;
    for (size_t i = 0; i < h->nprocs; i++)
        if (h->procs[i]->pid == pid)
            found = (long)i;
    return found;
}

size_t rc_host_pick(const rc_host_t *h, long pid, size_t *idx)
{
    size_t n = 0;
    if (pid >= 0) {
        long i = rc_host_find(h, (uint32_t)pid);
        if (i >= 0)
            idx[n++] = (size_t)i;
        return n;
    }
    for (size_t i = 0; i < h->nprocs; i++) {
        const rc__proc_t *p = h->procs[i];
        if (p->state != RC_ENDED && !p->dropped && rc_host_find(h, p->pid) == (long)i)
            idx[n++] = i;
    }
    return n;
}

void rc_host_budget(rc_host_t *h, uint64_t bytes)
{
    h->budget = bytes;
}

void rc_host_disk_budget(rc_host_t *h, uint64_t bytes)
{
    h->disk_budget = bytes;
}

const rc__stack_t *rc__host_stacks(const rc_host_t *h, size_t i, size_t *n)
{
    *n = h->procs[i]->nstacks;
    return h->procs[i]->stacks;
}

rheap_symbols_t *rc__host_symbols(rc_host_t *h)
{
    return h->sym;
}

const char *rc__host_name(const rc_host_t *h)
{
    return h->hostname;
}
