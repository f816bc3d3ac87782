/*
 * resym.c: symbolizing a finished database again (rheap_resymbolize, `rheap resymbolize`).
 *
 * A database keeps, for every frame, the module path and the return address relative to the
 * module's load bias, and the modules table keeps each module's recorded build-id. That is all
 * symbolization needs, so debug information installed after the conversion (a -dbgsym
 * package, a debug file under RHEAP_DEBUG_DIR, a rebuild with -g that kept the build-id) can
 * improve the database without the recording, which `rheap run` deletes by default.
 *
 * Every recorded address is resolved again with the converter's own symbolizer. An address
 * whose module cannot be read now (gone, or its build-id no longer the recorded one: symbols
 * from another build would be wrong) keeps the rows it had. All of it happens in one SQLite
 * transaction, so the database is either wholly updated or left as it was. The stacks table's
 * allocation sites, which name a function and a location, are decided again from the new rows,
 * and so are the frames without their repeats (unique_frames, stack_frames); the other summary
 * tables hold only numbers per stack id, which symbolization does not change.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "converter.h"
#include "rheap_convert.h"

typedef struct {
    sqlite3_int64 id, frame_no, line, offset, inlined, ip_index;
    char *file, *sym, *module; /* NULL for SQL NULL */
    int has_line;
} row_t;

typedef struct {
    char *path;
    int file_id;
} module_t;

static char *dup_col(sqlite3_stmt *st, int col)
{
    const unsigned char *t = sqlite3_column_text(st, col);
    return t ? strdup((const char *)t) : NULL;
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Interns every module path with its recorded build-id. A path recorded with several
 * build-ids (a file rebuilt between two runs converted together) is checked against the first
 * one; the frames of the others then keep their rows. */
static int load_modules(sqlite3 *db, cv__sym_t *sym, module_t **out, size_t *n)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db,
                           "SELECT path, min(build_id) FROM modules GROUP BY path ORDER BY path",
                           -1, &st, NULL) != SQLITE_OK)
        return -1;
    size_t cap = 0;
    int rc = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *path = (const char *)sqlite3_column_text(st, 0);
        const char *hex = (const char *)sqlite3_column_text(st, 1);
        if (!path)
            continue;
        uint8_t bid[256];
        size_t blen = 0;
        for (size_t i = 0; hex && hex[i] && hex[i + 1] && blen < sizeof bid; i += 2) {
            int h = hexval(hex[i]), l = hexval(hex[i + 1]);
            if (h < 0 || l < 0)
                break;
            bid[blen++] = (uint8_t)(h << 4 | l);
        }
        if (rheap_grow(out, &cap, *n, sizeof **out, 16) != 0) {
            rc = -1;
            break;
        }
        module_t *m = &(*out)[*n];
        m->path = strdup(path);
        m->file_id = cv__sym_file(sym, path, strlen(path), bid, blen);
        if (!m->path || m->file_id < 0) {
            free(m->path);
            rc = -1;
            break;
        }
        (*n)++;
    }
    sqlite3_finalize(st);
    return rc;
}

static int file_of(const module_t *mods, size_t n, const char *path)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(mods[mid].path, path);
        if (c == 0)
            return mods[mid].file_id;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

static int load_rows(sqlite3 *db, row_t **out, size_t *n)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db,
                           "SELECT id, frame_no, file, line, sym, module, offset, inlined, ip_index "
                           "FROM backtraces ORDER BY id, frame_no",
                           -1, &st, NULL) != SQLITE_OK)
        return -1;
    size_t cap = 0;
    int rc = 0, s;
    while ((s = sqlite3_step(st)) == SQLITE_ROW) {
        if (rheap_grow(out, &cap, *n, sizeof **out, 1024) != 0) {
            rc = -1;
            break;
        }
        row_t *r = &(*out)[(*n)++];
        memset(r, 0, sizeof *r);
        r->id = sqlite3_column_int64(st, 0);
        r->frame_no = sqlite3_column_int64(st, 1);
        r->file = dup_col(st, 2);
        r->has_line = sqlite3_column_type(st, 3) != SQLITE_NULL;
        r->line = sqlite3_column_int64(st, 3);
        r->sym = dup_col(st, 4);
        r->module = dup_col(st, 5);
        r->offset = sqlite3_column_int64(st, 6);
        r->inlined = sqlite3_column_int64(st, 7);
        r->ip_index = sqlite3_column_int64(st, 8);
    }
    if (!rc && s != SQLITE_DONE)
        rc = -1;
    sqlite3_finalize(st);
    return rc;
}

static int bind_text_or_null(sqlite3_stmt *st, int col, const char *s)
{
    return s ? sqlite3_bind_text(st, col, s, -1, SQLITE_STATIC) : sqlite3_bind_null(st, col);
}

static int insert(sqlite3_stmt *st, sqlite3_int64 id, sqlite3_int64 frame_no, const char *file,
                  int has_line, sqlite3_int64 line, const char *sym, const char *module,
                  sqlite3_int64 offset, sqlite3_int64 inlined, sqlite3_int64 ip_index)
{
    sqlite3_reset(st);
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int64(st, 2, frame_no);
    bind_text_or_null(st, 3, file);
    if (has_line)
        sqlite3_bind_int64(st, 4, line);
    else
        sqlite3_bind_null(st, 4);
    bind_text_or_null(st, 5, sym);
    bind_text_or_null(st, 6, module);
    sqlite3_bind_int64(st, 7, offset);
    sqlite3_bind_int64(st, 8, inlined);
    sqlite3_bind_int64(st, 9, ip_index);
    return sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
}

/* Rewrites the backtraces table from rows, resolving each recorded address again. Counts the
 * frames that have a file before and after. */
static int rewrite(sqlite3 *db, cv__sym_t *sym, const module_t *mods, size_t nmods,
                   const row_t *rows, size_t nrows, size_t *before, size_t *after)
{
    if (sqlite3_exec(db, "DELETE FROM backtraces", NULL, NULL, NULL) != SQLITE_OK)
        return -1;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db,
                           "INSERT INTO backtraces (id, frame_no, file, line, sym, module, offset, "
                           "inlined, ip_index) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                           -1, &st, NULL) != SQLITE_OK)
        return -1;
    int rc = 0;
    sqlite3_int64 frame_no = 0;
    for (size_t i = 0; i < nrows && rc == 0;) {
        /* The rows of one recorded address: same stack, same ip_index. */
        size_t j = i + 1;
        while (j < nrows && rows[j].id == rows[i].id && rows[j].ip_index == rows[i].ip_index)
            j++;
        if (i == 0 || rows[i].id != rows[i - 1].id)
            frame_no = 0;
        for (size_t k = i; k < j; k++)
            *before += rows[k].file != NULL;
        const row_t *r = &rows[i];
        int fid = r->module ? file_of(mods, nmods, r->module) : -1;
        const cv__loc_t *loc = NULL;
        if (fid >= 0) {
            loc = cv__sym_resolve(sym, fid, (uint64_t)r->offset);
            if (!loc) {
                rc = -1;
                break;
            }
            if (strcmp(cv__sym_file_status(sym, fid), "ok") != 0)
                loc = NULL;
        }
        if (loc) {
            for (uint32_t k = 0; k < loc->nframes && rc == 0; k++) {
                const cv__srcframe_t *f = &loc->frames[k];
                *after += f->file != NULL;
                rc = insert(st, r->id, frame_no++, f->file, f->line != 0, f->line, f->sym,
                            r->module, r->offset, f->inlined ? 1 : 0, r->ip_index);
            }
        } else {
            for (size_t k = i; k < j && rc == 0; k++) {
                *after += rows[k].file != NULL;
                rc = insert(st, rows[k].id, frame_no++, rows[k].file, rows[k].has_line,
                            rows[k].line, rows[k].sym, rows[k].module, rows[k].offset,
                            rows[k].inlined, rows[k].ip_index);
            }
        }
        i = j;
    }
    sqlite3_finalize(st);
    return rc;
}

static int has_table(sqlite3 *db, const char *name)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?",
                           -1, &st, NULL) != SQLITE_OK)
        return 0;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    int n = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
    sqlite3_finalize(st);
    return n > 0;
}

/* New names make new sites: the sites are numbered again (in the order of their first stack,
 * as the converter numbers them) and their sums (schema.sql's site_stats, site_lifetimes,
 * site_leaks) made again from the per-stack rows, with the same rules in SQL. Seconds on a
 * process tree's million stack rows, once. */
static const char sites_sql[] =
    "DELETE FROM sites;\n"
    "INSERT INTO sites (id, function, location)\n"
    "SELECT row_number() OVER (ORDER BY min(id)), function, location FROM stacks\n"
    "GROUP BY function, location;\n"
    "INSERT INTO sites (id, function, location)\n"
    "SELECT (SELECT coalesce(max(id), 0) + 1 FROM sites), '(no backtrace)', '?\?'\n"
    "WHERE NOT EXISTS (SELECT 1 FROM sites WHERE function = '(no backtrace)' AND location = '?\?')\n"
    "  AND EXISTS (SELECT 1 FROM stack_stats WHERE bt IS NULL);\n"
    "UPDATE stacks SET site = s.id FROM sites AS s\n"
    "WHERE s.function = stacks.function AND s.location = stacks.location;\n"
    "CREATE TEMP TABLE rheap_stack_sites AS\n"
    "SELECT x.*, coalesce(k.site, (SELECT id FROM sites WHERE function = '(no backtrace)'\n"
    "                                                    AND location = '?\?')) AS site,\n"
    "       (SELECT sum(l.bytes) FROM stack_leaks AS l\n"
    "        WHERE l.pid = x.pid AND l.recording = x.recording AND l.bt IS x.bt) AS leak_rows\n"
    "FROM stack_stats AS x LEFT JOIN stacks AS k ON k.id = x.bt;\n"
    "DELETE FROM site_stats;\n"
    "INSERT INTO site_stats\n"
    "SELECT pid, recording, site, count(*), sum(blocks), sum(bytes), sum(freed_blocks),\n"
    "       sum(freed_bytes), sum(leaked_blocks), sum(leaked_bytes), sum(temporary_blocks),\n"
    "       sum(temporary_bytes), min(first_ns), max(last_ns), min(leak_first_ns), max(leak_last_ns),\n"
    "       min(min_size), max(max_size), min(life_min_ns), max(life_max_ns), sum(life_total_ns),\n"
    "       sum(peak_blocks), sum(peak_bytes), min(s_bytes), min(s_blocks),\n"
    "       CASE WHEN max(leaked_blocks) > 0 THEN min(s_leak) END, min(s_temp),\n"
    "       CASE WHEN max(peak_blocks) > 0 THEN min(s_peak) END,\n"
    "       CASE WHEN max(leak_rows IS NOT NULL) THEN min(s_growth) END\n"
    "FROM (SELECT *,\n"
    "        first_value(bt) OVER (PARTITION BY pid, recording, site ORDER BY bytes DESC, bt) AS s_bytes,\n"
    "        first_value(bt) OVER (PARTITION BY pid, recording, site ORDER BY blocks DESC, bt) AS s_blocks,\n"
    "        first_value(bt) OVER (PARTITION BY pid, recording, site\n"
    "                              ORDER BY leaked_blocks > 0 DESC, leaked_bytes DESC, bt) AS s_leak,\n"
    "        first_value(bt) OVER (PARTITION BY pid, recording, site\n"
    "                              ORDER BY temporary_blocks DESC, bt) AS s_temp,\n"
    "        first_value(bt) OVER (PARTITION BY pid, recording, site\n"
    "                              ORDER BY peak_blocks > 0 DESC, peak_bytes DESC, bt) AS s_peak,\n"
    "        first_value(bt) OVER (PARTITION BY pid, recording, site\n"
    "                              ORDER BY leak_rows IS NOT NULL DESC, leak_rows DESC, bt) AS s_growth\n"
    "      FROM temp.rheap_stack_sites)\n"
    "GROUP BY pid, recording, site;\n"
    "DELETE FROM site_lifetimes;\n"
    "INSERT INTO site_lifetimes\n"
    "SELECT l.pid, l.recording, s.site, l.decade, sum(l.blocks), sum(l.bytes)\n"
    "FROM stack_lifetimes AS l JOIN temp.rheap_stack_sites AS s\n"
    "     ON s.pid = l.pid AND s.recording = l.recording AND s.bt IS l.bt\n"
    "GROUP BY l.pid, l.recording, s.site, l.decade;\n"
    "DELETE FROM site_leaks;\n"
    "INSERT INTO site_leaks\n"
    "SELECT l.pid, l.recording, s.site, l.bucket, sum(l.blocks), sum(l.bytes)\n"
    "FROM stack_leaks AS l JOIN temp.rheap_stack_sites AS s\n"
    "     ON s.pid = l.pid AND s.recording = l.recording AND s.bt IS l.bt\n"
    "GROUP BY l.pid, l.recording, s.site, l.bucket;\n"
    /* Growth's default phases, from the new site_leaks rows (summary.c, growth_add). */
    "DELETE FROM site_growth;\n"
    "WITH RECURSIVE series(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM series WHERE k < 9),\n"
    "span AS (SELECT pid, recording, max(bucket) + 1 AS slices, min(max(bucket) + 1, 10) AS n\n"
    "         FROM timeline GROUP BY pid, recording),\n"
    "ph AS (SELECT l.pid, l.recording, l.site, l.bucket * w.n / w.slices AS k,\n"
    "              sum(l.blocks) AS blocks, sum(l.bytes) AS bytes\n"
    "       FROM site_leaks AS l JOIN span AS w ON w.pid = l.pid AND w.recording = l.recording\n"
    "       GROUP BY 1, 2, 3, 4),\n"
    "grid AS (SELECT g.pid, g.recording, g.site, w.n, x.k, p.blocks, p.bytes\n"
    "         FROM (SELECT DISTINCT pid, recording, site FROM ph) AS g\n"
    "         JOIN span AS w ON w.pid = g.pid AND w.recording = g.recording\n"
    "         JOIN series AS x ON x.k < w.n\n"
    "         LEFT JOIN ph AS p ON p.pid = g.pid AND p.recording = g.recording\n"
    "                          AND p.site = g.site AND p.k = x.k)\n"
    "INSERT INTO site_growth\n"
    "SELECT DISTINCT pid, recording, site, n, count(bytes) OVER w, sum(blocks) OVER w,\n"
    "       sum(bytes) OVER w, group_concat(coalesce(bytes, 0), ',') OVER w\n"
    "FROM grid WINDOW w AS (PARTITION BY pid, recording, site ORDER BY k\n"
    "                      ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING);\n"
    "DROP TABLE temp.rheap_stack_sites;\n";

static int update_sites(sqlite3 *db)
{
    if (!has_table(db, "site_stats"))
        return 0;
    return sqlite3_exec(db, sites_sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
}

/* The stacks table names each stack's allocation site from its frames: decided again from the
 * new rows, with the converter's own rule. */
static int update_stacks(sqlite3 *db)
{
    if (!has_table(db, "stacks"))
        return 0;
    sqlite3_stmt *rd, *up;
    if (sqlite3_prepare_v2(db,
                           "SELECT id, sym, file, module, line, offset FROM backtraces "
                           "ORDER BY id, frame_no",
                           -1, &rd, NULL) != SQLITE_OK)
        return -1;
    if (sqlite3_prepare_v2(db,
                           "UPDATE stacks SET frames = ?2, site_frame = ?3, function = ?4, "
                           "location = ?5 WHERE id = ?1",
                           -1, &up, NULL) != SQLITE_OK) {
        sqlite3_finalize(rd);
        return -1;
    }
    cv__siteframe_t *fr = NULL;
    size_t n = 0, cap = 0;
    sqlite3_int64 id = 0;
    int rc = 0, s;
    for (;;) {
        s = sqlite3_step(rd);
        sqlite3_int64 next = s == SQLITE_ROW ? sqlite3_column_int64(rd, 0) : -1;
        if (n && (s != SQLITE_ROW || next != id)) {
            char function[4096], location[4096];
            uint32_t site_no;
            cv__stack_site(fr, (uint32_t)n, &site_no, function, sizeof function, location,
                              sizeof location);
            sqlite3_reset(up);
            sqlite3_bind_int64(up, 1, id);
            sqlite3_bind_int64(up, 2, (sqlite3_int64)n);
            sqlite3_bind_int64(up, 3, site_no);
            sqlite3_bind_text(up, 4, function, -1, SQLITE_TRANSIENT);
            sqlite3_bind_text(up, 5, location, -1, SQLITE_TRANSIENT);
            if (sqlite3_step(up) != SQLITE_DONE)
                rc = -1;
            for (size_t i = 0; i < n; i++) {
                free((char *)fr[i].sym);
                free((char *)fr[i].file);
                free((char *)fr[i].module);
            }
            n = 0;
        }
        if (s != SQLITE_ROW || rc)
            break;
        if (rheap_grow(&fr, &cap, n, sizeof *fr, 64) != 0) {
            rc = -1;
            break;
        }
        id = next;
        cv__siteframe_t *f = &fr[n++];
        f->sym = dup_col(rd, 1);
        f->file = dup_col(rd, 2);
        f->module = dup_col(rd, 3);
        f->line = (uint32_t)sqlite3_column_int64(rd, 4);
        f->offset = (uint64_t)sqlite3_column_int64(rd, 5);
    }
    if (!rc && s != SQLITE_DONE && s != SQLITE_ROW)
        rc = -1;
    for (size_t i = 0; i < n; i++) {
        free((char *)fr[i].sym);
        free((char *)fr[i].file);
        free((char *)fr[i].module);
    }
    free(fr);
    sqlite3_finalize(rd);
    sqlite3_finalize(up);
    return rc;
}

/* unique_frames and stack_frames made again from the new backtraces rows, as the converter
 * makes them (uframes.c). */
static int update_frames(sqlite3 *db)
{
    if (!has_table(db, "stack_frames"))
        return 0;
    if (sqlite3_exec(db, "DELETE FROM unique_frames; DELETE FROM stack_frames", NULL, NULL,
                     NULL) != SQLITE_OK)
        return -1;
    sqlite3_stmt *rd = NULL, *up = NULL;
    cv__uframes_t *u = cv__uframes_create();
    if (!u ||
        sqlite3_prepare_v2(db,
                           "SELECT id, file, line, sym, module, offset, inlined, ip_index "
                           "FROM backtraces ORDER BY id, frame_no",
                           -1, &rd, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "INSERT INTO stack_frames (id, frames) VALUES (?1, ?2)", -1, &up,
                           NULL) != SQLITE_OK) {
        sqlite3_finalize(rd);
        cv__uframes_destroy(u);
        return -1;
    }
    uint32_t *ids = NULL;
    uint8_t *cont = NULL;
    size_t n = 0, cap = 0;
    sqlite3_int64 id = 0, ip = 0;
    int rc = 0, s;
    for (;;) {
        s = sqlite3_step(rd);
        sqlite3_int64 next = s == SQLITE_ROW ? sqlite3_column_int64(rd, 0) : -1;
        if (n && (s != SQLITE_ROW || next != id)) {
            char *text = cv__uframes_text(ids, cont, n);
            sqlite3_reset(up);
            sqlite3_bind_int64(up, 1, id);
            sqlite3_bind_text(up, 2, text, -1, SQLITE_STATIC);
            if (!text || sqlite3_step(up) != SQLITE_DONE)
                rc = -1;
            free(text);
            n = 0;
        }
        if (s != SQLITE_ROW || rc)
            break;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            uint32_t *i2 = realloc(ids, cap * sizeof *i2);
            if (i2)
                ids = i2;
            uint8_t *c2 = realloc(cont, cap);
            if (c2)
                cont = c2;
            if (!i2 || !c2) {
                rc = -1;
                break;
            }
        }
        sqlite3_int64 this_ip = sqlite3_column_int64(rd, 7);
        cont[n] = n > 0 && this_ip == ip;
        ip = this_ip;
        id = next;
        ids[n] = cv__uframes_id(u, (const char *)sqlite3_column_text(rd, 1),
                                sqlite3_column_type(rd, 2) == SQLITE_NULL
                                    ? -1
                                    : sqlite3_column_int64(rd, 2),
                                (const char *)sqlite3_column_text(rd, 3),
                                (const char *)sqlite3_column_text(rd, 4),
                                (uint64_t)sqlite3_column_int64(rd, 5),
                                (int)sqlite3_column_int64(rd, 6));
        if (!ids[n]) {
            rc = -1;
            break;
        }
        n++;
    }
    if (!rc && s != SQLITE_DONE && s != SQLITE_ROW)
        rc = -1;
    if (!rc)
        rc = cv__uframes_write(u, db);
    free(ids);
    free(cont);
    sqlite3_finalize(rd);
    sqlite3_finalize(up);
    cv__uframes_destroy(u);
    return rc;
}

/* A module read now gets status 'ok'; one that could not be read keeps 'ok' if an earlier
 * conversion symbolized from it (its rows were kept) and otherwise says why. */
static int update_modules(sqlite3 *db, cv__sym_t *sym, const module_t *mods, size_t n)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db,
                           "UPDATE modules SET status = ?1 WHERE path = ?2 "
                           "AND (?1 = 'ok' OR status <> 'ok')",
                           -1, &st, NULL) != SQLITE_OK)
        return -1;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        const char *status = cv__sym_file_status(sym, mods[i].file_id);
        if (!strcmp(status, "unused"))
            continue;
        sqlite3_reset(st);
        sqlite3_bind_text(st, 1, status, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, mods[i].path, -1, SQLITE_STATIC);
        rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
    }
    sqlite3_finalize(st);
    return rc;
}

/* Where the symbolizer's warnings (a module file gone or rebuilt) and the error that stops the
 * work go: to the caller's diag, the warnings counted for the status. */
typedef struct {
    void (*diag)(void *user, const rheap_convert_diag_t *d);
    void *user;
    uint64_t warnings;
} say_t;

static void report(say_t *s, const cv__err_t *e)
{
    if (e->status == RHEAP_CONVERT_WARNINGS)
        s->warnings++;
    cv__err_report(e, s->diag, s->user);
}

static void sym_warning(void *user, const cv__err_t *w)
{
    report(user, w);
}

rheap_convert_status_t rheap_resymbolize(struct sqlite3 *db, const char *name,
                                         void (*diag)(void *user, const rheap_convert_diag_t *d),
                                         void *user, rheap_resymbolize_result_t *result)
{
    say_t s = {diag, user, 0};
    static cv__err_t err; /* 8 KiB kept off the stack; not thread-safe, as rheap_convert.h says */
    cv__sym_t *sym = cv__sym_create(sym_warning, &s);
    module_t *mods = NULL;
    row_t *rows = NULL;
    size_t nmods = 0, nrows = 0, before = 0, after = 0;
    rheap_convert_status_t rc = RHEAP_CONVERT_E_OUTPUT;
    /* BEGIN IMMEDIATE takes the write lock before reading, so nothing changes the rows
     * between reading them and writing them back. */
    if (!sym || sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
        cv__fail(&err, RHEAP_CONVERT_E_OUTPUT, name, CV__NO_OFFSET, "%s: %s", name,
                 sym ? sqlite3_errmsg(db) : "out of memory");
        report(&s, &err);
        goto out;
    }
    if (load_modules(db, sym, &mods, &nmods) != 0 || load_rows(db, &rows, &nrows) != 0 ||
        rewrite(db, sym, mods, nmods, rows, nrows, &before, &after) != 0 ||
        update_modules(db, sym, mods, nmods) != 0 || update_stacks(db) != 0 ||
        update_frames(db) != 0 ||
        update_sites(db) != 0 ||
        sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        /* A failed step that SQLite did not fail ran out of memory. */
        int code = sqlite3_errcode(db);
        cv__fail(&err, RHEAP_CONVERT_E_OUTPUT, name, CV__NO_OFFSET,
                 "%s: %s; the database is unchanged", name,
                 code == SQLITE_OK || code == SQLITE_ROW || code == SQLITE_DONE
                     ? "out of memory"
                     : sqlite3_errmsg(db));
        report(&s, &err);
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        goto out;
    }
    if (result) {
        result->frames_before = before;
        result->frames_after = after;
        result->warnings = s.warnings;
    }
    rc = s.warnings ? RHEAP_CONVERT_WARNINGS : RHEAP_CONVERT_OK;
out:
    for (size_t i = 0; i < nrows; i++) {
        free(rows[i].file);
        free(rows[i].sym);
        free(rows[i].module);
    }
    free(rows);
    for (size_t i = 0; i < nmods; i++)
        free(mods[i].path);
    free(mods);
    cv__sym_destroy(sym);
    return rc;
}
