/*
 * sample.h: profile mode, the hot-path half. See sample.c for the why.
 *
 * In profile mode a wrapper asks two questions. For an allocation: is it sampled? That is a
 * thread-local countdown of bytes: an unsampled allocation subtracts its size and goes on. For a
 * free: was this block sampled? That is one load from a small shared filter that only sampled
 * allocations and their frees write. Both answers cost no clock read, no lock and no write to a
 * shared cache line.
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

/* Bytes this thread may still allocate before its next sample point; 0 before the first draw. */
extern RHEAP_TLS int64_t rheap__sample_left;

/* The slow half of rheap__sample_pick: draws the thread's first sample point, or takes a sample
 * and draws the next. */
int rheap__sample_next(uint64_t size);

/* Whether an allocation of `size` bytes is sampled: its bytes cover the next sample point. Each
 * byte is a sample point with probability 1/interval, so a block of size s is sampled with
 * probability 1 - exp(-s/interval). */
static inline int rheap__sample_pick(uint64_t size) {
    if (RHEAP_LIKELY(size < (uint64_t)rheap__sample_left)) {
        rheap__sample_left -= (int64_t)size;
        return 0;
    }
    return rheap__sample_next(size);
}

/* Profile mode: counts an allocation of `size` bytes, or a free, in the thread's exact totals. */
static inline void rheap__count_add(rheap__counts_t *c, uint64_t size) {
    rheap__counts_add(&c->allocs, 1);
    rheap__counts_add(&c->bytes, size);
}

static inline void rheap__count_alloc(uint64_t size) {
    rheap__counts_t *c = rheap__counts();
    if (RHEAP_LIKELY(c != NULL))
        rheap__count_add(c, size);
}

static inline void rheap__count_free(void) {
    rheap__counts_t *c = rheap__counts();
    if (RHEAP_LIKELY(c != NULL))
        rheap__counts_add(&c->frees, 1);
}

/* The calling thread's totals if it is attached to the current recording and that recording is
 * in profile mode, else NULL (without attaching: the slow path does that). */
static inline rheap__counts_t *rheap__counts_now(void) {
    rheap__counts_t *c = rheap__tl_counts;
    return RHEAP_LIKELY(c && atomic_load_explicit(&c->open, memory_order_relaxed)) ? c : NULL;
}

/* Profile mode's common case, for the exported functions themselves: when recording is on in
 * profile mode and the thread attached, an allocation of `size` bytes that stays short of the
 * next sample point is taken off the countdown and passes straight through. Returns the
 * thread's totals (the caller counts the call once the real one succeeded), or NULL: then
 * the slow path decides, the countdown untouched. The caller has checked that recording is on
 * and the tracer is not allocating. */
static inline rheap__counts_t *rheap__sample_skip(uint64_t size) {
    rheap__counts_t *c = rheap__counts_now();
    if (RHEAP_UNLIKELY(!c) || size >= (uint64_t)rheap__sample_left)
        return NULL;
    rheap__sample_left -= (int64_t)size;
    return c;
}

/* The address filter: one byte per slot, the number of live sampled blocks whose address hashes
 * there (saturating at 255). 64 KiB: with a few thousand live samples nearly every slot is 0. */
#define RHEAP__FILTER_BITS 16
extern _Atomic uint8_t rheap__filter[1u << RHEAP__FILTER_BITS];

static inline uint32_t rheap__filter_slot(const void *p) {
    return (uint32_t)(((uintptr_t)p >> 4) * 0x9E3779B97F4A7C15ull >> (64 - RHEAP__FILTER_BITS));
}

/* Remembers a sampled block (before the allocating wrapper returns it). 0, or -1 when the set of
 * sampled blocks cannot grow (no memory): the caller then fails the recording. */
int rheap__sample_track(const void *p);

/* The slow half of rheap__sample_forget: looks p up in the exact set under its lock. */
int rheap__sample_forget_slow(const void *p);

/* Whether p is a live sampled block; if so, forgets it. Called before the real free, so the
 * address cannot be handed out and sampled again in between. */
/* The same for a free: the thread's totals when p (not NULL) is certainly not a sampled
 * block, else NULL. */
static inline rheap__counts_t *rheap__sample_skip_free(const void *p);

static inline int rheap__sample_forget(const void *p) {
    if (RHEAP_LIKELY(!atomic_load_explicit(&rheap__filter[rheap__filter_slot(p)],
                                           memory_order_relaxed)))
        return 0;
    return rheap__sample_forget_slow(p);
}

static inline rheap__counts_t *rheap__sample_skip_free(const void *p) {
    rheap__counts_t *c = rheap__counts_now();
    if (RHEAP_UNLIKELY(!c) || !p ||
        atomic_load_explicit(&rheap__filter[rheap__filter_slot(p)], memory_order_relaxed))
        return NULL;
    return c;
}

/* Under the control lock, before a recording goes on: its mode and interval, and an empty set
 * (blocks sampled in an earlier window are not this recording's). The wrappers only ask while
 * a recording is on, so nothing needs undoing when it stops. */
void rheap__sample_start(const rheap__config_t *c);

/* fork: the set's lock is held across the fork, so the child never inherits it mid-update. */
void rheap__sample_fork_lock(void);
void rheap__sample_fork_unlock(void);

#endif
