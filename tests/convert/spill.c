/*
 * spill.c: conversions under a memory budget far below the live heap (64 KiB: the store keeps
 * its floor of 4,096 blocks and sends the rest to disk) give the database a conversion without
 * a budget gives.
 *
 * convert: a two-thread recording written here holds 60,000 blocks; then its old blocks are
 * freed by their own thread and by the other, reallocated elsewhere and in place, and their
 * addresses handed out again without a recorded free, while young blocks come and go. Converted
 * with --memory none, --memory 64K and RHEAP_CONVERT_MEMORY=64K: every table the same (each
 * row of each table, in rowid order, but the conversion's time), exact counts, the spill said,
 * and no file left beside the database. A recording that turns out bad after the spill began:
 * status 2, nothing left either.
 *
 * run: this program as `rheap run --memory 64K --keep`'s program (holds 40,000 blocks, frees the
 * older half and reallocates a tenth of the rest), converted live, against `rheap convert --memory none` of the kept
 * recording through canonical.sql.
 *
 * Usage: convert_spill convert RHEAP DIR
 *        convert_spill run RHEAP DIR CANONICAL_SQL
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tgen.h"

#define PID 7000
#define TID_B 7001
#define N 30000
#define HELD_A 0x500000000000ull
#define HELD_B 0x510000000000ull
#define MOVED 0x520000000000ull
#define YOUNG 0x530000000000ull

static tgen_stack_t st_held, st_churn;

__attribute__((noinline)) static void site_held(void)
{
    tgen_capture(&st_held);
}

__attribute__((noinline)) static void site_churn(void)
{
    tgen_capture(&st_churn);
}

/* The recording: phase 1 holds A[i] and B[i] (sizes 16-115), phase 2 goes over i by i % 10:
 * 0-2 A frees A[i], 3-4 B frees A[i], 5 B moves B[i] by realloc, 6 A allocates at B[i]'s
 * address (its free unrecorded), 7 A reallocs A[i] in place; B frees B[i] at 0-1; and A
 * allocates and frees a young block at each step. With `undefined`, A's last allocation names a
 * stack its file never defined (bad input, found after the spill began). */
static void write_recording(const char *dir, int undefined)
{
    tgen_fresh_dir(dir);
    uint64_t t = 4, end = (uint64_t)N * 20 * 4 + 64;
    tgen_process(dir, PID, 1, 1, 1, end);
    rip_header_t ha = tgen_thread_header(PID, PID, 1, 1), hb = tgen_thread_header(PID, TID_B, 2, 1);
    tgen_file_t a, b;
    tgen_open(&a, dir, "t7000.rip", &ha);
    tgen_open(&b, dir, "t7001.rip", &hb);
    tgen_modules(&a, 0);
    tgen_modules(&b, 0);
    rip_writer_stack(a.w, 1, st_held.ips, st_held.depth);
    rip_writer_stack(a.w, 2, st_churn.ips, st_churn.depth);
    rip_writer_stack(b.w, 1, st_held.ips, st_held.depth);
    rip_writer_stack(b.w, 2, st_churn.ips, st_churn.depth);
    for (uint64_t i = 0; i < N; i++) {
        rip_writer_alloc(a.w, RIP_CALL_MALLOC, t += 4, HELD_A + i * 64, 16 + i % 100, 1, 0, 0, 0);
        rip_writer_alloc(b.w, RIP_CALL_MALLOC, t += 4, HELD_B + i * 64, 16 + i % 100, 1, 0, 0, 0);
    }
    for (uint64_t i = 0; i < N; i++) {
        uint64_t a_i = HELD_A + i * 64, b_i = HELD_B + i * 64;
        switch (i % 10) {
        case 0: case 1: case 2: rip_writer_free(a.w, t += 4, a_i); break;
        case 3: case 4: rip_writer_free(b.w, t += 4, a_i); break;
        case 5:
            rip_writer_alloc(b.w, RIP_CALL_REALLOC, t + 8, MOVED + i * 64, 200, 2, 0, b_i, t + 4);
            t += 8;
            break;
        case 6: rip_writer_alloc(a.w, RIP_CALL_MALLOC, t += 4, b_i, 40, 2, 0, 0, 0); break;
        case 7:
            rip_writer_alloc(a.w, RIP_CALL_REALLOC, t + 8, a_i, 300, 2, 0, a_i, t + 4);
            t += 8;
            break;
        }
        if (i % 10 < 2)
            rip_writer_free(b.w, t += 4, b_i);
        uint64_t young = YOUNG + (i % 16) * 64;
        rip_writer_alloc(a.w, RIP_CALL_MALLOC, t += 4, young, 24, 2, 0, 0, 0);
        rip_writer_free(a.w, t += 4, young);
    }
    if (undefined)
        rip_writer_alloc(a.w, RIP_CALL_MALLOC, t += 4, YOUNG, 8, 99, 0, 0, 0);
    tgen_close(&a);
    tgen_close(&b);
}

/* The names in dir other than those given (NULL-terminated), counted. */
static int strangers(const char *dir, const char *const *known)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        int ok = e->d_name[0] == '.';
        for (const char *const *k = known; *k && !ok; k++)
            ok = !strcmp(e->d_name, *k);
        if (!ok) {
            fprintf(stderr, "left in %s: %s\n", dir, e->d_name);
            n++;
        }
    }
    if (d)
        closedir(d);
    return n;
}

static int convert(const char *rheap, const char *rip, const char *out, const char *memory,
                   char *err, size_t errlen)
{
    char *argv[] = {(char *)rheap, "convert", "--no-progress", "-f", (char *)rip, "-o",
                    (char *)out, memory ? "--memory" : NULL, (char *)memory, NULL};
    return tgen_run(argv, err, errlen);
}

static void test_convert(const char *rheap, const char *tmp)
{
    char dir[1024], rip[1100], bad[1100], ref[1100], small[1100], env[1100];
    snprintf(dir, sizeof dir, "%s/spill", tmp);
    tgen_fresh_dir(dir);
    snprintf(rip, sizeof rip, "%s/rip-%d", dir, PID);
    snprintf(bad, sizeof bad, "%s/bad/rip-%d", dir, PID);
    snprintf(ref, sizeof ref, "%s/ref.db", dir);
    snprintf(small, sizeof small, "%s/small.db", dir);
    snprintf(env, sizeof env, "%s/env.db", dir);
    write_recording(rip, 0);
    static char err[65536];
    CHECK_INT(convert(rheap, rip, ref, "none", err, sizeof err), 0);
    CHECK(strstr(err, "went to disk") == NULL);
    CHECK_INT(convert(rheap, rip, small, "64K", err, sizeof err), 0);
    fprintf(stderr, "%s", err);
    /* The spill said: about all but the floor of 4,096 blocks, some of them twice. */
    const char *said = strstr(err, "the memory budget held: ");
    CHECK(said != NULL);
    if (said)
        CHECK(strtoull(said + strlen("the memory budget held: "), NULL, 10) > 50000);
    setenv("RHEAP_CONVERT_MEMORY", "64K", 1);
    CHECK_INT(convert(rheap, rip, env, NULL, err, sizeof err), 0);
    CHECK(strstr(err, "went to disk") != NULL);
    setenv("RHEAP_CONVERT_MEMORY", "lots", 1);
    CHECK_INT(convert(rheap, rip, env, NULL, err, sizeof err), 1);
    CHECK(strstr(err, "RHEAP_CONVERT_MEMORY=lots: expected a size") != NULL);
    unsetenv("RHEAP_CONVERT_MEMORY");
    CHECK_INT(convert(rheap, rip, env, "64 K", err, sizeof err), 1);
    CHECK(strstr(err, "--memory: expected a size such as 512M, 4G or none, got '64 K'") != NULL);

    char *x = tgen_dump_tables(ref), *y = tgen_dump_tables(small), *z = tgen_dump_tables(env);
    if (strcmp(x, y))
        tgen_first_difference("--memory 64K", x, y);
    if (strcmp(x, z))
        tgen_first_difference("RHEAP_CONVERT_MEMORY=64K", x, z);
    CHECK(strcmp(x, y) == 0);
    CHECK(strcmp(x, z) == 0);
    free(x);
    free(y);
    free(z);

    /* The counts the recording was written to give (write_recording). */
    sqlite3 *db = tgen_db_open(small);
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM allocations"), 2 * N + 3 * N / 10 + N);
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM allocations WHERE dealloc_after IS NULL"),
              13 * N / 10);
    CHECK_INT(tgen_int(db, "SELECT value FROM meta WHERE key = 'reused_live'"), N / 10);
    CHECK_INT(tgen_int(db, "SELECT value FROM meta WHERE key = 'unmatched_frees'"), 0);
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM allocations WHERE dealloc_thread <> alloc_thread"),
              2 * N / 10);
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM allocations WHERE realloc_of IS NOT NULL"),
              2 * N / 10);
    /* A realloc's old row is the held block it replaced, found on disk. */
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM allocations AS a JOIN allocations AS o ON "
                           "o.id = a.realloc_of WHERE o.addr >= %llu AND o.addr < %llu AND "
                           "o.dealloc_after IS NOT NULL", (unsigned long long)HELD_A,
                       (unsigned long long)MOVED),
              2 * N / 10);
    /* Bytes never freed: A[i] at 5, 6, 8, 9; B[i] but at 0, 1, 5, 6; 300 per in-place realloc,
     * 200 per moved one, 40 per reused address. */
    int64_t held = 0;
    for (int i = 0; i < N; i++) {
        int r = i % 10;
        held += (r == 5 || r == 6 || r == 8 || r == 9) ? 16 + i % 100 : 0;
        held += (r >= 2 && r != 5 && r != 6) ? 16 + i % 100 : 0;
    }
    held += (int64_t)N / 10 * (300 + 200 + 40);
    CHECK_INT(tgen_int(db, "SELECT sum(size) FROM allocations WHERE dealloc_after IS NULL"), held);
    CHECK_INT(tgen_int(db, "SELECT leaked_bytes FROM recording_stats"), held);
    sqlite3_close(db);
    const char *known[] = {"rip-7000", "ref.db", "small.db", "env.db", "bad", NULL};
    CHECK_INT(strangers(dir, known), 0);

    /* Bad input found after the spill began: status 2, no database, no file of any kind. */
    char baddir[1100], badout[1200];
    snprintf(baddir, sizeof baddir, "%s/bad", dir);
    tgen_fresh_dir(baddir);
    write_recording(bad, 1);
    snprintf(badout, sizeof badout, "%s/out.db", baddir);
    CHECK_INT(convert(rheap, bad, badout, "64K", err, sizeof err), 2);
    CHECK(strstr(err, "allocation names undefined stack id 99") != NULL);
    const char *known_bad[] = {"rip-7000", NULL};
    CHECK_INT(strangers(baddir, known_bad), 0);
}

/* The program `rheap run` records: 40,000 blocks held, then the oldest half freed in order,
 * every tenth of the rest reallocated, a young block at each step. */
static int program(void)
{
    enum { HELD = 40000 };
    static void *keep[HELD];
    for (int i = 0; i < HELD; i++)
        keep[i] = malloc(16 + (size_t)i % 100);
    for (int i = 0; i < HELD / 2; i++) {
        free(keep[i]);
        keep[i] = NULL;
        void *volatile young = malloc(777);
        free(young);
    }
    for (int i = HELD / 2; i < HELD; i += 10)
        keep[i] = realloc(keep[i], 555);
    printf("held %d\n", HELD / 2);
    return 0;
}

static void test_run(const char *rheap, const char *tmp, const char *canonical_sql)
{
    char dir[1024], live[1100], ref[1100], self[1024], recs[1100];
    snprintf(dir, sizeof dir, "%s/spill-run", tmp);
    tgen_fresh_dir(dir);
    snprintf(live, sizeof live, "%s/live.db", dir);
    snprintf(ref, sizeof ref, "%s/ref.db", dir);
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    CHECK(n > 0);
    self[n > 0 ? n : 0] = 0;
    static char err[65536];
    char *argv[] = {(char *)rheap, "run", "--memory", "64K", "--keep", "--dir", dir, "-o", live,
                    "--", self, "program", NULL};
    CHECK_INT(tgen_run(argv, err, sizeof err), 0);
    fprintf(stderr, "%s", err);
    CHECK(strstr(err, "went to disk") != NULL);
    /* The kept recording, where run said it is. */
    const char *kept = strstr(err, "rheap-run-");
    CHECK(kept != NULL);
    if (!kept)
        return;
    size_t k = strcspn(kept, " /\n:'\"");
    snprintf(recs, sizeof recs, "%s/%.*s", dir, (int)k, kept);
    DIR *d = opendir(recs);
    char rip[1400] = "";
    for (struct dirent *e; d && (e = readdir(d));)
        if (!strncmp(e->d_name, "rip-", 4))
            snprintf(rip, sizeof rip, "%s/%s", recs, e->d_name);
    if (d)
        closedir(d);
    CHECK(rip[0] != 0);
    CHECK_INT(convert(rheap, rip, ref, "none", err, sizeof err), 0);

    /* canonical.sql's rows of each database. */
    char *text[2] = {tgen_script_rows(live, canonical_sql), tgen_script_rows(ref, canonical_sql)};
    if (strcmp(text[0], text[1]))
        tgen_first_difference("rheap run --memory 64K", text[0], text[1]);
    CHECK(strcmp(text[0], text[1]) == 0);
    free(text[0]);
    free(text[1]);
    sqlite3 *db = tgen_db_open(live);
    /* The program's own blocks (the loader's and libc's come beside them, freed or not). */
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM allocations WHERE size = 555 AND realloc_of IS "
                           "NOT NULL AND dealloc_after IS NULL"),
              2000);
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM allocations WHERE size = 777 AND "
                           "dealloc_after IS NOT NULL"),
              20000);
    /* The realloc'd blocks' old rows: held blocks of the second half, freed by the realloc. */
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM allocations AS a JOIN allocations AS o ON "
                           "o.id = a.realloc_of WHERE a.size = 555 AND o.dealloc_after IS NOT "
                           "NULL AND o.size BETWEEN 16 AND 115"),
              2000);
    sqlite3_close(db);
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "program"))
        return program();
    site_held();
    site_churn();
    if (argc == 4 && !strcmp(argv[1], "convert"))
        test_convert(argv[2], argv[3]);
    else if (argc == 5 && !strcmp(argv[1], "run"))
        test_run(argv[2], argv[3], argv[4]);
    else {
        fprintf(stderr, "usage: %s convert RHEAP DIR | run RHEAP DIR CANONICAL_SQL\n", argv[0]);
        return 2;
    }
    return check_failures ? 1 : 0;
}
