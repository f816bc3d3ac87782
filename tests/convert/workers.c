/*
 * workers.c: a live conversion (rheap run's) converts two finished recordings at once, and
 * writes the database a conversion by one worker writes.
 *
 * The test writes NREC recordings of known content with the real rip writer: in each, thread A
 * allocates blocks over three stacks, reallocates some, frees a third and leaves the rest;
 * thread B frees another third of A's blocks (frees by another thread); a pool gets blocks and
 * is destroyed; a mapping is made and cut in the middle (two pieces); a marker. The first
 * recording has more rows than a worker keeps before it must write them. All the
 * recordings are handed out at once through next_input, as rheap run hands out the finished
 * processes of a tree, so both workers have work from the start: the result counts the
 * recordings whose conversion began while another's was under way (at least one, or the
 * second worker never ran). Then the same recordings, in the same order, are converted by one
 * worker (rheap convert's batch conversion), and the two databases must agree:
 *   - their content through canonical.sql (ids replaced by what they stand for);
 *   - row for row with ids counted from each recording's first: allocations (id, realloc_of),
 *     threads, pools and their blocks, map pieces, frees by another thread, and checkpoints
 *     (whose ranges and lists name row ids). A recording's rows are one range of ids, but the
 *     recordings enter the database in the order the workers finish them, not the order they
 *     were handed out;
 *   - and the exact counts and bytes of every recording.
 * Usage: convert_workers DIR CANONICAL_SQL
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rheap_convert.h"
#include "tgen.h"

#define NREC 30
#define PID0 7100

typedef struct {
    char dirs[NREC][4300];
    const char *in[NREC];
    int handed;
    uint64_t start;
    tgen_stack_t st[3];
} tree_t;

/* Recording k: thread A's blocks and what becomes of them. The first two have more rows than
 * a worker keeps in memory before its recording's end (65,536): as the other worker converts
 * too, the rows go to its overflow file (the result's turn_rows) and the recording takes the
 * turn at its end. */
static uint64_t nblocks(int k)
{
    return k <= 1 ? 70000 : 1000 + 60 * (uint64_t)k;
}

static uint64_t size_of(int k, uint64_t i)
{
    return 16 + (uint64_t)k + i % 13;
}

static uint64_t addr_of(uint64_t i)
{
    return 0x10000000ull + 64 * i;
}

/* A realloc of every 10th block, to a new address and 8 bytes more, before anything is freed. */
#define REALLOC_EVERY 10
#define REALLOC_ADDR(i) (0x40000000ull + 64 * (i))

static uint64_t final_addr(uint64_t i)
{
    return i % REALLOC_EVERY == 0 ? REALLOC_ADDR(i) : addr_of(i);
}

static uint64_t final_size(int k, uint64_t i)
{
    return size_of(k, i) + (i % REALLOC_EVERY == 0 ? 8 : 0);
}

static void write_recording(tree_t *t, int k)
{
    uint32_t pid = PID0 + (uint32_t)k;
    const char *dir = t->dirs[k];
    tgen_fresh_dir(dir);
    uint64_t n = nblocks(k), tt = 1000;
    tgen_file_t a, b;
    rip_header_t ha = tgen_thread_header(pid, pid, 1, t->start);
    rip_header_t hb = tgen_thread_header(pid, pid + 50000, 2, t->start);
    char na[64], nb[64];
    snprintf(na, sizeof na, "t%u.rip", pid);
    snprintf(nb, sizeof nb, "t%u.rip", pid + 50000);
    tgen_open(&a, dir, na, &ha);
    tgen_open(&b, dir, nb, &hb);
    tgen_modules(&a, 0);
    tgen_modules(&b, 0);
    for (int s = 0; s < 3; s++)
        rip_writer_stack(a.w, (uint64_t)s + 1, t->st[s].ips, t->st[s].depth);
    for (uint64_t i = 0; i < n; i++, tt += 10)
        rip_writer_alloc(a.w, RIP_CALL_MALLOC, tt, addr_of(i), size_of(k, i), 1 + i % 3, 0, 0,
                         0);
    for (uint64_t i = 0; i < n; i += REALLOC_EVERY, tt += 10)
        rip_writer_alloc(a.w, RIP_CALL_REALLOC, tt + 5, REALLOC_ADDR(i), size_of(k, i) + 8, 2, 0,
                         addr_of(i), tt);
    rip_writer_mark(a.w, tt, "middle");
    /* A frees blocks 0, 3, 6, ...; B frees 1, 4, 7, ...; 2, 5, 8, ... stay live. */
    for (uint64_t i = 0; i < n; i += 3, tt += 20) {
        rip_writer_free(a.w, tt, final_addr(i));
        if (i + 1 < n)
            rip_writer_free(b.w, tt + 10, final_addr(i + 1));
    }
    /* A pool of two blocks, destroyed; a mapping of 3 pages, its middle page unmapped. */
    rip_writer_pool(a.w, RIP_POOL_CREATE, tt, 9, 0, 0, 0, "arena");
    rip_writer_pool(a.w, RIP_POOL_ALLOC, tt + 1, 9, 0x70000000ull, 100, 3, NULL);
    rip_writer_pool(a.w, RIP_POOL_ALLOC, tt + 2, 9, 0x70000100ull, 200, 3, NULL);
    rip_writer_pool(a.w, RIP_POOL_DESTROY, tt + 3, 9, 0, 0, 0, NULL);
    rip_writer_map(a.w, RIP_MAP_MAP, tt + 4, 0x7f0000000000ull, 3 * 4096, 1, 0, 0);
    rip_writer_map(a.w, RIP_MAP_UNMAP, tt + 5, 0x7f0000001000ull, 4096, 0, 0, 0);
    tgen_close(&a);
    tgen_close(&b);
    tgen_process(dir, pid, 1, t->start, PID0 - 1, tt + 100);
}

/* Every recording at once, in order, as rheap run hands out the finished ones. */
static const char *next_input(void *user)
{
    tree_t *t = user;
    return t->handed < NREC ? t->dirs[t->handed++] : NULL;
}

static int growing(void *user, const char *dir, int wait)
{
    (void)user;
    (void)dir;
    (void)wait;
    return 0;
}

static void on_diag(void *user, const rheap_convert_diag_t *d)
{
    (void)user;
    fprintf(stderr, "%s\n", d->message);
}

static void same(const char *what, const char *x, const char *y)
{
    if (strcmp(x, y) == 0)
        return;
    tgen_first_difference(what, x, y);
    CHECK_FAIL("%s: the two-worker database differs from the one-worker one", what);
}

/* The tables that name ids, each id counted from the first of its recording's (rows, threads,
 * pools): what a conversion by two workers and one by one worker share. */
static const char *const with_ids =
    "CREATE TEMP TABLE f AS SELECT pid, recording, min(id) AS r FROM allocations GROUP BY 1, 2;"
    "CREATE TEMP TABLE ft AS SELECT pid, recording, min(id) AS t FROM threads GROUP BY 1, 2;"
    "CREATE TEMP TABLE fp AS SELECT pid, recording, min(id) AS p FROM pools GROUP BY 1, 2;"
    "CREATE TEMP TABLE rec (id INTEGER PRIMARY KEY, pid, recording, n);"
    "INSERT INTO rec SELECT a.id, f.pid, f.recording, a.id - f.r "
    "FROM allocations AS a JOIN f USING (pid, recording);"
    "SELECT a.pid, a.recording, a.id - f.r, alloc_after, dealloc_after, size, addr, alloc_thread, "
    "dealloc_thread, call, align, a.realloc_of - f.r FROM allocations AS a JOIN f USING (pid, "
    "recording) ORDER BY 1, 2, 3;"
    "SELECT pid, recording, id - t, tid, serial, events, addr_base FROM threads "
    "JOIN ft USING (pid, recording) ORDER BY 1, 2, 3;"
    "SELECT pid, recording, id - p, pool, t, name FROM pools JOIN fp USING (pid, recording) "
    "ORDER BY 1, 2, 3;"
    "SELECT r.pid, r.recording, r.n, b.pool - fp.p FROM pool_blocks AS b JOIN rec AS r "
    "ON r.id = b.id JOIN fp USING (pid, recording) ORDER BY 1, 2, 3;"
    "SELECT r.pid, r.recording, r.n, o.n FROM map_pieces AS m JOIN rec AS r ON r.id = m.id "
    "JOIN rec AS o ON o.id = m.of ORDER BY 1, 2, 3;"
    "SELECT r.pid, r.recording, r.n, t.tid FROM allocation_frees AS e JOIN rec AS r "
    "ON r.id = e.id JOIN threads AS t ON t.id = e.thread ORDER BY 1, 2, 3;";

/* The checkpoints, with their ranges and lists of row ids counted from the first of their
 * recording's (the lists are LEB128 deltas, the first from 0), as one string. */
static char *checkpoints(const char *db_path)
{
    sqlite3 *db = tgen_db_open(db_path);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db,
                           "SELECT c.pid, c.recording, ck, t, free_lo, free_hi, leak_lo, leak_hi, "
                           "blocks, bytes, later, f.r FROM checkpoints AS c JOIN (SELECT pid, "
                           "recording, min(id) AS r FROM allocations GROUP BY 1, 2) AS f "
                           "USING (pid, recording) ORDER BY 1, 2, 3",
                           -1, &st, NULL) != SQLITE_OK) {
        fprintf(stderr, "%s: %s\n", db_path, sqlite3_errmsg(db));
        exit(99);
    }
    char *out = NULL;
    size_t olen = 0;
    FILE *o = open_memstream(&out, &olen);
    while (sqlite3_step(st) == SQLITE_ROW) {
        int64_t first = sqlite3_column_int64(st, 11);
        fprintf(o, "%lld|%lld|%lld|%lld|", (long long)sqlite3_column_int64(st, 0),
                (long long)sqlite3_column_int64(st, 1), (long long)sqlite3_column_int64(st, 2),
                (long long)sqlite3_column_int64(st, 3));
        for (int k = 4; k < 8; k += 2) {
            int64_t lo = sqlite3_column_int64(st, k), hi = sqlite3_column_int64(st, k + 1);
            if (lo == hi)
                fprintf(o, "empty|");
            else
                fprintf(o, "%lld-%lld|", (long long)(lo - first), (long long)(hi - first));
        }
        fprintf(o, "%lld|%lld|", (long long)sqlite3_column_int64(st, 8),
                (long long)sqlite3_column_int64(st, 9));
        const unsigned char *p = sqlite3_column_blob(st, 10);
        int n = sqlite3_column_bytes(st, 10);
        uint64_t id = 0, d = 0;
        unsigned shift = 0;
        for (int i = 0; i < n; i++) {
            d |= (uint64_t)(p[i] & 127) << shift;
            shift += 7;
            if (!(p[i] & 128)) {
                id += d;
                fprintf(o, "%lld,", (long long)(id - (uint64_t)first));
                d = 0;
                shift = 0;
            }
        }
        fprintf(o, "\n");
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    fclose(o);
    return out;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s DIR CANONICAL_SQL\n", argv[0]);
        return 2;
    }
    static tree_t t;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    t.start = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec - 100000000000ull;
    for (int s = 0; s < 3; s++)
        tgen_capture_at(s + 1, &t.st[s]);
    char top[4200], two_db[4300], one_db[4300];
    snprintf(top, sizeof top, "%s/workers", argv[1]);
    tgen_fresh_dir(top);
    for (int k = 0; k < NREC; k++) {
        snprintf(t.dirs[k], sizeof t.dirs[k], "%s/rip-%d", top, PID0 + k);
        t.in[k] = t.dirs[k];
        write_recording(&t, k);
    }
    snprintf(two_db, sizeof two_db, "%s/two.db", top);
    snprintf(one_db, sizeof one_db, "%s/one.db", top);

    rheap_convert_opts_t o = RHEAP_CONVERT_OPTS_INIT;
    o.output = two_db;
    o.diag = on_diag;
    o.next_input = next_input;
    o.growing = growing;
    o.live_user = &t;
    rheap_convert_result_t r = {0};
    CHECK_INT(rheap_convert(&o, &r), RHEAP_CONVERT_OK);
    if (r.overlapped < 1)
        CHECK_FAIL("no recording was converted beside another (overlapped %" PRIu64 ")",
                   r.overlapped);
    fprintf(stderr, "workers: %" PRIu64 " of %d recordings began while another was converted, "
                    "%" PRIu64 " rows waited for their turn in a file\n",
            r.overlapped, NREC, r.turn_rows);

    rheap_convert_opts_t b = RHEAP_CONVERT_OPTS_INIT;
    b.inputs = t.in;
    b.ninputs = NREC;
    b.output = one_db;
    b.diag = on_diag;
    rheap_convert_result_t rb = {0};
    CHECK_INT(rheap_convert(&b, &rb), RHEAP_CONVERT_OK);
    CHECK_U(rb.overlapped, 0);
    CHECK_U(rb.turn_rows, 0); /* one worker: nobody else converts, its rows never wait */
    CHECK_U(r.events, rb.events);
    CHECK_U(r.allocations, rb.allocations);
    CHECK_U(r.never_freed, rb.never_freed);

    /* Exact figures per recording (recording_stats counts the heap's blocks, not mappings): A's
     * blocks, its reallocs' new blocks and two pool blocks; freed: the blocks reallocated (at
     * the realloc), two thirds of the rest and the pool's; left: the other third. The mapping
     * and its two pieces are rows of their own. */
    sqlite3 *db = tgen_db_open(two_db);
    for (int k = 0; k < NREC; k++) {
        uint64_t n = nblocks(k), allocs = 0, bytes = 0, freed = 0, left = 0, left_bytes = 0;
        for (uint64_t i = 0; i < n; i++) {
            allocs += 1 + (i % REALLOC_EVERY == 0);
            bytes += size_of(k, i) + (i % REALLOC_EVERY == 0 ? final_size(k, i) : 0);
            freed += i % REALLOC_EVERY == 0;
            if (i % 3 == 2) {
                left++;
                left_bytes += final_size(k, i);
            } else {
                freed++;
            }
        }
        allocs += 2;
        bytes += 300;
        freed += 2;
        char want[256], got[256];
        snprintf(want, sizeof want, "%" PRIu64 "|%" PRIu64 "|%" PRIu64 "|%" PRIu64 "|%" PRIu64,
                 allocs, bytes, freed, left, left_bytes);
        snprintf(got, sizeof got, "%s",
                 tgen_text(db, "SELECT allocs || '|' || alloc_bytes || '|' || frees || '|' || "
                               "leaked_blocks || '|' || leaked_bytes FROM recording_stats "
                               "WHERE pid = %d",
                           PID0 + k));
        CHECK_STR(got, want);
        CHECK_INT(tgen_int(db, "SELECT count(*) FROM allocations WHERE pid = %d AND "
                               "dealloc_thread = %d",
                           PID0 + k, PID0 + k + 50000),
                  (int64_t)(n / 3 + (n % 3 == 2)));
    }
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM pools"), NREC);
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM map_pieces"), 2 * NREC);
    CHECK_STR(tgen_text(db, "SELECT count(*) || '|' || sum(a.size) || '|' || "
                            "count(a.dealloc_after) FROM allocations AS a JOIN calls AS c "
                            "ON c.id = a.call WHERE c.name = 'mmap'"),
              "90|614400|30");
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM markers"), NREC);
    sqlite3_close(db);

    char *x = tgen_script_rows(two_db, argv[2]), *y = tgen_script_rows(one_db, argv[2]);
    same("canonical content", x, y);
    free(x);
    free(y);
    char ids_sql[4300];
    snprintf(ids_sql, sizeof ids_sql, "%s/ids.sql", top);
    FILE *f = fopen(ids_sql, "w");
    if (!f || fputs(with_ids, f) < 0 || fclose(f) != 0) {
        perror(ids_sql);
        return 99;
    }
    x = tgen_script_rows(two_db, ids_sql);
    y = tgen_script_rows(one_db, ids_sql);
    same("rows with their ids", x, y);
    free(x);
    free(y);
    x = checkpoints(two_db);
    y = checkpoints(one_db);
    same("checkpoints", x, y);
    free(x);
    free(y);
    fprintf(stderr, "workers: ok\n");
    return check_failures ? 1 : 0;
}
