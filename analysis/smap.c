/*
 * smap.c: a map from strings to numbers, the tables the picture writers build (pprof's string,
 * function and location tables, the HTML page's frames and stacks, rheap diff's sites).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

int ra_smap_get(ra_smap_t *m, const char *key, uint64_t next, uint64_t *val, int *created)
{
    *created = 0;
    if ((m->n + 1) * 2 > m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 1024;
        char **keys = calloc(cap, sizeof *keys);
        uint64_t *vals = calloc(cap, sizeof *vals);
        if (!keys || !vals) {
            free(keys);
            free(vals);
            return -1;
        }
        for (size_t i = 0; i < m->cap; i++)
            if (m->keys[i]) {
                size_t j = hash_str(m->keys[i]) & (cap - 1);
                while (keys[j])
                    j = (j + 1) & (cap - 1);
                keys[j] = m->keys[i];
                vals[j] = m->vals[i];
            }
        free(m->keys);
        free(m->vals);
        m->keys = keys;
        m->vals = vals;
        m->cap = cap;
    }
    size_t j = hash_str(key) & (m->cap - 1);
    while (m->keys[j]) {
        if (!strcmp(m->keys[j], key)) {
            *val = m->vals[j];
            return 0;
        }
        j = (j + 1) & (m->cap - 1);
    }
    if (!(m->keys[j] = strdup(key)))
        return -1;
    m->vals[j] = next;
    m->n++;
    *val = next;
    *created = 1;
    return 0;
}

void ra_smap_free(ra_smap_t *m)
{
    for (size_t i = 0; i < m->cap; i++)
        free(m->keys[i]);
    free(m->keys);
    free(m->vals);
}
