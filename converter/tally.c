/*
 * tally.c: a recording's summaries counted on a thread of their own.
 *
 * With a big recording the thread that pairs frees with their blocks is the conversion's
 * bottleneck, and counting the summaries (summary.c) was a fifth of its instructions. Nothing
 * that thread does later depends on what the summaries count: they only read the blocks and
 * times they are given, in order, and are read at the recording's end. So the pairing thread
 * hands each call's arguments through a ring (ring.c, a cell per call) to a thread named
 * `rheap tally`, which makes the calls in the same order; the counts come out the same.
 *
 * The summaries never fail a conversion on the way (out of memory makes their later calls
 * no-ops, reported by cv__summary_end), so the queue has no error to hand back, and the
 * consumer never closes the ring early: a put waits while the ring is full, and never fails.
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include <pthread.h>
#include <stdlib.h>

#include "converter.h"

enum { OP_ALLOC = 1, OP_FREE, OP_LEAKED, OP_MARKER, OP_END };

struct cv__tally {
    cv__summary_t *sum;
    cv__ring_t *ring;
    pthread_t thread;
};

/* The never-freed blocks' calls are gathered back into batches of up to LEAK_BATCH, as the
 * drain made them (cv__summary_leaked_batch: a call per block was a tenth of the counting). */
#define LEAK_BATCH 128

/* The consumer: each cell is a call; cv__merged_t's fields carry its arguments (a block's
 * address, time, size, stack and thread id in addr, t, size, bt and stream; a free's time,
 * freeing thread and row id in align, old_t and old_addr; a never-freed block's row id in
 * old_addr). */
static void *tally_main(void *arg)
{
    cv__tally_t *q = arg;
    const cv__merged_t *cells = cv__ring_cells(q->ring);
    uint64_t pos = 0, end = 0;
    cv__live_t leaked[LEAK_BATCH];
    size_t nleaked = 0;
    uint64_t leaked_id = 0; /* the row id of leaked[0] */
    for (;;) {
        if (pos == end)
            end = cv__ring_wait(q->ring, pos);
        const cv__merged_t *m = &cells[pos & (CV__RING_SIZE - 1)];
        cv__live_t b = {.addr = m->addr, .t = m->t, .size = m->size, .bt = m->bt,
                        .tid = m->stream};
        if (nleaked && (m->kind != OP_LEAKED || nleaked == LEAK_BATCH ||
                        m->old_addr != leaked_id + nleaked)) {
            cv__summary_leaked_batch(q->sum, leaked, nleaked, leaked_id);
            nleaked = 0;
        }
        switch (m->kind) {
        case OP_ALLOC:
            cv__summary_alloc(q->sum, &b);
            break;
        case OP_FREE:
            cv__summary_free(q->sum, &b, m->align, (uint32_t)m->old_t, m->old_addr);
            break;
        case OP_LEAKED:
            if (!nleaked)
                leaked_id = m->old_addr;
            leaked[nleaked++] = b;
            break;
        case OP_MARKER:
            cv__summary_marker(q->sum, m->t);
            break;
        default: /* OP_END */
            cv__ring_release(q->ring, pos + 1, 1);
            return NULL;
        }
        if ((++pos & (CV__RING_BATCH - 1)) == 0)
            cv__ring_release(q->ring, pos, 0);
    }
}

cv__tally_t *cv__tally_start(cv__summary_t *sum)
{
    cv__tally_t *q = malloc(sizeof *q);
    if (!q)
        return NULL;
    q->sum = sum;
    q->ring = cv__ring_create();
    if (!q->ring || pthread_create(&q->thread, NULL, tally_main, q) != 0) {
        cv__ring_destroy(q->ring);
        free(q);
        return NULL;
    }
    /* Named, so that top -H and /proc/PID/task tell its CPU apart. */
    pthread_setname_np(q->thread, "rheap tally");
    return q;
}

/* The next cell, for a call of kind op on block b (NULL: a marker). */
static cv__merged_t *cell(cv__tally_t *q, int op, const cv__live_t *b)
{
    cv__merged_t *m = cv__ring_put(q->ring); /* never NULL: the consumer does not close */
    m->kind = (uint8_t)op;
    if (b) {
        m->addr = b->addr;
        m->t = b->t;
        m->size = b->size;
        m->bt = b->bt;
        m->stream = b->tid;
    }
    return m;
}

void cv__tally_alloc(cv__tally_t *q, const cv__live_t *b)
{
    cell(q, OP_ALLOC, b);
    cv__ring_commit(q->ring);
}

void cv__tally_free(cv__tally_t *q, const cv__live_t *b, uint64_t t, uint32_t freer, uint64_t id)
{
    cv__merged_t *m = cell(q, OP_FREE, b);
    m->align = t;
    m->old_t = freer;
    m->old_addr = id;
    cv__ring_commit(q->ring);
}

void cv__tally_leaked(cv__tally_t *q, const cv__live_t *b, size_t n, uint64_t id)
{
    for (size_t i = 0; i < n; i++) {
        cell(q, OP_LEAKED, &b[i])->old_addr = id + i;
        cv__ring_commit(q->ring);
    }
}

void cv__tally_marker(cv__tally_t *q, uint64_t t)
{
    cell(q, OP_MARKER, NULL)->t = t;
    cv__ring_commit(q->ring);
}

void cv__tally_stop(cv__tally_t *q)
{
    if (!q)
        return;
    cell(q, OP_END, NULL);
    cv__ring_commit(q->ring);
    cv__ring_flush(q->ring);
    pthread_join(q->thread, NULL);
    cv__ring_destroy(q->ring);
    free(q);
}
