/*
 * hashmap.c: growing the converter's hash tables, and the plain map from 64-bit keys to 64-bit
 * values (a thread file's stack ids to global backtrace ids, a module address to its resolved
 * location).
 */
#include <stdlib.h>
#include <string.h>

#include "hashmap.h"

int cv__hash_grow(uint64_t **keys, void *valsp, size_t val_size, size_t *mask, unsigned *shift)
{
    /* valsp points to a pointer of any value type: copied, not dereferenced as a void *. */
    unsigned char *ov;
    memcpy(&ov, valsp, sizeof ov);
    size_t ocap = *mask + 1, cap = ocap * 2;
    uint64_t *nk = calloc(cap, sizeof *nk);
    /* Values are only read where a key is set: they need no clearing. */
    unsigned char *nv = malloc(cap * val_size);
    if (!nk || !nv) {
        free(nk);
        free(nv);
        return -1;
    }
    const uint64_t *ok = *keys;
    for (size_t i = 0; i < ocap; i++) {
        if (!ok[i])
            continue;
        size_t j = cv__hash_slot(ok[i], *shift - 1);
        while (nk[j])
            j = (j + 1) & (cap - 1);
        nk[j] = ok[i];
        memcpy(nv + j * val_size, ov + i * val_size, val_size);
    }
    free(*keys);
    free(ov);
    *keys = nk;
    memcpy(valsp, &nv, sizeof nv);
    *mask = cap - 1;
    (*shift)--;
    return 0;
}

int cv__u64map_init(cv__u64map_t *m)
{
    m->mask = 255;
    m->shift = 64 - 8;
    m->count = 0;
    m->keys = calloc(m->mask + 1, sizeof *m->keys);
    m->vals = malloc((m->mask + 1) * sizeof *m->vals);
    if (!m->keys || !m->vals) {
        cv__u64map_free(m);
        return -1;
    }
    return 0;
}

void cv__u64map_free(cv__u64map_t *m)
{
    free(m->keys);
    free(m->vals);
    m->keys = m->vals = NULL;
    m->count = 0;
}

int cv__u64map_put(cv__u64map_t *m, uint64_t key, uint64_t value)
{
    /* At most half full: probe runs stay short. */
    if ((m->count + 1) * 2 > m->mask + 1 &&
        cv__hash_grow(&m->keys, &m->vals, sizeof *m->vals, &m->mask, &m->shift) != 0)
        return -1;
    size_t j = cv__hash_slot(key, m->shift);
    while (m->keys[j] && m->keys[j] != key)
        j = (j + 1) & m->mask;
    if (!m->keys[j])
        m->count++;
    m->keys[j] = key;
    m->vals[j] = value;
    return 0;
}

int cv__u64map_get(const cv__u64map_t *m, uint64_t key, uint64_t *value)
{
    for (size_t j = cv__hash_slot(key, m->shift); m->keys[j]; j = (j + 1) & m->mask) {
        if (m->keys[j] == key) {
            *value = m->vals[j];
            return 1;
        }
    }
    return 0;
}
