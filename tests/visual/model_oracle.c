/*
 * model_oracle.c: `model_oracle DB...` computes the picture model (the numbers rheap export,
 * rheap report --html and rheap diff draw) the slow, plain way, from the rows of `allocations`,
 * and compares it with what ra_model_load reads from the converter's summary tables. The
 * summaries are what the product reads; this is the oracle that checks them, kept here so that
 * no switch for it ships.
 *
 * Per recording: blocks, bytes, frees, blocks and bytes never freed while recording (the
 * model's leaked and, for a window, stopped: ra_model_load splits them by recording_ends), the end, the peak (the
 * first moment of the largest live heap, every event of one ns counted together as peak.sql
 * does) and the blocks live then. Per stack: the same, plus the temporary blocks
 * (temporary.sql's rule: freed before their thread's next allocation), and the freed blocks
 * and bytes per decade of lifetime (stack_lifetimes). Per thread and per
 * power-of-two size class: the counts. The timeline: its slices reach the peak and end at the
 * bytes never freed. Recordings made in profile mode hold weighted estimates in their
 * summaries and are left out (said on stdout).
 *
 * Exit status 0 when everything agrees (one line per database says how much was compared), 1
 * with a line per difference naming both values, 2 when a database cannot be read.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "rheap_analysis.h"

static const char *db_path;
static int differences;

#define SAME(what, key, got, want)                                                           \
    do {                                                                                     \
        int64_t got_ = (got), want_ = (want);                                                \
        if (got_ != want_) {                                                                 \
            fprintf(stderr, "%s: %s %s: summaries %" PRId64 ", rows %" PRId64 "\n", db_path, \
                    key, what, got_, want_);                                                 \
            differences++;                                                                   \
        }                                                                                    \
    } while (0)

/* Runs sql (with ?1 and ?2 bound to pid and recording) and calls row() for each result row. */
static void each_row(sqlite3 *db, const char *sql, int64_t pid, int64_t rec,
                     void (*row)(sqlite3_stmt *st, void *user), void *user)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        fprintf(stderr, "%s: %s\n", db_path, sqlite3_errmsg(db));
        exit(2);
    }
    sqlite3_bind_int64(st, 1, pid);
    sqlite3_bind_int64(st, 2, rec);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        row(st, user);
    if (rc != SQLITE_DONE) {
        fprintf(stderr, "%s: %s\n", db_path, sqlite3_errmsg(db));
        exit(2);
    }
    sqlite3_finalize(st);
}

/* ---- One recording's totals and its peak ---- */

typedef struct {
    int64_t allocs, bytes, frees, leaked_blocks, leaked_bytes, end_t;
    int64_t peak_t, peak_bytes, peak_blocks, live;
} totals_t;

static void totals_row(sqlite3_stmt *st, void *user)
{
    totals_t *t = user;
    t->allocs = sqlite3_column_int64(st, 0);
    t->bytes = sqlite3_column_int64(st, 1);
    t->frees = sqlite3_column_int64(st, 2);
    t->leaked_blocks = sqlite3_column_int64(st, 3);
    t->leaked_bytes = sqlite3_column_int64(st, 4);
    t->end_t = sqlite3_column_int64(st, 5);
}

/* The live heap after each ns, in time order: the first largest value is the peak. */
static void peak_row(sqlite3_stmt *st, void *user)
{
    totals_t *t = user;
    t->live += sqlite3_column_int64(st, 1);
    if (t->peak_t < 0 || t->live > t->peak_bytes) {
        t->peak_t = sqlite3_column_int64(st, 0);
        t->peak_bytes = t->live;
    }
}

static void count_row(sqlite3_stmt *st, void *user)
{
    *(int64_t *)user = sqlite3_column_int64(st, 0);
}

/* ---- Per stack, thread and size class: the model's row looked up by its key ---- */

typedef struct {
    const ra_model_t *m;
    const ra_proc_t *p;
    size_t found; /* rows of the oracle that the model has */
} cmp_t;

static const ra_stat_t *model_stat(const ra_model_t *m, int64_t pid, int64_t rec, int64_t bt)
{
    for (size_t i = 0; i < m->nstats; i++)
        if (m->stats[i].pid == pid && m->stats[i].recording == rec && m->stats[i].bt == bt)
            return &m->stats[i];
    return NULL;
}

static void stack_row(sqlite3_stmt *st, void *user)
{
    cmp_t *c = user;
    int64_t bt = sqlite3_column_int64(st, 0);
    char key[96];
    snprintf(key, sizeof key, "pid %" PRId64 " recording %" PRId64 " stack %" PRId64, c->p->pid,
             c->p->recording, bt);
    const ra_stat_t *s = model_stat(c->m, c->p->pid, c->p->recording, bt);
    if (!s) {
        fprintf(stderr, "%s: %s: in the rows, not in the summaries\n", db_path, key);
        differences++;
        return;
    }
    c->found++;
    SAME("blocks", key, s->blocks, sqlite3_column_int64(st, 1));
    SAME("bytes", key, s->bytes, sqlite3_column_int64(st, 2));
    SAME("blocks never freed", key, s->leaked_blocks + s->stopped_blocks, sqlite3_column_int64(st, 3));
    SAME("bytes never freed", key, s->leaked_bytes + s->stopped_bytes, sqlite3_column_int64(st, 4));
    SAME("blocks live at the peak", key, s->peak_blocks, sqlite3_column_int64(st, 5));
    SAME("bytes live at the peak", key, s->peak_bytes, sqlite3_column_int64(st, 6));
    SAME("temporary blocks", key, s->temporary_blocks, sqlite3_column_int64(st, 7));
    SAME("temporary bytes", key, s->temporary_bytes, sqlite3_column_int64(st, 8));
    /* Every freed block in one decade of lifetime: none counted twice, none left out. */
    int64_t freed = 0, freed_bytes = 0;
    for (int d = 0; d < RA_LIFE_DECADES; d++) {
        freed += s->life_blocks[d];
        freed_bytes += s->life_bytes[d];
    }
    SAME("freed blocks over the decades", key, freed,
         sqlite3_column_int64(st, 1) - sqlite3_column_int64(st, 3));
    SAME("freed bytes over the decades", key, freed_bytes,
         sqlite3_column_int64(st, 2) - sqlite3_column_int64(st, 4));
}

/* One decade of lifetime of one stack: the blocks freed after living that long, and bytes. */
static void life_row(sqlite3_stmt *st, void *user)
{
    cmp_t *c = user;
    int64_t bt = sqlite3_column_int64(st, 0), d = sqlite3_column_int64(st, 1);
    char key[128];
    snprintf(key, sizeof key, "pid %" PRId64 " recording %" PRId64 " stack %" PRId64 " decade %" PRId64,
             c->p->pid, c->p->recording, bt, d);
    const ra_stat_t *s = model_stat(c->m, c->p->pid, c->p->recording, bt);
    if (!s || d < 0 || d >= RA_LIFE_DECADES) {
        fprintf(stderr, "%s: %s: in the rows, not in the summaries\n", db_path, key);
        differences++;
        return;
    }
    SAME("freed blocks", key, s->life_blocks[d], sqlite3_column_int64(st, 2));
    SAME("freed bytes", key, s->life_bytes[d], sqlite3_column_int64(st, 3));
}

static void thread_row(sqlite3_stmt *st, void *user)
{
    cmp_t *c = user;
    int64_t tid = sqlite3_column_int64(st, 0);
    char key[96];
    snprintf(key, sizeof key, "pid %" PRId64 " recording %" PRId64 " thread %" PRId64, c->p->pid,
             c->p->recording, tid);
    const ra_thread_t *t = NULL;
    for (size_t i = 0; i < c->m->nthreads && !t; i++)
        if (c->m->threads[i].pid == c->p->pid && c->m->threads[i].recording == c->p->recording &&
            c->m->threads[i].tid == tid)
            t = &c->m->threads[i];
    if (!t) {
        fprintf(stderr, "%s: %s: in the rows, not in the summaries\n", db_path, key);
        differences++;
        return;
    }
    c->found++;
    SAME("allocations", key, t->allocs, sqlite3_column_int64(st, 1));
    SAME("bytes", key, t->bytes, sqlite3_column_int64(st, 2));
    SAME("frees", key, t->frees, sqlite3_column_int64(st, 3));
    SAME("blocks never freed", key, t->leaked_blocks + t->stopped_blocks, sqlite3_column_int64(st, 4));
    SAME("bytes never freed", key, t->leaked_bytes + t->stopped_bytes, sqlite3_column_int64(st, 5));
}

/* Sizes arrive grouped by size; the classes are added up here. */
typedef struct {
    int64_t lo, blocks, bytes, leaked_blocks, leaked_bytes;
} class_t;

typedef struct {
    class_t c[66];
    size_t n;
} classes_t;

static int64_t class_of(int64_t size)
{
    int64_t lo = 1;
    if (size <= 0)
        return 0;
    while (lo <= size / 2)
        lo *= 2;
    return lo;
}

static void size_row(sqlite3_stmt *st, void *user)
{
    classes_t *cs = user;
    int64_t lo = class_of(sqlite3_column_int64(st, 0));
    size_t i = 0;
    while (i < cs->n && cs->c[i].lo != lo)
        i++;
    if (i == cs->n)
        cs->c[cs->n++] = (class_t){.lo = lo};
    cs->c[i].blocks += sqlite3_column_int64(st, 1);
    cs->c[i].bytes += sqlite3_column_int64(st, 2);
    cs->c[i].leaked_blocks += sqlite3_column_int64(st, 3);
    cs->c[i].leaked_bytes += sqlite3_column_int64(st, 4);
}

static int64_t marks_end(sqlite3 *db, const ra_proc_t *p)
{
    int64_t end = 0;
    each_row(db,
             "SELECT max(coalesce((SELECT max(t) FROM markers WHERE pid = ?1 AND recording = ?2), 0),\n"
             "           coalesce((SELECT max(coalesce(off_t, on_t)) FROM windows\n"
             "                     WHERE pid = ?1 AND recording = ?2), 0))",
             p->pid, p->recording, count_row, &end);
    return end;
}

/* Compares one recording; returns the number of stacks compared. */
static size_t check_recording(sqlite3 *db, const ra_model_t *m, const ra_proc_t *p,
                              size_t *threads, size_t *classes)
{
    char key[64];
    snprintf(key, sizeof key, "pid %" PRId64 " recording %" PRId64, p->pid, p->recording);
    totals_t t = {.peak_t = -1};
    each_row(db,
             "SELECT count(*), coalesce(sum(size), 0), count(dealloc_after),\n"
             "       count(*) - count(dealloc_after),\n"
             "       coalesce(sum(CASE WHEN dealloc_after IS NULL THEN size END), 0),\n"
             "       coalesce(max(max(alloc_after, coalesce(dealloc_after, 0))), 0)\n"
             "FROM allocations WHERE pid = ?1 AND recording = ?2",
             p->pid, p->recording, totals_row, &t);
    each_row(db,
             "SELECT t, sum(d) FROM (\n"
             "    SELECT alloc_after AS t, size AS d FROM allocations\n"
             "    WHERE pid = ?1 AND recording = ?2\n"
             "    UNION ALL\n"
             "    SELECT dealloc_after, -size FROM allocations\n"
             "    WHERE pid = ?1 AND recording = ?2 AND dealloc_after IS NOT NULL)\n"
             "GROUP BY t ORDER BY t",
             p->pid, p->recording, peak_row, &t);
    int64_t marks = marks_end(db, p);
    if (marks > t.end_t)
        t.end_t = marks;
    SAME("allocations", key, p->allocs, t.allocs);
    SAME("bytes", key, p->bytes, t.bytes);
    SAME("frees", key, p->frees, t.frees);
    SAME("blocks never freed", key, p->leaked_blocks + p->stopped_blocks, t.leaked_blocks);
    SAME("bytes never freed", key, p->leaked_bytes + p->stopped_bytes, t.leaked_bytes);
    SAME("end", key, p->end_t, t.end_t);
    SAME("peak time", key, p->peak_t, t.peak_t);
    SAME("peak bytes", key, p->peak_bytes, t.peak_bytes);
    int64_t live_blocks = 0;
    if (t.peak_t >= 0) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(db,
                               "SELECT count(*) FROM allocations WHERE pid = ?1 AND recording = ?2\n"
                               "AND alloc_after <= ?3 AND (dealloc_after IS NULL OR dealloc_after > ?3)",
                               -1, &st, NULL) != SQLITE_OK)
            exit(2);
        sqlite3_bind_int64(st, 1, p->pid);
        sqlite3_bind_int64(st, 2, p->recording);
        sqlite3_bind_int64(st, 3, t.peak_t);
        if (sqlite3_step(st) == SQLITE_ROW)
            live_blocks = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
    SAME("blocks live at the peak", key, p->peak_blocks, live_blocks);

    /* The timeline: its largest slice is the peak, and it ends at what was never freed. */
    int64_t top = 0, last = 0;
    for (size_t i = p->bucket0; i < p->bucket0 + p->nbuckets; i++) {
        if (m->buckets[i].max_live > top)
            top = m->buckets[i].max_live;
        last = m->buckets[i].end_live;
    }
    SAME("timeline's highest slice", key, top, t.peak_bytes);
    SAME("timeline's end", key, last, t.leaked_bytes);

    /* Per stack, with the blocks live at the peak and temporary.sql's rule. */
    cmp_t c = {m, p, 0};
    char sql[2048];
    snprintf(sql, sizeof sql,
             "SELECT coalesce(bt, -1), count(*), sum(size), count(*) - count(dealloc_after),\n"
             "       coalesce(sum(CASE WHEN dealloc_after IS NULL THEN size END), 0),\n"
             "       sum(alloc_after <= %1$" PRId64 " AND (dealloc_after IS NULL OR dealloc_after > %1$" PRId64 ")),\n"
             "       coalesce(sum(CASE WHEN alloc_after <= %1$" PRId64 "\n"
             "                     AND (dealloc_after IS NULL OR dealloc_after > %1$" PRId64 ")\n"
             "                THEN size END), 0),\n"
             "       sum(temp), coalesce(sum(CASE WHEN temp THEN size END), 0)\n"
             "FROM (SELECT bt, size, alloc_after, dealloc_after,\n"
             "             dealloc_after IS NOT NULL AND dealloc_after <= coalesce(lead(alloc_after)\n"
             "                 OVER (PARTITION BY alloc_thread ORDER BY alloc_after, id),\n"
             "                 dealloc_after) AS temp\n"
             "      FROM allocations WHERE pid = ?1 AND recording = ?2)\n"
             "GROUP BY coalesce(bt, -1)",
             t.peak_t);
    each_row(db, sql, p->pid, p->recording, stack_row, &c);
    size_t nstats = 0;
    for (size_t i = 0; i < m->nstats; i++)
        nstats += m->stats[i].pid == p->pid && m->stats[i].recording == p->recording;
    SAME("stacks", key, (int64_t)nstats, (int64_t)c.found);
    size_t stacks = c.found;

    /* Per stack and decade of lifetime (0: under 1 us, then one per power of ten from 1 us,
     * 8: 10 s or more), from the number of digits of each freed block's lifetime. */
    each_row(db,
             "SELECT coalesce(bt, -1), CASE WHEN life < 1000 THEN 0 ELSE min(8, length(life) - 3) END,\n"
             "       count(*), sum(size)\n"
             "FROM (SELECT bt, size, dealloc_after - alloc_after AS life FROM allocations\n"
             "      WHERE pid = ?1 AND recording = ?2 AND dealloc_after IS NOT NULL)\n"
             "GROUP BY 1, 2",
             p->pid, p->recording, life_row, &c);

    /* Per thread: what it allocated (and left), and what it freed. */
    c.found = 0;
    each_row(db,
             "SELECT tid, sum(a), sum(b), sum(f), sum(lb), sum(lbytes) FROM (\n"
             "    SELECT alloc_thread AS tid, 1 AS a, size AS b, 0 AS f, dealloc_after IS NULL AS lb,\n"
             "           CASE WHEN dealloc_after IS NULL THEN size ELSE 0 END AS lbytes\n"
             "    FROM allocations WHERE pid = ?1 AND recording = ?2\n"
             "    UNION ALL\n"
             "    SELECT dealloc_thread, 0, 0, 1, 0, 0 FROM allocations\n"
             "    WHERE pid = ?1 AND recording = ?2 AND dealloc_thread IS NOT NULL)\n"
             "GROUP BY tid",
             p->pid, p->recording, thread_row, &c);
    *threads += c.found;

    classes_t cs = {.n = 0};
    each_row(db,
             "SELECT size, count(*), sum(size), count(*) - count(dealloc_after),\n"
             "       coalesce(sum(CASE WHEN dealloc_after IS NULL THEN size END), 0)\n"
             "FROM allocations WHERE pid = ?1 AND recording = ?2 GROUP BY size",
             p->pid, p->recording, size_row, &cs);
    size_t nsizes = 0;
    for (size_t i = 0; i < m->nsizes; i++) {
        const ra_sizeclass_t *z = &m->sizes[i];
        if (z->pid != p->pid || z->recording != p->recording)
            continue;
        nsizes++;
        char zkey[128];
        snprintf(zkey, sizeof zkey, "%s size class %" PRId64 "-%" PRId64, key, z->lo, z->hi);
        const class_t *o = NULL;
        for (size_t k = 0; k < cs.n && !o; k++)
            if (cs.c[k].lo == z->lo)
                o = &cs.c[k];
        class_t none = {0};
        if (!o)
            o = &none;
        SAME("blocks", zkey, z->blocks, o->blocks);
        SAME("bytes", zkey, z->bytes, o->bytes);
        SAME("blocks never freed", zkey, z->leaked_blocks + z->stopped_blocks, o->leaked_blocks);
        SAME("bytes never freed", zkey, z->leaked_bytes + z->stopped_bytes, o->leaked_bytes);
    }
    SAME("size classes", key, (int64_t)nsizes, (int64_t)cs.n);
    *classes += cs.n;
    return stacks;
}

static int check(const char *path)
{
    sqlite3 *db;
    ra_err_t err;
    db_path = path;
    if (ra_open_read(path, &db, &err) != RA_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return 2;
    }
    ra_model_t m;
    unsigned what = RA_MODEL_STACKS | RA_MODEL_PEAK | RA_MODEL_TIMELINE | RA_MODEL_TEMPORARY |
                    RA_MODEL_TABLES | RA_MODEL_LIFETIMES;
    if (ra_model_load(db, -1, what, 400, &m, &err) != RA_OK) {
        fprintf(stderr, "%s\n", err.msg);
        ra_model_free(&m);
        sqlite3_close(db);
        return 2;
    }
    int before = differences;
    size_t recordings = 0, stacks = 0, threads = 0, classes = 0;
    for (size_t i = 0; i < m.nprocs; i++) {
        if (m.procs[i].sample_interval) {
            printf("%s: pid %" PRId64 " recording %" PRId64 ": profile mode, left out\n", path,
                   m.procs[i].pid, m.procs[i].recording);
            continue;
        }
        recordings++;
        stacks += check_recording(db, &m, &m.procs[i], &threads, &classes);
    }
    if (differences == before)
        printf("%s: %zu recordings, %zu stacks, %zu threads, %zu size classes: summaries and "
               "rows agree\n",
               path, recordings, stacks, threads, classes);
    ra_model_free(&m);
    sqlite3_close(db);
    return differences == before ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: model_oracle DB...\n");
        return 2;
    }
    int rc = 0;
    for (int i = 1; i < argc; i++) {
        int r = check(argv[i]);
        if (r > rc)
            rc = r;
    }
    return rc;
}
