/*
 * merge.c: k-way merge of the thread streams of one recording.
 *
 * Each thread file is in time order on its own; the recording as a whole is the merge of them.
 * An indexed binary min-heap keeps one entry per stream, keyed by the time of the stream's next
 * event, then its class (release before allocation, so a free sorts before the allocation that
 * reuses the address at the same nanosecond), then the stream index so ties resolve the same way
 * on every run.
 */
#include <stdlib.h>

#include "converter.h"

typedef struct {
    uint64_t t;
    int cls;
} key_t_;

struct cv__merge {
    size_t n;          /* streams in the heap */
    size_t cap;        /* streams in total */
    size_t *heap;      /* stream indices, heap-ordered */
    size_t *pos;       /* pos[i]: index of stream i in heap, SIZE_MAX when absent */
    key_t_ *key;       /* key[i]: current key of stream i */
};

static inline int before(uint64_t t, int cls, size_t a, uint64_t u, int clu, size_t b)
{
    if (t != u)
        return t < u;
    if (cls != clu)
        return cls < clu;
    return a < b;
}

int cv__merge_before(uint64_t t, int cls, size_t a, uint64_t u, int clu, size_t b)
{
    return before(t, cls, a, u, clu, b);
}

static int less(const cv__merge_t *m, size_t a, size_t b)
{
    return before(m->key[a].t, m->key[a].cls, a, m->key[b].t, m->key[b].cls, b);
}

static void place(cv__merge_t *m, size_t at, size_t stream)
{
    m->heap[at] = stream;
    m->pos[stream] = at;
}

static void sift_up(cv__merge_t *m, size_t at)
{
    size_t s = m->heap[at];
    while (at > 0) {
        size_t parent = (at - 1) / 2;
        if (!less(m, s, m->heap[parent]))
            break;
        place(m, at, m->heap[parent]);
        at = parent;
    }
    place(m, at, s);
}

static void sift_down(cv__merge_t *m, size_t at)
{
    size_t s = m->heap[at];
    for (;;) {
        size_t c = 2 * at + 1;
        if (c >= m->n)
            break;
        if (c + 1 < m->n && less(m, m->heap[c + 1], m->heap[c]))
            c++;
        if (!less(m, m->heap[c], s))
            break;
        place(m, at, m->heap[c]);
        at = c;
    }
    place(m, at, s);
}

cv__merge_t *cv__merge_create(size_t nstreams)
{
    cv__merge_t *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    size_t n = nstreams ? nstreams : 1;
    m->cap = nstreams;
    m->heap = malloc(n * sizeof *m->heap);
    m->pos = malloc(n * sizeof *m->pos);
    m->key = calloc(n, sizeof *m->key);
    if (!m->heap || !m->pos || !m->key) {
        cv__merge_destroy(m);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        m->pos[i] = SIZE_MAX;
    return m;
}

void cv__merge_destroy(cv__merge_t *m)
{
    if (!m)
        return;
    free(m->heap);
    free(m->pos);
    free(m->key);
    free(m);
}

void cv__merge_set(cv__merge_t *m, size_t i, uint64_t t, int cls)
{
    if (i >= m->cap)
        return;
    m->key[i].t = t;
    m->key[i].cls = cls;
    if (m->pos[i] == SIZE_MAX) {
        m->heap[m->n] = i;
        m->pos[i] = m->n;
        m->n++;
        sift_up(m, m->n - 1);
        return;
    }
    /* The key may have moved either way; one of the two sifts is a no-op. The root, the stream
     * whose event was just applied, needs no sift up: a smaller key keeps it there; alone in
     * the heap (a program of one thread), it needs no sift at all. */
    size_t at = m->pos[i];
    if (at != 0)
        sift_up(m, at);
    else if (m->n == 1)
        return;
    sift_down(m, m->pos[i]);
}

void cv__merge_remove(cv__merge_t *m, size_t i)
{
    if (i >= m->cap || m->pos[i] == SIZE_MAX)
        return;
    size_t at = m->pos[i];
    m->pos[i] = SIZE_MAX;
    m->n--;
    if (at == m->n)
        return;
    size_t moved = m->heap[m->n];
    place(m, at, moved);
    sift_up(m, at);
    if (m->pos[moved] == at)
        sift_down(m, at);
}

long cv__merge_top(const cv__merge_t *m)
{
    return m->n ? (long)m->heap[0] : -1;
}
