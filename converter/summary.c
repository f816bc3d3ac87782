/*
 * summary.c: the summary tables of schema.sql, computed in the converter's single pass.
 *
 * The converter applies every allocation and every end of a block in time order (merge.c), so
 * the live heap of a recording is known at every moment without a second look at the rows: a
 * running total per recording and per stack. From it come the exact peak (and what each stack
 * held then), the timeline's largest live heap per slice, and the heap at each marker. Counts,
 * lifetimes and size classes are added up as blocks start and end.
 *
 * What each event costs: a few additions into the stack's entry (an array indexed by the dense
 * backtrace id), the thread's entry (a small hash by tid, the last one looked up kept), the
 * current timeline slice and the (stack, size class) entry (a hash, which each stack's cache of
 * the entries it used last answers nearly always); the caches' hits are inline, their misses
 * apart. About 160 instructions an allocation and 200 a free (callgrind, bench/bigheap.c); the
 * never-freed blocks of a trace, given a batch at a time and summed by runs, about 45 each.
 * Three things are not constant per event, and all are bounded:
 *
 *  - The peak's per-stack picture. Copying every stack's live bytes whenever the heap reaches
 *    a new high would cost the number of stacks per new high, and a growing heap sets one at
 *    nearly every event. Instead a stack's first change after a new high copies what it held
 *    then (it had not changed since), and the end copies the stacks not changed since the last
 *    high: each change is copied at most once.
 *  - Markers copy every stack with live blocks; there are as many of those copies as distinct
 *    marker times.
 *  - Checkpoints (schema.sql's table `checkpoints`): at each boundary of a grid of CK_SLICES
 *    intervals the stacks that had an event since the last one are copied, again through a
 *    list of touched stacks, so each event is copied at most once per checkpoint. A block
 *    that outlives the interval it was allocated in is listed once, when it ends.
 *
 * Memory is one entry per stack, per thread, per (stack, size class) and 1024 timeline slices:
 * independent of the number of events.
 *
 * Counts of blocks and bytes are weighed, and so kept as doubles: in a trace-mode recording
 * every block weighs 1 (doubles add integers exactly up to 2^53), in a profile-mode one a
 * sampled block weighs the blocks it stands for (profile.c). They are rounded when written.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "converter.h"

#define SLICES 1024
#define FIRST_WIDTH_LOG2 10u /* the width of a slice, 1024 ns, while the recording is younger than ~1 ms */
/* A checkpoint interval is 1 << CK_SHIFT timeline slices: at most 256 of them per recording
 * once its length is known (earlier, narrower ones stay). Four slices keep the rows a moment's
 * answer reads from `allocations` to about 1/256 of the recording, and the per-stack copies to
 * 256 times the stacks that are busy in every interval. */
#define CK_SHIFT 2u

/* A checkpoint's list of blocks that outlive its interval grows until the recording ends: past
 * this many bytes in memory it goes to a temporary file as a chunk, so that the lists of a long
 * recording (a varint per block that crossed a cut, their sum linear in the recording's length)
 * cost memory per checkpoint, not per event. */
#define LATER_CHUNK 1024u

/* cv__summary_leaked_batch sums a trace's never-freed blocks in integers (leaked_exact) while
 * the bytes summed so far are under this: every sum then stays exact in doubles. */
#define LEAK_EXACT ((uint64_t)1 << 52)

/* The phases of queries/growth.sql's default, which the table site_growth holds. */
#define GROWTH_PHASES 10u

/* Counts and byte totals are doubles, weighed in profile mode and exact in a trace up to 2^53
 * (8 PiB); a trace's sum of lifetimes is cv__wide_t, exact. */
typedef struct {
    double blocks, bytes, freed_blocks, freed_bytes, temp_blocks, temp_bytes;
    uint64_t first_t, last_t, leak_first, leak_last, min_size, max_size;
    uint64_t life_min, life_max;
    cv__wide_t life_total;
    double life_weighed;              /* profile mode: lifetimes times their blocks' weights (a
                                         trace's sum can pass 2^53 ns, exact only in integers) */
    double live_blocks, live_bytes;   /* now */
    double peak_blocks, peak_bytes;   /* at the peak, once copied (peak_seen) */
    /* The recording's count of new highs (cv__summary.peaks) when the stack last changed. The
     * stack's live totals at the latest high are what they were then, until it changes again:
     * so its first change after a new high copies them (touch), and the end copies those of
     * the stacks that did not change since. Keeping a list of the stacks changed since the last
     * high and copying them at each one cost a list append and a pass per event while the heap
     * grows, as nearly every instant is a new high then. */
    uint64_t peak_seen;
    double life[9], life_bytes[9];    /* freed blocks and their bytes per decade of lifetime */
    int leak_rows;                    /* has stack_leaks rows (write_sites) */
    double leak_rows_bytes;           /* their bytes as written */
    int ck_dirty;                     /* on the list of stacks touched since the last checkpoint */
    size_t ck_row;                    /* thinning: its last row kept, valid when ck_row_of is */
    size_t ck_row_of;                 /* 1 + the checkpoint of that row; 0: none yet */
    uint32_t ck_at;                   /* sort_ckrows: where its next row goes */
    int on_used;                      /* on the list of the recording's stacks */
    /* The stack's entries of the tables `sizes` and `leaks` it used last (cached_at). Zeroed
     * with the rest at each recording's start, so only this recording's stacks hold one. */
    struct kcache {
        uint32_t slot;                /* valid while gen is the table's and sub is nonzero */
        uint16_t gen;                 /* the table's, whose changes in one recording are few */
        uint16_t sub;                 /* 1 + the size class, or 1 + the timeline slice */
    } zlast[4], llast;                /* zlast: by size class modulo 4, as a program's sizes
                                       * at one stack often span neighbouring classes */
} stackagg_t;

enum { PEND_NONE, PEND_LIVE, PEND_FREED };

typedef struct {
    uint32_t tid;
    double allocs, alloc_bytes, frees, freed_bytes, leaked_blocks, leaked_bytes;
    double freed_by_other, frees_of_other;
    int counted;                      /* allocs and alloc_bytes are a totals record's */
    /* The thread's latest allocation, to decide whether it was temporary: freed before the
     * thread allocated again. */
    int pend;                         /* PEND_NONE, PEND_LIVE or PEND_FREED */
    uint64_t pend_addr, pend_t, pend_bt;
    double pend_w, pend_bytes;
} threadagg_t;

/* Counters per (stack, size class) and per (stack, timeline slice). */
typedef struct {
    double blocks, bytes, leaked_blocks, leaked_bytes;
} keyagg_t;

/* A hash table from nonzero 64-bit keys to values of vsize bytes, the converter's layout
 * (hashmap.h): keys apart, values in a parallel array, grown by cv__hash_grow. */
typedef struct {
    uint64_t *keys;                   /* 0 = empty slot */
    unsigned char *vals;
    size_t vsize, mask, n;
    unsigned shift;
    uint32_t gen;                     /* changes whenever the values move (growth, reset) */
} table_t;

static int table_reset(table_t *t, size_t vsize);

typedef struct {
    double allocs, alloc_bytes, frees, freed_bytes;
    double max_live;                  /* the most live bytes after an instant inside the slice */
    int seen;                         /* max_live is set */
} slice_t;

/* One stack's rows of stack_stats added up over every recording converted so far, each figure
 * as written (rounded in profile mode): the table stack_totals. */
typedef struct {
    double recordings, blocks, bytes, leaked_blocks, leaked_bytes, peak_blocks, peak_bytes,
        temp_blocks, temp_bytes;
} total_t;

/* One stack's rows of stack_lifetimes added up over every recording converted so far, as
 * written: the table stack_lifetime_totals. */
typedef struct {
    double blocks[9], bytes[9];
} life_total_t;

struct batches;
static void batches_free(struct batches *b);

struct cv__summary {
    struct batches *batches;          /* rows gathered for the tables (cv__summary_end) */
    total_t *tot;                     /* indexed by bt (0: no backtrace), over the conversion */
    size_t captot;
    life_total_t *lifetot;            /* the same for the lifetimes, indexed by bt */
    size_t caplifetot;
    cv__treeline_t *tree;             /* every recording's slices together (treeline.c) */
    uint64_t wall;                    /* the recording's start, wall-clock ns */
    uint32_t pid, recording;
    stackagg_t *st;                   /* indexed by bt (0: no backtrace) */
    size_t capst;
    /* The stacks of the recording: a tree's recordings each use a few hundred of the run's
     * 100,000 stacks, and a pass over the whole array (to clear it, to write it) per recording
     * cost more than the recording's own events. */
    uint64_t *used;
    size_t nused, capused;
    int used_sorted;
    table_t threads;                  /* threadagg_t by tid */
    threadagg_t *last_th;             /* the thread looked up last (the table grows only in
                                       * thread_find, which sets it); NULL after a reset */
    table_t sizes;                    /* keyagg_t by bt * 128 + size class + 1 */
    table_t leaks;                    /* keyagg_t by bt * SLICES + slice + 1, never-freed blocks only */
    slice_t slice[SLICES];
    unsigned width_log2;              /* a slice is 1 << width_log2 ns: a power of two, so that
                                       * the slice of every event is a shift, not a division */
    /* The live heap and the instant being applied. */
    int started;
    uint64_t now;
    uint64_t fast_until;              /* at(): an instant before it needs no more than close_heap */
    double live_bytes, live_blocks;
    double peak_bytes, peak_blocks;
    uint64_t peak_t;
    uint64_t peaks;                   /* how many times the heap reached a new high */
    double allocs, alloc_bytes, frees, freed_bytes;
    uint64_t interval;                /* profile mode's sampling interval, 0 in trace mode */
    int counted;                      /* allocs and alloc_bytes are the totals records' */
    uint64_t counted_allocs, counted_bytes;
    uint64_t leak_sum;                /* the bytes of the never-freed blocks summed so far, up to
                                       * LEAK_EXACT (leaked_exact) */
    /* Marker times not yet passed, sorted; and the per-stack copies taken at passed ones. */
    uint64_t *marks;
    size_t nmarks, capmarks;
    struct markrow {
        uint64_t t, bt;
        double blocks, bytes;
    } *mrows;
    size_t nmrows, capmrows;
    /* Checkpoints, the rows they copy and the blocks that outlive their interval. */
    struct ckpt {
        int64_t t;                    /* the heap after every event at or before t; -1 for the first */
        uint64_t free_lo, free_hi;    /* ids of the blocks that ended in the interval after t */
        uint64_t leak_lo, leak_hi;    /* ids of the never-freed blocks allocated in it */
        double blocks, bytes;         /* live at t */
        /* The blocks allocated in the interval that ended after the next checkpoint: their
         * ids, ascending (they end in id order), as varint deltas. */
        unsigned char *later;
        size_t nlater, caplater;
        uint64_t later_last;
    } *cks;
    size_t nck, capck;
    size_t ck_hint;                   /* the interval interval_of found last */
    int later_fd;                     /* the lists' chunks flushed from memory; -1: none yet */
    uint64_t later_off;               /* the file's length */
    struct later_chunk {
        size_t ck;                    /* the checkpoint whose list holds it */
        uint64_t off;
        size_t len;                   /* varint deltas from 0 */
    } *chunks;
    size_t nchunks, capchunks;
    struct ckrow {
        uint64_t bt;
        uint64_t ck;
        double blocks, bytes;
    } *ckrows, *ckrows2;              /* ckrows2: sort_ckrows's other array, kept for the next */
    size_t nckrows, capckrows, capckrows2;
    uint64_t *ckdirty;
    size_t nckdirty, capckdirty;
    int failed;                       /* out of memory: the summaries are not written */
    /* The per-site rows of the recording being written (write_sites): the sites its stacks
     * have, in the order met, and where each one's entry is (1 + index; 0: not met yet). */
    struct siteagg *sagg;
    size_t nsagg, capsagg;
    uint32_t *slot_of;                /* indexed by site id */
    size_t capslot;
};

cv__summary_t *cv__summary_create(void)
{
    cv__summary_t *s = calloc(1, sizeof(cv__summary_t));
    if (s)
        s->later_fd = -1;
    return s;
}

/* Drops the lists' chunks and their file. */
static void later_reset(cv__summary_t *s)
{
    if (s->later_fd >= 0)
        close(s->later_fd);
    s->later_fd = -1;
    s->later_off = 0;
    s->nchunks = 0;
}

void cv__summary_destroy(cv__summary_t *s)
{
    if (!s)
        return;
    free(s->st);
    free(s->used);
    table_t *tables[] = {&s->threads, &s->sizes, &s->leaks};
    for (int i = 0; i < 3; i++) {
        free(tables[i]->keys);
        free(tables[i]->vals);
    }
    free(s->marks);
    free(s->mrows);
    for (size_t i = 0; i < s->nck; i++)
        free(s->cks[i].later);
    free(s->cks);
    later_reset(s);
    free(s->chunks);
    free(s->ckrows);
    free(s->ckrows2);
    free(s->ckdirty);
    free(s->sagg);
    free(s->slot_of);
    free(s->tot);
    free(s->lifetot);
    batches_free(s->batches);
    cv__treeline_destroy(s->tree);
    free(s);
}

int cv__summary_begin(cv__summary_t *s, uint32_t pid, uint32_t recording)
{
    s->pid = pid;
    s->recording = recording;
    for (size_t u = 0; u < s->nused; u++)
        memset(&s->st[s->used[u]], 0, sizeof *s->st);
    s->nused = 0;
    s->used_sorted = 1;
    int ok = table_reset(&s->threads, sizeof(threadagg_t)) == 0;
    s->last_th = NULL; /* the new table may have its values where the old one had */
    ok &= table_reset(&s->sizes, sizeof(keyagg_t)) == 0;
    ok &= table_reset(&s->leaks, sizeof(keyagg_t)) == 0;
    memset(s->slice, 0, sizeof s->slice);
    s->width_log2 = FIRST_WIDTH_LOG2;
    s->started = 0;
    s->now = 0;
    s->fast_until = 0;
    s->live_bytes = s->live_blocks = s->peak_bytes = s->peak_blocks = 0;
    s->peak_t = 0;
    s->peaks = 0;
    s->allocs = s->alloc_bytes = s->frees = s->freed_bytes = 0;
    s->interval = 0;
    s->counted = 0;
    s->counted_allocs = s->counted_bytes = 0;
    s->leak_sum = 0;
    s->nmarks = s->nmrows = 0;
    for (size_t i = 0; i < s->nck; i++)
        free(s->cks[i].later);
    later_reset(s);
    s->nck = s->nckrows = s->nckdirty = 0;
    s->failed = !ok;
    /* The first checkpoint is the empty heap before any event. */
    if (!s->failed && rheap_grow(&s->cks, &s->capck, 0, sizeof *s->cks, 64) != 0)
        s->failed = 1;
    if (!s->failed)
        s->cks[s->nck++] = (struct ckpt){.t = -1};
    /* The heap at the start is pictured too, as the default first moment of queries/diff.sql. */
    cv__summary_marker(s, 0);
    return s->failed ? -1 : 0;
}

/* The value of key in t, made zeroed on first use. NULL: out of memory. */
static void *table_at(table_t *t, uint64_t key)
{
    size_t j = cv__hash_slot(key, t->shift);
    while (t->keys[j] && t->keys[j] != key)
        j = (j + 1) & t->mask;
    if (!t->keys[j]) {
        if ((t->n + 1) * 2 > t->mask + 1) {
            if (cv__hash_grow(&t->keys, &t->vals, t->vsize, &t->mask, &t->shift) != 0)
                return NULL;
            t->gen++;
            j = cv__hash_slot(key, t->shift);
            while (t->keys[j])
                j = (j + 1) & t->mask;
        }
        t->n++;
        t->keys[j] = key;
        memset(t->vals + j * t->vsize, 0, t->vsize);
    }
    return t->vals + j * t->vsize;
}

/* Empties t for a new recording: 64 slots of vsize bytes. 0, or -1 when out of memory. */
static int table_reset(table_t *t, size_t vsize)
{
    free(t->keys);
    free(t->vals);
    t->vsize = vsize;
    t->mask = 63;
    t->shift = 64 - 6;
    t->n = 0;
    t->gen++;
    t->keys = calloc(t->mask + 1, sizeof *t->keys);
    t->vals = malloc((t->mask + 1) * vsize);
    return t->keys && t->vals ? 0 : -1;
}

/* thread_of's lookup in the table. Only here does the threads table grow, and the entry
 * returned is where the values are now, so last_th stays valid; a caller that holds another
 * entry across a lookup checks threads.gen (cv__summary_free). */
static __attribute__((noinline)) threadagg_t *thread_find(cv__summary_t *s, uint32_t tid)
{
    threadagg_t *t = table_at(&s->threads, tid);
    if (t) {
        t->tid = tid;
        s->last_th = t;
    }
    return t;
}

/* The thread entry of tid, made on first use. NULL: out of memory. Events come in runs of one
 * thread: the last lookup is usually the answer, a load and a compare inline. */
static inline threadagg_t *thread_of(cv__summary_t *s, uint32_t tid)
{
    if (s->last_th && s->last_th->tid == tid)
        return s->last_th;
    return thread_find(s, tid);
}

static inline unsigned size_class(uint64_t size)
{
    return size ? 64u - (unsigned)__builtin_clzll(size) : 0u; /* 0, or 1 + floor(log2(size)) */
}

/* cached_at's miss: the table's lookup, and the cache set to its answer. */
static __attribute__((noinline)) keyagg_t *cache_fill(table_t *t, struct kcache *c, uint32_t sub,
                                                      uint64_t bt, uint64_t per)
{
    keyagg_t *v = table_at(t, bt * per + sub + 1);
    if (v) {
        c->slot = (uint32_t)(((unsigned char *)v - t->vals) / sizeof(keyagg_t));
        c->gen = (uint16_t)t->gen;
        c->sub = (uint16_t)(sub + 1);
    }
    return v;
}

/* The entry of (stack bt, sub) in t, whose key is bt * per + sub + 1, through the stack's
 * one-entry cache c. A stack's blocks mostly come in one size class, and its never-freed blocks, drained in time
 * order, in one slice after another: the cache answers most lookups without hashing or
 * probing (table_at was a fifth of the summaries' counting), and its test is inline (the call
 * was a tenth). The table itself is filled as without the cache, in the same order, so its
 * rows come out as they did. NULL: out of memory. */
static inline keyagg_t *cached_at(table_t *t, struct kcache *c, uint32_t sub, uint64_t bt,
                                  uint64_t per)
{
    if (c->sub == sub + 1 && c->gen == (uint16_t)t->gen)
        return (keyagg_t *)(t->vals + (size_t)c->slot * sizeof(keyagg_t));
    return cache_fill(t, c, sub, bt, per);
}

static inline keyagg_t *size_of(cv__summary_t *s, stackagg_t *a, uint64_t bt, uint64_t size)
{
    unsigned cls = size_class(size);
    return cached_at(&s->sizes, &a->zlast[cls & 3], cls, bt, 128);
}

/* Grows *arrayp, an array of *cap elements of elem bytes indexed by stack or site id, by
 * doublings from 1024 until it holds index i; the new elements are zero. */
static int grow_zeroed(void *arrayp, size_t *cap, size_t i, size_t elem)
{
    size_t nc = *cap ? *cap : 1024;
    while (nc <= i)
        nc *= 2;
    void *old;
    memcpy(&old, arrayp, sizeof old);
    char *p = realloc(old, nc * elem);
    if (!p)
        return -1;
    memset(p + *cap * elem, 0, (nc - *cap) * elem);
    memcpy(arrayp, &p, sizeof p);
    *cap = nc;
    return 0;
}

/* The entry of a stack the recording has not used yet: room for it, and on the list. Its
 * first allocation sets first_t and min_size (cv__summary_alloc). */
static __attribute__((noinline)) stackagg_t *stack_first(cv__summary_t *s, uint64_t bt)
{
    if (bt >= s->capst && grow_zeroed(&s->st, &s->capst, bt, sizeof *s->st) != 0)
        return NULL;
    stackagg_t *a = &s->st[bt];
    if (!a->on_used) {
        if (rheap_grow(&s->used, &s->capused, s->nused, sizeof *s->used, 256) != 0)
            return NULL;
        if (s->nused && s->used[s->nused - 1] > bt)
            s->used_sorted = 0;
        s->used[s->nused++] = bt;
        a->on_used = 1;
    }
    return a;
}

static int cmp_bt(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

/* The recording's stacks in id order, for the passes that write rows in that order. */
static void sort_used(cv__summary_t *s)
{
    if (!s->used_sorted && s->nused)
        qsort(s->used, s->nused, sizeof *s->used, cmp_bt);
    s->used_sorted = 1;
}

/* A block's weight *w and its bytes weighed *wb: 1 and the size in a trace, without the call
 * into profile.c that every event paid nor the product (1 times the size is the size). */
static inline void weigh(const cv__summary_t *s, uint64_t size, double *w, double *wb)
{
    if (!s->interval) {
        *w = 1.0;
        *wb = (double)size;
    } else {
        *w = cv__profile_weight(size, s->interval);
        *wb = *w * (double)size;
    }
}

static void fail(cv__summary_t *s)
{
    s->failed = 1;
}

/* The heap after every event of the instant s->now is final: record it in its slice and in
 * the peak. Inline: it runs once per instant, nearly once per event. */
static inline void close_heap(cv__summary_t *s)
{
    slice_t *sl = &s->slice[s->now >> s->width_log2];
    /* A new high is above every slice's most too: while the heap grows, one test. */
    if (s->live_bytes > s->peak_bytes) {
        s->peak_bytes = s->live_bytes;
        s->peak_blocks = s->live_blocks;
        s->peak_t = s->now;
        s->peaks++; /* each stack's picture is taken when it next changes (touch) */
        sl->max_live = s->live_bytes;
        sl->seen = 1;
    } else if (!sl->seen || s->live_bytes > sl->max_live) {
        sl->max_live = s->live_bytes;
        sl->seen = 1;
    }
}

/* close_heap, and then any marker between s->now and `next` (the next instant) pictured. */
static void close_instant(cv__summary_t *s, uint64_t next, int last)
{
    close_heap(s);
    size_t k = 0;
    while (k < s->nmarks && (last || s->marks[k] < next)) {
        sort_used(s);
        for (size_t u = 0; u < s->nused; u++) {
            uint64_t bt = s->used[u];
            const stackagg_t *a = &s->st[bt];
            if (a->live_blocks < 0.5) /* none: a weight is at least 1, sums round to 0 */
                continue;
            if (rheap_grow(&s->mrows, &s->capmrows, s->nmrows, sizeof *s->mrows, 256) != 0) {
                fail(s);
                return;
            }
            s->mrows[s->nmrows++] = (struct markrow){s->marks[k], bt, a->live_blocks, a->live_bytes};
        }
        k++;
    }
    if (k) {
        memmove(s->marks, s->marks + k, (s->nmarks - k) * sizeof *s->marks);
        s->nmarks -= k;
    }
}

/* Doubles the slice width until t falls inside the timeline, merging slices pairwise. */
static void widen(cv__summary_t *s, uint64_t t)
{
    while (t >> s->width_log2 >= SLICES) {
        for (size_t i = 0; i < SLICES / 2; i++) {
            slice_t a = s->slice[2 * i], b = s->slice[2 * i + 1], m = {0};
            m.allocs = a.allocs + b.allocs;
            m.alloc_bytes = a.alloc_bytes + b.alloc_bytes;
            m.frees = a.frees + b.frees;
            m.freed_bytes = a.freed_bytes + b.freed_bytes;
            m.seen = a.seen || b.seen;
            m.max_live = !a.seen ? b.max_live : !b.seen ? a.max_live
                                                        : a.max_live > b.max_live ? a.max_live : b.max_live;
            s->slice[i] = m;
        }
        memset(s->slice + SLICES / 2, 0, SLICES / 2 * sizeof *s->slice);
        s->width_log2++;
    }
}

/* A checkpoint at time t (every event up to t applied, none after): the live totals of the
 * stacks touched since the previous one. */
static void checkpoint(cv__summary_t *s, int64_t t)
{
    if (rheap_grow(&s->cks, &s->capck, s->nck, sizeof *s->cks, 64) != 0) {
        fail(s);
        return;
    }
    for (size_t i = 0; i < s->nckdirty; i++) {
        stackagg_t *a = &s->st[s->ckdirty[i]];
        if (rheap_grow(&s->ckrows, &s->capckrows, s->nckrows, sizeof *s->ckrows, 1024) != 0) {
            fail(s);
            return;
        }
        s->ckrows[s->nckrows++] = (struct ckrow){s->ckdirty[i], s->nck, a->live_blocks, a->live_bytes};
        a->ck_dirty = 0;
    }
    s->nckdirty = 0;
    s->cks[s->nck++] = (struct ckpt){.t = t, .blocks = s->live_blocks, .bytes = s->live_bytes};
}

/* interval_of's search, when the interval is not the one found last. */
static __attribute__((noinline)) size_t interval_find(cv__summary_t *s, uint64_t t)
{
    size_t lo = 0, hi = s->nck; /* cks[lo].t < t; cks[0].t is -1 */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->cks[mid].t < (int64_t)t)
            lo = mid;
        else
            hi = mid;
    }
    s->ck_hint = lo;
    return lo;
}

/* The checkpoint interval holding time t: the last checkpoint before t. The end's
 * never-freed blocks come in time order, mostly from the interval of the one before: a binary
 * search for each (its dependent loads) took most of their summing. */
static inline size_t interval_of(cv__summary_t *s, uint64_t t)
{
    size_t k = s->ck_hint;
    if (k < s->nck && s->cks[k].t < (int64_t)t &&
        (k + 1 == s->nck || s->cks[k + 1].t >= (int64_t)t))
        return k;
    return interval_find(s, t);
}

/* Adds id to the range [*lo, *hi) (empty when equal). */
static void range_add(uint64_t *lo, uint64_t *hi, uint64_t id)
{
    if (*lo == *hi) {
        *lo = id;
        *hi = id + 1;
        return;
    }
    if (id < *lo)
        *lo = id;
    if (id + 1 > *hi)
        *hi = id + 1;
}

/* Appends id, larger than every id k->later holds, as a varint delta. 0, or -1 out of memory. */
static int later_add(struct ckpt *k, uint64_t id)
{
    if (rheap_grow(&k->later, &k->caplater, k->nlater + 9, 1, 64) != 0)
        return -1;
    uint64_t d = id - k->later_last;
    k->later_last = id;
    do {
        k->later[k->nlater++] = (unsigned char)((d & 127) | (d >= 128 ? 128 : 0));
        d >>= 7;
    } while (d);
    return 0;
}

/* The next id of a varint list at *pos, added to *id. 0 at the end. */
static int later_next(const struct ckpt *k, size_t *pos, uint64_t *id)
{
    if (*pos >= k->nlater)
        return 0;
    uint64_t d = 0;
    for (unsigned sh = 0; *pos < k->nlater && sh < 64; sh += 7) {
        unsigned char c = k->later[(*pos)++];
        d |= (uint64_t)(c & 127) << sh;
        if (!(c & 128))
            break;
    }
    *id += d;
    return 1;
}

/* Lists id for checkpoint ck, whose interval it was allocated in; a list past LATER_CHUNK
 * bytes goes to the file. 0, or -1 out of memory or a write error. */
static int later_note(cv__summary_t *s, size_t ck, uint64_t id)
{
    struct ckpt *k = &s->cks[ck];
    if (later_add(k, id) != 0)
        return -1;
    if (k->nlater < LATER_CHUNK)
        return 0;
    char name[4200];
    if (s->later_fd < 0 && (s->later_fd = cv__temp_open(NULL, "later", name, sizeof name)) < 0)
        return -1;
    if (rheap_grow(&s->chunks, &s->capchunks, s->nchunks, sizeof *s->chunks, 64) != 0)
        return -1;
    for (size_t done = 0; done < k->nlater;) {
        ssize_t w = pwrite(s->later_fd, k->later + done, k->nlater - done,
                           (off_t)(s->later_off + done));
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        done += (size_t)w;
    }
    s->chunks[s->nchunks++] = (struct later_chunk){ck, s->later_off, k->nlater};
    s->later_off += k->nlater;
    k->nlater = 0;
    k->later_last = 0;
    return 0;
}

/* k's interval takes in the one after it, n's: their ranges and lists of blocks made one. The
 * blocks of k's list that ended in n's interval stay listed (a reader takes each id once). */
static int absorb(struct ckpt *k, struct ckpt *n)
{
    if (n->free_lo != n->free_hi) {
        range_add(&k->free_lo, &k->free_hi, n->free_lo);
        range_add(&k->free_lo, &k->free_hi, n->free_hi - 1);
    }
    if (!n->nlater)
        return 0;
    struct ckpt m = {0};
    size_t pa = 0, pb = 0;
    uint64_t a = 0, b = 0;
    int ha = later_next(k, &pa, &a), hb = later_next(n, &pb, &b);
    while (ha || hb) {
        uint64_t id;
        if (hb && (!ha || b < a)) {
            id = b;
            hb = later_next(n, &pb, &b);
        } else {
            id = a;
            if (hb && a == b)
                hb = later_next(n, &pb, &b);
            ha = later_next(k, &pa, &a);
        }
        if (later_add(&m, id) != 0) {
            free(m.later);
            return -1;
        }
    }
    free(k->later);
    k->later = m.later;
    k->nlater = m.nlater;
    k->caplater = m.caplater;
    k->later_last = m.later_last;
    return 0;
}

/* After the timeline widened: keeps the first checkpoint and those on the new grid, each
 * dropped one's interval absorbed by the kept one before it. A dropped checkpoint's copies of
 * stacks move to the next kept checkpoint (unless it has its own, which are newer); after the
 * last kept one, their stacks are marked touched again, to be copied at the next. So the
 * checkpoints stay at most about CK_SLICES plus those of the current width. */
static void thin(cv__summary_t *s)
{
    uint64_t mask = ((uint64_t)1 << (s->width_log2 + CK_SHIFT)) - 1;
    size_t *to = malloc(s->nck * sizeof *to), kept = 0;
    if (!to) {
        fail(s);
        return;
    }
    for (size_t i = 0; i < s->nck; i++) {
        if (i == 0 || (((uint64_t)s->cks[i].t + 1) & mask) == 0) {
            if (kept != i) {
                s->cks[kept] = s->cks[i];
                s->cks[i].later = NULL;
            }
            to[i] = kept++;
        } else {
            to[i] = SIZE_MAX; /* absorbed into cks[kept - 1] */
            if (absorb(&s->cks[kept - 1], &s->cks[i]) != 0)
                fail(s);
            free(s->cks[i].later);
            s->cks[i].later = NULL;
        }
    }
    /* The lists' chunks go where the rest of their list went: a kept checkpoint's to its new
     * index, a dropped one's to the kept one before it. */
    for (size_t c = 0; c < s->nchunks; c++) {
        size_t i = s->chunks[c].ck;
        while (to[i] == SIZE_MAX)
            i--;
        s->chunks[c].ck = to[i];
    }
    /* Each dropped checkpoint's rows go to the next kept one: its kept index, or none. */
    size_t next = SIZE_MAX;
    for (size_t i = s->nck; i-- > 0;) {
        if (to[i] != SIZE_MAX)
            next = to[i];
        else
            to[i] = next == SIZE_MAX ? SIZE_MAX : next;
    }
    for (size_t u = 0; u < s->nused; u++)
        s->st[s->used[u]].ck_row_of = 0;
    size_t n = 0;
    for (size_t i = 0; i < s->nckrows; i++) {
        struct ckrow r = s->ckrows[i];
        stackagg_t *a = &s->st[r.bt];
        if (to[r.ck] == SIZE_MAX) {
            if (!a->ck_dirty) {
                if (rheap_grow(&s->ckdirty, &s->capckdirty, s->nckdirty, sizeof *s->ckdirty,
                             1024) != 0) {
                    fail(s);
                    break;
                }
                a->ck_dirty = 1;
                s->ckdirty[s->nckdirty++] = r.bt;
            }
            continue;
        }
        r.ck = to[r.ck];
        if (a->ck_row_of == r.ck + 1) {
            s->ckrows[a->ck_row] = r; /* rows come in checkpoint order: this one is newer */
        } else {
            a->ck_row = n;
            a->ck_row_of = r.ck + 1;
            s->ckrows[n++] = r;
        }
    }
    s->nckrows = n;
    s->nck = kept;
    free(to);
}

/* at()'s bound: the earliest time that ends the current checkpoint interval, falls past the
 * timeline's slices or passes the first marker not yet passed (each saturated at UINT64_MAX, a
 * time at() sends to at_slow too, which is always right). Set after each instant at_slow
 * applies, and lowered by a new marker. */
static void fast_reset(cv__summary_t *s)
{
    unsigned ck = s->width_log2 + CK_SHIFT;
    uint64_t until = UINT64_MAX;
    if (ck < 64 && (s->now >> ck) + 1 < ((uint64_t)1 << (64 - ck)))
        until = ((s->now >> ck) + 1) << ck;
    if (s->width_log2 + 10 < 64 && ((uint64_t)SLICES << s->width_log2) < until) /* 2^10 slices */
        until = (uint64_t)SLICES << s->width_log2;
    if (s->nmarks && s->marks[0] < until)
        until = s->marks[0] + 1;
    s->fast_until = s->started ? until : 0;
}

/* at() for the instants that start the recording, pass a marker, widen the timeline or cross
 * a checkpoint: the clock moved to t. */
static void at_slow(cv__summary_t *s, uint64_t t)
{
    int was = s->started;
    if (s->started) {
        close_instant(s, t, 0);
    } else {
        /* Markers before the first event see an empty heap: nothing to copy, but passed. */
        size_t k = 0;
        while (k < s->nmarks && s->marks[k] < t)
            k++;
        memmove(s->marks, s->marks + k, (s->nmarks - k) * sizeof *s->marks);
        s->nmarks -= k;
        s->started = 1;
    }
    unsigned width = s->width_log2;
    widen(s, t);
    if (s->width_log2 != width)
        thin(s);
    unsigned ck = s->width_log2 + CK_SHIFT;
    if (was && s->now >> ck != t >> ck && (t >> ck) << ck <= INT64_MAX)
        checkpoint(s, (int64_t)((t >> ck) << ck) - 1);
    s->now = t;
    fast_reset(s);
}

/* Moves the clock to t. Events come in time order; one that does not (a clock step the
 * merge could not hide) is counted with the instant being applied. Nearly every event starts
 * an instant, and nearly every instant stays inside the slice and the checkpoint interval of
 * the one before and passes no marker: that case is a few comparisons here, the rest is
 * at_slow's (two calls per event were a fifth of the summaries' counting). */
static inline void at(cv__summary_t *s, uint64_t t)
{
    if (t <= s->now && s->started)
        return;
    /* The same test as "inside the slice range, in the interval of s->now, before no marker",
     * computed once per slow instant (fast_reset). */
    if (t < s->fast_until) {
        close_heap(s);
        s->now = t;
        return;
    }
    at_slow(s, t);
}

/* Puts stack bt on the list of stacks touched since the last checkpoint. */
static __attribute__((noinline)) void ck_list_add(cv__summary_t *s, stackagg_t *a, uint64_t bt)
{
    if (rheap_grow(&s->ckdirty, &s->capckdirty, s->nckdirty, sizeof *s->ckdirty, 1024) != 0) {
        fail(s);
        return;
    }
    a->ck_dirty = 1;
    s->ckdirty[s->nckdirty++] = bt;
}

/* The stack's live totals are about to change (at() has closed the instants before): its
 * picture at the latest high is taken if that high came after its last change, and it goes on
 * the list copied at the next checkpoint unless it is on it. */
static inline void touch(cv__summary_t *s, stackagg_t *a, uint64_t bt)
{
    if (a->peak_seen != s->peaks) {
        a->peak_blocks = a->live_blocks;
        a->peak_bytes = a->live_bytes;
        a->peak_seen = s->peaks;
    }
    if (!a->ck_dirty)
        ck_list_add(s, a, bt);
}

/* The end of the recording: the stacks that did not change since the last high hold what they
 * held then. */
static void peak_pictures(cv__summary_t *s)
{
    for (size_t u = 0; u < s->nused; u++) {
        stackagg_t *a = &s->st[s->used[u]];
        if (a->peak_seen != s->peaks) {
            a->peak_blocks = a->live_blocks;
            a->peak_bytes = a->live_bytes;
            a->peak_seen = s->peaks;
        }
    }
}

void cv__summary_marker(cv__summary_t *s, uint64_t t)
{
    if (s->failed)
        return;
    size_t i = s->nmarks;
    while (i > 0 && s->marks[i - 1] > t)
        i--;
    if (i > 0 && s->marks[i - 1] == t)
        return;
    if (rheap_grow(&s->marks, &s->capmarks, s->nmarks, sizeof *s->marks, 16) != 0) {
        fail(s);
        return;
    }
    memmove(s->marks + i + 1, s->marks + i, (s->nmarks - i) * sizeof *s->marks);
    s->marks[i] = t;
    s->nmarks++;
    if (t < s->fast_until)
        s->fast_until = t + 1; /* at() sends the instant past it to at_slow */
}

void cv__summary_wall(cv__summary_t *s, uint64_t wall_ns)
{
    s->wall = wall_ns;
}

void cv__summary_sampling(cv__summary_t *s, uint64_t interval)
{
    s->interval = interval;
}

void cv__summary_counted(cv__summary_t *s, uint32_t tid, uint64_t allocs, uint64_t bytes)
{
    threadagg_t *th = s->failed ? NULL : thread_of(s, tid);
    if (!th) {
        fail(s);
        return;
    }
    if (!th->counted)
        th->allocs = th->alloc_bytes = 0;
    th->counted = 1;
    th->allocs += (double)allocs;
    th->alloc_bytes += (double)bytes;
    s->counted = 1;
    s->counted_allocs += allocs;
    s->counted_bytes += bytes;
}

void cv__summary_alloc(cv__summary_t *s, const cv__live_t *b)
{
    if (s->failed)
        return;
    double w, wb;
    weigh(s, b->size, &w, &wb);
    /* A stack used already is the inline case; the first allocation of a stack in the
     * recording starts its first_t and min_size (a weight is never 0: blocks stays nonzero). */
    stackagg_t *a;
    if (b->bt < s->capst && s->st[b->bt].on_used) {
        a = &s->st[b->bt];
    } else {
        if (!(a = stack_first(s, b->bt))) {
            fail(s);
            return;
        }
        a->first_t = b->t;
        a->min_size = b->size;
    }
    threadagg_t *th = thread_of(s, b->tid);
    if (!th) {
        fail(s);
        return;
    }
    at(s, b->t);
    touch(s, a, b->bt);
    a->blocks += w;
    a->bytes += wb;
    a->last_t = b->t;
    if (b->size < a->min_size)
        a->min_size = b->size;
    if (b->size > a->max_size)
        a->max_size = b->size;
    a->live_blocks += w;
    a->live_bytes += wb;
    s->live_blocks += w;
    s->live_bytes += wb;
    s->allocs += w;
    s->alloc_bytes += wb;
    slice_t *sl = &s->slice[b->t >> s->width_log2];
    sl->allocs += w;
    sl->alloc_bytes += wb;
    th->allocs += w;
    th->alloc_bytes += wb;
    if (th->pend == PEND_FREED) {
        stackagg_t *p = &s->st[th->pend_bt];
        p->temp_blocks += th->pend_w;
        p->temp_bytes += th->pend_bytes;
    }
    th->pend = PEND_LIVE;
    th->pend_addr = b->addr;
    th->pend_t = b->t;
    th->pend_bt = b->bt;
    th->pend_w = w;
    th->pend_bytes = wb;
    keyagg_t *z = size_of(s, a, b->bt, b->size);
    if (!z) {
        fail(s);
        return;
    }
    z->blocks += w;
    z->bytes += wb;
}

void cv__summary_free(cv__summary_t *s, const cv__live_t *b, uint64_t t, uint32_t freer,
                      uint64_t id)
{
    if (s->failed)
        return;
    stackagg_t *a = &s->st[b->bt]; /* made by summary_alloc */
    threadagg_t *owner = thread_of(s, b->tid), *by = NULL;
    if (freer && freer == b->tid) {
        by = owner; /* mostly: the thread that allocated frees (0: an address reused) */
    } else if (freer) {
        uint32_t gen = s->threads.gen;
        by = thread_of(s, freer);
        /* A freeing thread met for the first time may have grown the table under owner. */
        if (owner && s->threads.gen != gen)
            owner = thread_of(s, b->tid);
    }
    if (!owner || (freer && !by)) {
        fail(s);
        return;
    }
    double w, wb;
    weigh(s, b->size, &w, &wb);
    at(s, t);
    touch(s, a, b->bt);
    uint64_t life = t - b->t;
    if (!a->freed_blocks || life < a->life_min)
        a->life_min = life;
    if (life > a->life_max)
        a->life_max = life;
    a->life_total += life;
    if (s->interval) /* written in profile mode only, as life_total in a trace */
        a->life_weighed += w * (double)life;
    /* The decade: 0 under 1 us, then one more for each power of ten up to 8 (10 s and more),
     * by comparisons rather than a division per decade. */
    unsigned d = 0;
    if (life >= 1000u)
        d = 1u + (life >= 10000u) + (life >= 100000u) + (life >= 1000000u) +
            (life >= 10000000u) + (life >= 100000000u) + (life >= 1000000000u) +
            (life >= 10000000000u);
    a->life[d] += w;
    a->life_bytes[d] += wb;
    a->freed_blocks += w;
    a->freed_bytes += wb;
    a->live_blocks -= w;
    a->live_bytes -= wb;
    struct ckpt *k = &s->cks[s->nck - 1];
    range_add(&k->free_lo, &k->free_hi, id);
    size_t born = interval_of(s, b->t);
    if (born != s->nck - 1 && later_note(s, born, id) != 0)
        fail(s);
    s->live_blocks -= w;
    s->live_bytes -= wb;
    s->frees += w;
    s->freed_bytes += wb;
    slice_t *sl = &s->slice[t >> s->width_log2];
    sl->frees += w;
    sl->freed_bytes += wb;
    if (owner->pend && owner->pend_addr == b->addr && owner->pend_t == b->t)
        owner->pend = PEND_FREED;
    if (by) {
        by->frees += w;
        by->freed_bytes += wb;
        if (freer != b->tid) {
            owner->freed_by_other += w;
            by->frees_of_other += w;
        }
    }
}

/* The never-freed blocks of a trace, while their sums are exact: each block weighs 1, so
 * every sum is an integer, and integers below 2^53 add up exactly in doubles in any order.
 * Every figure they go into is a sum of never-freed bytes of the recording, below leak_sum: a
 * batch starts only while it is under 2^52, and a block of 2^32 bytes or more ends the exact
 * part (128 blocks then add less than 2^39). The blocks come in time order, so in runs of one
 * thread, stack, timeline slice and checkpoint interval: a run's blocks are counted in
 * integers, by size class, and the run added once to its thread, its (stack, slice) entry,
 * each of its (stack, size class) entries, its stack's first and last times and its
 * checkpoint's range of ids. The tables are looked up at the first block of each run, so the
 * entries they make come in the order they did block by block. Returns how many blocks of b it
 * summed (fewer on a large block, or out of memory: failed set); the caller sums the rest. */
static size_t leaked_exact(cv__summary_t *s, const cv__live_t *b, size_t n, uint64_t id)
{
    const unsigned width = s->width_log2;
    uint64_t cls_blocks[33], cls_bytes[33]; /* by size class: under 2^32 bytes, 0 to 32 */
    memset(cls_blocks, 0, sizeof cls_blocks);
    memset(cls_bytes, 0, sizeof cls_bytes);
    size_t i = 0;
    while (i < n && !(b[i].size >> 32)) {
        const cv__live_t *x0 = &b[i];
        const uint32_t tid = x0->tid;
        const uint64_t bt = x0->bt, slice = x0->t >> width;
        const size_t ck = interval_of(s, x0->t);
        const int64_t lo = s->cks[ck].t, hi = ck + 1 < s->nck ? s->cks[ck + 1].t : INT64_MAX;
        uint64_t tmin = x0->t, tmax = x0->t, bytes = 0, classes = 0;
        size_t j = i;
        for (; j < n; j++) {
            const cv__live_t *x = &b[j];
            if (x->tid != tid || x->bt != bt || x->t >> width != slice || (int64_t)x->t <= lo ||
                (int64_t)x->t > hi || x->size >> 32)
                break;
            unsigned c = size_class(x->size);
            cls_blocks[c]++;
            cls_bytes[c] += x->size;
            classes |= (uint64_t)1 << c;
            bytes += x->size;
            tmin = x->t < tmin ? x->t : tmin;
            tmax = x->t > tmax ? x->t : tmax;
        }
        stackagg_t *a = &s->st[bt];
        threadagg_t *th = thread_of(s, tid);
        keyagg_t *l = th ? cached_at(&s->leaks, &a->llast, (uint32_t)slice, bt, SLICES) : NULL;
        if (!l) {
            fail(s);
            return i;
        }
        double nb = (double)(j - i), ny = (double)bytes;
        th->leaked_blocks += nb;
        th->leaked_bytes += ny;
        l->blocks += nb;
        l->bytes += ny;
        while (classes) {
            unsigned c = (unsigned)__builtin_ctzll(classes);
            classes &= classes - 1;
            keyagg_t *z = cached_at(&s->sizes, &a->zlast[c & 3], c, bt, 128);
            if (!z) {
                fail(s);
                return i;
            }
            z->leaked_blocks += (double)cls_blocks[c];
            z->leaked_bytes += (double)cls_bytes[c];
            cls_blocks[c] = cls_bytes[c] = 0;
        }
        if (!a->leak_first || tmin < a->leak_first - 1)
            a->leak_first = tmin + 1; /* + 1: 0 means none */
        if (tmax + 1 > a->leak_last)
            a->leak_last = tmax + 1;
        struct ckpt *k = &s->cks[ck];
        range_add(&k->leak_lo, &k->leak_hi, id + i);
        range_add(&k->leak_lo, &k->leak_hi, id + j - 1);
        s->leak_sum += bytes;
        i = j;
    }
    return i;
}

void cv__summary_leaked_batch(cv__summary_t *s, const cv__live_t *b, size_t n, uint64_t id)
{
    if (s->failed || !n)
        return;
    if (!s->interval && s->leak_sum < LEAK_EXACT) {
        size_t done = leaked_exact(s, b, n, id);
        if (done == n || s->failed)
            return;
        b += done;
        n -= done;
        id += done;
    }
    /* Leaks are drained after the last event, so the slice width is final. */
    const unsigned width = s->width_log2;
    const int weighed = s->interval != 0;
    /* Their ids are consecutive and their times mostly ascending: each run of blocks in one
     * checkpoint interval widens its range of ids once, by its first and last ids. */
    size_t run_ck = interval_of(s, b[0].t);
    uint64_t run_first = id;
    for (size_t i = 0; i < n; i++, id++) {
        const cv__live_t *x = &b[i];
        size_t ck = interval_of(s, x->t);
        if (ck != run_ck) {
            struct ckpt *k = &s->cks[run_ck];
            range_add(&k->leak_lo, &k->leak_hi, run_first);
            range_add(&k->leak_lo, &k->leak_hi, id - 1);
            run_ck = ck;
            run_first = id;
        }
        stackagg_t *a = &s->st[x->bt];
        threadagg_t *th = thread_of(s, x->tid);
        keyagg_t *z = size_of(s, a, x->bt, x->size);
        if (!th || !z) {
            fail(s);
            return;
        }
        if (!a->leak_first || x->t < a->leak_first - 1)
            a->leak_first = x->t + 1; /* + 1: 0 means none */
        if (x->t + 1 > a->leak_last)
            a->leak_last = x->t + 1;
        double w = 1.0, wb = (double)x->size;
        if (weighed)
            weigh(s, x->size, &w, &wb);
        /* These sums are leaked_exact's to bound too: past 2^52 it stays off. */
        s->leak_sum = x->size >= LEAK_EXACT - s->leak_sum ? LEAK_EXACT : s->leak_sum + x->size;
        th->leaked_blocks += w;
        th->leaked_bytes += wb;
        z->leaked_blocks += w;
        z->leaked_bytes += wb;
        uint64_t slice = x->t >> width;
        keyagg_t *l = cached_at(&s->leaks, &a->llast, (uint32_t)slice, x->bt, SLICES);
        if (!l) {
            fail(s);
            return;
        }
        l->blocks += w;
        l->bytes += wb;
    }
    struct ckpt *k = &s->cks[run_ck];
    range_add(&k->leak_lo, &k->leak_hi, run_first);
    range_add(&k->leak_lo, &k->leak_hi, id - 1);
}

void cv__summary_leaked(cv__summary_t *s, const cv__live_t *b, uint64_t id)
{
    cv__summary_leaked_batch(s, b, 1, id);
}

/* ---- Writing the tables ---- */

/* A table's rows, gathered to go in by multi-row INSERTs. SQLite's insert of one row by its own
 * statement costs a step, a reset and the statement's whole program (transaction, cursor
 * opened and closed, statement journal) besides the row: on a build tree's 2,000 recordings
 * these tables took a third of the conversion's CPU, 25 million rows. A row's values wait here
 * until ROWS_BATCH of them go in by one statement; a recording's last rows by statements of 16,
 * 8, 4, 2 and 1 rows (cv__db_insert keeps each). The rows, their order and their rowids are
 * those of one statement per row. */
#define ROWS_BATCH 32
enum { V_NULL, V_INT, V_REAL, V_BLOB, V_TEXT };
typedef struct {
    int kind;
    int len;          /* V_BLOB, V_TEXT */
    union {
        int64_t i;
        double r;
        const void *blob; /* V_BLOB, V_TEXT: valid until the row is written (the table's
                           * batch is 1) */
    } u;
} val_t;

typedef struct {
    const char *table;
    int cols, batch, n; /* n rows gathered, of batch at most */
    val_t *v;           /* batch * cols */
    cv__db_t *db;
    sqlite3 *h;
    cv__btree_t *tree;  /* the table's rows laid into pages (cv__db_tree), or NULL: SQLite's */
} rows_t;

static val_t *val(rows_t *r, int i)
{
    return &r->v[(size_t)r->n * (size_t)r->cols + (size_t)(i - 1)];
}

static void bind_int(rows_t *r, int i, int64_t v)
{
    val_t *x = val(r, i);
    x->kind = V_INT;
    x->u.i = v;
}

static void bind_real(rows_t *r, int i, double v)
{
    val_t *x = val(r, i);
    x->kind = V_REAL;
    x->u.r = v;
}

static void bind_null(rows_t *r, int i)
{
    val(r, i)->kind = V_NULL;
}

static void bind_blob(rows_t *r, int i, const void *p, size_t n)
{
    val_t *x = val(r, i);
    x->kind = V_BLOB;
    x->u.blob = p;
    x->len = (int)n;
}

static void bind_text(rows_t *r, int i, const char *p, size_t n)
{
    bind_blob(r, i, p, n);
    val(r, i)->kind = V_TEXT;
}

/* As cv__bind_wide: an INTEGER when it fits in 64 signed bits, else a REAL. */
static void bind_wide(rows_t *r, int i, cv__wide_t v)
{
    if (v >= INT64_MIN && v <= INT64_MAX)
        bind_int(r, i, (int64_t)v);
    else
        bind_real(r, i, (double)v);
}

/* The gathered rows laid into the table's pages, each with the next rowid, as SQLite's
 * insert would: the values as SQLite stores them in the tables' INTEGER columns (a REAL that is
 * a whole number strictly between INT64_MIN and INT64_MAX becomes an INTEGER; both ends stay
 * REAL, as SQLite's bounds are strict). Numbers only: those tables hold no text.
 * 0, or -1 (the builder says why). */
static int rows_lay(rows_t *r)
{
    cv__bt_value_t v[32];
    const val_t *x = r->v;
    if (r->cols > 32)
        return -1;
    for (int k = 0; k < r->n; k++) {
        for (int j = 0; j < r->cols; j++, x++) {
            if (x->kind == V_INT) {
                v[j] = (cv__bt_value_t){CV__BT_INT, x->u.i, 0};
            } else if (x->kind == V_REAL) {
                double d = x->u.r;
                if (d > -9223372036854775808.0 && d < 9223372036854775808.0 &&
                    (double)(int64_t)d == d)
                    v[j] = (cv__bt_value_t){CV__BT_INT, (int64_t)d, 0};
                else
                    v[j] = (cv__bt_value_t){CV__BT_REAL, 0, d};
            } else if (x->kind == V_NULL) {
                v[j] = (cv__bt_value_t){CV__BT_NULL, 0, 0};
            } else {
                return -1;
            }
        }
        int64_t rowid = cv__btree_rows(r->tree) ? cv__btree_last(r->tree) + 1 : 1;
        if (cv__btree_add(r->tree, rowid, v, (unsigned)r->cols) != 0)
            return -1;
    }
    r->n = 0;
    return 0;
}

/* Writes the gathered rows, in order. 0, or -1 (database error). */
static int rows_flush(rows_t *r)
{
    if (r->tree)
        return rows_lay(r);
    int done = 0;
    while (done < r->n) {
        int k = r->batch;
        while (k > r->n - done)
            k /= 2;
        sqlite3_stmt *st = cv__db_insert(r->db, r->table, r->cols, k);
        if (!st)
            return -1;
        const val_t *x = &r->v[(size_t)done * (size_t)r->cols];
        for (int j = 1; j <= k * r->cols; j++, x++) {
            if (x->kind == V_INT)
                sqlite3_bind_int64(st, j, x->u.i);
            else if (x->kind == V_REAL)
                sqlite3_bind_double(st, j, x->u.r);
            else if (x->kind == V_BLOB)
                sqlite3_bind_blob(st, j, x->u.blob, x->len, SQLITE_TRANSIENT);
            else if (x->kind == V_TEXT)
                sqlite3_bind_text(st, j, x->u.blob, x->len, SQLITE_TRANSIENT);
            else
                sqlite3_bind_null(st, j);
        }
        int rc = sqlite3_step(st);
        sqlite3_reset(st);
        if (rc != SQLITE_DONE)
            return -1;
        done += k;
    }
    r->n = 0;
    return 0;
}

static void bind_bt(rows_t *st, int i, uint64_t bt)
{
    if (bt)
        bind_int(st, i, (int64_t)bt);
    else
        bind_null(st, i);
}

/* A count or a byte total, weighed in profile mode: rounded to an integer, a REAL from 2^63 on
 * (the sizes of a hostile recording), never wrapped. */
static void bind_w(rows_t *st, int i, double v)
{
    if (v > -9223372036854775808.0 && v < 9223372036854775808.0)
        bind_int(st, i, (int64_t)llround(v));
    else
        bind_real(st, i, v);
}

static void bind_opt(rows_t *st, int i, uint64_t v, int present)
{
    if (present)
        bind_int(st, i, (int64_t)v);
    else
        bind_null(st, i);
}

/* Sets pid and recording, and takes the row: the batch goes in when full. 0, or -1. */
static int put(cv__summary_t *s, rows_t *st)
{
    bind_int(st, 1, s->pid);
    bind_int(st, 2, s->recording);
    return ++st->n == st->batch ? rows_flush(st) : 0;
}

enum { Q_STACK, Q_LIFE, Q_SIZE, Q_LEAK, Q_THREAD, Q_SLICE, Q_REC, Q_MARK, Q_CK, Q_CKSTACK,
       Q_SITE, Q_SITELIFE, Q_SITELEAK, Q_RECSIZE, Q_SITEGROWTH, Q_N };

/* Each table, its columns, and the rows a statement takes: 1 for checkpoints and site_growth
 * (their blob and text are buffers freed once the row is taken) and recording_stats (a row a
 * recording). */
static const struct {
    const char *table;
    int cols, batch;
} q_tab[Q_N] = {
    [Q_STACK] = {"stack_stats", 22, ROWS_BATCH},
    [Q_LIFE] = {"stack_lifetimes", 6, ROWS_BATCH},
    [Q_SIZE] = {"stack_sizes", 8, ROWS_BATCH},
    [Q_LEAK] = {"stack_leaks", 6, ROWS_BATCH},
    [Q_THREAD] = {"thread_stats", 11, ROWS_BATCH},
    [Q_SLICE] = {"timeline", 12, ROWS_BATCH},
    [Q_REC] = {"recording_stats", 13, 1},
    [Q_MARK] = {"marker_stacks", 6, ROWS_BATCH},
    [Q_CK] = {"checkpoints", 11, 1},
    [Q_CKSTACK] = {"checkpoint_stacks", 6, ROWS_BATCH},
    [Q_SITE] = {"site_stats", 29, ROWS_BATCH},
    [Q_SITELIFE] = {"site_lifetimes", 6, ROWS_BATCH},
    [Q_SITELEAK] = {"site_leaks", 6, ROWS_BATCH},
    [Q_RECSIZE] = {"recording_sizes", 7, ROWS_BATCH},
    [Q_SITEGROWTH] = {"site_growth", 8, 1},
};

/* The tables' rows being gathered, made at the first recording's end and kept. */
struct batches {
    rows_t r[Q_N];
    rows_t *q[Q_N];
};

static void batches_free(struct batches *b)
{
    for (int i = 0; b && i < Q_N; i++)
        free(b->r[i].v);
    free(b);
}

static struct batches *batches_make(void)
{
    struct batches *b = calloc(1, sizeof *b);
    for (int i = 0; b && i < Q_N; i++) {
        b->r[i].table = q_tab[i].table;
        b->r[i].cols = q_tab[i].cols;
        b->r[i].batch = q_tab[i].batch;
        b->r[i].v = calloc((size_t)q_tab[i].batch * (size_t)q_tab[i].cols, sizeof(val_t));
        b->q[i] = &b->r[i];
        if (!b->r[i].v) {
            batches_free(b);
            return NULL;
        }
    }
    return b;
}


/* The checkpoints, with the blocks that outlive their interval, and their per-stack copies. */
static int cmp_chunk(const void *x, const void *y)
{
    const struct later_chunk *a = x, *b = y;
    return a->ck != b->ck ? (a->ck < b->ck ? -1 : 1) : (a->off < b->off ? -1 : a->off > b->off);
}

/* A recording's checkpoint_stacks rows by (stack, checkpoint), the order of the index
 * checkpoint_stacks_by_stack: inserted so, each row's index entry lands beside the one before.
 * An index built after the load sorted every row of the run again at the end: on a build's
 * 7.2 M rows the conversion's CPU is the same either way, but that sort set its peak memory
 * (620 MB against 320 MB) and came after the last recording. bt 0 (none) comes first, as NULL
 * does in the index. */
static int cmp_ckrow(const void *x, const void *y)
{
    const struct ckrow *a = x, *b = y;
    return a->bt != b->bt ? (a->bt < b->bt ? -1 : 1) : (a->ck < b->ck ? -1 : a->ck > b->ck);
}

/* Puts the checkpoints' rows in (stack, checkpoint) order, as cmp_ckrow does. They come in
 * checkpoint order (appended at each checkpoint; thin keeps their order and its new indices
 * keep the old ones' order), so a stable pass by stack is enough: the rows counted per stack,
 * the recording's stacks in id order give each one's place, each row moved there once. A qsort
 * of them was 1.6% of a build tree's conversion. */
static void sort_ckrows(cv__summary_t *s)
{
    if (s->capckrows2 < s->nckrows) {
        struct ckrow *x = realloc(s->ckrows2, s->capckrows * sizeof *x);
        if (!x) {
            qsort(s->ckrows, s->nckrows, sizeof *s->ckrows, cmp_ckrow);
            return;
        }
        s->ckrows2 = x;
        s->capckrows2 = s->capckrows;
    }
    struct ckrow *to = s->ckrows2;
    for (size_t i = 0; i < s->nckrows; i++)
        s->st[s->ckrows[i].bt].ck_at++;
    sort_used(s);
    size_t at = 0;
    for (size_t u = 0; u < s->nused; u++) {
        stackagg_t *a = &s->st[s->used[u]];
        size_t n = a->ck_at;
        a->ck_at = (uint32_t)at;
        at += n;
    }
    for (size_t i = 0; i < s->nckrows; i++)
        to[s->st[s->ckrows[i].bt].ck_at++] = s->ckrows[i];
    for (size_t u = 0; u < s->nused; u++)
        s->st[s->used[u]].ck_at = 0;
    s->ckrows2 = s->ckrows;
    s->ckrows = to;
    size_t cap = s->capckrows;
    s->capckrows = s->capckrows2;
    s->capckrows2 = cap;
}

static int cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

/* Makes k's list whole again from its chunks c[0 .. n) in the file and what memory holds:
 * every id once, ascending. 0, or -1 out of memory or a read error. */
static int later_gather(cv__summary_t *s, struct ckpt *k, const struct later_chunk *c, size_t n)
{
    size_t bytes = k->nlater, most = 0;
    for (size_t i = 0; i < n; i++) {
        bytes += c[i].len;
        most = c[i].len > most ? c[i].len : most;
    }
    unsigned char *raw = malloc(most ? most : 1);
    uint64_t *ids = malloc((bytes ? bytes : 1) * sizeof *ids); /* a varint is a byte at least */
    int rc = raw && ids ? 0 : -1;
    size_t nids = 0;
    /* Each chunk, then memory's rest, decoded from its own start. */
    for (size_t i = 0; rc == 0 && i <= n; i++) {
        struct ckpt part = *k;
        if (i < n) {
            part = (struct ckpt){.later = raw, .nlater = c[i].len};
            for (size_t done = 0; rc == 0 && done < c[i].len;) {
                ssize_t r = pread(s->later_fd, raw + done, c[i].len - done, (off_t)(c[i].off + done));
                if (r < 0 && errno == EINTR)
                    continue;
                if (r <= 0)
                    rc = -1;
                else
                    done += (size_t)r;
            }
        }
        size_t pos = 0;
        uint64_t id = 0;
        while (rc == 0 && later_next(&part, &pos, &id))
            ids[nids++] = id;
    }
    if (rc == 0) {
        qsort(ids, nids, sizeof *ids, cmp_u64);
        k->nlater = 0;
        k->later_last = 0;
        for (size_t i = 0; rc == 0 && i < nids; i++)
            if (i == 0 || ids[i] != ids[i - 1])
                rc = later_add(k, ids[i]);
    }
    free(raw);
    free(ids);
    return rc;
}

/* A range of row ids [lo, hi) as written: moved by base, unless empty (0, 0). */
static void bind_ids(rows_t *st, int i, uint64_t lo, uint64_t hi, uint64_t base)
{
    if (lo == hi)
        base = 0;
    bind_int(st, i, (sqlite3_int64)(lo + base));
    bind_int(st, i + 1, (sqlite3_int64)(hi + base));
}

/* k's list of ids with base added: only its first delta changes. The list in *buf (NULL when
 * base is 0: k->later itself), its length in *n. 0, or -1 out of memory. */
static int later_moved(const struct ckpt *k, uint64_t base, unsigned char **buf, size_t *n)
{
    *buf = NULL;
    *n = k->nlater;
    if (!base || !k->nlater)
        return 0;
    size_t pos = 0;
    uint64_t first = 0;
    later_next(k, &pos, &first);
    unsigned char *b = malloc(k->nlater + 10);
    if (!b)
        return -1;
    size_t len = 0;
    uint64_t d = first + base;
    do {
        b[len++] = (unsigned char)((d & 127) | (d >= 128 ? 128 : 0));
        d >>= 7;
    } while (d);
    memcpy(b + len, k->later + pos, k->nlater - pos);
    *buf = b;
    *n = len + k->nlater - pos;
    return 0;
}

static double rounded(double v);

static int write_checkpoints(cv__summary_t *s, rows_t **q, uint64_t base)
{
    if (s->nchunks)
        qsort(s->chunks, s->nchunks, sizeof *s->chunks, cmp_chunk);
    size_t c = 0;
    for (size_t i = 0; i < s->nck; i++) {
        struct ckpt *k = &s->cks[i];
        size_t c0 = c;
        while (c < s->nchunks && s->chunks[c].ck == i)
            c++;
        if (c > c0 && later_gather(s, k, s->chunks + c0, c - c0) != 0)
            return -1;
        bind_int(q[Q_CK], 3, (sqlite3_int64)i);
        bind_int(q[Q_CK], 4, k->t);
        bind_ids(q[Q_CK], 5, k->free_lo, k->free_hi, base);
        bind_ids(q[Q_CK], 7, k->leak_lo, k->leak_hi, base);
        bind_w(q[Q_CK], 9, k->blocks);
        bind_w(q[Q_CK], 10, k->bytes);
        unsigned char *moved;
        size_t nmoved;
        if (later_moved(k, base, &moved, &nmoved) != 0)
            return -1;
        if (k->nlater)
            bind_blob(q[Q_CK], 11, moved ? moved : k->later, nmoved);
        else
            bind_null(q[Q_CK], 11);
        int rc = put(s, q[Q_CK]);
        free(moved);
        if (rc != 0)
            return -1;
    }
    if (s->nckrows)
        sort_ckrows(s);
    /* A reader takes a stack's latest row at or before a checkpoint, and no row for nothing
     * live: a row whose figures, as written, are those of the stack's row before it (or, its
     * first, are zero) tells nothing and is left out. A stack that allocated and freed
     * between two checkpoints makes such rows: 79% of a build tree's 7.2 M, where the index
     * made this table the costliest of the summaries (5.3 of a conversion's 46 s of CPU). */
    uint64_t prev_bt = UINT64_MAX;
    double prev_blocks = 0, prev_bytes = 0;
    for (size_t i = 0; i < s->nckrows; i++) {
        const struct ckrow *r = &s->ckrows[i];
        double blocks = rounded(r->blocks), bytes = rounded(r->bytes);
        if (r->bt != prev_bt) {
            prev_bt = r->bt;
            prev_blocks = prev_bytes = 0;
        }
        if (blocks == prev_blocks && bytes == prev_bytes)
            continue;
        prev_blocks = blocks;
        prev_bytes = bytes;
        bind_int(q[Q_CKSTACK], 3, (sqlite3_int64)r->ck);
        bind_bt(q[Q_CKSTACK], 4, r->bt);
        bind_w(q[Q_CKSTACK], 5, r->blocks);
        bind_w(q[Q_CKSTACK], 6, r->bytes);
        if (put(s, q[Q_CKSTACK]) != 0)
            return -1;
    }
    return 0;
}

static double rounded(double v);

/* Adds a stack's row of stack_stats, as written, to its totals over the conversion. */
static int total_add(cv__summary_t *s, size_t bt, const stackagg_t *a)
{
    if (bt >= s->captot && grow_zeroed(&s->tot, &s->captot, bt, sizeof *s->tot) != 0)
        return -1;
    total_t *t = &s->tot[bt];
    t->recordings += 1;
    t->blocks += rounded(a->blocks);
    t->bytes += rounded(a->bytes);
    t->leaked_blocks += rounded(a->live_blocks);
    t->leaked_bytes += rounded(a->live_bytes);
    t->peak_blocks += rounded(a->peak_blocks);
    t->peak_bytes += rounded(a->peak_bytes);
    t->temp_blocks += rounded(a->temp_blocks);
    t->temp_bytes += rounded(a->temp_bytes);
    return 0;
}

/* Adds a stack's rows of stack_lifetimes, as written, to its lifetimes over the conversion.
 * Apart from total_add: a stack that freed nothing (most leaks) needs no room here. */
static int life_total_add(cv__summary_t *s, size_t bt, const stackagg_t *a)
{
    if (bt >= s->caplifetot &&
        grow_zeroed(&s->lifetot, &s->caplifetot, bt, sizeof *s->lifetot) != 0)
        return -1;
    life_total_t *t = &s->lifetot[bt];
    for (int d = 0; d < 9; d++) {
        t->blocks[d] += rounded(a->life[d]);
        t->bytes[d] += rounded(a->life_bytes[d]);
    }
    return 0;
}

/* The recording's slices, as written to `timeline`, onto the timeline of every recording
 * together; its end takes back what it left live. 0, or -1 out of memory. */
static int tree_add(cv__summary_t *s)
{
    if (!s->tree && !(s->tree = cv__treeline_create()))
        return -1;
    double left_blocks = 0, left_bytes = 0;
    for (uint64_t i = 0; i <= s->now >> s->width_log2; i++) {
        const slice_t *sl = &s->slice[i];
        double v[CV_TL_N] = {0};
        v[CV_TL_ALLOCS] = rounded(sl->allocs);
        v[CV_TL_ALLOC_BYTES] = rounded(sl->alloc_bytes);
        v[CV_TL_FREES] = rounded(sl->frees);
        v[CV_TL_FREED_BYTES] = rounded(sl->freed_bytes);
        v[CV_TL_STARTED] = i == 0;
        left_blocks += v[CV_TL_ALLOCS] - v[CV_TL_FREES];
        left_bytes += v[CV_TL_ALLOC_BYTES] - v[CV_TL_FREED_BYTES];
        int any = 0;
        for (int k = 0; k < CV_TL_N; k++)
            any |= v[k] != 0;
        if (any && cv__treeline_add(s->tree, s->wall + (i << s->width_log2), v) != 0)
            return -1;
    }
    double end[CV_TL_N] = {0};
    end[CV_TL_ENDED_BLOCKS] = left_blocks;
    end[CV_TL_ENDED_BYTES] = left_bytes;
    end[CV_TL_ENDED] = 1;
    return cv__treeline_add(s->tree, s->wall + s->now, end);
}

static int write_tables(cv__summary_t *s, rows_t **q)
{
    sort_used(s);
    for (size_t u = 0; u < s->nused; u++) {
        uint64_t bt = s->used[u];
        stackagg_t *a = &s->st[bt];
        if (!a->blocks)
            continue;
        if (total_add(s, bt, a) != 0 || (a->freed_blocks && life_total_add(s, bt, a) != 0)) {
            s->failed = 1;
            return 0;
        }
        rows_t *st = q[Q_STACK];
        bind_bt(st, 3, bt);
        double v[] = {a->blocks, a->bytes, a->freed_blocks, a->freed_bytes, a->live_blocks,
                      a->live_bytes, a->temp_blocks, a->temp_bytes};
        for (int i = 0; i < 8; i++)
            bind_w(st, 4 + i, v[i]);
        bind_int(st, 12, (sqlite3_int64)a->first_t);
        bind_int(st, 13, (sqlite3_int64)a->last_t);
        bind_opt(st, 14, a->leak_first - 1, a->leak_first != 0);
        bind_opt(st, 15, a->leak_last - 1, a->leak_last != 0);
        bind_wide(st, 16, a->min_size);
        bind_wide(st, 17, a->max_size);
        bind_opt(st, 18, a->life_min, a->freed_blocks != 0);
        bind_opt(st, 19, a->life_max, a->freed_blocks != 0);
        if (!a->freed_blocks)
            bind_null(st, 20);
        else if (s->interval)
            bind_w(st, 20, a->life_weighed);
        else
            bind_wide(st, 20, a->life_total);
        bind_w(st, 21, a->peak_blocks);
        bind_w(st, 22, a->peak_bytes);
        if (put(s, st) != 0)
            return -1;
        for (int d = 0; d < 9; d++) {
            if (!a->life[d])
                continue;
            bind_bt(q[Q_LIFE], 3, bt);
            bind_int(q[Q_LIFE], 4, d);
            bind_w(q[Q_LIFE], 5, a->life[d]);
            bind_w(q[Q_LIFE], 6, a->life_bytes[d]);
            if (put(s, q[Q_LIFE]) != 0)
                return -1;
        }
    }
    for (size_t i = 0; i <= s->leaks.mask; i++) {
        uint64_t key = s->leaks.keys[i];
        if (!key)
            continue;
        const keyagg_t *l = (const keyagg_t *)(s->leaks.vals + i * s->leaks.vsize);
        bind_bt(q[Q_LEAK], 3, (key - 1) / SLICES);
        bind_int(q[Q_LEAK], 4, (sqlite3_int64)((key - 1) % SLICES));
        bind_w(q[Q_LEAK], 5, l->blocks);
        bind_w(q[Q_LEAK], 6, l->bytes);
        if (put(s, q[Q_LEAK]) != 0)
            return -1;
    }
    for (size_t i = 0; i <= s->sizes.mask; i++) {
        uint64_t key = s->sizes.keys[i];
        if (!key)
            continue;
        const keyagg_t *z = (const keyagg_t *)(s->sizes.vals + i * s->sizes.vsize);
        unsigned cls = (unsigned)((key - 1) % 128);
        bind_bt(q[Q_SIZE], 3, (key - 1) / 128);
        bind_wide(q[Q_SIZE], 4, cls ? (cv__wide_t)1 << (cls - 1) : 0);
        bind_w(q[Q_SIZE], 5, z->blocks);
        bind_w(q[Q_SIZE], 6, z->bytes);
        bind_w(q[Q_SIZE], 7, z->leaked_blocks);
        bind_w(q[Q_SIZE], 8, z->leaked_bytes);
        if (put(s, q[Q_SIZE]) != 0)
            return -1;
    }
    for (size_t i = 0; i <= s->threads.mask; i++) {
        if (!s->threads.keys[i])
            continue;
        const threadagg_t *t = (const threadagg_t *)(s->threads.vals + i * s->threads.vsize);
        bind_int(q[Q_THREAD], 3, t->tid);
        double v[] = {t->allocs, t->alloc_bytes, t->frees, t->freed_bytes, t->leaked_blocks,
                      t->leaked_bytes, t->freed_by_other, t->frees_of_other};
        for (int k = 0; k < 8; k++)
            bind_w(q[Q_THREAD], 4 + k, v[k]);
        if (put(s, q[Q_THREAD]) != 0)
            return -1;
    }
    if (s->started && tree_add(s) != 0) {
        s->failed = 1;
        return 0;
    }
    if (s->started) {
        double live = 0, blocks = 0;
        for (uint64_t i = 0; i <= s->now >> s->width_log2; i++) {
            const slice_t *sl = &s->slice[i];
            double mx = sl->seen && sl->max_live > live ? sl->max_live : live;
            live += sl->alloc_bytes - sl->freed_bytes;
            blocks += sl->allocs - sl->frees;
            bind_int(q[Q_SLICE], 3, (sqlite3_int64)i);
            bind_int(q[Q_SLICE], 4, (sqlite3_int64)(i << s->width_log2));
            bind_int(q[Q_SLICE], 5, (sqlite3_int64)((i + 1) << s->width_log2));
            double v[] = {mx, live, blocks, sl->allocs, sl->alloc_bytes, sl->frees, sl->freed_bytes};
            for (int k = 0; k < 7; k++)
                bind_w(q[Q_SLICE], 6 + k, v[k]);
            if (put(s, q[Q_SLICE]) != 0)
                return -1;
        }
    }
    for (size_t i = 0; i < s->nmrows; i++) {
        bind_int(q[Q_MARK], 3, (sqlite3_int64)s->mrows[i].t);
        bind_bt(q[Q_MARK], 4, s->mrows[i].bt);
        bind_w(q[Q_MARK], 5, s->mrows[i].blocks);
        bind_w(q[Q_MARK], 6, s->mrows[i].bytes);
        if (put(s, q[Q_MARK]) != 0)
            return -1;
    }
    /* Profile mode: the calls and bytes the tracer counted, exact, rather than estimates. */
    double v[] = {s->counted ? (double)s->counted_allocs : s->allocs,
                  s->counted ? (double)s->counted_bytes : s->alloc_bytes, s->frees,
                  s->freed_bytes, s->live_blocks, s->live_bytes};
    for (int k = 0; k < 6; k++)
        bind_w(q[Q_REC], 3 + k, v[k]);
    bind_int(q[Q_REC], 9, (sqlite3_int64)s->now);
    bind_int(q[Q_REC], 10, (sqlite3_int64)s->peak_t);
    bind_w(q[Q_REC], 11, s->peak_bytes);
    bind_w(q[Q_REC], 12, s->peak_blocks);
    bind_int(q[Q_REC], 13, (sqlite3_int64)((uint64_t)1 << s->width_log2));
    return put(s, q[Q_REC]);
}

/* ---- Per site ----
 * The per-site tables hold what the canned queries computed from the per-stack rows: the sum
 * of each stack's row as written (rounded, in profile mode, stack by stack, as SQL's sum() over
 * stack_stats added them), and the stack that stands for the site in each question, the first
 * of `ORDER BY figure DESC, bt` among the site's stacks. Stacks are met in bt order, so the
 * first stack with the largest figure is kept. */

/* A figure as bind_w writes it. */
static double rounded(double v)
{
    return v > -9223372036854775808.0 && v < 9223372036854775808.0 ? (double)llround(v) : v;
}

/* The stack with the largest figure so far (first on ties); none until one is offered. */
typedef struct {
    double best;
    uint64_t bt;
    int any;
} pick_t;

static void pick(pick_t *p, double v, uint64_t bt)
{
    if (!p->any || v > p->best) {
        p->best = v;
        p->bt = bt;
        p->any = 1;
    }
}

static void bind_pick(rows_t *st, int i, const pick_t *p)
{
    if (p->any)
        bind_bt(st, i, p->bt);
    else
        bind_null(st, i);
}

struct siteagg {
    uint32_t site;
    double stacks, blocks, bytes, freed_blocks, freed_bytes, leaked_blocks, leaked_bytes;
    double temp_blocks, temp_bytes, peak_blocks, peak_bytes, life_weighed;
    uint64_t first_t, last_t, leak_first, leak_last, min_size, max_size, life_min, life_max;
    int freed;                        /* a stack of it freed a block: the lifetimes are set */
    cv__wide_t life_total;
    double life[9], life_bytes[9];
    int has_life[9];
    pick_t by_bytes, by_blocks, by_leak, by_temp, by_peak, by_growth;
    /* Its never-freed blocks by phase of queries/growth.sql's default (the table site_growth). */
    double ph_blocks[GROWTH_PHASES], ph_bytes[GROWTH_PHASES];
    int ph_has[GROWTH_PHASES], growth;
};

/* The entry of site `site` for this recording, made zeroed when new. NULL: out of memory. */
static struct siteagg *site_entry(cv__summary_t *s, uint32_t site)
{
    if (site >= s->capslot &&
        grow_zeroed(&s->slot_of, &s->capslot, site, sizeof *s->slot_of) != 0)
        return NULL;
    if (s->slot_of[site])
        return &s->sagg[s->slot_of[site] - 1];
    if (rheap_grow(&s->sagg, &s->capsagg, s->nsagg, sizeof *s->sagg, 64) != 0)
        return NULL;
    struct siteagg *g = &s->sagg[s->nsagg++];
    memset(g, 0, sizeof *g);
    g->site = site;
    s->slot_of[site] = (uint32_t)s->nsagg;
    return g;
}

/* Adds stack bt's row (as write_tables wrote it) into its site's entry. */
static void site_add(cv__summary_t *s, struct siteagg *g, const stackagg_t *a, uint64_t bt)
{
    double blocks = rounded(a->blocks), bytes = rounded(a->bytes);
    double leaked_blocks = rounded(a->live_blocks), leaked_bytes = rounded(a->live_bytes);
    double temp_blocks = rounded(a->temp_blocks);
    double peak_blocks = rounded(a->peak_blocks), peak_bytes = rounded(a->peak_bytes);
    int first = g->stacks == 0;
    g->stacks++;
    g->blocks += blocks;
    g->bytes += bytes;
    g->freed_blocks += rounded(a->freed_blocks);
    g->freed_bytes += rounded(a->freed_bytes);
    g->leaked_blocks += leaked_blocks;
    g->leaked_bytes += leaked_bytes;
    g->temp_blocks += temp_blocks;
    g->temp_bytes += rounded(a->temp_bytes);
    g->peak_blocks += peak_blocks;
    g->peak_bytes += peak_bytes;
    if (first || a->first_t < g->first_t)
        g->first_t = a->first_t;
    if (first || a->last_t > g->last_t)
        g->last_t = a->last_t;
    if (a->leak_first && (!g->leak_first || a->leak_first < g->leak_first))
        g->leak_first = a->leak_first;
    if (a->leak_last > g->leak_last)
        g->leak_last = a->leak_last;
    if (first || a->min_size < g->min_size)
        g->min_size = a->min_size;
    if (first || a->max_size > g->max_size)
        g->max_size = a->max_size;
    if (a->freed_blocks) {
        if (!g->freed || a->life_min < g->life_min)
            g->life_min = a->life_min;
        if (!g->freed || a->life_max > g->life_max)
            g->life_max = a->life_max;
        g->freed = 1;
        g->life_total += a->life_total;
        g->life_weighed += rounded(a->life_weighed);
    }
    for (int d = 0; d < 9; d++) {
        if (!a->life[d])
            continue;
        g->life[d] += rounded(a->life[d]);
        g->life_bytes[d] += rounded(a->life_bytes[d]);
        g->has_life[d] = 1;
    }
    pick(&g->by_bytes, bytes, bt);
    pick(&g->by_blocks, blocks, bt);
    pick(&g->by_temp, temp_blocks, bt);
    if (leaked_blocks > 0)
        pick(&g->by_leak, leaked_bytes, bt);
    if (peak_blocks > 0)
        pick(&g->by_peak, peak_bytes, bt);
    if (a->leak_rows)
        pick(&g->by_growth, a->leak_rows_bytes, bt);
    (void)s;
}

static int put_site(cv__summary_t *s, rows_t *st, const struct siteagg *g)
{
    bind_int(st, 3, g->site);
    double v[] = {g->stacks, g->blocks, g->bytes, g->freed_blocks, g->freed_bytes,
                  g->leaked_blocks, g->leaked_bytes, g->temp_blocks, g->temp_bytes};
    for (int i = 0; i < 9; i++)
        bind_w(st, 4 + i, v[i]);
    bind_int(st, 13, (sqlite3_int64)g->first_t);
    bind_int(st, 14, (sqlite3_int64)g->last_t);
    bind_opt(st, 15, g->leak_first - 1, g->leak_first != 0);
    bind_opt(st, 16, g->leak_last - 1, g->leak_last != 0);
    bind_wide(st, 17, g->min_size);
    bind_wide(st, 18, g->max_size);
    bind_opt(st, 19, g->life_min, g->freed);
    bind_opt(st, 20, g->life_max, g->freed);
    if (!g->freed)
        bind_null(st, 21);
    else if (s->interval)
        bind_w(st, 21, g->life_weighed);
    else
        bind_wide(st, 21, g->life_total);
    bind_w(st, 22, g->peak_blocks);
    bind_w(st, 23, g->peak_bytes);
    bind_pick(st, 24, &g->by_bytes);
    bind_pick(st, 25, &g->by_blocks);
    bind_pick(st, 26, &g->by_leak);
    bind_pick(st, 27, &g->by_temp);
    bind_pick(st, 28, &g->by_peak);
    bind_pick(st, 29, &g->by_growth);
    return put(s, st);
}

/* ---- Growth's default phases (site_growth) ----
 * queries/growth.sql cuts a recording into phases of whole timeline slices and lists each
 * site's never-freed bytes per phase; building that string per site and recording in SQL took
 * 3 s of a build tree's 120,000 rows. Its default cut (GROWTH_PHASES phases) is made here from
 * the site_leaks rows as written, with the query's arithmetic. */

/* The recording's phases: its slices (the rows of `timeline`) in at most GROWTH_PHASES groups. */
static uint64_t growth_slices(const cv__summary_t *s)
{
    return s->started ? (s->now >> s->width_log2) + 1 : 0;
}

/* Adds the site_leaks row (site, slice) as written into its site's phase. 1: out of memory or
 * a site without an entry (never: a site with leaks has a stack with blocks). */
static int growth_add(cv__summary_t *s, uint32_t site, uint64_t slice, const keyagg_t *row)
{
    uint64_t slices = growth_slices(s);
    uint64_t n = slices < GROWTH_PHASES ? slices : GROWTH_PHASES;
    if (site >= s->capslot || !s->slot_of[site] || slice >= slices)
        return 1;
    struct siteagg *g = &s->sagg[s->slot_of[site] - 1];
    uint64_t k = slice * n / slices;
    g->ph_blocks[k] += rounded(row->blocks);
    g->ph_bytes[k] += rounded(row->bytes);
    g->ph_has[k] = 1;
    g->growth = 1;
    return 0;
}

/* A figure as SQL's sum() of the rows prints it: an integer. */
static int put_figure(char *buf, size_t cap, double v)
{
    return snprintf(buf, cap, "%.0f", v);
}

static int put_growth(cv__summary_t *s, rows_t *st, const struct siteagg *g)
{
    uint64_t slices = growth_slices(s);
    uint64_t n = slices < GROWTH_PHASES ? slices : GROWTH_PHASES;
    char text[GROWTH_PHASES * 24];
    size_t len = 0;
    double blocks = 0, bytes = 0;
    int leaking = 0;
    for (uint64_t k = 0; k < n; k++) {
        if (k)
            text[len++] = ',';
        int w = put_figure(text + len, sizeof text - len, g->ph_has[k] ? g->ph_bytes[k] : 0);
        if (w < 0 || (size_t)w >= sizeof text - len)
            return -1;
        len += (size_t)w;
        blocks += g->ph_blocks[k];
        bytes += g->ph_bytes[k];
        leaking += g->ph_has[k];
    }
    bind_int(st, 3, g->site);
    bind_int(st, 4, (int64_t)n);
    bind_int(st, 5, leaking);
    bind_w(st, 6, blocks);
    bind_w(st, 7, bytes);
    bind_text(st, 8, text, len);
    return put(s, st);
}

/* site_stats, site_lifetimes, site_leaks and recording_sizes of the recording: its per-stack
 * figures added up per site (or per size class), after write_tables. 1 out of memory, -1 a
 * database error. */
static int write_sites(cv__summary_t *s, rows_t **q, cv__sites_t *sites)
{
    /* Each stack's never-freed bytes as its stack_leaks rows hold them, the figure that picks
     * the stack of queries/growth.sql. */
    for (size_t i = 0; i <= s->leaks.mask; i++) {
        uint64_t key = s->leaks.keys[i];
        if (!key)
            continue;
        const keyagg_t *l = (const keyagg_t *)(s->leaks.vals + i * s->leaks.vsize);
        stackagg_t *a = &s->st[(key - 1) / SLICES];
        a->leak_rows = 1;
        a->leak_rows_bytes += rounded(l->bytes);
    }
    s->nsagg = 0;
    int rc = 0;
    sort_used(s);
    for (size_t u = 0; rc == 0 && u < s->nused; u++) {
        uint64_t bt = s->used[u];
        stackagg_t *a = &s->st[bt];
        if (!a->blocks)
            continue;
        uint32_t site = cv__sites_of(sites, bt);
        struct siteagg *g = site ? site_entry(s, site) : NULL;
        if (g)
            site_add(s, g, a, bt);
        else
            rc = 1;
    }
    for (size_t i = 0; rc == 0 && i < s->nsagg; i++) {
        const struct siteagg *g = &s->sagg[i];
        rc = put_site(s, q[Q_SITE], g);
        for (int d = 0; rc == 0 && d < 9; d++) {
            if (!g->has_life[d])
                continue;
            bind_int(q[Q_SITELIFE], 3, g->site);
            bind_int(q[Q_SITELIFE], 4, d);
            bind_w(q[Q_SITELIFE], 5, g->life[d]);
            bind_w(q[Q_SITELIFE], 6, g->life_bytes[d]);
            rc = put(s, q[Q_SITELIFE]);
        }
    }
    /* Never-freed blocks per site and timeline slice, and the recording's size classes. */
    table_t per = {0};
    if (rc == 0 && table_reset(&per, sizeof(keyagg_t)) != 0)
        rc = 1;
    for (size_t i = 0; rc == 0 && i <= s->leaks.mask; i++) {
        uint64_t key = s->leaks.keys[i];
        if (!key)
            continue;
        const keyagg_t *l = (const keyagg_t *)(s->leaks.vals + i * s->leaks.vsize);
        uint32_t site = cv__sites_of(sites, (key - 1) / SLICES);
        keyagg_t *g = site ? table_at(&per, (uint64_t)site * SLICES + (key - 1) % SLICES + 1) : NULL;
        if (!g) {
            rc = 1;
            break;
        }
        g->blocks += rounded(l->blocks);
        g->bytes += rounded(l->bytes);
    }
    for (size_t i = 0; rc == 0 && i <= per.mask; i++) {
        uint64_t key = per.keys[i];
        if (!key)
            continue;
        const keyagg_t *g = (const keyagg_t *)(per.vals + i * per.vsize);
        bind_int(q[Q_SITELEAK], 3, (sqlite3_int64)((key - 1) / SLICES));
        bind_int(q[Q_SITELEAK], 4, (sqlite3_int64)((key - 1) % SLICES));
        bind_w(q[Q_SITELEAK], 5, g->blocks);
        bind_w(q[Q_SITELEAK], 6, g->bytes);
        rc = put(s, q[Q_SITELEAK]);
        if (rc == 0)
            rc = growth_add(s, (uint32_t)((key - 1) / SLICES), (key - 1) % SLICES, g);
    }
    free(per.keys);
    free(per.vals);
    for (size_t i = 0; rc == 0 && i < s->nsagg; i++)
        if (s->sagg[i].growth)
            rc = put_growth(s, q[Q_SITEGROWTH], &s->sagg[i]);
    keyagg_t cls[128];
    int has[128] = {0};
    memset(cls, 0, sizeof cls);
    for (size_t i = 0; rc == 0 && i <= s->sizes.mask; i++) {
        uint64_t key = s->sizes.keys[i];
        if (!key)
            continue;
        const keyagg_t *z = (const keyagg_t *)(s->sizes.vals + i * s->sizes.vsize);
        unsigned c = (unsigned)((key - 1) % 128);
        cls[c].blocks += rounded(z->blocks);
        cls[c].bytes += rounded(z->bytes);
        cls[c].leaked_blocks += rounded(z->leaked_blocks);
        cls[c].leaked_bytes += rounded(z->leaked_bytes);
        has[c] = 1;
    }
    for (unsigned c = 0; rc == 0 && c < 128; c++) {
        if (!has[c])
            continue;
        bind_wide(q[Q_RECSIZE], 3, c ? (cv__wide_t)1 << (c - 1) : 0);
        bind_w(q[Q_RECSIZE], 4, cls[c].blocks);
        bind_w(q[Q_RECSIZE], 5, cls[c].bytes);
        bind_w(q[Q_RECSIZE], 6, cls[c].leaked_blocks);
        bind_w(q[Q_RECSIZE], 7, cls[c].leaked_bytes);
        rc = put(s, q[Q_RECSIZE]);
    }
    for (size_t i = 0; i < s->nsagg; i++)
        s->slot_of[s->sagg[i].site] = 0;
    if (rc == 0 && cv__sites_write(sites, q[Q_SITE]->h) != 0)
        rc = -1;
    return rc;
}

/* ---- Where a recording's stack rows are (recording_rows) ----
 * A recording's rows of stack_stats go in together (cv__summary_end holds the database until
 * they are all in) and each takes the next rowid, so they are one range of rowids. Noting it
 * lets a question about a few recordings read their rows by rowid instead of scanning every
 * recording's (2.5 million rows on a build's tree). */

/* The largest rowid of stack_stats so far (0 when empty), or -1 (database error). */
static int64_t stats_last_rowid(const rows_t *stats, sqlite3 *h)
{
    if (stats->tree)
        return cv__btree_rows(stats->tree) ? cv__btree_last(stats->tree) : 0;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(h, "SELECT coalesce(max(rowid), 0) FROM stack_stats", -1, &st,
                           NULL) != SQLITE_OK)
        return -1;
    int64_t v = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
    sqlite3_finalize(st);
    return v;
}

/* The recording's row of recording_rows: its stack_stats rows are the rowids after `before`
 * up to the last one now. 0, or -1 (database error). */
static int write_row_range(cv__summary_t *s, cv__db_t *db, sqlite3 *h, const rows_t *stats,
                           int64_t before)
{
    int64_t last = stats_last_rowid(stats, h);
    sqlite3_stmt *st = before < 0 || last < 0 ? NULL : cv__db_insert(db, "recording_rows", 4, 1);
    if (!st)
        return -1;
    sqlite3_bind_int64(st, 1, s->pid);
    sqlite3_bind_int64(st, 2, s->recording);
    sqlite3_bind_int64(st, 3, before + 1);
    sqlite3_bind_int64(st, 4, last);
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

int cv__summary_end(cv__summary_t *s, cv__db_t *db, cv__sites_t *sites, uint64_t id_base)
{
    if (!s->failed && s->started)
        close_instant(s, 0, 1);
    if (!s->failed)
        peak_pictures(s);
    /* A thread's last allocation has no next one: it is temporary when it was freed at all. */
    for (size_t i = 0; !s->failed && i <= s->threads.mask; i++) {
        const threadagg_t *t = (const threadagg_t *)(s->threads.vals + i * s->threads.vsize);
        if (s->threads.keys[i] && t->pend == PEND_FREED) {
            s->st[t->pend_bt].temp_blocks += t->pend_w;
            s->st[t->pend_bt].temp_bytes += t->pend_bytes;
        }
    }
    if (s->failed)
        return 1;
    if (!s->batches && !(s->batches = batches_make()))
        return 1;
    sqlite3 *h = cv__db_enter(db);
    if (!h)
        return -1;
    rows_t **q = s->batches->q;
    for (int i = 0; i < Q_N; i++) {
        q[i]->db = db;
        q[i]->h = h;
        q[i]->tree = cv__db_tree(db, q[i]->table);
        q[i]->n = 0;
    }
    int64_t before = stats_last_rowid(q[Q_STACK], h);
    int rc = write_tables(s, q);
    if (rc == 0)
        rc = write_checkpoints(s, q, id_base);
    int sr = rc == 0 ? write_sites(s, q, sites) : 0;
    if (sr > 0) {
        s->failed = 1;
        rc = 0;
    } else if (sr < 0) {
        rc = -1;
    }
    /* The rows still gathered: all of the recording's go in before the other worker's. */
    for (int i = 0; i < Q_N && rc == 0 && !s->failed; i++)
        rc = rows_flush(q[i]);
    if (rc == 0 && !s->failed)
        rc = write_row_range(s, db, h, q[Q_STACK], before);
    if (rc != 0)
        cv__db_failed(db);
    cv__db_leave(db);
    return s->failed && rc == 0 ? 1 : rc;
}

/* ---- Across the recordings ---- */

/* What a recording that stopped while its process went on (schema.sql's view recording_ends)
 * left live is no leak: its rows move from the leaked to the stopped columns. Only when the
 * database has such a recording (a window that went off other than by exit) are the stack
 * rows read. 0, or -1 (database error). */
static int split_windows(cv__summary_t *s, sqlite3 *h, double *stopped)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(h, "SELECT count(*) FROM windows WHERE off_how IS NOT NULL "
                              "AND off_how <> 'exit'", -1, &st, NULL) != SQLITE_OK)
        return -1;
    int any = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int64(st, 0) > 0;
    sqlite3_finalize(st);
    if (!any)
        return 0;
    /* The view's rule decided once per recording (a set SQLite builds once), then one pass
     * over the stack rows: joining the view row by row cost a third of a tree's conversion,
     * its windows not yet indexed (schema.sql, after load). */
    if (sqlite3_prepare_v2(h,
            "SELECT coalesce(bt, 0), leaked_blocks, leaked_bytes FROM stack_stats\n"
            "WHERE leaked_blocks > 0 AND (pid, recording) IN (\n"
            "    SELECT pid, recording FROM recording_ends WHERE NOT until_exit)",
            -1, &st, NULL) != SQLITE_OK)
        return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        sqlite3_int64 bt = sqlite3_column_int64(st, 0);
        if (bt < 0 || (size_t)bt >= s->captot)
            continue;
        double b = sqlite3_column_double(st, 1), y = sqlite3_column_double(st, 2);
        s->tot[bt].leaked_blocks -= b;
        s->tot[bt].leaked_bytes -= y;
        stopped[2 * bt] += b;
        stopped[2 * bt + 1] += y;
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

/* The second worker's lifetimes over its recordings added to the first's. */
static int life_totals_merge(cv__summary_t *dst, const cv__summary_t *src)
{
    size_t want = src->caplifetot;
    if (want > dst->caplifetot &&
        grow_zeroed(&dst->lifetot, &dst->caplifetot, want - 1, sizeof *dst->lifetot) != 0)
        return -1;
    for (size_t bt = 0; bt < src->caplifetot; bt++)
        for (int d = 0; d < 9; d++) {
            dst->lifetot[bt].blocks[d] += src->lifetot[bt].blocks[d];
            dst->lifetot[bt].bytes[d] += src->lifetot[bt].bytes[d];
        }
    return 0;
}

/* stack_lifetime_totals: a row per stack and decade that any recording wrote, in batches as
 * stack_totals. 0, -1 when the database failed, 1 out of memory. */
static int life_totals_write(cv__summary_t *s, cv__db_t *db, sqlite3 *h)
{
    val_t *v = calloc(ROWS_BATCH * 4, sizeof *v);
    if (!v)
        return 1;
    rows_t r = {.table = "stack_lifetime_totals", .cols = 4, .batch = ROWS_BATCH, .v = v,
                .db = db, .h = h};
    int rc = 0;
    for (size_t bt = 0; rc == 0 && bt < s->caplifetot; bt++) {
        const life_total_t *t = &s->lifetot[bt];
        for (int d = 0; rc == 0 && d < 9; d++) {
            if (!t->blocks[d])
                continue;
            bind_bt(&r, 1, bt);
            bind_int(&r, 2, d);
            bind_w(&r, 3, t->blocks[d]);
            bind_w(&r, 4, t->bytes[d]);
            if (++r.n == r.batch)
                rc = rows_flush(&r);
        }
    }
    if (rc == 0)
        rc = rows_flush(&r);
    free(v);
    return rc;
}

int cv__summary_totals_merge(cv__summary_t *dst, const cv__summary_t *src)
{
    if (src->tree && !dst->tree && !(dst->tree = cv__treeline_create()))
        return -1;
    if (src->tree && cv__treeline_merge(dst->tree, src->tree) != 0)
        return -1;
    if (src->captot > dst->captot &&
        grow_zeroed(&dst->tot, &dst->captot, src->captot - 1, sizeof *dst->tot) != 0)
        return -1;
    if (life_totals_merge(dst, src) != 0)
        return -1;
    /* Each figure is a sum of rounded rows: whole numbers, added exactly in either order. */
    for (size_t bt = 0; bt < src->captot; bt++) {
        const total_t *a = &src->tot[bt];
        total_t *t = &dst->tot[bt];
        t->recordings += a->recordings;
        t->blocks += a->blocks;
        t->bytes += a->bytes;
        t->leaked_blocks += a->leaked_blocks;
        t->leaked_bytes += a->leaked_bytes;
        t->peak_blocks += a->peak_blocks;
        t->peak_bytes += a->peak_bytes;
        t->temp_blocks += a->temp_blocks;
        t->temp_bytes += a->temp_bytes;
    }
    return 0;
}

int cv__summary_totals_write(cv__summary_t *s, cv__db_t *db, sqlite3 *h)
{
    if (!s->captot)
        return 0;
    double *stopped = calloc(2 * s->captot, sizeof *stopped);
    val_t *v = calloc(ROWS_BATCH * 12, sizeof *v);
    if (!stopped || !v) {
        free(stopped);
        free(v);
        return 1;
    }
    rows_t r = {.table = "stack_totals", .cols = 12, .batch = ROWS_BATCH, .v = v, .db = db, .h = h};
    int rc = split_windows(s, h, stopped) == 0 ? 0 : -1;
    for (size_t bt = 0; rc == 0 && bt < s->captot; bt++) {
        const total_t *t = &s->tot[bt];
        if (!t->recordings)
            continue;
        bind_bt(&r, 1, bt);
        double w[] = {t->recordings, t->blocks, t->bytes, t->leaked_blocks, t->leaked_bytes,
                      stopped[2 * bt], stopped[2 * bt + 1], t->peak_blocks, t->peak_bytes,
                      t->temp_blocks, t->temp_bytes};
        for (int k = 0; k < 11; k++)
            bind_w(&r, 2 + k, w[k]);
        if (++r.n == r.batch)
            rc = rows_flush(&r);
    }
    if (rc == 0)
        rc = rows_flush(&r);
    free(v);
    free(stopped);
    if (rc == 0)
        rc = life_totals_write(s, db, h);
    return rc;
}

int cv__summary_treeline_write(cv__summary_t *s, sqlite3 *h)
{
    return cv__treeline_write(s->tree, h);
}
