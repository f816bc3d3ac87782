/*
 * rows.c: convert.rows, every column of every row of the view `allocations` against the
 * recording it came from, written here event by event. The database stores its rows compactly
 * (allocation_rows, schema.sql): times in 4 ns units and addresses in 16-byte units relative to
 * the thread's first one where that is exact, unscaled otherwise, thread, call, kind of free and
 * realloc_of or align packed into one integer. Recording 1 (two threads, 4 ns time units, 16-byte
 * aligned addresses) takes the scaled path: a realloc chain, calloc, posix_memalign, an
 * aligned_alloc whose alignment (2^40) is too large for the packed integer, a block allocated by
 * one thread and freed by the other both ways, a block whose free was not recorded (its address
 * handed out again), a block without a backtrace and never-freed blocks. Recording 2 of the same
 * pid (as after an exec) counts single nanoseconds and has addresses not 16 bytes apart: the
 * unscaled path.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tgen.h"

#define PID 6100
#define TID_B 6101
#define START1 5000000000ull
#define START2 9000000000ull
#define BIG_ALIGN (1ull << 40)

static tgen_stack_t st_one, st_two;

__attribute__((noinline)) static void site_one(void)
{
    tgen_capture(&st_one);
}

__attribute__((noinline)) static void site_two(void)
{
    tgen_capture(&st_two);
}

static void define(tgen_file_t *f, uint64_t id, const tgen_stack_t *st)
{
    rip_writer_stack(f->w, id, st->ips, st->depth);
}

static void write_recordings(const char *dir)
{
    char d[1024];
    tgen_file_t a, b;

    /* Recording 1: times in 4 ns units, as librheap writes them. */
    snprintf(d, sizeof d, "%s/rip-%d", dir, PID);
    tgen_fresh_dir(d);
    tgen_process(d, PID, 1, START1, 1, 1000);
    rip_header_t ha = tgen_thread_header(PID, PID, 1, START1);
    rip_header_t hb = tgen_thread_header(PID, TID_B, 2, START1);
    ha.time_shift = hb.time_shift = 2;
    tgen_open(&a, d, "t6100.rip", &ha);
    tgen_open(&b, d, "t6101.rip", &hb);
    tgen_modules(&a, 0);
    define(&a, 1, &st_one);
    define(&a, 2, &st_two);
    rip_writer_alloc(a.w, RIP_CALL_MALLOC, 100, 0x555500001000, 24, 1, 0, 0, 0);
    rip_writer_alloc(a.w, RIP_CALL_CALLOC, 104, 0x555500002000, 48, 1, 0, 0, 0);
    rip_writer_alloc(a.w, RIP_CALL_MALLOC, 108, 0x555500003000, 10, 1, 0, 0, 0);
    /* The realloc chain 0x3000 -> 0x4000 -> 0x5000, each old block released before. */
    rip_writer_alloc(a.w, RIP_CALL_REALLOC, 120, 0x555500004000, 20, 2, 0, 0x555500003000, 116);
    rip_writer_alloc(a.w, RIP_CALL_REALLOCARRAY, 140, 0x555500005000, 40, 2, 0, 0x555500004000, 136);
    rip_writer_alloc(a.w, RIP_CALL_POSIX_MEMALIGN, 152, 0x555500010000, 64, 2, 4096, 0, 0);
    rip_writer_alloc(a.w, RIP_CALL_ALIGNED_ALLOC, 160, 0x7f0000000000, 16, 2, BIG_ALIGN, 0, 0);
    rip_writer_alloc(a.w, RIP_CALL_MALLOC, 172, 0x555500006000, 8, 1, 0, 0, 0);
    rip_writer_alloc(a.w, RIP_CALL_MALLOC, 180, 0x555500007000, 5, 0, 0, 0, 0); /* no stack */
    rip_writer_free(a.w, 192, 0x555500007000);
    rip_writer_free(a.w, 200, 0x555500001000);
    rip_writer_free(a.w, 220, 0x7f1000000010); /* thread B's block */
    rip_writer_free(a.w, 400, 0x555500005000);
    rip_writer_free(a.w, 412, 0x7f0000000000);
    tgen_close(&a);
    tgen_modules(&b, 0);
    define(&b, 2, &st_two);
    rip_writer_alloc(b.w, RIP_CALL_MALLOC, 112, 0x7f1000000010, 32, 2, 0, 0, 0);
    rip_writer_free(b.w, 300, 0x555500002000); /* thread A's block */
    /* A's block at 0x6000 was freed unrecorded: the address comes back. */
    rip_writer_alloc(b.w, RIP_CALL_MALLOC, 500, 0x555500006000, 9, 2, 0, 0, 0);
    tgen_close(&b);

    /* Recording 2 of the same pid: single nanoseconds, addresses 3 bytes off 16. */
    snprintf(d, sizeof d, "%s/rip-%d-2", dir, PID);
    tgen_fresh_dir(d);
    tgen_process(d, PID, 2, START2, 1, 1000);
    rip_header_t h2 = tgen_thread_header(PID, PID, 1, START2);
    h2.recording = 2;
    tgen_open(&a, d, "t6100.rip", &h2);
    tgen_modules(&a, 0);
    define(&a, 1, &st_one);
    rip_writer_alloc(a.w, RIP_CALL_MALLOC, 7, 0x555500001003, 3, 1, 0, 0, 0);
    rip_writer_alloc(a.w, RIP_CALL_MEMALIGN, 9, 0x555500002010, 100, 1, 32, 0, 0);
    rip_writer_alloc(a.w, RIP_CALL_REALLOC, 11, 0x555500003000, 7, 1, 0, 0, 0); /* from NULL */
    rip_writer_free(a.w, 13, 0x555500001003);
    rip_writer_free(a.w, 21, 0x555500003000);
    tgen_close(&a);
}

/* One row as the view gives it, the stack as its frame 0's function. */
#define ROW_SQL                                                                                   \
    "SELECT a.id || '|' || a.alloc_after || '|' || coalesce(a.dealloc_after, '-') || '|' || "     \
    "coalesce((SELECT sym FROM backtraces WHERE id = a.bt AND frame_no = 0), '-') || '|' || "     \
    "a.size || '|' || printf('%%x', a.addr) || '|' || a.alloc_thread || '|' || "                  \
    "coalesce(a.dealloc_thread, '-') || '|' || a.pid || '|' || a.call || '|' || "                 \
    "coalesce(a.align, '-') || '|' || coalesce(a.realloc_of, '-') || '|' || a.recording "         \
    "FROM allocations AS a WHERE a.id = %d"

/* The ground truth: rows are numbered in the order blocks were freed (the release by a realloc
 * included), then each recording's never-freed blocks in allocation order.
 * id|alloc_after|dealloc_after|site|size|addr|alloc_thread|dealloc_thread|pid|call|align|
 * realloc_of|recording */
static const char *const want[] = {
    "1|108|116|site_one|10|555500003000|6100|6100|6100|1|-|-|1",
    "2|120|136|site_two|20|555500004000|6100|6100|6100|3|-|1|1",
    "3|180|192|-|5|555500007000|6100|6100|6100|1|-|-|1",
    "4|100|200|site_one|24|555500001000|6100|6100|6100|1|-|-|1",
    "5|112|220|site_two|32|7f1000000010|6101|6100|6100|1|-|-|1",
    "6|104|300|site_one|48|555500002000|6100|6101|6100|2|-|-|1",
    "7|140|400|site_two|40|555500005000|6100|6100|6100|4|-|2|1",
    "8|160|412|site_two|16|7f0000000000|6100|6100|6100|6|1099511627776|-|1",
    "9|172|500|site_one|8|555500006000|6100|-|6100|1|-|-|1",
    "10|152|-|site_two|64|555500010000|6100|-|6100|5|4096|-|1",
    "11|500|-|site_two|9|555500006000|6101|-|6100|1|-|-|1",
    "12|7|13|site_one|3|555500001003|6100|6100|6100|1|-|-|2",
    "13|11|21|site_one|7|555500003000|6100|6100|6100|3|-|-|2",
    "14|9|-|site_one|100|555500002010|6100|-|6100|7|32|-|2",
};
#define NWANT (int)(sizeof want / sizeof want[0])

static void check(sqlite3 *db)
{
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM allocations"), NWANT);
    for (int i = 0; i < NWANT; i++)
        CHECK_STR(tgen_text(db, ROW_SQL, i + 1), want[i]);
    /* Every value is an integer, as the columns were when they were stored as such. */
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM allocations WHERE typeof(id) <> 'integer' OR "
                           "typeof(alloc_after) <> 'integer' OR typeof(bt) NOT IN ('integer', 'null') OR "
                           "typeof(dealloc_after) NOT IN ('integer', 'null') OR typeof(size) <> 'integer' OR "
                           "typeof(addr) <> 'integer' OR typeof(alloc_thread) <> 'integer' OR "
                           "typeof(dealloc_thread) NOT IN ('integer', 'null') OR typeof(pid) <> 'integer' OR "
                           "typeof(call) <> 'integer' OR typeof(align) NOT IN ('integer', 'null') OR "
                           "typeof(realloc_of) NOT IN ('integer', 'null') OR typeof(recording) <> 'integer'"),
              0);
    /* The views over allocations see the same rows. */
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM reallocs"), 2);
    CHECK_INT(tgen_int(db, "SELECT old_id FROM reallocs WHERE id = 7"), 2);
    CHECK_INT(tgen_int(db, "SELECT old_size FROM reallocs WHERE id = 7"), 20);
    CHECK_INT(tgen_int(db, "SELECT thread FROM reallocs WHERE id = 2"), PID);
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM allocation_sites WHERE sym = 'site_two'"), 6);
    CHECK_INT(tgen_int(db, "SELECT sum(blocks) FROM leaks WHERE recording = 1"), 2);
    /* A filter on the view's columns finds what a filter on the old table found. */
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM allocations WHERE pid = %d AND recording = 2", PID), 3);
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM allocations WHERE dealloc_thread <> alloc_thread"), 2);
    CHECK_INT(tgen_int(db, "SELECT id FROM allocations WHERE addr = 0x7f1000000010"), 5);
    /* Both ways of storing a row were taken: the first recording's rows scaled, the second's
     * not; the side tables hold the two frees by another thread and the large alignment. */
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM allocation_rows WHERE how & 128"), 3);
    CHECK_STR(tgen_text(db, "SELECT group_concat(id) FROM (SELECT id FROM allocation_frees ORDER BY id)"), "5,6");
    CHECK_INT(tgen_int(db, "SELECT id FROM allocation_extras WHERE extra = %llu",
                       (unsigned long long)BIG_ALIGN), 8);
    /* The commonest row, a malloc by the first thread freed by itself, packs into 0. */
    CHECK_INT(tgen_int(db, "SELECT how FROM allocation_rows WHERE id = 4"), 0);
    /* Threads: each thread file one row, with the id the rows refer to. */
    CHECK_INT(tgen_int(db, "SELECT count(DISTINCT id) FROM threads"), 3);
    CHECK_INT(tgen_int(db, "SELECT tid FROM threads WHERE id = (SELECT (how >> 8) & 4194303 "
                           "FROM allocation_rows WHERE id = 11)"), TID_B);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s RHEAP DIR\n", argv[0]);
        return 2;
    }
    const char *rheap = argv[1], *dir = argv[2];
    site_one();
    site_two();
    char sub[1024], p1[1100], p2[1100], dbpath[1100];
    snprintf(sub, sizeof sub, "%s/rows", dir);
    tgen_fresh_dir(sub);
    write_recordings(sub);
    snprintf(p1, sizeof p1, "%s/rip-%d", sub, PID);
    snprintf(p2, sizeof p2, "%s/rip-%d-2", sub, PID);
    snprintf(dbpath, sizeof dbpath, "%s/out.db", sub);
    char *cargv[] = {(char *)rheap, "convert", "--no-progress", p1, p2, "-o", dbpath, NULL};
    char err[8192];
    int rc = tgen_run(cargv, err, sizeof err);
    if (rc != 0) {
        fprintf(stderr, "rheap convert exited %d:\n%s", rc, err);
        return 1;
    }
    sqlite3 *db = tgen_db_open(dbpath);
    check(db);
    sqlite3_close(db);
    return check_failures ? 1 : 0;
}
