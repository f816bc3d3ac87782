/*
 * arena.c: memory handed out in pieces from large chunks and given back all at once, for the
 * many small arrays that live as long as what holds them: the stacks' frame lists of a model
 * (6 million frames in 200,000 stacks on a build) and the samples of a profile being built.
 * An allocation each cost more than the work done with them, and freeing them as much again.
 */
#include <stdlib.h>

#include "analysis.h"

#define ARENA_CHUNK ((size_t)1 << 20)

void *ra__arena_alloc(ra__arena_t *a, size_t n)
{
    n = (n + 7) & ~(size_t)7; /* aligned for a pointer or a 64-bit number */
    if (n > a->left) {
        size_t size = n > ARENA_CHUNK ? n : ARENA_CHUNK;
        if (rheap_grow(&a->chunks, &a->cap, a->n, sizeof *a->chunks, 16) != 0)
            return NULL;
        char *c = malloc(size);
        if (!c)
            return NULL;
        a->chunks[a->n++] = c;
        a->free_at = c;
        a->left = size;
    }
    void *at = a->free_at;
    a->free_at += n;
    a->left -= n;
    return at;
}

void ra__arena_free(ra__arena_t *a)
{
    for (size_t i = 0; i < a->n; i++)
        free(a->chunks[i]);
    free(a->chunks);
    a->chunks = NULL;
    a->n = a->cap = a->left = 0;
    a->free_at = NULL;
}
