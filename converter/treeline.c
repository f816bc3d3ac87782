/*
 * treeline.c: the timeline of every recording together (table timeline_totals), in wall-clock
 * time, so that the memory of a process tree over time is read from a thousand rows rather than
 * summed from each recording's slices (a build's 2,000 recordings have 1.4 M of them).
 *
 * Each recording's slice (summary.c, as written to `timeline`) counts in the tree's slice that
 * holds its start: the recording's start_wall_ns plus the slice's start_ns. The tree's slices are
 * aligned on their width in absolute wall-clock time (a power of two times 1024 ns, the smallest
 * that fits every slice start and recording end into 1024 of them), so widening merges pairs of
 * neighbours exactly and the result does not depend on the order the recordings came in, nor on
 * how the conversion's workers shared them. Memory: 1024 slices per summary.
 */
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "converter.h"

#define TREE_SLICES 1024
#define TREE_FIRST_LOG2 10u

struct cv__treeline {
    double (*v)[CV_TL_N];        /* TREE_SLICES slices */
    uint64_t lo, hi;             /* the first and last slice index used, in wall ns >> log2 */
    unsigned log2;
    int any;
};

cv__treeline_t *cv__treeline_create(void)
{
    cv__treeline_t *t = calloc(1, sizeof *t);
    if (t && !(t->v = calloc(TREE_SLICES, sizeof *t->v))) {
        free(t);
        return NULL;
    }
    if (t)
        t->log2 = TREE_FIRST_LOG2;
    return t;
}

void cv__treeline_destroy(cv__treeline_t *t)
{
    if (!t)
        return;
    free(t->v);
    free(t);
}

/* Makes room for index range [lo, hi] (of the current width), widening until it fits and
 * moving the slices to their new places. 0, or -1 out of memory. */
static int reshape(cv__treeline_t *t, uint64_t lo, uint64_t hi, unsigned log2)
{
    while ((hi >> (log2 - t->log2)) - (lo >> (log2 - t->log2)) >= TREE_SLICES)
        log2++;
    unsigned shift = log2 - t->log2;
    uint64_t nlo = lo >> shift, nhi = hi >> shift;
    if (nlo == t->lo && shift == 0) {
        t->hi = nhi;
        return 0;
    }
    double(*v)[CV_TL_N] = calloc(TREE_SLICES, sizeof *v);
    if (!v)
        return -1;
    for (uint64_t i = t->lo; t->any && i <= t->hi; i++)
        for (int k = 0; k < CV_TL_N; k++)
            v[(i >> shift) - nlo][k] += t->v[i - t->lo][k];
    free(t->v);
    t->v = v;
    t->lo = nlo;
    t->hi = nhi;
    t->log2 = log2;
    return 0;
}

int cv__treeline_add(cv__treeline_t *t, uint64_t wall, const double *v)
{
    uint64_t i = wall >> t->log2;
    if (!t->any || i < t->lo || i > t->hi) {
        uint64_t lo = t->any && t->lo < i ? t->lo : i, hi = t->any && t->hi > i ? t->hi : i;
        if (reshape(t, lo, hi, t->log2) != 0)
            return -1;
        t->any = 1;
        i = wall >> t->log2;
    }
    for (int k = 0; k < CV_TL_N; k++)
        t->v[i - t->lo][k] += v[k];
    return 0;
}

int cv__treeline_merge(cv__treeline_t *dst, const cv__treeline_t *src)
{
    if (!src || !src->any)
        return 0;
    /* At src's width or wider, each of src's slices lands in one of dst's. */
    if (dst->log2 < src->log2 && dst->any &&
        reshape(dst, dst->lo, dst->hi, src->log2) != 0)
        return -1;
    if (!dst->any)
        dst->log2 = dst->log2 > src->log2 ? dst->log2 : src->log2;
    for (uint64_t i = src->lo; i <= src->hi; i++) {
        const double *v = src->v[i - src->lo];
        int none = 1;
        for (int k = 0; k < CV_TL_N && none; k++)
            none = v[k] == 0;
        if (!none && cv__treeline_add(dst, i << src->log2, v) != 0)
            return -1;
    }
    return 0;
}

int cv__treeline_write(const cv__treeline_t *t, sqlite3 *h)
{
    if (!t || !t->any)
        return 0;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(h,
                           "INSERT INTO timeline_totals (bucket, start_wall_ns, end_wall_ns,\n"
                           "    recordings, allocs, alloc_bytes, frees, freed_bytes, ended_blocks,\n"
                           "    ended_bytes, live_blocks, live_bytes, started)\n"
                           "VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13)",
                           -1, &st, NULL) != SQLITE_OK)
        return -1;
    int rc = 0;
    double live_blocks = 0, live_bytes = 0, running = 0;
    for (uint64_t i = t->lo; rc == 0 && i <= t->hi; i++) {
        const double *v = t->v[i - t->lo];
        live_blocks += v[CV_TL_ALLOCS] - v[CV_TL_FREES] - v[CV_TL_ENDED_BLOCKS];
        live_bytes += v[CV_TL_ALLOC_BYTES] - v[CV_TL_FREED_BYTES] - v[CV_TL_ENDED_BYTES];
        running += v[CV_TL_STARTED];
        sqlite3_bind_int64(st, 1, (sqlite3_int64)(i - t->lo));
        sqlite3_bind_int64(st, 2, (sqlite3_int64)(i << t->log2));
        sqlite3_bind_int64(st, 3, (sqlite3_int64)((i + 1) << t->log2));
        sqlite3_bind_int64(st, 4, (sqlite3_int64)running);
        double w[] = {v[CV_TL_ALLOCS], v[CV_TL_ALLOC_BYTES], v[CV_TL_FREES], v[CV_TL_FREED_BYTES],
                      v[CV_TL_ENDED_BLOCKS], v[CV_TL_ENDED_BYTES], live_blocks, live_bytes};
        /* Whole numbers: the figures are sums of rows as written. */
        for (int k = 0; k < 8; k++)
            sqlite3_bind_int64(st, 5 + k, (sqlite3_int64)w[k]);
        sqlite3_bind_int64(st, 13, (sqlite3_int64)v[CV_TL_STARTED]);
        if (sqlite3_step(st) != SQLITE_DONE || sqlite3_reset(st) != SQLITE_OK)
            rc = -1;
        /* The recordings that ended here no longer run in the next slice. */
        running -= v[CV_TL_ENDED];
    }
    sqlite3_finalize(st);
    return rc;
}
