/*
 * sample.c: profile mode, sampling allocations by bytes.
 *
 * Recording every call costs several times the program's own allocation time on allocation-heavy
 * code. Profile mode records a sample instead, as jemalloc's, tcmalloc's and heapprofd's heap
 * profiles do: the bytes a thread allocates are a stream in which each byte is a sample point with
 * probability 1/interval, so the distance to the next point is an exponential draw of mean
 * `interval`. An allocation that covers a sample point is recorded with its backtrace; one of
 * size s is so with probability p = 1 - exp(-s/interval), and stands for 1/p blocks and s/p bytes,
 * which is what the converter weighs it by (the interval is in the process file). Large blocks
 * are nearly always sampled, small ones rarely; a site's estimate is unbiased either way.
 *
 * What the rest costs: a thread-local countdown per allocation (sample.h), the counters of
 * thread.c for the exact totals, and, for a free, one load from the filter below.
 *
 * Frees. A sampled block's free must be recorded (lifetimes, leaks), and the free of an
 * unsampled one must cost next to nothing. The choice here is a counting filter: 64 KiB of
 * bytes, each counting the live sampled blocks whose address hashes to it, in front of an exact
 * set of the sampled addresses kept under a lock. A free reads its slot; a zero (nearly always:
 * a few thousand live samples leave 95% or more of the 65536 slots empty) means "not sampled"
 * and the free goes on. A nonzero slot sends it to the exact set. The filter is written only
 * under the lock, when a sample is taken or a sampled block freed, so its cache lines stay
 * shared and clean on every core. A flag in a header before each block would make every
 * allocation larger and move the program's blocks: it would change the program's behaviour.
 *
 * The draws: a per-thread splitmix64 generator, seeded from RHEAP_SAMPLE_SEED and the order in
 * which threads made their first draw (the same program with the same seed samples the same
 * allocations, on one thread), or from the clock and thread id when the seed is 0.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sample.h"

_Atomic uint64_t rheap__sample_interval;
_Atomic uint8_t rheap__filter[1u << RHEAP__FILTER_BITS];

/* ---- The draws ---- */

static RHEAP_TLS uint64_t tl_rng;      /* splitmix64 state; 0: not seeded */
static _Atomic uint64_t seed_base;     /* the recording's seed */
static _Atomic uint64_t threads_seeded;

static uint64_t splitmix(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Bytes to the next sample point: an exponential variate of mean `interval`, at least 1.
 * log() of a number in (0, 1] neither fails nor sets errno. */
static int64_t draw(uint64_t interval) {
    double u = (double)((splitmix(&tl_rng) >> 11) + 1) * 0x1p-53;
    double d = -log(u) * (double)interval;
    if (d < 1.0)
        return 1;
    if (d > 0x1p62)
        return INT64_C(1) << 62;
    return (int64_t)d;
}

int rheap__sample_next(uint64_t size) {
    uint64_t interval = atomic_load_explicit(&rheap__sample_interval, memory_order_relaxed);
    if (!interval)
        interval = 1; /* the recording stopped in between: nothing reads the answer */
    if (!tl_rng) {
        uint64_t seed = atomic_load_explicit(&seed_base, memory_order_relaxed);
        uint64_t n = atomic_fetch_add_explicit(&threads_seeded, 1, memory_order_relaxed);
        if (seed)
            tl_rng = seed * 0x100000001B3ull + n;
        else
            tl_rng = rheap__now_abs() ^ ((uint64_t)syscall(SYS_gettid) << 32);
        tl_rng |= 1;
        rheap__tl.sample_left = draw(interval);
        if (size < (uint64_t)rheap__tl.sample_left) {
            rheap__tl.sample_left -= (int64_t)size;
            return 0;
        }
    }
    /* The next point counts from the end of this block: by memorylessness, the bytes left over
     * past this block's point are as good as fresh ones. */
    rheap__tl.sample_left = draw(interval);
    return 1;
}

/* ---- The set of live sampled blocks ----
 *
 * Open addressing over addresses (0 empty, 1 removed), in an anonymous mapping that doubles
 * when three quarters are used or removed. Only sampled allocations, their frees and frees whose
 * filter slot is nonzero come here, so a plain spin lock serves. */

#define EMPTY 0
#define REMOVED 1

static atomic_flag set_lock = ATOMIC_FLAG_INIT;
static uintptr_t *set;
static size_t set_cap, set_used, set_removed; /* cap: a power of two, or 0 */

static void lock(void) {
    while (atomic_flag_test_and_set_explicit(&set_lock, memory_order_acquire))
        sched_yield();
}

static void unlock(void) {
    atomic_flag_clear_explicit(&set_lock, memory_order_release);
}

static size_t home(uintptr_t p, size_t cap) {
    return (size_t)(((uint64_t)p >> 4) * 0x9E3779B97F4A7C15ull >> 20) & (cap - 1);
}

static void put(uintptr_t *tab, size_t cap, uintptr_t p) {
    size_t i = home(p, cap);
    while (tab[i] > REMOVED)
        i = (i + 1) & (cap - 1);
    tab[i] = p;
}

/* A new table for the live blocks (removed ones dropped), twice as large when they fill half
 * of the present one. 0, or -1 (errno kept) when no memory. */
static int rebuild(void) {
    size_t cap = set_cap ? set_cap : 4096;
    if ((set_used + 1) * 2 > cap)
        cap *= 2;
    int saved = errno;
    uintptr_t *tab = mmap(NULL, cap * sizeof *tab, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (tab == MAP_FAILED) {
        errno = saved;
        return -1;
    }
    for (size_t i = 0; i < set_cap; i++)
        if (set[i] > REMOVED)
            put(tab, cap, set[i]);
    if (set)
        munmap(set, set_cap * sizeof *set);
    errno = saved;
    set = tab;
    set_cap = cap;
    set_removed = 0;
    return 0;
}

int rheap__sample_track(const void *p) {
    lock();
    if ((set_used + set_removed + 1) * 4 > set_cap * 3 && rebuild() != 0) {
        unlock();
        return -1;
    }
    put(set, set_cap, (uintptr_t)p);
    set_used++;
    _Atomic uint8_t *f = &rheap__filter[rheap__filter_slot(p)];
    uint8_t n = atomic_load_explicit(f, memory_order_relaxed);
    if (n < 255)
        atomic_store_explicit(f, (uint8_t)(n + 1), memory_order_relaxed);
    unlock();
    return 0;
}

int rheap__sample_forget_slow(const void *p) {
    int found = 0;
    lock();
    if (set_cap) {
        for (size_t i = home((uintptr_t)p, set_cap); set[i] != EMPTY; i = (i + 1) & (set_cap - 1)) {
            if (set[i] == (uintptr_t)p) {
                set[i] = REMOVED;
                set_used--;
                set_removed++;
                found = 1;
                break;
            }
        }
    }
    if (found) {
        /* A saturated slot stays so: it no longer knows how many blocks it counts. */
        _Atomic uint8_t *f = &rheap__filter[rheap__filter_slot(p)];
        uint8_t n = atomic_load_explicit(f, memory_order_relaxed);
        if (n < 255)
            atomic_store_explicit(f, (uint8_t)(n - 1), memory_order_relaxed);
    }
    unlock();
    return found;
}

/* ---- Recordings and forks ---- */

void rheap__sample_start(const rheap__config_t *c) {
    lock();
    if (set_cap)
        memset(set, 0, set_cap * sizeof *set);
    set_used = set_removed = 0;
    for (size_t i = 0; i < sizeof rheap__filter; i++)
        atomic_store_explicit(&rheap__filter[i], 0, memory_order_relaxed);
    unlock();
    atomic_store(&seed_base, c->seed);
    atomic_store(&rheap__sample_interval, c->profile ? c->interval : 0);
}

void rheap__sample_fork_lock(void) {
    lock();
}

void rheap__sample_fork_unlock(void) {
    unlock();
}
