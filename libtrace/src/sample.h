/*
 * sample.h: profile mode, the hot-path half. See sample.c for the why.
 *
 * In profile mode a wrapper asks two questions. For an allocation: is it sampled? That is a
 * thread-local countdown of bytes: an unsampled allocation subtracts its size and goes on. For a
 * free: was this block sampled? That is one load from a small shared filter that only sampled
 * allocations and their frees write. Both answers cost no clock read, no lock and no write to a
 * shared cache line. Every call is also counted in the thread's exact totals (internal.h,
 * rheap__counts_t).
 */
#ifndef RHEAP_SAMPLE_H
#define RHEAP_SAMPLE_H

#include <stdatomic.h>
#include <stdint.h>

#include "internal.h"

/* The recording's mean sampling interval in bytes while it is in profile mode, else 0 (trace
 * mode): set by rheap__sample_start before recording goes on, read by the wrappers. */
extern _Atomic uint64_t rheap__sample_interval;

static inline int rheap__profiling(void) {
    return atomic_load_explicit(&rheap__sample_interval, memory_order_relaxed) != 0;
}

/* ---- The countdown ---- */

/* The countdown itself is rheap__tl.sample_left (internal.h). */

/* The slow half of rheap__sample_pick: draws the thread's first sample point, or takes a sample
 * and draws the next. */
int rheap__sample_next(uint64_t size);

/* Whether an allocation of `size` bytes is sampled: its bytes cover the next sample point. Each
 * byte is a sample point with probability 1/interval, so a block of size s is sampled with
 * probability 1 - exp(-s/interval). */
static inline int rheap__sample_pick(uint64_t size) {
    if (RHEAP_LIKELY(size < (uint64_t)rheap__tl.sample_left)) {
        rheap__tl.sample_left -= (int64_t)size;
        return 0;
    }
    return rheap__sample_next(size);
}

/* ---- The totals ---- */

/* Counts an allocation of `size` bytes in totals c. */
static inline void rheap__count_alloc_to(rheap__counts_t *c, uint64_t size) {
    rheap__counts_add(&c->allocs, 1);
    rheap__counts_add(&c->bytes, size);
}

/* Counts an allocation, or a free, in the calling thread's totals (attaching it if needed). */
static inline void rheap__count_alloc(uint64_t size) {
    rheap__counts_t *c = rheap__counts();
    if (RHEAP_LIKELY(c != NULL))
        rheap__count_alloc_to(c, size);
}

static inline void rheap__count_free(void) {
    rheap__counts_t *c = rheap__counts();
    if (RHEAP_LIKELY(c != NULL))
        rheap__counts_add(&c->frees, 1);
}

/* The calling thread's totals if it is attached to the current recording and that recording is
 * in profile mode, else NULL (without attaching: the slow path does that). */
static inline rheap__counts_t *rheap__counts_now(void) {
    rheap__counts_t *c = rheap__tl.counts;
    return RHEAP_LIKELY(c && atomic_load_explicit(&c->open, memory_order_relaxed)) ? c : NULL;
}

/* ---- The sampled blocks ---- */

/* The address filter: one byte per slot, the number of live sampled blocks whose address hashes
 * there (saturating at 255). 64 KiB: with a few thousand live samples nearly every slot is 0. */
#define RHEAP__FILTER_BITS 16
extern _Atomic uint8_t rheap__filter[1u << RHEAP__FILTER_BITS];

static inline uint32_t rheap__filter_slot(const void *p) {
    return (uint32_t)(((uintptr_t)p >> 4) * 0x9E3779B97F4A7C15ull >> (64 - RHEAP__FILTER_BITS));
}

static inline int rheap__filter_may_hold(const void *p) {
    return atomic_load_explicit(&rheap__filter[rheap__filter_slot(p)], memory_order_relaxed) != 0;
}

/* Remembers a sampled block (before the allocating wrapper returns it). 0, or -1 when the set of
 * sampled blocks cannot grow (no memory): the caller then fails the recording. */
int rheap__sample_track(const void *p);

/* The slow half of rheap__sample_forget: looks p up in the exact set under its lock. */
int rheap__sample_forget_slow(const void *p);

/* Whether p is a live sampled block; if so, forgets it. Called before the real free, so the
 * address cannot be handed out and sampled again in between. */
static inline int rheap__sample_forget(const void *p) {
    if (RHEAP_LIKELY(!rheap__filter_may_hold(p)))
        return 0;
    return rheap__sample_forget_slow(p);
}

/* ---- The fast paths of the exported functions ----
 *
 * The caller has checked that a recording is on and that the call is the program's (not the
 * tracer's own). Each returns the thread's totals when the call needs nothing but counting
 * (the caller counts it, then makes the real call its last act: see wrappers.c), or NULL: the
 * slow path then decides, with the countdown untouched. */

/* An allocation of `size` bytes that stays short of the next sample point: taken off the
 * countdown. */
static inline rheap__counts_t *rheap__sample_skip(uint64_t size) {
    rheap__counts_t *c = rheap__counts_now();
    if (RHEAP_UNLIKELY(!c) || size >= (uint64_t)rheap__tl.sample_left)
        return NULL;
    rheap__tl.sample_left -= (int64_t)size;
    return c;
}

/* A free (or the release of a realloc) of p, not NULL and certainly not a sampled block. */
static inline rheap__counts_t *rheap__sample_skip_free(const void *p) {
    rheap__counts_t *c = rheap__counts_now();
    if (RHEAP_UNLIKELY(!c) || !p || rheap__filter_may_hold(p))
        return NULL;
    return c;
}

/* ---- Recordings and forks ---- */

/* Under the control lock, before a recording goes on: its mode and interval, and an empty set
 * (blocks sampled in an earlier window are not this recording's). The wrappers only ask while
 * a recording is on, so nothing needs undoing when it stops. */
void rheap__sample_start(const rheap__config_t *c);

/* fork: the set's lock is held across the fork, so the child never inherits it mid-update. */
void rheap__sample_fork_lock(void);
void rheap__sample_fork_unlock(void);

#endif
