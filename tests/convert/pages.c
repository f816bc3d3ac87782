/*
 * pages.c: the tables the converter lays into pages itself (converter/btree.c) against SQLite.
 *
 *   convert_pages tree DIR      the builder alone: random rows (every serial type, NULLs, REALs,
 *                               negative and large rowids) at 512-byte pages (four levels: three
 *                               of interior pages) and at 16 KiB (three levels), an empty table,
 *                               one row; each read back by SQLite row for row against the same
 *                               rows inserted by SQLite itself, and PRAGMA integrity_check; a
 *                               table that crosses SQLite's lock-byte page at 1 GiB; rows
 *                               out of order, a row too large for a page and a file size limit
 *                               refused with the file, offset and reason
 *   convert_pages convert DIR   a recording of 2 threads and 2 recordings (cross-thread frees,
 *                               alignments too large for `how`, unscaled times, a size of 2^63
 *                               and more, 1,200 more stacks) converted with the builder and with
 *                               SQLite's inserts: every table equal row for row (the summary
 *                               tables laid into pages type for type too, over several pages,
 *                               with each recording's range of stack_stats rowids), the file no
 *                               larger; then under file size limits that stop the builder's
 *                               temporary file and the final append: status 4, a message naming
 *                               the file and the offset, and nothing left in the directory
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "converter.h"
#include "rheap_convert.h"
#include "tgen.h"

/* ---- The builder alone ---- */

static uint64_t rng;

static uint64_t next(void)
{
    uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Values at the edges of SQLite's integer serial types. */
static const int64_t edges[] = {
    0, 1, -1, 2, 127, 128, -128, -129, 32767, 32768, -32768, -32769, 8388607, 8388608,
    -8388608, -8388609, 2147483647, 2147483648ll, -2147483648ll, -2147483649ll,
    140737488355327ll, 140737488355328ll, -140737488355328ll, -140737488355329ll,
    INT64_MAX, INT64_MIN, INT64_MAX - 1, INT64_MIN + 1,
};
#define NEDGES (sizeof edges / sizeof edges[0])

static cv__bt_value_t random_value(int wide)
{
    uint64_t r = next();
    switch (r % 16) {
    case 0:
        return (cv__bt_value_t){CV__BT_NULL, 0, 0};
    case 1:
        return (cv__bt_value_t){CV__BT_INT, (int64_t)(r >> 8) & 1, 0};
    case 2: {
        double d = (double)(int64_t)next() / 7.0;
        return (cv__bt_value_t){CV__BT_REAL, 0, d};
    }
    case 3:
        return (cv__bt_value_t){CV__BT_INT, edges[(r >> 8) % NEDGES], 0};
    default: {
        /* A random length of bits, either sign: every integer serial type comes up. */
        unsigned bits = wide ? 40 + (unsigned)(r >> 8) % 24 : 1 + (unsigned)(r >> 8) % 63;
        int64_t v = (int64_t)(next() >> (64 - bits));
        return (cv__bt_value_t){CV__BT_INT, (r >> 20) & 1 ? -v : v, 0};
    }
    }
}

/* Row i's rowid: from a negative start, steps of 1 to 2^40. */
static int64_t next_rowid(int64_t prev, int first)
{
    if (first)
        return -((int64_t)1 << 50);
    uint64_t r = next();
    return prev + 1 + (int64_t)(r % 4 == 0 ? (r >> 24) : (r >> 60));
}

static void bind_value(sqlite3_stmt *st, int i, const cv__bt_value_t *v)
{
    if (v->kind == CV__BT_NULL)
        sqlite3_bind_null(st, i);
    else if (v->kind == CV__BT_INT)
        sqlite3_bind_int64(st, i, v->i);
    else
        sqlite3_bind_double(st, i, v->r);
}

static void exec(sqlite3 *db, const char *sql)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        fprintf(stderr, "FAIL: %s: %s\n", sql, msg ? msg : "?");
        exit(1);
    }
}

static sqlite3 *open_rw(const char *path)
{
    sqlite3 *db = NULL;
    if (sqlite3_open(path, &db) != SQLITE_OK) {
        fprintf(stderr, "FAIL: %s: %s\n", path, db ? sqlite3_errmsg(db) : "out of memory");
        exit(1);
    }
    /* No syncs: dozens of small databases, and nothing to keep if the machine stops. */
    sqlite3_exec(db, "PRAGMA synchronous = OFF; PRAGMA journal_mode = OFF", NULL, NULL, NULL);
    return db;
}

/* A database of page size ps holding tables `before`, t (id and ncols columns) and `after`, t
 * empty; its root page. The tables around t take pages of their own before and after it. The
 * columns of t have no affinity, so SQLite keeps each value as it is bound (a REAL holding an
 * integer stays a REAL), as the builder does: affinity is its caller's business. */
static uint32_t make_db(const char *path, uint32_t ps, unsigned ncols)
{
    unlink(path);
    sqlite3 *db = open_rw(path);
    char sql[4096];
    int n = snprintf(sql, sizeof sql,
                     "PRAGMA page_size = %u; PRAGMA journal_mode = OFF; "
                     "CREATE TABLE before (x); INSERT INTO before VALUES ('one row');"
                     "CREATE TABLE t (id INTEGER PRIMARY KEY",
                     ps);
    for (unsigned c = 0; c < ncols; c++)
        n += snprintf(sql + n, sizeof sql - (size_t)n, ", c%u", c);
    snprintf(sql + n, sizeof sql - (size_t)n,
             "); CREATE TABLE after (x); INSERT INTO after VALUES (zeroblob(3000));");
    exec(db, sql);
    uint32_t root = (uint32_t)tgen_int(db, "SELECT rootpage FROM sqlite_schema WHERE name = 't'");
    sqlite3_close(db);
    return root;
}

/* Inserts the rows of seed into t of the database at path through SQLite. */
static void sqlite_rows(const char *path, uint64_t seed, size_t nrows, unsigned ncols, int wide)
{
    sqlite3 *db = open_rw(path);
    exec(db, "BEGIN");
    char sql[4096];
    int n = snprintf(sql, sizeof sql, "INSERT INTO t VALUES (?");
    for (unsigned c = 0; c < ncols; c++)
        n += snprintf(sql + n, sizeof sql - (size_t)n, ", ?");
    snprintf(sql + n, sizeof sql - (size_t)n, ")");
    sqlite3_stmt *st;
    CHECK(sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK);
    rng = seed;
    int64_t rowid = 0;
    for (size_t i = 0; i < nrows; i++) {
        rowid = next_rowid(rowid, i == 0);
        sqlite3_bind_int64(st, 1, rowid);
        for (unsigned c = 0; c < ncols; c++) {
            cv__bt_value_t v = random_value(wide);
            bind_value(st, (int)c + 2, &v);
        }
        CHECK(sqlite3_step(st) == SQLITE_DONE);
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    exec(db, "COMMIT");
    sqlite3_close(db);
}

/* Rows of seed laid into t by the builder; the builder's levels. */
static int builder_rows(const char *path, uint32_t ps, uint32_t root, uint64_t seed,
                        size_t nrows, unsigned ncols, int wide)
{
    cv__btree_t *b = cv__btree_create(path, "t", ps, 0);
    CHECK(b && !cv__btree_error(b));
    rng = seed;
    int64_t rowid = 0;
    cv__bt_value_t v[64];
    for (size_t i = 0; i < nrows; i++) {
        rowid = next_rowid(rowid, i == 0);
        v[0] = (cv__bt_value_t){CV__BT_NULL, 0, 0};
        /* A row of integers and NULLs goes through the encoder of such rows (allocation_rows'
         * own) when it has few enough columns, the others through the generic one: in one
         * tree, each row's cell must be the one SQLite makes. */
        int64_t iv[64];
        uint32_t nulls = 1;
        int ints = ncols + 1 <= 14;
        for (unsigned c = 0; c < ncols; c++) {
            v[c + 1] = random_value(wide);
            iv[c + 1] = v[c + 1].i;
            nulls |= (uint32_t)(v[c + 1].kind == CV__BT_NULL) << (c + 1);
            ints = ints && v[c + 1].kind != CV__BT_REAL;
        }
        iv[0] = 0;
        if ((ints ? cv__btree_add_ints(b, rowid, iv, ncols + 1, nulls)
                  : cv__btree_add(b, rowid, v, ncols + 1)) != 0) {
            fprintf(stderr, "FAIL: row %zu: %s\n", i, cv__btree_error(b));
            exit(1);
        }
    }
    char err[8192];
    int levels = cv__btree_levels(b);
    if (cv__btree_put(path, &b, &root, 1, err, sizeof err) != 0) {
        fprintf(stderr, "FAIL: %s\n", err);
        exit(1);
    }
    cv__btree_destroy(b);
    return levels;
}

/* nrows rows of ncols columns at page size ps, by the builder and by SQLite: equal, and the
 * builder's file sound; at least min_levels levels. */
static void tree_case(const char *dir, uint32_t ps, size_t nrows, unsigned ncols, int wide,
                      int min_levels)
{
    char mine[2048], theirs[2048];
    snprintf(mine, sizeof mine, "%s/tree-%u-%zu.db", dir, ps, nrows);
    snprintf(theirs, sizeof theirs, "%s/sqlite-%u-%zu.db", dir, ps, nrows);
    uint64_t seed = 0x5eed0000 + ps + nrows;
    uint32_t root = make_db(mine, ps, ncols);
    make_db(theirs, ps, ncols);
    int levels = builder_rows(mine, ps, root, seed, nrows, ncols, wide);
    sqlite_rows(theirs, seed, nrows, ncols, wide);
    printf("tree: %zu rows of %u columns at %u-byte pages: %d levels\n", nrows, ncols, ps,
           levels);
    CHECK(levels >= min_levels);

    sqlite3 *db = tgen_db_open(mine);
    CHECK_STR(tgen_text(db, "PRAGMA integrity_check"), "ok");
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM t"), (long long)nrows);
    CHECK_STR(tgen_text(db, "SELECT x FROM before"), "one row");
    CHECK_INT(tgen_int(db, "SELECT length(x) FROM after"), 3000);
    char sql[4096];
    snprintf(sql, sizeof sql, "ATTACH '%s' AS o", theirs);
    exec(db, sql);
    /* Row for row: the same rowids, and each column the same value of the same type. */
    int n = snprintf(sql, sizeof sql,
                     "SELECT count(*) FROM t AS a FULL JOIN o.t AS b ON a.id = b.id "
                     "WHERE a.id IS NULL OR b.id IS NULL");
    for (unsigned c = 0; c < ncols; c++)
        n += snprintf(sql + n, sizeof sql - (size_t)n,
                      " OR a.c%u IS NOT b.c%u OR typeof(a.c%u) <> typeof(b.c%u)", c, c, c, c);
    CHECK_INT(tgen_int(db, "%s", sql), 0);
    /* Walked in both directions and sought. */
    CHECK_INT(tgen_int(db, "SELECT max(id) FROM t"), tgen_int(db, "SELECT max(id) FROM o.t"));
    CHECK_INT(tgen_int(db, "SELECT min(id) FROM t"), tgen_int(db, "SELECT min(id) FROM o.t"));
    if (nrows) {
        CHECK_INT(tgen_int(db, "SELECT count(*) FROM t WHERE id IN (SELECT id FROM o.t "
                               "WHERE id %% 7 = 3)"),
                  tgen_int(db, "SELECT count(*) FROM o.t WHERE id %% 7 = 3"));
        CHECK_INT(tgen_int(db, "SELECT count(*) FROM (SELECT id FROM t ORDER BY id DESC) AS a "
                               "JOIN o.t AS b USING (id)"),
                  (long long)nrows);
    }
    /* No larger than SQLite's own. */
    long long pages = tgen_int(db, "PRAGMA page_count"), theirs_pages = tgen_int(db, "PRAGMA o.page_count");
    printf("  %lld pages, SQLite's own %lld\n", pages, theirs_pages);
    CHECK(pages <= theirs_pages);
    sqlite3_close(db);
    /* Written again by SQLite: the file is a database it can go on with. */
    db = open_rw(mine);
    exec(db, "INSERT INTO t (c0) VALUES (42); INSERT INTO after VALUES (zeroblob(20000))");
    CHECK_STR(tgen_text(db, "PRAGMA integrity_check"), "ok");
    sqlite3_close(db);
    unlink(mine);
    unlink(theirs);
}

/* n rows (rowids 1 to n) of one integer, 1000, at 512-byte pages: 56 rows a leaf. At n = 3160
 * the root holds the 57 leaves; at 3170 the last leaf's arrival overfills it, the case where the
 * page's last cell moves to the next one (a page with a right-most child alone is no b-tree
 * page), and a root is made above the two. */
static void fixed_case(const char *dir, int64_t n, int levels)
{
    char path[2048];
    snprintf(path, sizeof path, "%s/fixed.db", dir);
    uint32_t root = make_db(path, 512, 1);
    cv__btree_t *b = cv__btree_create(path, "t", 512, 0);
    cv__bt_value_t v[2] = {{CV__BT_NULL, 0, 0}, {CV__BT_INT, 1000, 0}};
    for (int64_t i = 1; i <= n; i++)
        CHECK(cv__btree_add(b, i, v, 2) == 0);
    CHECK_INT(cv__btree_levels(b), 2);
    char err[8192];
    CHECK(cv__btree_put(path, &b, &root, 1, err, sizeof err) == 0);
    CHECK_INT(cv__btree_levels(b), levels); /* 3: the root made by the last push */
    cv__btree_destroy(b);
    sqlite3 *db = tgen_db_open(path);
    CHECK_STR(tgen_text(db, "PRAGMA integrity_check"), "ok");
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM t"), n);
    CHECK_INT(tgen_int(db, "SELECT sum(c0) FROM t"), 1000 * n);
    CHECK_INT(tgen_int(db, "SELECT sum(id) FROM t WHERE id > 3000"), (n + 3001) * (n - 3000) / 2);
    sqlite3_close(db);
    unlink(path);
}

/* A table that crosses the first GiB of the file: SQLite never uses the page holding byte 2^30
 * (its locks' byte range), and integrity_check counts a reference to it as a second one. At
 * 16 KiB pages that is page 65537; a filler of zeroblobs ends the file some 100 pages before it,
 * and 2.4 M rows of three numbers (some 2,400 leaves, three levels) go on past it: the page
 * falls among the first interior page's children. */
static void lock_page_case(const char *dir)
{
    const uint32_t ps = 16384;
    const long long lock = (1ll << 30) / ps + 1;
    char path[2048];
    snprintf(path, sizeof path, "%s/lock.db", dir);
    uint32_t root = make_db(path, ps, 3);
    sqlite3 *db = open_rw(path);
    exec(db, "CREATE TABLE filler (x); INSERT INTO filler VALUES (zeroblob(534000000));"
             "INSERT INTO filler VALUES (zeroblob(534000000))");
    long long before = tgen_int(db, "PRAGMA page_count");
    sqlite3_close(db);
    printf("lock page: the file ends at page %lld, %lld before the lock page\n", before,
           lock - before);
    CHECK(lock - before > 20 && lock - before < 400);
    cv__btree_t *b = cv__btree_create(path, "t", ps, 0);
    cv__bt_value_t v[4] = {{CV__BT_NULL, 0, 0}, {CV__BT_INT, 0, 0}, {CV__BT_INT, 7, 0},
                           {CV__BT_INT, 1000, 0}};
    const int64_t n = 2400000;
    for (int64_t i = 1; i <= n; i++) {
        v[1].i = i;
        CHECK(cv__btree_add(b, i, v, 4) == 0);
    }
    CHECK_INT(cv__btree_levels(b), 3);
    char err[8192];
    CHECK(cv__btree_put(path, &b, &root, 1, err, sizeof err) == 0);
    cv__btree_destroy(b);
    db = tgen_db_open(path);
    CHECK_STR(tgen_text(db, "PRAGMA integrity_check"), "ok");
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM t"), n);
    CHECK_INT(tgen_int(db, "SELECT sum(c0) FROM t"), n * (n + 1) / 2);
    CHECK_INT(tgen_int(db, "SELECT c0 FROM t WHERE id = 1234567"), 1234567);
    sqlite3_close(db);
    unlink(path);
}

static void test_tree(const char *dir)
{
    lock_page_case(dir);
    fixed_case(dir, 3160, 2);
    fixed_case(dir, 3170, 3);
    /* 512 bytes, 7 columns: about 11 rows a leaf and 33 children an interior page. */
    tree_case(dir, 512, 30000, 7, 0, 4);
    /* 16 KiB, 24 columns of 5 to 8 bytes: about 90 rows a leaf, 1,100 children (9-byte keys). */
    tree_case(dir, 16384, 130000, 24, 1, 3);
    tree_case(dir, 16384, 0, 3, 0, 1);
    tree_case(dir, 16384, 1, 3, 0, 1);
    tree_case(dir, 512, 15, 3, 0, 1);
    /* The row counts around the pages' ends: the last rows fill a leaf, or an interior page,
     * or start the next one. */
    for (size_t n = 16; n < 3000; n += 113)
        tree_case(dir, 512, n, 3, 0, 1);

    char path[2048];
    snprintf(path, sizeof path, "%s/refused.db", dir);
    cv__bt_value_t v[121] = {{CV__BT_NULL, 0, 0}};
    /* Out of order. */
    cv__btree_t *b = cv__btree_create(path, "t", 512, 0);
    CHECK(cv__btree_add(b, 10, v, 2) == 0);
    CHECK(cv__btree_add(b, 10, v, 2) == -1);
    CHECK_STR(cv__btree_error(b), "t: rowid 10 after 10: rows must come in increasing rowid order");
    cv__btree_destroy(b);
    /* The same through the encoder of integer rows. */
    int64_t iv[2] = {0, 5};
    b = cv__btree_create(path, "t", 512, 0);
    CHECK(cv__btree_add_ints(b, 10, iv, 2, 1) == 0);
    CHECK(cv__btree_add_ints(b, 9, iv, 2, 1) == -1);
    CHECK_STR(cv__btree_error(b), "t: rowid 9 after 10: rows must come in increasing rowid order");
    CHECK(cv__btree_add_ints(b, 11, iv, 2, 1) == -1);
    cv__btree_destroy(b);
    /* A record of 60 8-byte integers: 542 bytes, more than 512-byte pages hold in a cell. */
    b = cv__btree_create(path, "t", 512, 0);
    for (int i = 1; i <= 60; i++)
        v[i] = (cv__bt_value_t){CV__BT_INT, INT64_MIN, 0};
    CHECK(cv__btree_add(b, 1, v, 61) == -1);
    CHECK_STR(cv__btree_error(b), "t: row 1: a record of 542 bytes needs overflow pages (at most "
                                  "477 in a page of 512 bytes); not written");
    cv__btree_destroy(b);

    /* A file size limit of 64 KiB: the page file's write fails, the error names it. */
    pid_t child = fork();
    if (child == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit rl = {64 * 1024, 64 * 1024};
        setrlimit(RLIMIT_FSIZE, &rl);
        b = cv__btree_create(path, "t", 16384, 0);
        int rc = 0;
        v[1] = (cv__bt_value_t){CV__BT_INT, 1234567, 0};
        for (int64_t i = 1; i <= 100000 && rc == 0; i++)
            rc = cv__btree_add(b, i, v, 2);
        char want[4800];
        snprintf(want, sizeof want, "%s.t (a temporary file without a name in %s): offset 65536: "
                                    "writing the pages of t: File too large", path, dir);
        const char *why = cv__btree_error(b);
        printf("page file write error: %s\n", why ? why : "(none)");
        int ok = rc == -1 && why && strcmp(why, want) == 0;
        cv__btree_destroy(b);
        fflush(stdout);
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    CHECK(waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* ---- A conversion, both ways ---- */

#define PID 7200
#define TID_B 7201
#define ROUNDS 100000
#define BIG_ALIGN (1ull << 40)
#define STACKS_2 1200 /* recording 2's stack_stats rows are 2 to 1202 */

static void write_recording(const char *dir)
{
    char d[1024];
    tgen_stack_t st;
    tgen_capture(&st);
    snprintf(d, sizeof d, "%s/rip-%d", dir, PID);
    tgen_fresh_dir(d);
    tgen_process(d, PID, 1, 5000000000ull, 1, 100000000);
    rip_header_t ha = tgen_thread_header(PID, PID, 1, 5000000000ull);
    rip_header_t hb = tgen_thread_header(PID, TID_B, 2, 5000000000ull);
    ha.time_shift = hb.time_shift = 2;
    tgen_file_t a, b;
    tgen_open(&a, d, "t7200.rip", &ha);
    tgen_open(&b, d, "t7201.rip", &hb);
    tgen_modules(&a, 0);
    tgen_modules(&b, 0);
    rip_writer_stack(a.w, 1, st.ips, st.depth);
    rip_writer_stack(b.w, 1, st.ips, st.depth);
    /* A allocates; every third block is freed by B, the others by A; every 50th is an
     * aligned_alloc with an alignment too large for `how`; every 7th stays. */
    uint64_t t = 100;
    for (uint64_t i = 0; i < ROUNDS; i++, t += 40) {
        uint64_t addr = 0x555500000000ull + i * 48;
        if (i % 50 == 0)
            rip_writer_alloc(a.w, RIP_CALL_ALIGNED_ALLOC, t, addr, 32, 1, BIG_ALIGN, 0, 0);
        else
            rip_writer_alloc(a.w, RIP_CALL_MALLOC, t, addr, 16 + i % 200, 1, 0, 0, 0);
        if (i % 7 == 0)
            continue;
        if (i % 3 == 0)
            rip_writer_free(b.w, t + 20, addr);
        else
            rip_writer_free(a.w, t + 20, addr);
    }
    /* A size of 2^63 and more, stored as a REAL. */
    rip_writer_alloc(a.w, RIP_CALL_MALLOC, t, 0x666600000000ull, (1ull << 63) + 4096, 1, 0, 0, 0);
    tgen_close(&a);
    tgen_close(&b);

    /* Recording 2: single nanoseconds, odd addresses: the unscaled rows. */
    snprintf(d, sizeof d, "%s/rip-%d-2", dir, PID);
    tgen_fresh_dir(d);
    tgen_process(d, PID, 2, 9000000000ull, 1, 100000000);
    rip_header_t h2 = tgen_thread_header(PID, PID, 1, 9000000000ull);
    h2.recording = 2;
    tgen_open(&a, d, "t7200.rip", &h2);
    tgen_modules(&a, 0);
    rip_writer_stack(a.w, 1, st.ips, st.depth);
    for (uint64_t i = 0; i < 3000; i++) {
        rip_writer_alloc(a.w, RIP_CALL_MALLOC, 7 + i * 10, 0x777700000003ull + i * 40, 3, 1, 0,
                         0, 0);
        if (i % 2)
            rip_writer_free(a.w, 9 + i * 10, 0x777700000003ull + i * 40);
    }
    /* STACKS_2 more stacks of one made-up address each, two blocks a stack (one freed, of
     * sizes in two classes): the summary tables, laid into pages too, over several pages. */
    for (uint64_t j = 0; j < STACKS_2; j++) {
        uint64_t ip = 0x10000 + j * 64;
        rip_writer_stack(a.w, (uint32_t)(2 + j), &ip, 1);
        uint64_t t2 = 40000 + j * 100, addr = 0x888800000000ull + j * 64;
        rip_writer_alloc(a.w, RIP_CALL_MALLOC, t2, addr, 24, (uint32_t)(2 + j), 0, 0, 0);
        rip_writer_alloc(a.w, RIP_CALL_MALLOC, t2 + 10, addr + 32, 100 + j, (uint32_t)(2 + j), 0,
                         0, 0);
        rip_writer_free(a.w, t2 + 20, addr);
    }
    tgen_close(&a);
}

typedef struct {
    char last[8192];
} diag_t;

static void on_diag(void *user, const rheap_convert_diag_t *d)
{
    diag_t *g = user;
    snprintf(g->last, sizeof g->last, "%s", d->message);
}

static rheap_convert_status_t convert(const char *dir, const char *out, diag_t *g)
{
    char p1[2048], p2[2048];
    snprintf(p1, sizeof p1, "%s/rip-%d", dir, PID);
    snprintf(p2, sizeof p2, "%s/rip-%d-2", dir, PID);
    const char *inputs[] = {p1, p2};
    rheap_convert_opts_t o = RHEAP_CONVERT_OPTS_INIT;
    o.inputs = inputs;
    o.ninputs = 2;
    o.output = out;
    o.force = 1;
    o.diag = on_diag;
    o.user = g;
    rheap_convert_result_t res;
    return rheap_convert(&o, &res);
}

/* The rows of `table` in database a whose column types differ from those of the same rowid in
 * the attached database o (or that o lacks). */
static long long types_differ(sqlite3 *a, const char *table)
{
    char types[1024] = "", sql[2600];
    sqlite3_stmt *st;
    snprintf(sql, sizeof sql, "SELECT name FROM pragma_table_info('%s')", table);
    sqlite3_prepare_v2(a, sql, -1, &st, NULL);
    size_t n = 0;
    while (sqlite3_step(st) == SQLITE_ROW && n < sizeof types - 64)
        n += (size_t)snprintf(types + n, sizeof types - n, "%s typeof(%%1$s.%s)",
                              n ? " ||" : "", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    char x[1200], y[1200];
    snprintf(x, sizeof x, types, "x");
    snprintf(y, sizeof y, types, "y");
    return tgen_int(a, "SELECT count(*) FROM %s AS x LEFT JOIN o.%s AS y ON y.rowid = x.rowid "
                       "WHERE y.rowid IS NULL OR (%s) <> (%s)", table, table, x, y);
}

/* Every row of every table, in order (meta's time of conversion aside). */
static char *digest(sqlite3 *db)
{
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    sqlite3_stmt *tables;
    sqlite3_prepare_v2(db, "SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name", -1,
                       &tables, NULL);
    while (sqlite3_step(tables) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(tables, 0);
        char sql[512];
        snprintf(sql, sizeof sql,
                 "SELECT * FROM \"%s\" %s ORDER BY rowid", name,
                 strcmp(name, "meta") == 0 ? "WHERE key <> 'converted_at'" : "");
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
            /* WITHOUT ROWID tables: by all their columns. */
            snprintf(sql, sizeof sql, "SELECT * FROM \"%s\" ORDER BY 1, 2, 3", name);
            sqlite3_prepare_v2(db, sql, -1, &st, NULL);
        }
        fprintf(f, "== %s\n", name);
        tgen_print_rows(f, st);
        sqlite3_finalize(st);
    }
    sqlite3_finalize(tables);
    fclose(f);
    return out;
}

static off_t file_size(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? sb.st_size : -1;
}

/* The files of dir whose names start with prefix. */
static int count_files(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    if (d)
        closedir(d);
    return n;
}

/* A conversion under a file size limit of `limit` bytes, in a child: status 4, a message that
 * holds `want`, nothing named out.db* left. */
static void limited(const char *dir, const char *out, off_t limit, const char *want)
{
    fflush(stdout);
    pid_t child = fork();
    if (child == 0) {
        struct rlimit rl = {(rlim_t)limit, (rlim_t)limit};
        setrlimit(RLIMIT_FSIZE, &rl);
        diag_t g = {{0}};
        rheap_convert_status_t st = convert(dir, out, &g);
        printf("under a limit of %lld bytes: status %d: %s\n", (long long)limit, (int)st, g.last);
        int ok = st == RHEAP_CONVERT_E_OUTPUT && strstr(g.last, want) &&
                 strstr(g.last, "offset") && strstr(g.last, "File too large");
        fflush(stdout);
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    CHECK(waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK_INT(count_files(dir, "out.db"), 0);
}

static void test_convert(const char *dir)
{
    write_recording(dir);
    char mine[2048], theirs[2048];
    snprintf(mine, sizeof mine, "%s/out.db", dir);
    snprintf(theirs, sizeof theirs, "%s/sqlite.db", dir);
    diag_t g = {{0}};
    CHECK_INT(convert(dir, mine, &g), RHEAP_CONVERT_OK);
    cv__db_rows_by_sqlite(1);
    CHECK_INT(convert(dir, theirs, &g), RHEAP_CONVERT_OK);
    cv__db_rows_by_sqlite(0);

    sqlite3 *a = tgen_db_open(mine), *b = tgen_db_open(theirs);
    CHECK_STR(tgen_text(a, "PRAGMA integrity_check"), "ok");
    /* Every path was taken: rows over several leaves, frees by the other thread, alignments
     * apart, unscaled rows and a REAL size. */
    CHECK_INT(tgen_int(a, "SELECT count(*) FROM allocation_rows"), ROUNDS + 1 + 3000 + 2 * STACKS_2);
    CHECK_INT(tgen_int(a, "SELECT count(*) FROM allocation_frees"),
              tgen_int(b, "SELECT count(*) FROM allocations WHERE dealloc_thread = %d", TID_B));
    CHECK(tgen_int(a, "SELECT count(*) FROM allocation_frees") > 3000);
    CHECK_INT(tgen_int(a, "SELECT count(*) FROM allocation_extras"), ROUNDS / 50);
    CHECK_INT(tgen_int(a, "SELECT count(*) FROM allocation_rows WHERE how & 128"),
              3000 + 2 * STACKS_2);
    CHECK_STR(tgen_text(a, "SELECT typeof(size) || ' ' || size FROM allocations WHERE size > 1e18"),
              "real 9.22337203685478e+18");
    char *da = digest(a), *db = digest(b);
    if (strcmp(da, db) != 0) {
        fprintf(stderr, "FAIL: the databases differ (%zu and %zu bytes of rows)\n", strlen(da),
                strlen(db));
        check_failures++;
    }
    printf("convert: %zu bytes of rows equal; files of %lld and %lld bytes\n", strlen(da),
           (long long)file_size(mine), (long long)file_size(theirs));
    free(da);
    free(db);
    /* Types too, which the printed rows do not show. */
    char sql[2200];
    snprintf(sql, sizeof sql, "ATTACH '%s' AS o", theirs);
    exec(a, sql);
    CHECK_INT(tgen_int(a, "SELECT count(*) FROM allocation_rows AS x JOIN o.allocation_rows AS y "
                          "USING (id) WHERE typeof(x.t) <> typeof(y.t) OR typeof(x.life) <> "
                          "typeof(y.life) OR typeof(x.bt) <> typeof(y.bt) OR typeof(x.size) <> "
                          "typeof(y.size) OR typeof(x.addr) <> typeof(y.addr) OR typeof(x.how) <> "
                          "typeof(y.how)"),
              0);
    /* The summary tables laid into pages: every row, its rowid and its types as SQLite's inserts
     * made them (a REAL for the byte sums past 2^63), each over more than one page, and each
     * recording's range of stack_stats rowids right. */
    static const char *const summary[] = {"stack_stats", "stack_lifetimes", "stack_sizes",
                                          "stack_leaks"};
    for (size_t i = 0; i < sizeof summary / sizeof summary[0]; i++) {
        CHECK_INT(types_differ(a, summary[i]), 0);
        CHECK(tgen_int(a, "SELECT count(*) FROM dbstat WHERE name = '%s'", summary[i]) > 2);
    }
    CHECK_INT(tgen_int(a, "SELECT count(*) FROM stack_stats"), 2 + STACKS_2);
    CHECK_STR(tgen_text(a, "SELECT typeof(bytes) || ' ' || typeof(max_size) FROM stack_stats "
                           "WHERE rowid = 1"),
              "real real");
    CHECK_STR(tgen_text(a, "SELECT group_concat(first_row || '-' || last_row, ' ') FROM "
                           "(SELECT * FROM recording_rows ORDER BY recording)"),
              "1-1 2-1202");
    CHECK(file_size(mine) <= file_size(theirs));
    long long tree_pages = tgen_int(a, "SELECT count(*) FROM dbstat WHERE name IN "
                                       "('allocation_rows', 'allocation_frees', "
                                       "'allocation_extras')");
    long long rows_pages = tgen_int(a, "SELECT count(*) FROM dbstat WHERE name = "
                                       "'allocation_rows'");
    sqlite3_close(a);
    sqlite3_close(b);
    unlink(theirs);

    /* The limits: between the size of the rest of the file (SQLite's own part and the summary
     * tables put in before the end) and that of allocation_rows' pages, the limit stops the
     * page file of allocation_rows; one page short of the whole file stops the final append. */
    off_t total = file_size(mine);
    off_t rest = total - (off_t)tree_pages * 16384;
    unlink(mine);
    off_t rows = (off_t)rows_pages * 16384;
    CHECK(rest + 2 * 16384 < rows);
    limited(dir, mine, (rest + rows) / 2 / 16384 * 16384, "(a temporary file without a name in");
    limited(dir, mine, total - 16384, "appending the pages of");
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: convert_pages tree|convert DIR\n");
        return 2;
    }
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/pages-%s", argv[2], argv[1]);
    tgen_fresh_dir(dir);
    if (strcmp(argv[1], "tree") == 0)
        test_tree(dir);
    else
        test_convert(dir);
    return check_failures ? 1 : 0;
}
