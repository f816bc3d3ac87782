/*
 * memory.c: a recording's memory beyond its heap: its samples of resident memory (table rss)
 * and the program's own mappings (mapping_stats), for the report's lines and the page's chart.
 *
 * Both tables are small (a sample per 10 ms at most, one row per recording), so this reads them
 * directly; the heap at the moment resident memory peaked comes from the timeline summary, never
 * from the rows of `allocations`.
 */
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "analysis.h"

void ra_memory_free(ra_memory_t *m)
{
    if (!m)
        return;
    free(m->points);
    memset(m, 0, sizeof *m);
}

/* A statement's failure, as every ra_ function says it. */
static ra_status_t sql_fail(sqlite3 *db, ra_err_t *err, const char *what)
{
    return ra__fail(err, sqlite3_errcode(db) == SQLITE_NOMEM ? RA_E_NOMEM : RA_E_INPUT,
                    "reading %s: %s", what, sqlite3_errmsg(db));
}

static sqlite3_stmt *prepare(sqlite3 *db, const char *sql, int64_t pid, int64_t recording)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return NULL;
    sqlite3_bind_int64(st, 1, pid);
    sqlite3_bind_int64(st, 2, recording);
    return st;
}

ra_status_t ra_memory_load(sqlite3 *db, int64_t pid, int64_t recording, size_t max,
                           ra_memory_t *m, ra_err_t *err)
{
    memset(m, 0, sizeof *m);
    int rss = ra__has_table(db, "rss"), maps = ra__has_table(db, "mapping_stats");
    if (rss < 0 || maps < 0)
        return sql_fail(db, err, "the tables");
    if (!rss || !maps)
        return RA_OK;
    /* The peak: the largest sample, the first of equals; and the heap then, as the most bytes
     * live in the timeline's slice that holds it (after the last slice: what the last left). */
    static const char peak_sql[] =
        "SELECT r.t, r.bytes,\n"
        "  coalesce((SELECT max_live_bytes FROM timeline AS l WHERE l.pid = ?1\n"
        "              AND l.recording = ?2 AND l.start_ns <= r.t AND r.t < l.end_ns),\n"
        "           (SELECT live_bytes FROM timeline AS l WHERE l.pid = ?1 AND l.recording = ?2\n"
        "              AND l.start_ns <= r.t ORDER BY l.bucket DESC LIMIT 1), 0),\n"
        "  (SELECT count(*) FROM rss WHERE pid = ?1 AND recording = ?2)\n"
        "FROM rss AS r WHERE r.pid = ?1 AND r.recording = ?2 ORDER BY r.bytes DESC, r.t LIMIT 1";
    sqlite3_stmt *st = prepare(db, peak_sql, pid, recording);
    if (!st)
        return sql_fail(db, err, "rss");
    int rc = sqlite3_step(st);
    int64_t n = 0;
    if (rc == SQLITE_ROW) {
        m->peak_t = sqlite3_column_int64(st, 0);
        m->peak_bytes = sqlite3_column_int64(st, 1);
        m->heap_at_peak = sqlite3_column_int64(st, 2);
        n = sqlite3_column_int64(st, 3);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return sql_fail(db, err, "rss");
    m->samples = n;

    /* The samples, at most `max`: the largest of each of max equal slices of the samples' time,
     * so a short rise still shows. */
    if (n > 0 && max > 0) {
        static const char points_sql[] =
            "WITH span AS (SELECT min(t) AS lo, max(t) - min(t) + 1 AS w FROM rss\n"
            "              WHERE pid = ?1 AND recording = ?2)\n"
            "SELECT t, max(bytes), anon, file, swap FROM rss, span\n"
            "WHERE pid = ?1 AND recording = ?2\n"
            "GROUP BY (t - span.lo) * ?3 / span.w ORDER BY t";
        st = prepare(db, points_sql, pid, recording);
        if (!st)
            return sql_fail(db, err, "rss");
        sqlite3_bind_int64(st, 3, (int64_t)max);
        size_t cap = 0;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            if (rheap_grow(&m->points, &cap, m->npoints, sizeof *m->points, 64) != 0) {
                sqlite3_finalize(st);
                ra_memory_free(m);
                return ra__fail(err, RA_E_NOMEM, "out of memory");
            }
            ra_rss_point_t *p = &m->points[m->npoints++];
            p->t = sqlite3_column_int64(st, 0);
            p->bytes = sqlite3_column_int64(st, 1);
            p->anon = sqlite3_column_int64(st, 2);
            p->file = sqlite3_column_int64(st, 3);
            p->swap = sqlite3_column_int64(st, 4);
        }
        sqlite3_finalize(st);
        if (rc != SQLITE_DONE) {
            ra_memory_free(m);
            return sql_fail(db, err, "rss");
        }
    }

    st = prepare(db,
                 "SELECT maps, bytes, peak_bytes, peak_ns, end_bytes FROM mapping_stats\n"
                 "WHERE pid = ?1 AND recording = ?2",
                 pid, recording);
    if (!st) {
        ra_memory_free(m);
        return sql_fail(db, err, "mapping_stats");
    }
    if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        m->maps = sqlite3_column_int64(st, 0);
        m->map_bytes = sqlite3_column_int64(st, 1);
        m->map_peak_bytes = sqlite3_column_int64(st, 2);
        m->map_peak_t = sqlite3_column_int64(st, 3);
        m->map_end_bytes = sqlite3_column_int64(st, 4);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        ra_memory_free(m);
        return sql_fail(db, err, "mapping_stats");
    }
    return RA_OK;
}
