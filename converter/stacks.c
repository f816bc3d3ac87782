/*
 * stacks.c: turns recorded stacks into global backtrace ids.
 *
 * Stack ids in the recording are local to a thread file, and the tracer may define one stack
 * several times. After symbolization a stack is the sequence of its resolved locations; two
 * stacks with the same sequence (the same code, in any thread or process) get the same global
 * id and their rows are written once. The table keeps only location ids (4 bytes per frame), so
 * its size follows the number of distinct stacks.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

typedef struct {
    uint64_t hash;
    uint64_t bt;      /* global id; 0 = empty slot */
    size_t at;        /* start in pool */
    uint32_t n;
} entry_t;

struct rheap__stacks {
    entry_t *slots;
    size_t mask, count;
    uint32_t *pool;
    size_t npool, cappool;
};

rheap__stacks_t *rheap__stacks_create(void)
{
    rheap__stacks_t *st = calloc(1, sizeof *st);
    if (!st)
        return NULL;
    st->mask = 1023;
    st->slots = calloc(st->mask + 1, sizeof *st->slots);
    if (!st->slots) {
        free(st);
        return NULL;
    }
    return st;
}

void rheap__stacks_destroy(rheap__stacks_t *st)
{
    if (!st)
        return;
    free(st->slots);
    free(st->pool);
    free(st);
}

uint64_t rheap__stacks_count(const rheap__stacks_t *st)
{
    return st->count;
}

static uint64_t hash_locs(const rheap__loc_t *const *locs, uint32_t n)
{
    uint64_t h = 0xcbf29ce484222325ull ^ n;
    for (uint32_t i = 0; i < n; i++) {
        h ^= locs[i]->id;
        h *= 0x100000001b3ull;
        h ^= h >> 29;
    }
    return h | 1;
}

static int grow(rheap__stacks_t *st)
{
    size_t cap = (st->mask + 1) * 2;
    entry_t *n = calloc(cap, sizeof *n);
    if (!n)
        return -1;
    for (size_t i = 0; i <= st->mask; i++) {
        if (!st->slots[i].bt)
            continue;
        size_t j = (size_t)st->slots[i].hash & (cap - 1);
        while (n[j].bt)
            j = (j + 1) & (cap - 1);
        n[j] = st->slots[i];
    }
    free(st->slots);
    st->slots = n;
    st->mask = cap - 1;
    return 0;
}

uint64_t rheap__stacks_intern(rheap__stacks_t *st, rheap__db_t *db, const rheap__sym_t *sym,
                              const rheap__loc_t *const *locs, uint32_t n)
{
    uint64_t h = hash_locs(locs, n);
    size_t j = (size_t)h & st->mask;
    for (; st->slots[j].bt; j = (j + 1) & st->mask) {
        entry_t *e = &st->slots[j];
        if (e->hash != h || e->n != n)
            continue;
        uint32_t k = 0;
        while (k < n && st->pool[e->at + k] == locs[k]->id)
            k++;
        if (k == n)
            return e->bt;
    }
    if ((st->count + 1) * 2 > st->mask + 1) {
        if (grow(st) != 0)
            return 0;
        j = (size_t)h & st->mask;
        while (st->slots[j].bt)
            j = (j + 1) & st->mask;
    }
    if (st->npool + n > st->cappool) {
        size_t cap = st->cappool ? st->cappool : 4096;
        while (cap < st->npool + n)
            cap *= 2;
        uint32_t *p = realloc(st->pool, cap * sizeof *p);
        if (!p)
            return 0;
        st->pool = p;
        st->cappool = cap;
    }
    uint64_t bt = st->count + 1;
    uint32_t frame_no = 0;
    for (uint32_t i = 0; i < n; i++) {
        const rheap__loc_t *l = locs[i];
        const char *module = rheap__sym_file_path(sym, l->file_id);
        for (uint32_t k = 0; k < l->nframes; k++) {
            if (rheap__db_frame(db, bt, frame_no++, &l->frames[k], module, l->offset, i) != 0)
                return 0;
        }
        st->pool[st->npool + i] = l->id;
    }
    entry_t *e = &st->slots[j];
    e->hash = h;
    e->bt = bt;
    e->at = st->npool;
    e->n = n;
    st->npool += n;
    st->count++;
    return bt;
}
