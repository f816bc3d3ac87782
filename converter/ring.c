/*
 * ring.c: merged events handed from the reading thread to the converting thread.
 *
 * A big recording is converted by two threads (conversion.c): one reads the thread files,
 * decodes and merges them, the other pairs, counts and makes rows. Between them is this ring of
 * CV__RING_SIZE cells, one producer and one consumer, without a lock on the way of an event.
 *
 * What it costs is the cache lines the two cores hand each other. Each index lives on a line of
 * its own, and neither side publishes its index per cell: the producer makes its cells visible
 * CV__RING_BATCH at a time, the consumer gives room back as often, and each side keeps its last
 * view of the other's index, so it reads the other's line only when that view says it must
 * (full, or empty). A cell is one line (64 bytes): written by one core, read once by the other.
 *
 * A side that finds the ring full (or empty) sleeps on a condition variable, and is woken only
 * once the other side has given back half the ring (or filled a quarter of it): one side is
 * usually the faster and waits for the other most of the time, and a wake-up per batch would be
 * a system call every 64 events. Going to sleep and waking follow the store-then-load handshake:
 * the sleeper sets its flag and then reads the other's index, the other stores its index and
 * then reads the flag (all sequentially consistent), so at least one of them sees the other and
 * no wake-up is lost.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "converter.h"

_Static_assert(sizeof(cv__merged_t) == 64, "a merged event is one cache line");
_Static_assert((CV__RING_SIZE & (CV__RING_SIZE - 1)) == 0, "the ring's size is a power of two");
_Static_assert(CV__RING_SIZE % CV__RING_BATCH == 0, "batches tile the ring");

struct cv__ring {
    cv__merged_t *cells;
    /* The producer's: the cells it has published, and its own state. */
    _Alignas(64) _Atomic uint64_t tail;
    uint64_t filled;         /* cells committed (published or not) */
    uint64_t head_seen;      /* its last view of head */
    int closed_seen;         /* the consumer has gone: put gives no more cells */
    /* The consumer's: the cells it has used up. */
    _Alignas(64) _Atomic uint64_t head;
    /* Sleeping and closing, touched only when a side waits. */
    _Alignas(64) pthread_mutex_t mu;
    pthread_cond_t room, data;
    _Atomic int producer_sleeps, consumer_sleeps, closed;
    _Atomic uint64_t producer_wake_at; /* head from which a sleeping producer is woken */
    _Atomic uint64_t consumer_wake_at; /* tail from which a sleeping consumer is woken */
};

cv__ring_t *cv__ring_create(void)
{
    cv__ring_t *r = aligned_alloc(64, sizeof *r);
    if (!r)
        return NULL;
    r->cells = aligned_alloc(64, CV__RING_SIZE * sizeof *r->cells);
    if (!r->cells || pthread_mutex_init(&r->mu, NULL) != 0) {
        free(r->cells);
        free(r);
        return NULL;
    }
    if (pthread_cond_init(&r->room, NULL) != 0 || pthread_cond_init(&r->data, NULL) != 0) {
        pthread_mutex_destroy(&r->mu);
        free(r->cells);
        free(r);
        return NULL;
    }
    atomic_init(&r->tail, 0);
    atomic_init(&r->head, 0);
    r->filled = r->head_seen = 0;
    r->closed_seen = 0;
    atomic_init(&r->producer_sleeps, 0);
    atomic_init(&r->consumer_sleeps, 0);
    atomic_init(&r->closed, 0);
    atomic_init(&r->producer_wake_at, 0);
    atomic_init(&r->consumer_wake_at, 0);
    return r;
}

void cv__ring_destroy(cv__ring_t *r)
{
    if (!r)
        return;
    pthread_cond_destroy(&r->room);
    pthread_cond_destroy(&r->data);
    pthread_mutex_destroy(&r->mu);
    free(r->cells);
    free(r);
}

cv__merged_t *cv__ring_cells(cv__ring_t *r)
{
    return r->cells;
}

/* ---- The producer ---- */

/* Makes the committed cells visible; wakes a sleeping consumer when it asked for this many, or
 * always (force: the producer is about to wait, or has ended). */
static void publish(cv__ring_t *r, int force)
{
    atomic_store(&r->tail, r->filled);
    if (atomic_load(&r->consumer_sleeps) &&
        (force || r->filled >= atomic_load(&r->consumer_wake_at))) {
        pthread_mutex_lock(&r->mu);
        pthread_cond_signal(&r->data);
        pthread_mutex_unlock(&r->mu);
    }
    if (atomic_load_explicit(&r->closed, memory_order_relaxed))
        r->closed_seen = 1;
}

/* The ring is full: waits until the consumer has given back half of it. 0, or -1 when the
 * consumer has closed it. */
static int wait_room(cv__ring_t *r)
{
    publish(r, 1);
    for (;;) {
        if (atomic_load(&r->closed)) {
            r->closed_seen = 1;
            return -1;
        }
        pthread_mutex_lock(&r->mu);
        atomic_store(&r->producer_wake_at, r->filled - CV__RING_SIZE / 2);
        atomic_store(&r->producer_sleeps, 1);
        if (r->filled - atomic_load(&r->head) >= CV__RING_SIZE && !atomic_load(&r->closed))
            pthread_cond_wait(&r->room, &r->mu);
        atomic_store(&r->producer_sleeps, 0);
        pthread_mutex_unlock(&r->mu);
        r->head_seen = atomic_load_explicit(&r->head, memory_order_acquire);
        if (r->filled - r->head_seen < CV__RING_SIZE)
            return 0;
    }
}

cv__merged_t *cv__ring_put(cv__ring_t *r)
{
    if (r->closed_seen)
        return NULL;
    if (r->filled - r->head_seen >= CV__RING_SIZE) {
        r->head_seen = atomic_load_explicit(&r->head, memory_order_acquire);
        if (r->filled - r->head_seen >= CV__RING_SIZE && wait_room(r) != 0)
            return NULL;
    }
    return &r->cells[r->filled & (CV__RING_SIZE - 1)];
}

void cv__ring_commit(cv__ring_t *r)
{
    if ((++r->filled & (CV__RING_BATCH - 1)) == 0)
        publish(r, 0);
}

void cv__ring_flush(cv__ring_t *r)
{
    publish(r, 1);
}

/* ---- The consumer ---- */

void cv__ring_release(cv__ring_t *r, uint64_t pos, int force)
{
    atomic_store(&r->head, pos);
    if (atomic_load(&r->producer_sleeps) &&
        (force || pos >= atomic_load(&r->producer_wake_at))) {
        pthread_mutex_lock(&r->mu);
        pthread_cond_signal(&r->room);
        pthread_mutex_unlock(&r->mu);
    }
}

uint64_t cv__ring_wait(cv__ring_t *r, uint64_t pos)
{
    uint64_t t = atomic_load_explicit(&r->tail, memory_order_acquire);
    if (t > pos)
        return t;
    cv__ring_release(r, pos, 1);
    for (;;) {
        pthread_mutex_lock(&r->mu);
        atomic_store(&r->consumer_wake_at, pos + CV__RING_SIZE / 4);
        atomic_store(&r->consumer_sleeps, 1);
        if (atomic_load(&r->tail) <= pos)
            pthread_cond_wait(&r->data, &r->mu);
        atomic_store(&r->consumer_sleeps, 0);
        pthread_mutex_unlock(&r->mu);
        t = atomic_load_explicit(&r->tail, memory_order_acquire);
        if (t > pos)
            return t;
    }
}

void cv__ring_close(cv__ring_t *r)
{
    atomic_store(&r->closed, 1);
    pthread_mutex_lock(&r->mu);
    pthread_cond_signal(&r->room);
    pthread_mutex_unlock(&r->mu);
}
