/*
 * early.c: the converter's summary callback (what `rheap run` prints its summary from) sees
 * every table but `allocations` complete. A recording of 200,000 allocations over 50 stacks
 * is converted through the library with a callback that takes a digest of each table; the
 * digests of the finished database must be the same, and the callback's count of allocation
 * rows no more than the final one. 400 more stacks of 48 made-up addresses each give the
 * backtraces table over 19,000 rows: the converter hands them to its writer thread 8192 at a
 * time, and those sets too must be in the database when the callback runs.
 * Usage: convert_early DIR
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rheap_convert.h"
#include "tgen.h"

#define PID 4242
#define START 1000000
#define STACKS 50
#define ROUNDS 4000
#define MADE_UP 400 /* stacks of MADE_UP_DEPTH addresses in no module */
#define MADE_UP_DEPTH 48

static const char *const tables[] = {
    "stacks", "backtraces", "stack_stats", "stack_lifetimes", "stack_sizes", "stack_leaks",
    "thread_stats", "timeline", "recording_stats", "marker_stacks", "processes", "threads",
    "modules", "markers", "windows",
};
#define NTABLES (sizeof tables / sizeof tables[0])

typedef struct {
    char *digest[NTABLES];
    long long rows;
    int called;
} seen_t;

/* Every row of the table, in a fixed order, as one string. */
static char *digest(sqlite3 *db, const char *table)
{
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT * FROM %s ORDER BY 1, 2, 3, 4", table);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        fprintf(stderr, "%s: %s\n", sql, sqlite3_errmsg(db));
        exit(1);
    }
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    tgen_print_rows(f, st);
    sqlite3_finalize(st);
    fclose(f);
    return out;
}

static void on_summary(void *user, struct sqlite3 *db)
{
    seen_t *s = user;
    s->called++;
    for (size_t i = 0; i < NTABLES; i++)
        s->digest[i] = digest(db, tables[i]);
    sqlite3_stmt *st;
    sqlite3_prepare_v2(db, "SELECT count(*) FROM allocations", -1, &st, NULL);
    sqlite3_step(st);
    s->rows = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
}

static void on_diag(void *user, const rheap_convert_diag_t *d)
{
    (void)user;
    fprintf(stderr, "%s\n", d->message);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: convert_early DIR\n");
        return 2;
    }
    char rec[4096], out[4200];
    snprintf(rec, sizeof rec, "%s/early/rip-%d", argv[1], PID);
    snprintf(out, sizeof out, "%s/early/early.db", argv[1]);
    char top[4096];
    snprintf(top, sizeof top, "%s/early", argv[1]);
    tgen_fresh_dir(top);
    tgen_fresh_dir(rec);

    tgen_process(rec, PID, 1, START, 1, 100000000);
    rip_header_t h = tgen_thread_header(PID, PID, 1, START);
    tgen_file_t f;
    tgen_open(&f, rec, "t4242.rip", &h);
    tgen_modules(&f, 0);
    static tgen_stack_t st[STACKS];
    for (int k = 0; k < STACKS; k++) {
        tgen_capture_at(k + 1, &st[k]);
        rip_writer_stack(f.w, (uint64_t)k + 1, st[k].ips, st[k].depth);
    }
    /* Each round allocates a block per stack and frees the previous round's, except every
     * 7th stack's, which stay: 4000 rounds of leaks and churn, with a marker half way. */
    uint64_t t = 10;
    for (uint64_t r = 0; r < ROUNDS; r++) {
        for (uint64_t k = 0; k < STACKS; k++) {
            uint64_t addr = 0x100000 + (r * STACKS + k) * 64;
            rip_writer_alloc(f.w, RIP_CALL_MALLOC, t++, addr, 16 + k, k + 1, 0, 0, 0);
            if (r > 0 && k % 7 != 0)
                rip_writer_free(f.w, t++, addr - STACKS * 64);
        }
        if (r == ROUNDS / 2)
            rip_writer_mark(f.w, t++, "half way");
    }
    /* Each made-up stack allocates one block, freed at once. */
    for (uint64_t k = 0; k < MADE_UP; k++) {
        uint64_t ips[MADE_UP_DEPTH];
        for (uint64_t i = 0; i < MADE_UP_DEPTH; i++)
            ips[i] = 0x7a0000000000ull + k * 0x10000 + i * 16;
        rip_writer_stack(f.w, STACKS + k + 1, ips, MADE_UP_DEPTH);
        rip_writer_alloc(f.w, RIP_CALL_MALLOC, t++, 0x900000, 32, STACKS + k + 1, 0, 0, 0);
        rip_writer_free(f.w, t++, 0x900000);
    }
    tgen_close(&f);

    seen_t seen = {0};
    const char *inputs[] = {rec};
    rheap_convert_opts_t o = RHEAP_CONVERT_OPTS_INIT;
    o.inputs = inputs;
    o.ninputs = 1;
    o.output = out;
    o.diag = on_diag;
    o.summary = on_summary;
    o.user = &seen;
    rheap_convert_result_t res;
    CHECK_INT(rheap_convert(&o, &res), RHEAP_CONVERT_OK);
    CHECK_INT(seen.called, 1);
    CHECK_INT(res.allocations, (long long)ROUNDS * STACKS + MADE_UP);

    sqlite3 *db = tgen_db_open(out);
    for (size_t i = 0; i < NTABLES; i++) {
        char *now = digest(db, tables[i]);
        if (strcmp(now, seen.digest[i]) != 0) {
            fprintf(stderr, "FAIL: table %s differs between the summary callback (%zu bytes) and "
                            "the finished database (%zu bytes)\n",
                    tables[i], strlen(seen.digest[i]), strlen(now));
            return 1;
        }
        free(now);
        free(seen.digest[i]);
    }
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM stacks"), STACKS + MADE_UP);
    /* The made-up stacks come after the captured ones, with ids from STACKS + 1. */
    char sql[128];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM backtraces WHERE id > %d", STACKS);
    CHECK_INT(tgen_int(db, sql), (long long)MADE_UP * MADE_UP_DEPTH);
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM markers"), 1);
    /* Every 7th stack leaks one block per round, the others their last round's block. */
    CHECK_INT(tgen_int(db, "SELECT sum(leaked_blocks) FROM stack_stats"),
              (STACKS + 6) / 7 * ROUNDS + (STACKS - (STACKS + 6) / 7));
    long long final = tgen_int(db, "SELECT count(*) FROM allocations");
    CHECK_INT(final, (long long)ROUNDS * STACKS + MADE_UP);
    if (seen.rows > final) {
        fprintf(stderr, "FAIL: %lld rows at the callback, %lld at the end\n", seen.rows, final);
        return 1;
    }
    printf("early: %lld of %lld allocation rows were written when the summary was ready\n",
           seen.rows, final);
    sqlite3_close(db);
    return check_failures ? 1 : 0;
}
