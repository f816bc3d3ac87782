/*
 * pair.c: the live blocks of one process, by address.
 *
 * Every free is paired with the block live at its address in the same process, whichever thread
 * allocated it. The map holds exactly the blocks that are live at the current point of the
 * merged stream, so the converter's memory follows the program's live heap, not the length of
 * the recording. Open addressing with linear probing and backward-shift deletion: no
 * tombstones, so a long recording with heavy churn never degrades the probe lengths.
 *
 * The map is larger than the caches, so what a lookup costs is the cache lines it touches. The
 * keys (addresses) live in an array of their own, eight to a cache line, so probing a run and
 * shifting it after a deletion read keys only; the rest of a block lives in a parallel array
 * at the same index and is touched once, for the slot that matters. The layout, the hash and
 * the growing are those of every table in hashmap.h; the probing is written out here, for the
 * values of this one.
 */
#include <stdlib.h>
#include <string.h>

#include "converter.h"

struct cv__pairs {
    uint64_t *keys;       /* block addresses; 0 marks an empty slot */
    cv__live_t *vals;  /* vals[i] is the block of keys[i] */
    size_t mask;          /* capacity - 1, capacity a power of two */
    unsigned shift;       /* 64 - log2(capacity) */
    size_t count;
};

static size_t slot_of(const cv__pairs_t *p, uint64_t addr)
{
    /* Heap addresses are 16-byte aligned and clustered; Fibonacci hashing (the top bits of a
     * multiplicative hash) spreads them evenly. */
    return cv__hash_slot(addr, p->shift);
}

static int alloc_arrays(cv__pairs_t *p, size_t cap)
{
    p->keys = calloc(cap, sizeof *p->keys);
    /* Values are only read where a key is set: they need no clearing. */
    p->vals = malloc(cap * sizeof *p->vals);
    if (!p->keys || !p->vals) {
        free(p->keys);
        free(p->vals);
        return -1;
    }
    return 0;
}

cv__pairs_t *cv__pairs_create(void)
{
    cv__pairs_t *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->mask = 1023;
    p->shift = 64 - 10;
    if (alloc_arrays(p, p->mask + 1) != 0) {
        free(p);
        return NULL;
    }
    return p;
}

void cv__pairs_destroy(cv__pairs_t *p)
{
    if (!p)
        return;
    free(p->keys);
    free(p->vals);
    free(p);
}

int cv__pairs_insert(cv__pairs_t *p, const cv__live_t *b, cv__live_t *evicted)
{
    /* At most half full: linear probing stays short, and so do the deletion shifts. */
    if ((p->count + 1) * 2 > p->mask + 1 &&
        cv__hash_grow(&p->keys, &p->vals, sizeof *p->vals, &p->mask, &p->shift) != 0)
        return -1;
    size_t j = slot_of(p, b->addr);
    for (uint64_t k; (k = p->keys[j]) != 0; j = (j + 1) & p->mask) {
        if (k == b->addr) {
            *evicted = p->vals[j];
            p->vals[j] = *b;
            return 1;
        }
    }
    p->keys[j] = b->addr;
    p->vals[j] = *b;
    p->count++;
    return 0;
}

int cv__pairs_take(cv__pairs_t *p, uint64_t addr, cv__live_t *out)
{
    if (!addr)
        return 0;
    size_t j = slot_of(p, addr);
    for (;;) {
        uint64_t k = p->keys[j];
        if (!k)
            return 0;
        if (k == addr)
            break;
        j = (j + 1) & p->mask;
    }
    *out = p->vals[j];
    p->count--;
    /* Backward-shift: pull later members of the probe run into the hole when their home slot
     * does not lie cyclically between the hole and their current slot. */
    size_t hole = j;
    for (size_t i = (j + 1) & p->mask;; i = (i + 1) & p->mask) {
        uint64_t k = p->keys[i];
        if (!k)
            break;
        size_t home = slot_of(p, k);
        int stays = (hole <= i) ? (hole < home && home <= i) : (hole < home || home <= i);
        if (stays)
            continue;
        p->keys[hole] = k;
        p->vals[hole] = p->vals[i];
        hole = i;
    }
    p->keys[hole] = 0;
    return 1;
}

void cv__pairs_prefetch(const cv__pairs_t *p, uint64_t addr)
{
    size_t j = slot_of(p, addr);
    __builtin_prefetch(&p->keys[j]);
    __builtin_prefetch(&p->vals[j]);
}

size_t cv__pairs_count(const cv__pairs_t *p)
{
    return p->count;
}

static int by_time(const void *a, const void *b)
{
    const cv__live_t *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

cv__live_t *cv__pairs_drain(cv__pairs_t *p, size_t *n)
{
    *n = 0;
    if (!p->count)
        return NULL;
    cv__live_t *out = malloc(p->count * sizeof *out);
    if (!out) {
        *n = SIZE_MAX;
        return NULL;
    }
    size_t k = 0;
    for (size_t i = 0; i <= p->mask; i++) {
        if (p->keys[i]) {
            out[k++] = p->vals[i];
            p->keys[i] = 0;
        }
    }
    p->count = 0;
    qsort(out, k, sizeof *out, by_time);
    *n = k;
    return out;
}
