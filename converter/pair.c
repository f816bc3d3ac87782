/*
 * pair.c: the live blocks of one process, by address.
 *
 * Every free is paired with the block live at its address in the same process, whichever thread
 * allocated it. The store holds exactly the blocks that are live at the current point of the
 * merged stream, so the converter's memory follows the program's live heap, not the length of
 * the recording. A program holding 100 M small blocks is what it is built for, so its cost is
 * counted in bytes per live block, at the worst moment, growth included: at most 47, about 42
 * on the mean, plus the new tags of the shard that grows (a growth in place copies no blocks).
 *
 * - A block takes 32 bytes: its address and three words that pack its time (in the recording's
 *   4 ns units), thread, size, stack, the block a realloc replaced, its alignment and its call.
 *   The rare block whose fields do not fit (a size of 1 TiB or more, a stack id past 16 M, an
 *   alignment that is not a power of two, ...) is kept whole in a side table.
 * - The table is split into 16 shards by the top bits of the address's hash; each shard is an
 *   open-addressing table of groups of 16 slots with a byte of tag per slot apart (see One
 *   shard, below): a lookup or an insertion reads a line of tags and the one slot they name,
 *   where the Robin Hood table it replaced read and moved some 15 lines at 7/8 full. It is kept
 *   up to 7/8 full, and grown by a quarter when it would be fuller; it is never below 27/40
 *   full once grown, so a block costs 33 / 0.675 = 49 bytes at the very worst moment of one
 *   shard (47 with no freed slots to drop); the shards' first sizes are spread over a quarter
 *   (first_cap), so they do not all grow at once and the mean is nearer 42.
 * - A shard of 2 MiB and more grows in place (inplace_of): address space for each is reserved
 *   up front, its blocks are moved to their new slots where they are, from the top down, the
 *   few that would land on a block not yet moved set aside first (rehash), and only the pages
 *   it has not reached before are new; a thread of the store's own brings those in ahead, on
 *   the other core (the filler). A growth into a fresh array cost the kernel's zeroing of the
 *   whole store five times over, a fifth of the reading thread's time with 8 M blocks live.
 * - A block's home group grows with the hash bits it is made of, so a shard's blocks lie nearly
 *   in the order of those bits, and a growth, placing the blocks in the order it reads them,
 *   writes the new shard nearly in order (place_all, rehash).
 * - Smaller shard arrays of 4 KiB and more are cut from regions of 2 MiB pages (slots_alloc),
 *   and the reserved address space is on 2 MiB pages too: with the store larger than what the
 *   TLB maps in 4 KiB pages, every probe was a page walk too.
 * - At the end, what is still live comes out in allocation order without a copy of the store:
 *   each shard is compacted and radix-sorted whole by time (split by the top bits of its times
 *   first, so that the passes stay within the caches; through a buffer of its largest part,
 *   2 MiB at most; large shards over two threads, the odd ones on a thread of the drain's own
 *   with a buffer of its own), and a tournament of losers over the 16 sorted shards, comparing
 *   times alone but for ties, yields the blocks.
 * - With a memory budget (cv__pairs_spill), the oldest half of the packed blocks go to disk
 *   when the store passes it (spill.c), and a shard gives up its room as they go; a take that
 *   misses in memory asks the spilled runs. At the end the blocks still in memory go out as a
 *   last run, and each run comes back in turn, oldest first, through the same sort and merge.
 */
#define _GNU_SOURCE /* qsort_r, MADV_HUGEPAGE, pthread_setname_np */
#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "converter.h"

/* 16 shards that grow in place, or, where the address space for that is refused, 256 (the
 * most) that grow by copying: a shard copied is 1/256 of the store more for a moment. */
#define INPLACE_BITS 4
#define INPLACE_SHARDS (1u << INPLACE_BITS)
#define COPY_BITS 8
#define NSHARDS (1u << COPY_BITS)
#define MIN_CAP 16

/* A packed block. Whether a slot holds one is its tag's to say (One shard, below): a free
 * slot's words are whatever was there before. */
typedef struct {
    uint64_t addr;
    uint64_t w1; /* bits 0-47: t / 4; 48-63: thread */
    uint64_t w2; /* bits 0-39: size; 40-63: bt */
    uint64_t w3; /* bits 0-39: realloc_of; 40-45: log2(align) + 1, 0 = none; 46-53: call */
} slot_t;

typedef struct {
    slot_t *slots;
    uint8_t *meta;    /* a byte per slot: its tag, EMPTY or DELETED */
    uint32_t cap;     /* slots, whole groups */
    uint32_t nominal; /* the size its growths count from: cap is it rounded up to groups */
    uint32_t count, deleted;
    uint32_t ahead; /* the cap whose growth's new pages were asked of the filler */
} shard_t;

/* The thread that brings in the pages a shard in place will grow into (fill_ahead). */
typedef struct {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t wake;
    struct range {
        char *at;
        size_t len;
    } want[INPLACE_SHARDS]; /* one per shard, empty when len is 0 */
    int stop;
} filler_t;

/* A region of 2 MiB pages that the larger shard arrays are cut from, one after the other. */
typedef struct {
    char *base;
    size_t size, used; /* bytes; those below `used` were handed out */
    size_t live;       /* arrays not yet freed */
    /* The whole pages of freed arrays, unmapped: what is left of the region to unmap at its
     * end lies between them. */
    struct hole {
        char *lo, *hi;
    } *holes;
    size_t nholes, capholes;
} region_t;

/* One sorted run during the drain: a shard's compacted blocks, or the side table's. */
typedef struct {
    const slot_t *at, *end;       /* packed blocks */
    const cv__live_t *wat, *wend; /* or whole ones */
    uint64_t t;                   /* the time of the next block */
    int done;                     /* no block left */
} run_t;

/* The drain's sorted runs: each shard whole (16, or 256 where the shards grow by copying), or a
 * spilled run cut in SPILL_RUNS pieces; and the tournament over them, a power of two at least
 * the runs + 1 when the side table has blocks (its run comes after the others). A shard sorted
 * whole rather than in 16 pieces took the tournament from nine rounds a block to four
 * (sort_slots keeps each sort's passes within the caches). */
#define SPILL_RUNS 256u
#define MAX_LEAVES (2u * SPILL_RUNS)

struct cv__pairs {
    shard_t shards[NSHARDS];
    uint32_t nshards; /* INPLACE_SHARDS with the reservation, else NSHARDS */
    unsigned shift;   /* 64 - the bits of the hash that pick the shard */
    size_t count;
    /* The regions the larger shard arrays come from, the newest last. */
    region_t *regions;
    size_t nregions, region_room;
    /* The side table: blocks that do not pack, whole, in the plain layout of hashmap.h. */
    uint64_t *wkeys;
    cv__live_t *wvals;
    size_t wmask, wcount;
    unsigned wshift;
    /* threads.id -> tid, for the threads of packed blocks. */
    uint32_t *tids;
    size_t ntids;
    size_t bytes, peak_bytes;
    /* The address space where shards of INPLACE_MIN bytes and more grow in place (NULL: not
     * reserved, or refused), STRIDE bytes a shard; and the scratch array after them, for the
     * blocks a growth sets aside or the copy a spill's rebuild places its blocks from. */
    char *resv;
    filler_t *filler; /* NULL: none yet, or none could be made (filler_failed) */
    int filler_failed;
    slot_t *scratch;
    uint32_t scratch_cap;
    /* The drain: nleaves runs (nruns sorted ones, then the side table's, the rest empty) and a
     * tree of losers over them: tree[0] is the run whose next block comes first, tree[n] the
     * loser of the match at node n (the leaves are nodes nleaves + run). */
    uint32_t nruns, nleaves;
    run_t *runs;
    uint32_t *tree;
    uint64_t *keys; /* each run's next time, UINT64_MAX once done */
    cv__live_t *wsorted;
    /* Spilling: over `budget` bytes (0: never), to a file beside `near`; `spilled` of the
     * blocks counted are in the spill's runs, whose memory is `spill_bytes` of `bytes`. */
    uint64_t budget;
    const char *near;
    cv__spill_t *spill;
    size_t spilled, spill_bytes;
    /* and the drain of its runs: the next one, the merge's runs holding the loaded one's
     * blocks (in `loaded`), the lot of them. */
    size_t next_run;
    uint32_t loaded_runs;
    slot_t *loaded;
    size_t loaded_bytes;
    uint64_t spilled_total, spill_file;
};

/* Heap addresses are aligned and handed out in runs; a multiplicative hash alone spreads them
 * over the top bits (the shard) but leaves the bits below correlated, so that a run of addresses
 * lands in one shard at homes next to each other and the groups there fill up. Mixing the
 * product's high half back in (as splitmix64's finalizer does) decorrelates every bit. */
static uint64_t hash_of(uint64_t addr)
{
    uint64_t h = (addr ^ (addr >> 31)) * 0xBF58476D1CE4E5B9ull;
    h ^= h >> 29;
    h *= 0x94D049BB133111EBull;
    return h ^ (h >> 32);
}

static shard_t *shard_of(cv__pairs_t *p, uint64_t h)
{
    return &p->shards[h >> p->shift];
}

static void account(cv__pairs_t *p, ptrdiff_t delta)
{
    p->bytes += (size_t)delta;
    if (p->bytes > p->peak_bytes)
        p->peak_bytes = p->bytes;
}

/* ---- The shards' memory ---- */

/* A shard array of this many bytes or more comes from the store's regions, smaller ones from
 * malloc. Not much more: the arrays a shard leaves behind in malloc's heap as it grows stay
 * there, resident, once it has moved on to the regions (with 128 KiB, 20 MiB at the peak of a
 * python3 recording holding 1 M blocks). */
#define REGION_MIN (4u << 10)
#define HUGE_PAGE (2u << 20)
#define REGION_SIZE (32u << 20)

/* With 8 M blocks live the shards hold some 300 MiB, and every insertion and free lands on a
 * random slot of it: on 4 KiB pages each is a TLB miss as well as a cache miss, and the page
 * walk stalls the very prefetch that was to hide the miss. Shard arrays (all but the smallest)
 * are therefore cut from regions of 32 MiB (or one array's size) aligned on 2 MiB and marked
 * MADV_HUGEPAGE, one after the other, so that arrays of 1.4 MiB share 2 MiB pages although none
 * fills one (mapped one by one, the kernel scatters them between the holes that freed arrays
 * leave, and none gets a large page). A freed array's whole pages are unmapped at once, as
 * malloc's munmap did; its room in the region is not used again, and the rest of the region is
 * unmapped when its last array goes. Fresh pages are zero, so a new array costs no memset; the
 * kernel's zeroing of them is the price (about a tenth of the samples with 8 M blocks). */
static slot_t *slots_alloc(cv__pairs_t *p, uint32_t cap)
{
    size_t bytes = (size_t)cap * sizeof(slot_t);
    if (bytes < REGION_MIN)
        return calloc(cap, sizeof(slot_t));
    bytes = (bytes + 63) & ~(size_t)63;
    region_t *r = p->nregions ? &p->regions[p->nregions - 1] : NULL;
    if (!r || r->size - r->used < bytes) {
        if (p->nregions == p->region_room) {
            size_t n = p->region_room ? 2 * p->region_room : 16;
            region_t *g = realloc(p->regions, n * sizeof *g);
            if (!g)
                return calloc(cap, sizeof(slot_t));
            p->regions = g;
            p->region_room = n;
        }
        size_t size = bytes > REGION_SIZE ? (bytes + HUGE_PAGE - 1) & ~(size_t)(HUGE_PAGE - 1)
                                          : REGION_SIZE;
        /* Mapped a large page over and trimmed, for a start on a 2 MiB boundary. */
        char *m = mmap(NULL, size + HUGE_PAGE, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m == MAP_FAILED) {
            /* Under a limit of address space (ulimit -v) the array comes from malloc instead,
             * which may still have room in its heap; slots_free tells them apart by the
             * regions' bounds. */
            return calloc(cap, sizeof(slot_t));
        }
        uintptr_t at = ((uintptr_t)m + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
        if ((char *)at > m)
            munmap(m, (size_t)((char *)at - m));
        if ((char *)at + size < m + size + HUGE_PAGE)
            munmap((char *)at + size, (size_t)(m + size + HUGE_PAGE - ((char *)at + size)));
#ifdef MADV_HUGEPAGE
        (void)madvise((void *)at, size, MADV_HUGEPAGE); /* a hint: without it, 4 KiB pages */
#endif
        r = &p->regions[p->nregions++];
        *r = (region_t){(char *)at, size, 0, 0, NULL, 0, 0};
    }
    slot_t *slots = (slot_t *)(r->base + r->used);
    r->used += bytes;
    r->live++;
    return slots;
}

static int hole_cmp(const void *a, const void *b)
{
    const struct hole *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Unmaps what is left of a region whose last array went: not the holes, where the kernel may
 * have placed other mappings since. */
static void region_unmap(region_t *r)
{
    if (r->nholes)  /* qsort's array may not be NULL, even empty */
        qsort(r->holes, r->nholes, sizeof *r->holes, hole_cmp);
    char *at = r->base, *end = r->base + r->size;
    for (size_t i = 0; i < r->nholes; i++) {
        if (r->holes[i].lo > at)
            munmap(at, (size_t)(r->holes[i].lo - at));
        at = r->holes[i].hi;
    }
    if (end > at)
        munmap(at, (size_t)(end - at));
    free(r->holes);
}

static void slots_free(cv__pairs_t *p, slot_t *slots, uint32_t cap)
{
    size_t bytes = (size_t)cap * sizeof(slot_t);
    if (!slots)
        return;
    if (bytes < REGION_MIN) {
        free(slots);
        return;
    }
    char *at = (char *)slots;
    for (size_t i = 0; i < p->nregions; i++) {
        region_t *r = &p->regions[i];
        if (at < r->base || at >= r->base + r->size)
            continue;
        if (--r->live == 0) {
            /* The newest region stays last: arrays are cut from it. */
            region_unmap(r);
            memmove(r, r + 1, (p->nregions - i - 1) * sizeof *r);
            p->nregions--;
            return;
        }
        /* The whole pages of the array go back, memory and address space (a region keeps
         * neither for arrays long freed: under ulimit -v the address space is what runs out);
         * those it shares with a neighbour stay. Without room to note the hole, the pages
         * alone go back. */
        size_t page = 4096;
        char *lo = (char *)(((uintptr_t)at + page - 1) & ~(uintptr_t)(page - 1));
        char *hi = (char *)(((uintptr_t)at + bytes) & ~(uintptr_t)(page - 1));
        if (hi <= lo)
            return;
        if (rheap_grow(&r->holes, &r->capholes, r->nholes, sizeof *r->holes, 16) == 0) {
            munmap(lo, (size_t)(hi - lo));
            r->holes[r->nholes++] = (struct hole){lo, hi};
        } else {
            (void)madvise(lo, (size_t)(hi - lo), MADV_DONTNEED);
        }
        return;
    }
    free(slots); /* from malloc: no region had room */
}

/* ---- Shards that grow in place ---- */

/* A growth into a fresh array had the kernel zero every page of it: the whole store, five times
 * over as it grows by quarters (about a fifth of the reading thread's time with 8 M blocks
 * live, more than the copy). A shard of INPLACE_MIN bytes and more therefore lives at a fixed
 * place of address space reserved up front, STRIDE bytes a shard (16 of 256 MiB: 117 M blocks
 * at 7/8 full), and grows there, its blocks moved within it (rehash); only the pages the shard
 * has not reached before are new. Below INPLACE_MIN a shard would waste most of its first 2 MiB
 * page, and beyond STRIDE it grows by copying as the small ones do. The reservation costs no
 * memory: pages exist where a shard has been. Where it is refused (a limit of address space,
 * ulimit -v) the store has 256 shards that grow by copying, as before: with 16, a shard's copy
 * and the rest of the region it was cut from took more address space than 8 M blocks had had. */
#define INPLACE_MIN (2u << 20)
#define STRIDE ((size_t)256 << 20)

static slot_t *inplace_of(const cv__pairs_t *p, const shard_t *sh)
{
    return p->resv ? (slot_t *)(p->resv + (size_t)(sh - p->shards) * STRIDE) : NULL;
}

static int in_place(const cv__pairs_t *p, const shard_t *sh)
{
    return p->resv && sh->slots == inplace_of(p, sh);
}

static void filler_start(cv__pairs_t *p);
static uint32_t round_group(uint32_t n);
static uint32_t next_nominal(const cv__pairs_t *p, const shard_t *sh);

/* The reservation: a STRIDE for each shard in place, and one more for the scratch array. */
#define RESERVED ((INPLACE_SHARDS + 1) * STRIDE)

/* Reserves the address space of the shards in place and of the scratch array; 0, or -1 where
 * the system refuses it. */
static int reserve(cv__pairs_t *p)
{
    void *m = mmap(NULL, RESERVED, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED)
        return -1;
#ifdef MADV_HUGEPAGE
    (void)madvise(m, RESERVED, MADV_HUGEPAGE);
#endif
    p->resv = m;
    return 0;
}

/* ---- The filler: new pages brought in on the other core ----
 *
 * A page the store touches for the first time is zeroed by the kernel, and on this kind of
 * machine (a virtual one; presumably its host takes back what the guest freed) a fresh 2 MiB page
 * costs far more than zeroing: a first touch of 300 MiB of them took 1.7 s where a second took
 * 0.15 s. A shard in place knows where it will grow, so when it is 17/20 full (it grows at 7/8)
 * a thread of the store's own asks the kernel for the pages of its next size
 * (MADV_POPULATE_WRITE: the pages are made, their contents untouched, so the thread never
 * races with the shard's own writes), while the reading thread goes on. At any moment only the
 * shards between 17/20 and 7/8 full (first_cap: about one in eight) hold pages ahead, a
 * quarter of their size each. Without the thread, or on a kernel without the call, the pages
 * come in at the growth as before. */
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

static void *filler_main(void *arg)
{
    filler_t *f = arg;
    pthread_setname_np(pthread_self(), "rheap filler");
    pthread_mutex_lock(&f->mu);
    for (;;) {
        size_t i = 0;
        while (i < INPLACE_SHARDS && !f->want[i].len)
            i++;
        if (i == INPLACE_SHARDS) {
            if (f->stop)
                break;
            pthread_cond_wait(&f->wake, &f->mu);
            continue;
        }
        struct range r = f->want[i];
        f->want[i].len = 0;
        pthread_mutex_unlock(&f->mu);
        (void)madvise(r.at, r.len, MADV_POPULATE_WRITE);
        pthread_mutex_lock(&f->mu);
    }
    pthread_mutex_unlock(&f->mu);
    return NULL;
}

static void filler_start(cv__pairs_t *p)
{
    filler_t *f = calloc(1, sizeof *f);
    if (!f) {
        p->filler_failed = 1;
        return;
    }
    pthread_mutex_init(&f->mu, NULL);
    pthread_cond_init(&f->wake, NULL);
    if (pthread_create(&f->thread, NULL, filler_main, f) != 0) {
        pthread_mutex_destroy(&f->mu);
        pthread_cond_destroy(&f->wake);
        free(f);
        p->filler_failed = 1;
        return;
    }
    p->filler = f;
}

/* Stops the filler once it has brought in what it was asked for. */
static void filler_stop(cv__pairs_t *p)
{
    filler_t *f = p->filler;
    if (!f)
        return;
    pthread_mutex_lock(&f->mu);
    f->stop = 1;
    pthread_cond_signal(&f->wake);
    pthread_mutex_unlock(&f->mu);
    pthread_join(f->thread, NULL);
    pthread_mutex_destroy(&f->mu);
    pthread_cond_destroy(&f->wake);
    free(f);
    p->filler = NULL;
}

/* Asks the filler for the pages of a shard in place's next size, once per size. */
static void fill_ahead(cv__pairs_t *p, shard_t *sh)
{
    sh->ahead = sh->cap;
    if (!p->filler || !in_place(p, sh))
        return;
    size_t from = (size_t)sh->cap * sizeof(slot_t),
           to = (size_t)round_group(next_nominal(p, sh)) * sizeof(slot_t);
    from = (from + HUGE_PAGE - 1) & ~(size_t)(HUGE_PAGE - 1);
    to = to < STRIDE ? to : STRIDE;
    if (to <= from)
        return;
    filler_t *f = p->filler;
    pthread_mutex_lock(&f->mu);
    f->want[sh - p->shards] = (struct range){(char *)sh->slots + from, to - from};
    pthread_cond_signal(&f->wake);
    pthread_mutex_unlock(&f->mu);
}

/* Gives back the pages of a shard in place from byte `from` of its room on (the large page
 * holding `from` stays). */
static void inplace_trim(cv__pairs_t *p, const shard_t *sh, size_t from)
{
    char *at = (char *)inplace_of(p, sh);
    if (p->filler) {
        pthread_mutex_lock(&p->filler->mu);
        p->filler->want[sh - p->shards].len = 0;
        pthread_mutex_unlock(&p->filler->mu);
    }
    size_t lo = (from + HUGE_PAGE - 1) & ~(size_t)(HUGE_PAGE - 1);
    if (lo < STRIDE)
        (void)madvise(at + lo, STRIDE - lo, MADV_DONTNEED);
}

/* Room in the scratch array for n blocks (at most a shard in place's): the blocks a growth in
 * place sets aside (rehash), or the copy a spill rebuilds a shard in place from. The array lies
 * in the last STRIDE of the reservation, so that its pages stay the process's from one use to
 * the next (malloc'ed anew at each larger size, a shard's copy had the kernel zero a fresh array
 * each time, a sixth of the growths' samples), and so that a growth can take room in it without
 * a call that may fail. Its memory is counted as the most blocks it has held: the pages it has
 * touched. -1: no reservation (only shards in place use it). */
static int scratch_room(cv__pairs_t *p, uint32_t n)
{
    if (!p->resv)
        return -1;
    p->scratch = (slot_t *)(p->resv + INPLACE_SHARDS * STRIDE);
    if (p->scratch_cap < n) {
        account(p, ((ptrdiff_t)n - (ptrdiff_t)p->scratch_cap) * (ptrdiff_t)sizeof(slot_t));
        p->scratch_cap = n;
    }
    return 0;
}

/* Gives the scratch array's pages back. */
static void scratch_free(cv__pairs_t *p)
{
    if (p->scratch_cap)
        (void)madvise(p->scratch, (size_t)p->scratch_cap * sizeof *p->scratch, MADV_DONTNEED);
    account(p, -(ptrdiff_t)((size_t)p->scratch_cap * sizeof(slot_t)));
    p->scratch = NULL;
    p->scratch_cap = 0;
}

/* ---- Packing ---- */

static int log2_of(uint64_t v)
{
    return 63 - __builtin_clzll(v);
}

static int packs(const cv__live_t *b)
{
    return (b->t & 3) == 0 && (b->t >> 2) < (1ull << 48) && b->thread < (1u << 16) &&
           b->size < (1ull << 40) && b->bt < (1ull << 24) && b->realloc_of < (1ull << 40) &&
           (b->align == 0 || (b->align & (b->align - 1)) == 0);
}

static slot_t pack(const cv__live_t *b)
{
    slot_t s;
    s.addr = b->addr;
    s.w1 = (b->t >> 2) | (uint64_t)b->thread << 48;
    s.w2 = b->size | b->bt << 40;
    s.w3 = b->realloc_of | (uint64_t)(b->align ? log2_of(b->align) + 1 : 0) << 40 |
           (uint64_t)b->call << 46;
    return s;
}

static void unpack(const cv__pairs_t *p, const slot_t *s, cv__live_t *b)
{
    b->addr = s->addr;
    b->t = (s->w1 & ((1ull << 48) - 1)) << 2;
    b->thread = (uint32_t)(s->w1 >> 48);
    b->tid = p->tids[b->thread];
    b->size = s->w2 & ((1ull << 40) - 1);
    b->bt = s->w2 >> 40;
    b->realloc_of = s->w3 & ((1ull << 40) - 1);
    unsigned a = (unsigned)(s->w3 >> 40) & 63;
    b->align = a ? 1ull << (a - 1) : 0;
    b->call = (uint8_t)(s->w3 >> 46);
}

static int note_tid(cv__pairs_t *p, uint32_t thread, uint32_t tid)
{
    if (thread >= p->ntids) {
        size_t n = p->ntids ? p->ntids : 64;
        while (n <= thread)
            n *= 2;
        uint32_t *t = realloc(p->tids, n * sizeof *t);
        if (!t)
            return -1;
        account(p, (ptrdiff_t)((n - p->ntids) * sizeof *t));
        p->tids = t;
        p->ntids = n;
    }
    p->tids[thread] = tid;
    return 0;
}

/* ---- One shard: groups of 16 slots, a byte of tag each ----
 *
 * A shard's slots come in groups of GROUP; beside them, one byte per slot (meta) says whether it
 * is empty, holds a block (7 bits of its hash: the tag) or held one since the shard was last
 * built (deleted). A block's home is a group, from 32 bits of its hash scaled to the shard's
 * groups; its slot is the first free one of the groups from its home on. A lookup compares the
 * 16 tags of a group at once and reads only the slots whose tags match (one, or rarely two), and
 * stops at the first group holding an empty slot; an insertion writes its slot and its tag. So
 * either touches a line of tags and a line of slots, where the Robin Hood table of before read
 * to the empty slot ending its run (some 15 lines at 7/8 full) and moved that run up by one slot.
 *
 * A removal leaves an empty slot where its group has one already (no lookup can have gone past
 * that group since it was built: a full group never gets an empty slot back), else a deleted
 * one, which a later insertion reuses. Deleted slots count towards the fill that triggers a
 * rebuild; a rebuild at the same size drops them (shard_grow's purge). */
#define GROUP 16u
#define EMPTY 0x80u
#define DELETED 0xFEu

static uint32_t round_group(uint32_t n)
{
    return (n + GROUP - 1) & ~(GROUP - 1);
}

/* The home group in a shard of cap slots: 32 hash bits below the shard's, scaled to its groups,
 * so that the homes of blocks in the order of those bits never go down (a growth places the
 * blocks of its copy nearly in the order it reads them). */
static uint32_t home_of(uint64_t h, uint32_t cap)
{
    return (uint32_t)(((h >> 24) & 0xFFFFFFFFull) * (cap / GROUP) >> 32);
}

/* The tag: the hash's low 7 bits, apart from those of the shard and the home. */
static uint8_t tag_of(uint64_t h)
{
    return (uint8_t)(h & 0x7F);
}

/* A bit for each of the group's tags equal to v. */
static uint32_t group_match(const uint8_t *m, uint8_t v)
{
#ifdef __SSE2__
    __m128i g = _mm_loadu_si128((const __m128i *)(const void *)m);
    return (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(g, _mm_set1_epi8((char)v)));
#else
    uint32_t r = 0;
    for (unsigned i = 0; i < GROUP; i++)
        r |= (uint32_t)(m[i] == v) << i;
    return r;
#endif
}

/* Whether a slot of tag m is free, empty or deleted (their top bit set; a tag's is not). The
 * tags alone say which slots hold a block: a shard's array is not cleared when it is built
 * again (a memset of the grown shard was a seventh of a growth's time), so a free slot may
 * hold an old block, and every scan of the slots reads the tags first. */
static int slot_free(uint8_t m)
{
    return m >> 7;
}

/* A bit for each free slot of the group, empty or deleted. */
static uint32_t group_free(const uint8_t *m)
{
#ifdef __SSE2__
    return (uint32_t)_mm_movemask_epi8(_mm_loadu_si128((const __m128i *)(const void *)m));
#else
    uint32_t r = 0;
    for (unsigned i = 0; i < GROUP; i++)
        r |= (uint32_t)(m[i] >> 7) << i;
    return r;
#endif
}

/* A shard's tags: cap bytes on a line boundary, every slot empty. NULL: no memory. */
static uint8_t *meta_alloc(cv__pairs_t *p, uint32_t cap)
{
    uint8_t *m = aligned_alloc(64, ((size_t)cap + 63) & ~(size_t)63);
    if (!m)
        return NULL;
    memset(m, EMPTY, cap);
    account(p, (ptrdiff_t)cap);
    return m;
}

static void meta_free(cv__pairs_t *p, uint8_t *m, uint32_t cap)
{
    if (!m)
        return;
    free(m);
    account(p, -(ptrdiff_t)cap);
}

/* The slot holding addr, or -1. */
static long shard_find(const shard_t *sh, uint64_t addr, uint64_t h)
{
    if (!sh->cap)
        return -1;
    uint32_t groups = sh->cap / GROUP, g = home_of(h, sh->cap);
    uint8_t tag = tag_of(h);
    for (;;) {
        const uint8_t *m = &sh->meta[(size_t)g * GROUP];
        for (uint32_t x = group_match(m, tag); x; x &= x - 1) {
            uint32_t j = g * GROUP + (uint32_t)__builtin_ctz(x);
            if (sh->slots[j].addr == addr)
                return (long)j;
        }
        if (group_match(m, EMPTY))
            return -1;
        if (++g == groups)
            g = 0;
    }
}

/* Puts block s in slot j, a free one, with the tag of hash h. */
static void shard_set(shard_t *sh, uint32_t j, const slot_t *s, uint64_t h)
{
    if (sh->meta[j] == DELETED)
        sh->deleted--;
    sh->meta[j] = tag_of(h);
    sh->slots[j] = *s;
    sh->count++;
}

/* Places s, whose address is not in the shard, which has room: the first free slot from its
 * home group on. */
static void shard_put(shard_t *sh, const slot_t *s, uint64_t h)
{
    uint32_t groups = sh->cap / GROUP, g = home_of(h, sh->cap);
    for (;;) {
        uint32_t f = group_free(&sh->meta[(size_t)g * GROUP]);
        if (f) {
            shard_set(sh, g * GROUP + (uint32_t)__builtin_ctz(f), s, h);
            return;
        }
        if (++g == groups)
            g = 0;
    }
}

static void shard_remove(shard_t *sh, uint32_t j)
{
    if (group_match(&sh->meta[j / GROUP * GROUP], EMPTY)) {
        sh->meta[j] = EMPTY;
    } else {
        sh->meta[j] = DELETED;
        sh->deleted++;
    }
    sh->count--;
}

/* Frees a shard's array (or gives back the pages of one in place) and its tags, and their
 * count in `bytes`. */
static void shard_release(cv__pairs_t *p, shard_t *sh)
{
    if (in_place(p, sh))
        inplace_trim(p, sh, 0);
    else
        slots_free(p, sh->slots, sh->cap);
    account(p, -(ptrdiff_t)((size_t)sh->cap * sizeof(slot_t)));
    meta_free(p, sh->meta, sh->cap);
    *sh = (shard_t){0};
}

/* The first free slot from group g on in `to` (of `groups` groups), a new shard being filled
 * (no deleted slots), taken: *cur is the group whose free slots *free_bits holds, kept by the
 * caller across blocks (see place_all). */
static inline __attribute__((always_inline)) uint32_t take_free(const shard_t *to,
                                                                 uint32_t groups, uint32_t g,
                                                                 uint32_t *cur,
                                                                 uint32_t *free_bits)
{
    for (;;) {
        if (g != *cur) {
            *cur = g;
            *free_bits = group_free(&to->meta[(size_t)g * GROUP]);
        }
        if (*free_bits)
            break;
        if (++g == groups)
            g = 0;
    }
    uint32_t j = g * GROUP + (uint32_t)__builtin_ctz(*free_bits);
    *free_bits &= *free_bits - 1;
    return j;
}

/* Places the blocks of src (n slots; with src_meta, those whose tags there are free skipped)
 * into `to`, which is new (no
 * deleted slots) and has room for them, in the order they come: the blocks of a shard's array
 * come nearly in the order of their homes, so the new shard is written nearly in order too, and
 * most blocks go to the group the one before went to. That group's free slots are kept in a
 * register: read back from the tags after each block, its 16 bytes would wait for the byte just
 * stored to reach the cache (a failed store forwarding: shard_put spent half its time on that
 * load with 8 M blocks live). */
static void place_all(const slot_t *src, const uint8_t *src_meta, uint32_t n, shard_t *to)
{
    uint32_t groups = to->cap / GROUP, cur = UINT32_MAX, free_bits = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (src_meta && slot_free(src_meta[i]))
            continue;
        uint64_t h = hash_of(src[i].addr);
        uint32_t j = take_free(to, groups, home_of(h, to->cap), &cur, &free_bits);
        to->meta[j] = tag_of(h);
        to->slots[j] = src[i];
        to->count++;
    }
}

/* Builds shard sh again where it is, as `to` (the same slots, at least as many of them, new
 * tags), without a copy of the shard: a growth's copy to a scratch array and back read and
 * wrote the whole shard twice more, and the scratch array, counted in the store's memory, was
 * a sixteenth of the store more from the first growth in place to the drain.
 *
 * The blocks are moved one by one from their old slots to their new ones, the old tags saying
 * which old slots still hold a block to move. A block's new slot may be an old slot whose block
 * has not moved yet: that block is set aside first (in the scratch array, its old tag made
 * free), and the blocks set aside are placed last, when no old slot is left to overwrite. Any
 * order of the moves is exact (a table built by insertions alone is one whatever their order:
 * each block is at the first free slot from its home at its insertion, and the groups it passed
 * stay full), so the order is chosen for few blocks set aside. A growth goes from the top down:
 * a block's new home is at or above its old one (home_of scales the same hash bits to more
 * groups), and nearly always above its old slot, which was already read; only blocks near the
 * bottom, whose new home is not far above their old one, and those that run past the top and
 * go round to group 0, can land on a block not yet moved. A rebuild at the same size (a purge)
 * goes from the bottom up: a block's home is the same and the slots before it only emptier, so
 * it moves down or stays, onto slots already read; only the blocks that had gone round past the
 * top are set aside. With 8 M blocks live (155 growths in place of shards of 2 to 20 MiB), at
 * most 52 blocks were set aside at once. Nothing is allocated on the way, and nothing can fail:
 * the scratch array's room is reserved address space, and counted as it is used. */
static inline __attribute__((always_inline)) void rehash_dir(cv__pairs_t *p, shard_t *sh,
                                                             shard_t *to, const int down)
{
    slot_t *s = sh->slots;
    uint8_t *old = sh->meta;
    uint32_t groups = to->cap / GROUP, old_groups = sh->cap / GROUP, cur = UINT32_MAX;
    uint32_t free_bits = 0, aside = 0;
    for (uint32_t n = 0; n < old_groups; n++) {
        /* The old group's blocks, a bit each, taken from the top down or the bottom up. */
        uint32_t og = down ? old_groups - 1 - n : n;
        uint32_t held = ~group_free(&old[(size_t)og * GROUP]) & 0xFFFFu;
        while (held) {
            uint32_t b = down ? 31u - (uint32_t)__builtin_clz(held) : (uint32_t)__builtin_ctz(held);
            held &= ~(1u << b);
            uint32_t i = og * GROUP + b;
            uint64_t h = hash_of(s[i].addr);
            uint32_t j = take_free(to, groups, home_of(h, to->cap), &cur, &free_bits);
            /* An old slot not read yet, holding a block: that block is set aside. */
            if (__builtin_expect(down ? j < i : j > i && j < sh->cap, 0) && !slot_free(old[j])) {
                (void)scratch_room(p, aside + 1);
                p->scratch[aside++] = s[j];
                old[j] = EMPTY;
                if (j / GROUP == og)
                    held &= ~(1u << (j % GROUP));
            }
            s[j] = s[i];
            to->meta[j] = tag_of(h);
        }
    }
    to->count = sh->count - aside;
    if (aside)
        place_all(p->scratch, NULL, aside, to);
}

static void rehash(cv__pairs_t *p, shard_t *sh, shard_t *to)
{
    if (to->cap > sh->cap)
        rehash_dir(p, sh, to, 1);
    else
        rehash_dir(p, sh, to, 0);
}

/* A shard's first size, as a count its sizes grow from (nominal): 64 slots times 1.25^(i/16)
 * for shard i. The shards fill at one pace (the hash spreads the blocks evenly), so with one
 * first size they would grow all at once: right after, every one 7/10 full, 46 bytes a block,
 * however many blocks there are. With their sizes a sixteenth of a growth apart, they are at
 * every point of their growth at any moment and a block costs 33 bytes over the mean fill,
 * about 42. */
static uint32_t first_cap(const cv__pairs_t *p, const shard_t *sh)
{
    static const uint16_t caps[16] = {64, 65, 66, 67, 68, 69, 70, 71,
                                      72, 73, 74, 75, 76, 77, 78, 79};
    /* Not the 256 shards that grow by copying (no reservation: a limit of address space):
     * spread, the arrays each 32 MiB region holds are freed at different moments, and the
     * regions' address space ran out where 8 M blocks had converted (ulimit -v 460000). */
    if (p->nshards != INPLACE_SHARDS)
        return MIN_CAP;
    return caps[(size_t)(sh - p->shards) % 16];
}

/* The nominal size after the next growth, a quarter more (the slots: it rounded up to whole
 * groups). */
static uint32_t next_nominal(const cv__pairs_t *p, const shard_t *sh)
{
    return sh->cap ? sh->nominal + sh->nominal / 4 : first_cap(p, sh);
}

/* Grows a shard by a quarter (to first_cap when it has none), or with `purge` builds it again
 * at its size without its deleted slots: in place (inplace_of) when it is large enough, else
 * into a new array. -1: no memory, shard unchanged. */
static int shard_grow(cv__pairs_t *p, shard_t *sh, int purge)
{
    uint32_t nominal = purge ? sh->nominal : next_nominal(p, sh);
    uint32_t cap = round_group(nominal);
    size_t bytes = (size_t)cap * sizeof(slot_t);
    uint8_t *meta = meta_alloc(p, cap);
    if (!meta)
        return -1;
    if (bytes <= STRIDE && (in_place(p, sh) || (bytes >= INPLACE_MIN && p->resv))) {
        if (!p->filler && !p->filler_failed)
            filler_start(p);
        /* What the room held before (a shard placed there earlier, or this one) stays: the
         * new tags say every slot is empty. */
        shard_t grown = {inplace_of(p, sh), meta, cap, nominal, 0, 0, 0};
        account(p, ((ptrdiff_t)cap - (ptrdiff_t)sh->cap) * (ptrdiff_t)sizeof(slot_t));
        if (in_place(p, sh)) {
            rehash(p, sh, &grown);
        } else {
            place_all(sh->slots, sh->meta, sh->cap, &grown);
            slots_free(p, sh->slots, sh->cap);
        }
        meta_free(p, sh->meta, sh->cap);
        *sh = grown;
        return 0;
    }
    slot_t *slots = slots_alloc(p, cap); /* zero */
    if (!slots) {
        meta_free(p, meta, cap);
        return -1;
    }
    account(p, (ptrdiff_t)(cap * sizeof *slots));
    shard_t grown = {slots, meta, cap, nominal, 0, 0, 0};
    place_all(sh->slots, sh->meta, sh->cap, &grown);
    shard_release(p, sh);
    *sh = grown;
    return 0;
}

/* ---- The side table: whole blocks, linear probing at most half full ---- */

static long wide_find(const cv__pairs_t *p, uint64_t addr)
{
    if (!p->wcount)
        return -1;
    for (size_t j = cv__hash_slot(addr, p->wshift); p->wkeys[j]; j = (j + 1) & p->wmask)
        if (p->wkeys[j] == addr)
            return (long)j;
    return -1;
}

static int wide_put(cv__pairs_t *p, const cv__live_t *b)
{
    if (!p->wkeys) {
        p->wmask = 63;
        p->wshift = 64 - 6;
        p->wkeys = calloc(p->wmask + 1, sizeof *p->wkeys);
        p->wvals = malloc((p->wmask + 1) * sizeof *p->wvals);
        if (!p->wkeys || !p->wvals) {
            free(p->wkeys);
            free(p->wvals);
            p->wkeys = NULL;
            p->wvals = NULL;
            return -1;
        }
        account(p, (ptrdiff_t)((p->wmask + 1) * (sizeof *p->wkeys + sizeof *p->wvals)));
    }
    if ((p->wcount + 1) * 2 > p->wmask + 1) {
        size_t before = p->wmask + 1;
        if (cv__hash_grow(&p->wkeys, &p->wvals, sizeof *p->wvals, &p->wmask, &p->wshift) != 0)
            return -1;
        account(p, (ptrdiff_t)(before * (sizeof *p->wkeys + sizeof *p->wvals)));
    }
    size_t j = cv__hash_slot(b->addr, p->wshift);
    while (p->wkeys[j])
        j = (j + 1) & p->wmask;
    p->wkeys[j] = b->addr;
    p->wvals[j] = *b;
    p->wcount++;
    return 0;
}

static void wide_remove(cv__pairs_t *p, size_t j)
{
    p->wcount--;
    size_t hole = j;
    for (size_t i = (j + 1) & p->wmask;; i = (i + 1) & p->wmask) {
        uint64_t k = p->wkeys[i];
        if (!k)
            break;
        size_t home = cv__hash_slot(k, p->wshift);
        int stays = (hole <= i) ? (hole < home && home <= i) : (hole < home || home <= i);
        if (stays)
            continue;
        p->wkeys[hole] = k;
        p->wvals[hole] = p->wvals[i];
        hole = i;
    }
    p->wkeys[hole] = 0;
}

/* ---- The store ---- */

cv__pairs_t *cv__pairs_create(void)
{
    cv__pairs_t *p = calloc(1, sizeof(cv__pairs_t));
    if (!p)
        return NULL;
    int in_place = reserve(p) == 0;
    p->nshards = in_place ? INPLACE_SHARDS : NSHARDS;
    p->shift = 64 - (in_place ? INPLACE_BITS : COPY_BITS);
    return p;
}

static void free_all(cv__pairs_t *p)
{
    for (size_t i = 0; i < p->nshards; i++)
        shard_release(p, &p->shards[i]);
    scratch_free(p);
    filler_stop(p);
    p->filler_failed = 0;
    free(p->wkeys);
    free(p->wvals);
    free(p->tids);
    free(p->runs);
    free(p->tree);
    free(p->keys);
    free(p->wsorted);
    p->wkeys = NULL;
    p->wvals = NULL;
    p->tids = NULL;
    p->runs = NULL;
    p->tree = NULL;
    p->keys = NULL;
    p->wsorted = NULL;
    p->wcount = p->ntids = p->count = p->bytes = 0;
    if (p->spill) {
        uint64_t blocks, bytes;
        cv__spill_figures(p->spill, &blocks, &bytes);
        p->spilled_total += blocks;
        p->spill_file += bytes;
        cv__spill_destroy(p->spill);
    }
    free(p->loaded);
    p->spill = NULL;
    p->loaded = NULL;
    p->spilled = p->spill_bytes = p->next_run = p->loaded_runs = 0;
}

void cv__pairs_destroy(cv__pairs_t *p)
{
    if (!p)
        return;
    free_all(p);
    if (p->resv)
        munmap(p->resv, RESERVED);
    free(p->regions);
    free(p);
}

/* ---- Spilling: the oldest blocks to disk (spill.c) ---- */

#define SPILL_MIN 4096

void cv__pairs_spill(cv__pairs_t *p, uint64_t budget, const char *near)
{
    p->budget = budget;
    p->near = near;
}

const char *cv__pairs_failure(const cv__pairs_t *p)
{
    return p->spill ? cv__spill_error(p->spill) : NULL;
}

void cv__pairs_spilled(const cv__pairs_t *p, uint64_t *blocks, uint64_t *file_bytes)
{
    *blocks = p->spilled_total;
    *file_bytes = p->spill_file;
    if (p->spill) {
        uint64_t b, f;
        cv__spill_figures(p->spill, &b, &f);
        *blocks += b;
        *file_bytes += f;
    }
}

/* Brings `bytes` up to date with the spill's own memory. */
static void spill_account(cv__pairs_t *p)
{
    size_t now = cv__spill_memory(p->spill);
    account(p, (ptrdiff_t)now - (ptrdiff_t)p->spill_bytes);
    p->spill_bytes = now;
}

/* The time (in the packed 4 ns units) before which about half of the packed blocks were
 * allocated: a histogram of 4096 buckets over the times' range. */
static uint64_t oldest_half(const cv__pairs_t *p)
{
    uint64_t lo = UINT64_MAX, hi = 0, n = 0;
    for (size_t i = 0; i < p->nshards; i++)
        for (uint32_t j = 0; j < p->shards[i].cap; j++) {
            const slot_t *s = &p->shards[i].slots[j];
            if (slot_free(p->shards[i].meta[j]))
                continue;
            uint64_t t = s->w1 & ((1ull << 48) - 1);
            lo = t < lo ? t : lo;
            hi = t > hi ? t : hi;
            n++;
        }
    if (!n)
        return 0;
    unsigned shift = 0;
    while ((hi - lo) >> shift >= 4096)
        shift++;
    uint32_t hist[4096] = {0};
    for (size_t i = 0; i < p->nshards; i++)
        for (uint32_t j = 0; j < p->shards[i].cap; j++) {
            const slot_t *s = &p->shards[i].slots[j];
            if (!slot_free(p->shards[i].meta[j]))
                hist[((s->w1 & ((1ull << 48) - 1)) - lo) >> shift]++;
        }
    uint64_t sum = 0;
    for (unsigned b = 0;; b++) {
        sum += hist[b];
        if (sum * 2 >= n)
            return lo + ((uint64_t)(b + 1) << shift);
    }
}

/* Writes the packed blocks allocated before the cut (all of them with `all`) to the spill as
 * one run, and rebuilds each shard of what stays at 4/5 full. Every later block is allocated
 * at or after the cut (the merge applies allocations in time order), so each run is older
 * than every block after it, which the drain relies on. 0, or -1 (no memory, or the spill
 * failed: cv__pairs_failure). */
static int spill_oldest(cv__pairs_t *p, int all)
{
    if (!p->spill && !(p->spill = cv__spill_create(p->near, sizeof(slot_t))))
        return -1;
    if (cv__spill_error(p->spill))
        return -1;
    uint64_t cut = all ? UINT64_MAX : oldest_half(p);
    void *parts[NSHARDS];
    size_t nparts[NSHARDS], total = 0;
    for (size_t i = 0; i < p->nshards; i++) {
        /* The blocks that go, to the front of the shard's array. */
        shard_t *sh = &p->shards[i];
        size_t e = 0;
        for (uint32_t j = 0; j < sh->cap; j++)
            if (!slot_free(sh->meta[j]) && (sh->slots[j].w1 & ((1ull << 48) - 1)) < cut) {
                /* Its tag goes with it, so that the tags still say which slots hold a block. */
                slot_t t = sh->slots[e];
                uint8_t m = sh->meta[e];
                sh->slots[e] = sh->slots[j];
                sh->meta[e++] = sh->meta[j];
                sh->slots[j] = t;
                sh->meta[j] = m;
            }
        parts[i] = sh->slots;
        nparts[i] = e;
        total += e;
    }
    int rc = cv__spill_run(p->spill, parts, nparts, p->nshards);
    for (size_t i = 0; i < p->nshards; i++) {
        shard_t *sh = &p->shards[i];
        uint32_t kept = sh->count - (uint32_t)nparts[i];
        if (!nparts[i] || rc != 0)
            continue;
        uint32_t nominal = kept ? kept + kept / 4 + 1 : 0;
        nominal = kept && nominal < MIN_CAP ? MIN_CAP : nominal;
        uint32_t cap = round_group(nominal);
        uint8_t *meta = cap ? meta_alloc(p, cap) : NULL;
        if (cap && !meta) {
            rc = -1;
            continue;
        }
        if (in_place(p, sh) && kept) {
            /* Rebuilt where it is, from a copy of the blocks that stay; the pages past its
             * new end go back. */
            if (scratch_room(p, kept) != 0) {
                meta_free(p, meta, cap);
                rc = -1;
                continue;
            }
            uint32_t n = 0;
            for (uint32_t j = (uint32_t)nparts[i]; j < sh->cap; j++)
                if (!slot_free(sh->meta[j]))
                    p->scratch[n++] = sh->slots[j];
            shard_t fresh = {sh->slots, meta, cap, nominal, 0, 0, 0};
            place_all(p->scratch, NULL, n, &fresh);
            inplace_trim(p, sh, (size_t)cap * sizeof *sh->slots);
            account(p, ((ptrdiff_t)cap - (ptrdiff_t)sh->cap) * (ptrdiff_t)sizeof(slot_t));
            meta_free(p, sh->meta, sh->cap);
            *sh = fresh;
            continue;
        }
        slot_t *slots = cap ? slots_alloc(p, cap) : NULL;
        if (cap && !slots) {
            meta_free(p, meta, cap);
            rc = -1;
            continue;
        }
        shard_t fresh = {slots, meta, cap, nominal, 0, 0, 0};
        place_all(sh->slots + nparts[i], sh->meta + nparts[i], sh->cap - (uint32_t)nparts[i],
                  &fresh);
        account(p, (ptrdiff_t)cap * (ptrdiff_t)sizeof *slots);
        shard_release(p, sh);
        *sh = fresh;
    }
    if (rc != 0)
        return -1;
    p->spilled += total;
    spill_account(p);
    /* The old shards were freed in the middle of the heap, where the allocator keeps the pages:
     * without this the process would hold the store's old size on top of its new one. */
    malloc_trim(0);
    return 0;
}

static int spill_take(cv__pairs_t *p, uint64_t addr, cv__live_t *out)
{
    slot_t s;
    if (cv__spill_take(p->spill, addr, &s) != 1)
        return 0;
    unpack(p, &s, out);
    p->spilled--;
    p->count--;
    spill_account(p);
    return 1;
}

int cv__pairs_take(cv__pairs_t *p, uint64_t addr, cv__live_t *out)
{
    if (!addr)
        return 0;
    uint64_t h = hash_of(addr);
    shard_t *sh = shard_of(p, h);
    long j = shard_find(sh, addr, h);
    if (j >= 0) {
        unpack(p, &sh->slots[j], out);
        shard_remove(sh, (uint32_t)j);
        p->count--;
        return 1;
    }
    long w = wide_find(p, addr);
    if (w < 0)
        return p->spilled ? spill_take(p, addr, out) : 0;
    *out = p->wvals[w];
    wide_remove(p, (size_t)w);
    p->count--;
    return 1;
}

/* Room for one more block: when the shard's blocks and deleted slots would fill more than 7/8 of
 * it, it is built again, at its size when dropping the deleted slots leaves room for 1/32 of it
 * more, else a quarter larger; it asks for its next size's pages when it is 17/20 full. So a
 * shard that grows was at least 27/32 full, and is at least 27/40 full after (47 bytes a block
 * with the tags). -1: no memory. */
static int make_room(cv__pairs_t *p, shard_t *sh)
{
    if ((size_t)(sh->count + sh->deleted + 1) * 8 > (size_t)sh->cap * 7)
        return shard_grow(p, sh, sh->deleted && (size_t)(sh->count + 1) * 32 <= (size_t)sh->cap * 27);
    if ((size_t)sh->count * 20 > (size_t)sh->cap * 17 && sh->ahead != sh->cap)
        fill_ahead(p, sh);
    return 0;
}

static int insert(cv__pairs_t *p, const cv__live_t *b, cv__live_t *evicted)
{
    /* A block may be live on disk at the address too (spill.c): the take looks there. */
    if (!b->addr || p->wcount || p->spilled || !packs(b)) {
        /* A block still live at this address (its free was not recorded) makes way. */
        int had = cv__pairs_take(p, b->addr, evicted);
        if (packs(b)) {
            uint64_t h = hash_of(b->addr);
            shard_t *sh = shard_of(p, h);
            if (make_room(p, sh) != 0)
                return -1;
            if (note_tid(p, b->thread, b->tid) != 0)
                return -1;
            slot_t s = pack(b);
            shard_put(sh, &s, h);
        } else if (wide_put(p, b) != 0) {
            return -1;
        }
        p->count++;
        return had;
    }
    /* The common case, a packed block and an empty side table: one pass over the groups finds
     * the block still live at the address, or else the first free slot on the way. */
    uint64_t h = hash_of(b->addr);
    shard_t *sh = shard_of(p, h);
    if (make_room(p, sh) != 0)
        return -1;
    if (b->thread >= p->ntids || p->tids[b->thread] != b->tid)
        if (note_tid(p, b->thread, b->tid) != 0)
            return -1;
    uint32_t groups = sh->cap / GROUP, g = home_of(h, sh->cap), put = UINT32_MAX;
    uint8_t tag = tag_of(h);
    for (;;) {
        const uint8_t *m = &sh->meta[(size_t)g * GROUP];
        for (uint32_t x = group_match(m, tag); x; x &= x - 1) {
            slot_t *at = &sh->slots[g * GROUP + (uint32_t)__builtin_ctz(x)];
            if (at->addr == b->addr) {
                /* The new block takes the old one's slot. */
                unpack(p, at, evicted);
                *at = pack(b);
                return 1;
            }
        }
        uint32_t f = group_free(m);
        if (put == UINT32_MAX && f)
            put = g * GROUP + (uint32_t)__builtin_ctz(f);
        if (group_match(m, EMPTY))
            break;
        if (++g == groups)
            g = 0;
    }
    slot_t s = pack(b);
    shard_set(sh, put, &s, h);
    p->count++;
    return 0;
}

int cv__pairs_insert(cv__pairs_t *p, const cv__live_t *b, cv__live_t *evicted)
{
    int had = insert(p, b, evicted);
    /* A floor of blocks in memory: with a budget smaller than the shards' least room, a spill
     * at every insert would write runs of a few blocks. */
    if (had >= 0 && p->budget && p->bytes > p->budget &&
        p->count - p->wcount - p->spilled >= SPILL_MIN && spill_oldest(p, 0) != 0)
        return -1;
    return had;
}

size_t cv__pairs_find_range(const cv__pairs_t *p, uint64_t lo, uint64_t hi, uint64_t *addrs,
                            size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < p->nshards && n < max; i++) {
        const shard_t *sh = &p->shards[i];
        for (uint32_t j = 0; j < sh->cap && n < max; j++)
            if (!slot_free(sh->meta[j]) && sh->slots[j].addr >= lo && sh->slots[j].addr < hi)
                addrs[n++] = sh->slots[j].addr;
    }
    for (size_t j = 0; p->wcount && j <= p->wmask && n < max; j++)
        if (p->wkeys[j] >= lo && p->wkeys[j] < hi)
            addrs[n++] = p->wkeys[j];
    if (p->spilled && n < max)
        n += cv__spill_find_range(p->spill, lo, hi, addrs + n, max - n);
    return n;
}

/* The line of tags of the address's home group: the first of the two steps of a lookup's
 * prefetch (conversion.c decodes events ahead and calls this as it decodes each). */
void cv__pairs_prefetch(const cv__pairs_t *p, uint64_t addr)
{
    uint64_t h = hash_of(addr);
    const shard_t *sh = &p->shards[h >> p->shift];
    if (sh->cap)
        __builtin_prefetch(&sh->meta[(size_t)home_of(h, sh->cap) * GROUP]);
}

/* The second step, some events later, once the tags are in the cache: the lines of the slots
 * whose tags match the address's, and of the first free slot, where an insertion would go. */
void cv__pairs_prefetch_slot(const cv__pairs_t *p, uint64_t addr)
{
    uint64_t h = hash_of(addr);
    const shard_t *sh = &p->shards[h >> p->shift];
    if (!sh->cap)
        return;
    uint32_t g = home_of(h, sh->cap);
    const uint8_t *m = &sh->meta[(size_t)g * GROUP];
    uint32_t x = group_match(m, tag_of(h)), f = group_free(m);
    x |= f & (0u - f); /* the first free slot's bit */
    for (int n = 0; x && n < 3; x &= x - 1, n++)
        __builtin_prefetch(&sh->slots[g * GROUP + (uint32_t)__builtin_ctz(x)]);
}

size_t cv__pairs_count(const cv__pairs_t *p)
{
    return p->count;
}

void cv__pairs_memory(const cv__pairs_t *p, size_t *bytes, size_t *peak_bytes)
{
    *bytes = p->bytes;
    *peak_bytes = p->peak_bytes;
}

/* ---- The drain: everything still live, in allocation order ---- */

/* The order of the drain: time, then thread id, then address. */
static int before(const cv__live_t *x, const cv__live_t *y)
{
    if (x->t != y->t)
        return x->t < y->t;
    if (x->tid != y->tid)
        return x->tid < y->tid;
    return x->addr < y->addr;
}

static int slot_cmp(const void *a, const void *b, void *arg)
{
    const slot_t *x = a, *y = b;
    const uint32_t *tids = arg;
    uint64_t tx = x->w1 & ((1ull << 48) - 1), ty = y->w1 & ((1ull << 48) - 1);
    if (tx != ty)
        return tx < ty ? -1 : 1;
    uint32_t ix = tids[x->w1 >> 48], iy = tids[y->w1 >> 48];
    if (ix != iy)
        return ix < iy ? -1 : 1;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

#define T_MASK ((1ull << 48) - 1)

/* sort_slots splits by at most 11 bits. */
#define DIGIT_BITS 11
#define DIGITS (1u << DIGIT_BITS)

/* sort_small's digits: at most 12 bits, the passes' widths equal (SMALL_PASSES of them at most,
 * for 48 bits). */
#define SMALL_BITS 12
#define SMALL_DIGITS (1u << SMALL_BITS)
#define SMALL_PASSES ((48 + SMALL_BITS - 1) / SMALL_BITS)

/* Sorts n packed blocks into the drain's order, where they fit in the caches, with tmp (room for
 * n) as the other buffer: a radix sort on the time, from the least significant digit, over the
 * digits of t - lo (all below 2^bits), as few passes as digits of 12 bits allow, the bits shared
 * out evenly (24 bits take passes of 12 and 12 where digits of 11 bits took three passes and a
 * copy back): a pass in which every block has the same digit
 * is skipped, and every pass's counts are taken in one read of the blocks; then each run of
 * equal times by thread id and address. The time is all but unique, so the sort reads and
 * writes each block a few times in order where a comparison sort would call its comparison
 * n log n times. Returns a or tmp, whichever holds the result. */
static slot_t *sort_small(slot_t *a, slot_t *tmp, uint32_t n, uint64_t lo, unsigned bits,
                          const uint32_t *tids)
{
    unsigned passes = (bits + SMALL_BITS - 1) / SMALL_BITS;
    unsigned width = passes ? (bits + passes - 1) / passes : 0;
    uint32_t digits = 1u << width, mask = digits - 1;
    uint32_t at[SMALL_PASSES][SMALL_DIGITS]; /* 64 KiB, of which the passes' digits are cleared */
    for (unsigned q = 0; q < passes; q++)
        memset(at[q], 0, digits * sizeof at[q][0]);
    for (uint32_t i = 0; i < n; i++) {
        uint64_t v = (a[i].w1 & T_MASK) - lo;
        for (unsigned q = 0; q < passes; q++)
            at[q][v >> (q * width) & mask]++;
    }
    slot_t *src = a, *dst = tmp;
    for (unsigned q = 0; q < passes; q++) {
        unsigned shift = q * width;
        uint32_t *c = at[q];
        if (c[((src[0].w1 & T_MASK) - lo) >> shift & mask] == n)
            continue;
        uint32_t sum = 0;
        for (unsigned d = 0; d < digits; d++) {
            uint32_t k = c[d];
            c[d] = sum;
            sum += k;
        }
        for (uint32_t i = 0; i < n; i++)
            dst[c[((src[i].w1 & T_MASK) - lo) >> shift & mask]++] = src[i];
        slot_t *x = src;
        src = dst;
        dst = x;
    }
    for (uint32_t i = 0; i < n;) {
        uint32_t j = i + 1;
        while (j < n && (src[j].w1 & T_MASK) == (src[i].w1 & T_MASK))
            j++;
        if (j - i > 1)
            qsort_r(src + i, j - i, sizeof *src, slot_cmp, (void *)tids);
        i = j;
    }
    return src;
}

/* About this many blocks (512 KiB) are sorted by sort_small at once: a whole shard's passes
 * would each scatter its blocks over 2,048 places in tens of MiB, a cache miss a block (a
 * sixteenth of 8 M blocks sorted that way took twice as long as in pieces). */
#define SORT_SMALL (1u << 14)
/* The most blocks sort_small is handed (a larger part is split again): the size of the sort's
 * buffer, 2 MiB, whatever the number of blocks. */
#define SORT_PART (4u * SORT_SMALL)

/* The digit of a packed block's time that sort_slots splits by. */
static inline uint32_t split_digit(const slot_t *x, uint64_t lo, unsigned shift)
{
    return (uint32_t)(((x->w1 & T_MASK) - lo) >> shift);
}

/* Sorts n packed blocks into the drain's order, with tmp (room for min(n, SORT_PART) blocks) as
 * the other buffer. A larger array is first split in place by the top bits of its times into
 * parts of about SORT_SMALL blocks (each block swapped into its part's next free place, as an
 * American flag sort does), then each part sorted by sort_small while it is in the caches: one
 * pass over the whole and the rest within the caches, and no buffer the size of the array. */
static void sort_slots(slot_t *a, slot_t *tmp, uint32_t n, const uint32_t *tids)
{
    if (n < 2)
        return;
    uint64_t lo = UINT64_MAX, hi = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t t = a[i].w1 & T_MASK;
        lo = t < lo ? t : lo;
        hi = t > hi ? t : hi;
    }
    unsigned bits = hi > lo ? 64u - (unsigned)__builtin_clzll(hi - lo) : 0;
    if (bits == 0 && n > SORT_PART) {
        qsort_r(a, n, sizeof *a, slot_cmp, (void *)tids); /* every time equal */
        return;
    }
    if (n <= 2 * SORT_SMALL || bits == 0) {
        slot_t *r = sort_small(a, tmp, n, lo, bits, tids);
        if (r != a)
            memcpy(a, r, (size_t)n * sizeof *a);
        return;
    }
    /* Parts of SORT_SMALL blocks or fewer, and, while they stay above a quarter of that (where
     * sort_small's counts would cost more than a pass saves), of times that sort_small sorts in
     * two passes: with 8 M blocks live, 500 K a shard, parts of 16 K blocks had 25 bits of time
     * left, three passes and a copy back, where parts of 8 K have 24. */
    unsigned split = 1;
    while (split < DIGIT_BITS &&
           ((n >> split) > SORT_SMALL ||
            (bits > split + 2 * SMALL_BITS && (n >> split) > SORT_SMALL / 4)))
        split++;
    unsigned shift = bits > split ? bits - split : 0;
    uint32_t parts = 1u << (bits - shift), c[DIGITS] = {0}, from[DIGITS + 1], next[DIGITS];
    for (uint32_t i = 0; i < n; i++)
        c[split_digit(&a[i], lo, shift)]++;
    uint32_t sum = 0;
    for (unsigned d = 0; d < parts; d++) {
        from[d] = next[d] = sum;
        sum += c[d];
    }
    from[parts] = n;
    for (unsigned d = 0; d < parts; d++) {
        while (next[d] < from[d + 1]) {
            slot_t x = a[next[d]];
            uint32_t e = split_digit(&x, lo, shift);
            while (e != d) {
                slot_t y = a[next[e]];
                a[next[e]++] = x;
                x = y;
                e = split_digit(&x, lo, shift);
            }
            a[next[d]++] = x;
        }
    }
    for (unsigned d = 0; d < parts; d++) {
        uint32_t k = from[d + 1] - from[d];
        slot_t *part = a + from[d];
        if (k > SORT_PART) {
            sort_slots(part, tmp, k, tids); /* times bunched together */
        } else if (k > 1) {
            slot_t *r = sort_small(part, tmp, k, lo + ((uint64_t)d << shift), shift, tids);
            if (r != part)
                memcpy(part, r, (size_t)k * sizeof *part);
        }
    }
}

static int live_cmp(const void *a, const void *b)
{
    return before(a, b) ? -1 : before(b, a) ? 1 : 0;
}

/* Reads run i's next time into its key, or marks it done (its key then the largest). */
static void run_peek(cv__pairs_t *p, uint32_t i)
{
    run_t *r = &p->runs[i];
    if (r->at && r->at < r->end)
        r->t = (r->at->w1 & T_MASK) << 2;
    else if (r->wat && r->wat < r->wend)
        r->t = r->wat->t;
    else
        r->done = 1;
    p->keys[i] = r->done ? UINT64_MAX : r->t;
}

/* The thread id and address of run r's next block, to break a tie of times. */
static void run_tie(const cv__pairs_t *p, const run_t *r, uint32_t *tid, uint64_t *addr)
{
    if (r->at) {
        *tid = p->tids[r->at->w1 >> 48];
        *addr = r->at->addr;
    } else {
        *tid = r->wat->tid;
        *addr = r->wat->addr;
    }
}

/* Whether run a's next block comes before run b's when their keys are equal: a run that is done
 * comes after all, equal times go by thread id and address. */
static int run_tied_before(const cv__pairs_t *p, uint32_t a, uint32_t b)
{
    const run_t *x = &p->runs[a], *y = &p->runs[b];
    if (x->done || y->done)
        return !x->done;
    if (x->t != y->t)
        return x->t < y->t;
    uint32_t tx, ty;
    uint64_t ax, ay;
    run_tie(p, x, &tx, &ax);
    run_tie(p, y, &ty, &ay);
    if (tx != ty)
        return tx < ty;
    return ax < ay;
}

/* Whether run a's next block comes before run b's. The keys decide all but a few matches,
 * without unpacking a block. */
static int run_before(const cv__pairs_t *p, uint32_t a, uint32_t b)
{
    uint64_t ka = p->keys[a], kb = p->keys[b];
    return ka != kb ? ka < kb : run_tied_before(p, a, b);
}

/* Plays the tournament once, bottom up: each node keeps its loser, passes its winner on. */
static void play(cv__pairs_t *p)
{
    uint32_t win[2 * MAX_LEAVES];
    for (uint32_t i = 0; i < p->nleaves; i++)
        win[p->nleaves + i] = i;
    for (uint32_t n = p->nleaves - 1; n >= 1; n--) {
        uint32_t a = win[2 * n], b = win[2 * n + 1];
        int first = run_before(p, a, b);
        win[n] = first ? a : b;
        p->tree[n] = first ? b : a;
    }
    p->tree[0] = win[1];
}

/* Loads the next spilled run that has live blocks into leaves 0-255 of the tournament, cut in up
 * to 256 pieces each sorted by time, once none of the last one's is left, and plays the
 * tournament again. Every spilled block is older than every block loaded after it and than the
 * side table's later blocks, so nothing of the drain can come before what is loaded now. 0, or
 * -1 (no memory, or cv__pairs_failure). */
static int load_spilled(cv__pairs_t *p)
{
    while (!p->loaded_runs && p->next_run < cv__spill_runs(p->spill)) {
        size_t k = p->next_run++, n = cv__spill_live(p->spill, k);
        if (!n)
            continue;
        free(p->loaded);
        account(p, -(ptrdiff_t)p->loaded_bytes);
        p->loaded_bytes = 0;
        size_t per = (n + p->nruns - 1) / p->nruns;
        p->loaded = malloc(n * sizeof *p->loaded);
        slot_t *tmp = malloc(per * sizeof *tmp);
        if (!p->loaded || !tmp) {
            free(tmp);
            return -1;
        }
        p->loaded_bytes = n * sizeof *p->loaded;
        account(p, (ptrdiff_t)(p->loaded_bytes + per * sizeof *tmp));
        int rc = cv__spill_load(p->spill, k, p->loaded);
        spill_account(p);
        for (size_t i = 0; rc == 0 && i < p->nruns; i++) {
            p->runs[i] = (run_t){0};
            if (i * per < n) {
                uint32_t m = (uint32_t)(n - i * per < per ? n - i * per : per);
                sort_slots(p->loaded + i * per, tmp, m, p->tids);
                p->runs[i].at = p->loaded + i * per;
                p->runs[i].end = p->loaded + i * per + m;
                p->loaded_runs++;
            }
            run_peek(p, (uint32_t)i);
        }
        free(tmp);
        account(p, -(ptrdiff_t)(per * sizeof *tmp));
        if (rc != 0)
            return -1;
        play(p);
    }
    return 0;
}

/* Compacts the shards of one parity (every shard when parity is UINT32_MAX) and sorts them by
 * time, each a run of the drain. */
static void sort_shards(cv__pairs_t *p, uint32_t parity, slot_t *tmp)
{
    for (uint32_t i = 0; i < p->nshards; i++) {
        if (parity != UINT32_MAX && i % 2 != parity)
            continue;
        shard_t *sh = &p->shards[i];
        uint32_t n = 0;
        for (uint32_t j = 0; j < sh->cap; j++)
            if (!slot_free(sh->meta[j]))
                sh->slots[n++] = sh->slots[j];
        sort_slots(sh->slots, tmp, n, p->tids);
        p->runs[i].at = sh->slots;
        p->runs[i].end = sh->slots + n;
    }
}

/* The second sorting thread's shards and buffer. */
typedef struct {
    cv__pairs_t *p;
    uint32_t parity;
    slot_t *tmp;
} sorter_t;

static void *sort_main(void *arg)
{
    sorter_t *s = arg;
    pthread_setname_np(pthread_self(), "rheap sorter");
    sort_shards(s->p, s->parity, s->tmp);
    return NULL;
}

int cv__pairs_drain_begin(cv__pairs_t *p)
{
    /* What spilled comes back run by run; the blocks in memory go out first as the last run,
     * so the drain holds one run's blocks at a time, never more than the store held. */
    if (p->spilled && p->count - p->wcount > p->spilled && spill_oldest(p, 1) != 0)
        return -1;
    /* The growths are over: their scratch array goes before the drain's own buffers. */
    scratch_free(p);
    /* A run per shard, or the spilled runs' pieces (where the shards are empty), then the side
     * table's. */
    p->nruns = p->spill ? SPILL_RUNS : p->nshards;
    p->nleaves = 2;
    while (p->nleaves < p->nruns + (p->wcount ? 1u : 0u))
        p->nleaves *= 2;
    uint32_t most = 0;
    for (uint32_t i = 0; i < p->nshards; i++)
        most = p->shards[i].count > most ? p->shards[i].count : most;
    uint32_t per = most < SORT_PART ? most : SORT_PART;
    p->runs = calloc(p->nleaves, sizeof *p->runs);
    p->tree = malloc(p->nleaves * sizeof *p->tree);
    p->keys = malloc(p->nleaves * sizeof *p->keys);
    if (p->wcount)
        p->wsorted = malloc(p->wcount * sizeof *p->wsorted);
    /* The sort's second buffer: room for its largest part, 2 MiB at most. */
    slot_t *tmp = per ? malloc((size_t)per * sizeof *tmp) : NULL;
    if (!p->runs || !p->tree || !p->keys || (p->wcount && !p->wsorted) || (per && !tmp)) {
        free(tmp);
        return -1;
    }
    account(p, (ptrdiff_t)((size_t)per * sizeof *tmp));
    /* The shards are sorted over two threads, each with a buffer of its own, when a second
     * buffer and a thread can be had: with 8 M blocks live the sort took 0.2 s, the converting
     * thread alone while the writer waited for the first rows. */
    sorter_t other = {p, 1, NULL};
    pthread_t thread;
    int two = 0;
    if (p->nshards > 1 && per >= SORT_PART && (other.tmp = malloc((size_t)per * sizeof *tmp)))
        two = pthread_create(&thread, NULL, sort_main, &other) == 0;
    if (two)
        account(p, (ptrdiff_t)((size_t)per * sizeof *tmp));
    sort_shards(p, two ? 0 : UINT32_MAX, tmp);
    if (two) {
        pthread_join(thread, NULL);
        account(p, -(ptrdiff_t)((size_t)per * sizeof *tmp));
    }
    free(other.tmp);
    free(tmp);
    account(p, -(ptrdiff_t)((size_t)per * sizeof *tmp));
    if (p->wcount) {
        size_t n = 0;
        for (size_t j = 0; j <= p->wmask; j++)
            if (p->wkeys[j])
                p->wsorted[n++] = p->wvals[j];
        qsort(p->wsorted, n, sizeof *p->wsorted, live_cmp);
        p->runs[p->nruns].wat = p->wsorted;
        p->runs[p->nruns].wend = p->wsorted + n;
    }
    for (uint32_t i = 0; i < p->nleaves; i++)
        run_peek(p, i);
    play(p);
    return p->spill ? load_spilled(p) : 0;
}

int cv__pairs_drain_next(cv__pairs_t *p, cv__live_t *out)
{
    if (p->spill && !p->loaded_runs && load_spilled(p) != 0)
        return -1;
    if (!p->runs || p->runs[p->tree[0]].done) {
        /* Every block is out: the store is empty and ready for another process. */
        free_all(p);
        return 0;
    }
    uint32_t w = p->tree[0];
    run_t *r = &p->runs[w];
    if (r->at) {
        /* The runs (16, up to 257) are read in turns: too many streams for the hardware to see,
         * so each line would come from memory when its first block is reached. */
        __builtin_prefetch(r->at + 8);
        unpack(p, r->at++, out);
    } else
        *out = *r->wat++;
    run_peek(p, w);
    if (r->done && w < p->nruns && p->loaded_runs)
        p->loaded_runs--;
    /* The winner's path is played again: at each node the better of it and the loser kept
     * there goes on. Which one is as good as random, so the choice is made without a branch
     * (a mispredicted one at each of the nine levels cost more than the rest of the match);
     * only equal keys, a tie or a run that is done, take the slow way. */
    uint64_t wk = p->keys[w];
    for (uint32_t n = (p->nleaves + w) / 2; n >= 1; n /= 2) {
        uint32_t o = p->tree[n];
        uint64_t ok = p->keys[o];
        int swap = ok < wk;
        if (__builtin_expect(ok == wk, 0))
            swap = run_tied_before(p, o, w);
        /* Masks rather than conditional expressions, which the compiler made branches. */
        uint32_t m = 0u - (uint32_t)swap;
        uint64_t m64 = 0ull - (uint64_t)swap;
        p->tree[n] = o ^ ((o ^ w) & m);
        w ^= (w ^ o) & m;
        wk ^= (wk ^ ok) & m64;
    }
    p->tree[0] = w;
    return 1;
}
