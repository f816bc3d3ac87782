/*
 * live.c: converting a recording while it is being written (rheap_convert's live inputs, what
 * `rheap run` does while the program runs).
 *
 * The test writes a recording of four threads in steps with the real rip writer, and the
 * converter's `growing` callback takes the next step each time the converter can go no
 * further. Thread A runs ahead while B has written nothing new, B frees some of A's blocks and
 * A some of B's, thread C's file appears late: first empty, then with its events, and thread
 * D, whose file has a staging area as librheap's do, allocates three blocks at the start and
 * stays idle until the end without writing a block. Two cases:
 *   - "late": C's events come after everything written before it. The converter merges most
 *     events while the recording grows (live_events), and the database is the one a
 *     conversion of the finished recording writes.
 *   - "early": C's first event is older than events the converter has already merged. It
 *     must start over once the recording is finished, and give that same database.
 * The databases are compared through canonical.sql (ids replaced by what they stand for). A
 * third case, "full", fills the writer's queue (run_full).
 * Usage: convert_live DIR CANONICAL_SQL
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "converter.h"
#include "rheap_convert.h"
#include "tgen.h"

#define PID 5151

typedef struct {
    char dir[4096];
    int late;              /* C's events after the others' (else before some merged ones) */
    int step;
    uint64_t start;
    tgen_file_t a, b, c, d;
    tgen_stack_t st[3];
    uint64_t allocs, frees;
    int handed;
} scenario_t;

static uint64_t addr_of(int thread, uint64_t i)
{
    return 0x100000ull * (uint64_t)(thread + 1) + 64 * i;
}

static void allocs(scenario_t *s, tgen_file_t *f, int thread, uint64_t first, uint64_t n,
                   uint64_t t0, uint64_t stack)
{
    for (uint64_t i = 0; i < n; i++) {
        rip_writer_alloc(f->w, RIP_CALL_MALLOC, t0 + 10 * i, addr_of(thread, first + i),
                         16 + i % 7, stack, 0, 0, 0);
        s->allocs++;
    }
}

static void frees(scenario_t *s, tgen_file_t *f, int thread, uint64_t first, uint64_t n,
                  uint64_t step, uint64_t t0)
{
    for (uint64_t i = 0; i < n; i++) {
        rip_writer_free(f->w, t0 + 10 * i, addr_of(thread, first + i * step));
        s->frees++;
    }
}

static void open_thread(scenario_t *s, tgen_file_t *f, const char *name, uint32_t tid,
                        uint32_t serial, int stack)
{
    rip_header_t h = tgen_thread_header(PID, tid, serial, s->start);
    tgen_open(f, s->dir, name, &h);
    tgen_modules(f, 0);
    rip_writer_stack(f->w, 1, s->st[stack].ips, s->st[stack].depth);
}

/* The recording in steps; times are ns from the start. Returns 1 while steps remain. */
static int take_step(scenario_t *s)
{
    switch (s->step++) {
    case 0: /* before the conversion starts */
        tgen_process(s->dir, PID, 1, s->start, 1, 900000);
        open_thread(s, &s->a, "t5151.rip", 5151, 1, 0);
        open_thread(s, &s->b, "t5152.rip", 5152, 2, 1);
        allocs(s, &s->a, 0, 0, 300, 1000, 1);       /* 1000 .. 3990 */
        frees(s, &s->a, 0, 0, 100, 2, 4000);        /* 4000 .. 4990: A's even blocks */
        allocs(s, &s->b, 1, 0, 200, 1005, 1);       /* 1005 .. 2995 */
        tgen_flush(&s->a);
        tgen_flush(&s->b);
        /* D: staged only, never a block until the end. */
        rip_header_t h = tgen_thread_header(PID, 5154, 4, s->start);
        tgen_open_staged(&s->d, s->dir, "t5154.rip", &h);
        tgen_modules(&s->d, 0);
        rip_writer_stack(s->d.w, 1, s->st[0].ips, s->st[0].depth);
        allocs(s, &s->d, 3, 0, 3, 1002, 1);         /* 1002, 1012, 1022 */
        return 1;
    case 1: /* A runs ahead; B wrote nothing new, so it holds the merge at 2995 */
        allocs(s, &s->a, 0, 300, 300, 10000, 1);    /* 10000 .. 12990 */
        frees(s, &s->a, 1, 1, 50, 2, 13000);        /* B's odd blocks */
        tgen_flush(&s->a);
        return 1;
    case 2: /* B catches up and frees some of A's blocks */
        allocs(s, &s->b, 1, 200, 100, 11005, 1);    /* 11005 .. 11995 */
        frees(s, &s->b, 0, 301, 100, 2, 14000);     /* A's odd blocks from 301 */
        tgen_flush(&s->b);
        return 1;
    case 3: /* C's file appears, still empty */
        open_thread(s, &s->c, "t5153.rip", 5153, 3, 2);
        return 1;
    case 4: /* C writes: after everything so far, or before events already merged */
        allocs(s, &s->c, 2, 0, 50, s->late ? 30000 : 2000, 1);
        tgen_flush(&s->c);
        allocs(s, &s->a, 0, 600, 10, 31000, 1);
        tgen_flush(&s->a);
        return 1;
    case 5: /* the end: a few more events each, a marker, and the files closed */
        frees(s, &s->c, 2, 0, 25, 1, 40000);
        allocs(s, &s->b, 1, 300, 20, 40005, 1);
        rip_writer_mark(s->a.w, 41000, "end");
        frees(s, &s->a, 1, 200, 30, 1, 42000);      /* B's blocks from 200 */
        frees(s, &s->d, 3, 0, 2, 1, 43000);
        tgen_close(&s->a);
        tgen_close(&s->b);
        tgen_close(&s->c);
        tgen_close(&s->d);
        return 0;
    }
    return 0;
}

static const char *next_input(void *user)
{
    scenario_t *s = user;
    return s->handed++ ? NULL : s->dir;
}

static int growing(void *user, const char *dir, int wait)
{
    scenario_t *s = user;
    (void)dir;
    if (s->step > 5)
        return 0;
    return wait ? take_step(s) : 1;
}

static void on_diag(void *user, const rheap_convert_diag_t *d)
{
    (void)user;
    fprintf(stderr, "%s\n", d->message);
}

/* Converts the scenario's recordings into out as they are written, the way rheap run does. */
static rheap_convert_status_t convert_live(scenario_t *s, const char *out,
                                           rheap_convert_result_t *r)
{
    rheap_convert_opts_t o = RHEAP_CONVERT_OPTS_INIT;
    o.output = out;
    o.diag = on_diag;
    o.next_input = next_input;
    o.growing = growing;
    o.live_user = s;
    return rheap_convert(&o, r);
}

static void run_case(const char *top, const char *sql_path, int late)
{
    static scenario_t s;
    memset(&s, 0, sizeof s);
    s.late = late;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    /* Started 100 s ago: thread files not yet listed hold no event before ~100 s, far after
     * every event of the test, so only the threads' own bounds hold the merge back. */
    s.start = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec - 100000000000ull;
    for (int k = 0; k < 3; k++)
        tgen_capture_at(k + 1, &s.st[k]);
    /* Directories of their own: the converter tests run in parallel in one directory. */
    const char *name = late ? "live-late" : "live-early";
    char live_db[4200], batch_db[4200], parent[4200];
    snprintf(s.dir, sizeof s.dir, "%s/%s/rip-%d", top, name, PID);
    snprintf(live_db, sizeof live_db, "%s/%s/live.db", top, name);
    snprintf(batch_db, sizeof batch_db, "%s/%s/batch.db", top, name);
    snprintf(parent, sizeof parent, "%s/%s", top, name);
    tgen_fresh_dir(parent);
    tgen_fresh_dir(s.dir);
    take_step(&s);

    rheap_convert_result_t r = {0};
    CHECK_INT(convert_live(&s, live_db, &r), RHEAP_CONVERT_OK);
    CHECK_INT(s.step, 6); /* every step was taken */
    CHECK_U(r.events, s.allocs + s.frees);
    if (late) {
        /* Merged while the files grew: everything up to B's last free (14990), when B ran
         * dry for good, D's three staged allocations included: idle D held nothing back. Left
         * for the end: C's 50 allocations and A's last 10 (30000 on), and the last step's 77
         * events. */
        CHECK_U(r.live_events, s.allocs + s.frees - 50 - 10 - 77);
    } else {
        CHECK_U(r.live_events, 0); /* started over: the finished recording, converted */
    }

    rheap_convert_opts_t b = RHEAP_CONVERT_OPTS_INIT;
    const char *in[] = {s.dir};
    b.inputs = in;
    b.ninputs = 1;
    b.output = batch_db;
    b.diag = on_diag;
    rheap_convert_result_t rb = {0};
    CHECK_INT(rheap_convert(&b, &rb), RHEAP_CONVERT_OK);
    CHECK_U(rb.events, r.events);
    CHECK_U(rb.allocations, r.allocations);
    CHECK_U(rb.never_freed, r.never_freed);

    char *x = tgen_script_rows(live_db, sql_path), *y = tgen_script_rows(batch_db, sql_path);
    if (strcmp(x, y) != 0) {
        tgen_first_difference("live against batch", x, y);
        CHECK_FAIL("%s: the live database differs from the batch one", name);
    }
    /* Cross-thread frees made it through: B's odd blocks freed by A, A's by B. */
    sqlite3 *db = tgen_db_open(live_db);
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM allocations WHERE alloc_thread = 5152 AND "
                           "dealloc_thread = 5151"),
              50 + 30);
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM allocations WHERE alloc_thread = 5151 AND "
                           "dealloc_thread = 5152"),
              100);
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM allocations WHERE alloc_thread = 5153"), 50);
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM markers"), 1);
    sqlite3_close(db);
    free(x);
    free(y);
}

/* "full": a finished recording of 60,000 rows converted live (as `rheap run` converts a process
 * that has ended) with a writer's queue of 4 chunks (some 13,000 rows) and the conversion held
 * to one CPU: the writer thread at nice 19 runs only when the reading thread waits, so the
 * reading thread writes most chunks itself when the queue is full, in turn with the writer.
 * The rows must still come out in id order, each with its own values: the database is the
 * batch one, row for row. */
static void run_full(const char *top, const char *sql_path)
{
    static scenario_t s;
    memset(&s, 0, sizeof s);
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    s.start = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec - 100000000000ull;
    for (int k = 0; k < 3; k++)
        tgen_capture_at(k + 1, &s.st[k]);
    char live_db[4200], batch_db[4200], parent[4200];
    snprintf(parent, sizeof parent, "%s/live-full", top);
    snprintf(s.dir, sizeof s.dir, "%s/live-full/rip-%d", top, PID);
    snprintf(live_db, sizeof live_db, "%s/live-full/live.db", top);
    snprintf(batch_db, sizeof batch_db, "%s/live-full/batch.db", top);
    tgen_fresh_dir(parent);
    tgen_fresh_dir(s.dir);
    tgen_process(s.dir, PID, 1, s.start, 1, 9000000);
    open_thread(&s, &s.a, "t5151.rip", 5151, 1, 0);
    open_thread(&s, &s.b, "t5152.rip", 5152, 2, 1);
    allocs(&s, &s.a, 0, 0, 40000, 1000, 1);         /* 1000 .. 400990 */
    /* B's addresses as if it were a fifth thread: A's 40,000 blocks reach past the second's. */
    allocs(&s, &s.b, 4, 0, 20000, 1005, 1);         /* 1005 .. 200995 */
    frees(&s, &s.a, 0, 0, 40000, 1, 500000);        /* all of A's, in order */
    frees(&s, &s.b, 4, 0, 10000, 2, 500005);        /* B's even blocks; the odd ones leak */
    tgen_close(&s.a);
    tgen_close(&s.b);
    s.step = 6; /* finished: growing says so */

    cpu_set_t one, all;
    CHECK_INT(sched_getaffinity(0, sizeof all, &all), 0);
    CPU_ZERO(&one);
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &all)) {
            CPU_SET(c, &one);
            break;
        }
    CHECK_INT(sched_setaffinity(0, sizeof one, &one), 0); /* the writer thread inherits it */
    cv__db_queue_limit(4);
    rheap_convert_result_t r = {0};
    CHECK_INT(convert_live(&s, live_db, &r), RHEAP_CONVERT_OK);
    cv__db_queue_limit(0);
    CHECK_INT(sched_setaffinity(0, sizeof all, &all), 0);
    CHECK_U(r.events, 60000 + 50000);
    CHECK_U(r.allocations, 60000);
    CHECK_U(r.never_freed, 10000);

    rheap_convert_opts_t b = RHEAP_CONVERT_OPTS_INIT;
    const char *in[] = {s.dir};
    b.inputs = in;
    b.ninputs = 1;
    b.output = batch_db;
    b.diag = on_diag;
    rheap_convert_result_t rb = {0};
    CHECK_INT(rheap_convert(&b, &rb), RHEAP_CONVERT_OK);
    char *x = tgen_script_rows(live_db, sql_path), *y = tgen_script_rows(batch_db, sql_path);
    if (strcmp(x, y) != 0) {
        tgen_first_difference("live against batch", x, y);
        CHECK_FAIL("live-full: the live database differs from the batch one");
    }
    free(x);
    free(y);
    /* Ids too: every row has the id the batch conversion gave it (canonical.sql leaves ids
     * out), so no chunk was written twice, skipped or out of its turn. */
    sqlite3 *db = tgen_db_open(live_db);
    char attach[4400];
    snprintf(attach, sizeof attach, "ATTACH '%s' AS batch", batch_db);
    CHECK_INT(sqlite3_exec(db, attach, NULL, NULL, NULL), SQLITE_OK);
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM main.allocations AS l JOIN batch.allocations "
                           "AS r ON r.id = l.id AND r.alloc_after = l.alloc_after AND r.addr = l.addr AND "
                           "r.size = l.size AND r.dealloc_after IS l.dealloc_after"),
              60000);
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM main.allocations WHERE alloc_thread = 5152 "
                           "AND dealloc_after IS NULL"),
              10000);
    sqlite3_close(db);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: convert_live DIR CANONICAL_SQL\n");
        return 2;
    }
    run_case(argv[1], argv[2], 1);
    run_case(argv[1], argv[2], 0);
    run_full(argv[1], argv[2]);
    return check_failures ? 1 : 0;
}
