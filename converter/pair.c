/*
 * pair.c: the live blocks of one process, by address.
 *
 * Every free is paired with the block live at its address in the same process, whichever thread
 * allocated it. The map holds exactly the blocks that are live at the current point of the
 * merged stream, so the converter's memory follows the program's live heap, not the length of
 * the recording. Open addressing with linear probing and backward-shift deletion: no
 * tombstones, so a long recording with heavy churn never degrades the probe lengths.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct rheap__pairs {
    rheap__live_t *slots; /* addr 0 marks an empty slot */
    size_t mask;          /* capacity - 1, capacity a power of two */
    unsigned shift;       /* 64 - log2(capacity) */
    size_t count;
};

static size_t slot_of(const rheap__pairs_t *p, uint64_t addr)
{
    /* Heap addresses are 16-byte aligned and clustered; Fibonacci hashing (the top bits of a
     * multiplicative hash) spreads them evenly. */
    return (size_t)((addr * 0x9E3779B97F4A7C15ull) >> p->shift);
}

rheap__pairs_t *rheap__pairs_create(void)
{
    rheap__pairs_t *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->mask = 1023;
    p->shift = 64 - 10;
    p->slots = calloc(p->mask + 1, sizeof *p->slots);
    if (!p->slots) {
        free(p);
        return NULL;
    }
    return p;
}

void rheap__pairs_destroy(rheap__pairs_t *p)
{
    if (!p)
        return;
    free(p->slots);
    free(p);
}

static int grow(rheap__pairs_t *p)
{
    size_t old_cap = p->mask + 1;
    rheap__live_t *old = p->slots;
    rheap__live_t *slots = calloc(old_cap * 2, sizeof *slots);
    if (!slots)
        return -1;
    p->slots = slots;
    p->mask = old_cap * 2 - 1;
    p->shift--;
    for (size_t i = 0; i < old_cap; i++) {
        if (!old[i].addr)
            continue;
        size_t j = slot_of(p, old[i].addr);
        while (p->slots[j].addr)
            j = (j + 1) & p->mask;
        p->slots[j] = old[i];
    }
    free(old);
    return 0;
}

int rheap__pairs_insert(rheap__pairs_t *p, const rheap__live_t *b, rheap__live_t *evicted)
{
    /* At most half full: linear probing stays short, and so do the deletion shifts. */
    if ((p->count + 1) * 2 > p->mask + 1 && grow(p) != 0)
        return -1;
    size_t j = slot_of(p, b->addr);
    while (p->slots[j].addr) {
        if (p->slots[j].addr == b->addr) {
            *evicted = p->slots[j];
            p->slots[j] = *b;
            return 1;
        }
        j = (j + 1) & p->mask;
    }
    p->slots[j] = *b;
    p->count++;
    return 0;
}

int rheap__pairs_take(rheap__pairs_t *p, uint64_t addr, rheap__live_t *out)
{
    if (!addr)
        return 0;
    size_t j = slot_of(p, addr);
    for (;;) {
        if (!p->slots[j].addr)
            return 0;
        if (p->slots[j].addr == addr)
            break;
        j = (j + 1) & p->mask;
    }
    *out = p->slots[j];
    p->count--;
    /* Backward-shift: pull later members of the probe run into the hole when their home slot
     * does not lie cyclically between the hole and their current slot. */
    size_t hole = j;
    for (size_t k = (j + 1) & p->mask; p->slots[k].addr; k = (k + 1) & p->mask) {
        size_t home = slot_of(p, p->slots[k].addr);
        int stays = (hole <= k) ? (hole < home && home <= k) : (hole < home || home <= k);
        if (stays)
            continue;
        p->slots[hole] = p->slots[k];
        hole = k;
    }
    p->slots[hole].addr = 0;
    return 1;
}

void rheap__pairs_prefetch(const rheap__pairs_t *p, uint64_t addr)
{
    __builtin_prefetch(&p->slots[slot_of(p, addr)]);
}

size_t rheap__pairs_count(const rheap__pairs_t *p)
{
    return p->count;
}

static int by_time(const void *a, const void *b)
{
    const rheap__live_t *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

rheap__live_t *rheap__pairs_drain(rheap__pairs_t *p, size_t *n)
{
    *n = 0;
    if (!p->count)
        return NULL;
    rheap__live_t *out = malloc(p->count * sizeof *out);
    if (!out) {
        *n = SIZE_MAX;
        return NULL;
    }
    size_t k = 0;
    for (size_t i = 0; i <= p->mask; i++) {
        if (p->slots[i].addr) {
            out[k++] = p->slots[i];
            p->slots[i].addr = 0;
        }
    }
    p->count = 0;
    qsort(out, k, sizeof *out, by_time);
    *n = k;
    return out;
}
