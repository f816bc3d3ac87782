/*
 * scenarios.c: end-to-end converter tests over recordings written with the rip writer.
 *
 * The stacks are real return addresses of this program (built with -g), captured at known
 * lines, and the module list is this process's own, so `rheap convert` symbolizes them from
 * the real binary and every file:line below is exact. Usage: convert_scenarios MODE RHEAP DIR.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tgen.h"

extern tgen_stack_t tgen_cxx_stack;
extern int tgen_cxx_line;
void tgen_cxx_site(void);

static tgen_stack_t st_leak, st_inl, st_xfree, st_realloc, st_rust;
static int line_leak, line_inl_in, line_inl_call, line_rust;

__attribute__((noinline)) static void leak_site(void)
{
    tgen_capture(&st_leak); line_leak = __LINE__;
}

static inline __attribute__((always_inline)) void inl_alloc(void)
{
    tgen_capture(&st_inl); line_inl_in = __LINE__;
}

__attribute__((noinline)) static void outer_inl(void)
{
    inl_alloc(); line_inl_call = __LINE__;
}

__attribute__((noinline)) static void xfree_site(void)
{
    tgen_capture(&st_xfree);
}

__attribute__((noinline)) static void realloc_site(void)
{
    tgen_capture(&st_realloc);
}

/* A C function under a Rust legacy mangled name: what rustc would emit for demo::leak. */
void rust_leak(void) __asm__("_ZN4demo4leak17h0123456789abcdefE");
__attribute__((noinline)) void rust_leak(void)
{
    tgen_capture(&st_rust); line_rust = __LINE__;
}

static void capture_all(void)
{
    leak_site();
    outer_inl();
    xfree_site();
    realloc_site();
    rust_leak();
    tgen_cxx_site();
}

static void define(tgen_file_t *f, uint64_t id, const tgen_stack_t *st)
{
    rip_writer_stack(f->w, id, st->ips, st->depth);
}

#define PID 4242
#define CHILD 4243
#define START 1000000000ull

/* The recording every mode starts from: see the comments for what each event checks. */
static void write_recording(const char *dir)
{
    char d[1024];
    snprintf(d, sizeof d, "%s/rip-%d", dir, PID);
    tgen_fresh_dir(d);
    tgen_process(d, PID, 1, START, 1, 1000);

    tgen_file_t a, b;
    rip_header_t ha = tgen_thread_header(PID, 1001, 1, START);
    rip_header_t hb = tgen_thread_header(PID, 1002, 2, START);
    tgen_open(&a, d, "t1001.rip", &ha);
    tgen_open(&b, d, "t1002.rip", &hb);

    /* Thread A (1001). */
    tgen_modules(&a, 0);
    define(&a, 1, &st_leak);
    define(&a, 2, &st_inl);
    define(&a, 3, &st_xfree);
    define(&a, 4, &st_realloc);
    define(&a, 5, &st_rust);
    define(&a, 6, &tgen_cxx_stack);
    for (int i = 0; i < 5; i++) /* five leaks of 100 bytes at leak_site */
        rip_writer_alloc(a.w, RIP_CALL_MALLOC, 10 + i, 0x10000 + i * 0x100, 100, 1, 0, 0, 0);
    rip_writer_alloc(a.w, RIP_CALL_CALLOC, 20, 0x11000, 64, 2, 0, 0, 0); /* inlined site */
    rip_writer_alloc(a.w, RIP_CALL_MALLOC, 30, 0x20000, 32, 3, 0, 0, 0); /* freed by B */
    rip_writer_mark(a.w, 40, "phase1");
    /* A realloc chain: in place, then moved, then freed. */
    rip_writer_alloc(a.w, RIP_CALL_MALLOC, 200, 0x30000, 10, 4, 0, 0, 0);
    rip_writer_alloc(a.w, RIP_CALL_REALLOC, 220, 0x30000, 20, 4, 0, 0x30000, 210);
    rip_writer_alloc(a.w, RIP_CALL_REALLOC, 240, 0x31000, 40, 4, 0, 0x30000, 230);
    rip_writer_free(a.w, 250, 0x31000);
    /* A realloc whose old block B reuses before the realloc returns. */
    rip_writer_alloc(a.w, RIP_CALL_MALLOC, 260, 0x40000, 8, 4, 0, 0, 0);
    rip_writer_alloc(a.w, RIP_CALL_REALLOC, 320, 0x41000, 16, 4, 0, 0x40000, 300);
    rip_writer_free(a.w, 400, 0x99990); /* allocated before recording started */
    rip_writer_alloc(a.w, RIP_CALL_MALLOC, 500, 0x50000, 7, 1, 0, 0, 0); /* same ns as B's free */
    rip_writer_alloc(a.w, RIP_CALL_MALLOC, 600, 0x60000, 48, 5, 0, 0, 0); /* Rust-named */
    rip_writer_alloc(a.w, RIP_CALL_MALLOC, 610, 0x61000, 24, 6, 0, 0, 0); /* C++ */
    rip_writer_free(a.w, 620, 0x61000);
    rip_writer_alloc(a.w, RIP_CALL_MALLOC, 630, 0x62000, 5, 0, 0, 0, 0); /* sampled: no stack */
    rip_writer_alloc(a.w, RIP_CALL_POSIX_MEMALIGN, 640, 0x63000, 128, 1, 64, 0, 0);
    rip_writer_free(a.w, 650, 0x63000);
    tgen_close(&a);

    /* Thread B (1002). */
    rip_writer_thread_name(b.w, 1, "worker");
    tgen_modules(&b, 1);
    define(&b, 1, &st_leak); /* the same code as A's stack 1: one backtrace id */
    rip_writer_free(b.w, 150, 0x20000);
    rip_writer_alloc(b.w, RIP_CALL_MALLOC, 310, 0x40000, 99, 1, 0, 0, 0);
    rip_writer_alloc(b.w, RIP_CALL_MALLOC, 450, 0x50000, 6, 1, 0, 0, 0);
    rip_writer_free(b.w, 500, 0x50000);
    tgen_close(&b);

    /* A forked child: same code, its own process. */
    snprintf(d, sizeof d, "%s/rip-%d", dir, CHILD);
    tgen_fresh_dir(d);
    tgen_process(d, CHILD, 1, START + 5000, PID, 0);
    tgen_file_t c;
    rip_header_t hc = tgen_thread_header(CHILD, 2001, 1, START + 5000);
    tgen_open(&c, d, "t2001.rip", &hc);
    tgen_modules(&c, 0);
    define(&c, 7, &st_leak);
    rip_writer_alloc(c.w, RIP_CALL_MALLOC, 5, 0x10000, 1000, 7, 0, 0, 0);
    tgen_close(&c);
}

/* ---- exec: two recordings of one pid ----
 *
 * A process that execs keeps its pid (and its main thread's tid): the old program's recording
 * is rip-<pid>/, the new program's rip-<pid>-2/, with its own start. The new program frees an
 * address that was live in the old one and allocates at another such address; neither may
 * touch the old program's blocks. */
#define XPID 5150
#define XSTART1 2000000000ull
#define XSTART2 3000000000ull

static void exec_process(const char *dir, uint32_t recording, uint64_t start, uint64_t off_t,
                         const char *off_how)
{
    rip_header_t h = {0};
    h.is_process = 1;
    h.major = RIP_FORMAT_MAJOR;
    h.minor = RIP_FORMAT_MINOR;
    h.pid = XPID;
    h.recording = recording;
    h.start_ns = start;
    tgen_file_t f;
    tgen_open(&f, dir, "process.rip", &h);
    const char *argv[] = {recording == 1 ? "./before" : "./after"};
    rip_writer_process(f.w, 1, recording == 1 ? "/usr/bin/before" : "/usr/bin/after", 1, argv,
                       1700000000000000000ull, "monotonic", 4096);
    rip_writer_config(f.w, 64, 1000000, 1024, 64, 0, ".");
    rip_writer_on(f.w, 0, "env");
    rip_writer_off(f.w, off_t, off_how);
    tgen_close(&f);
}

static void write_exec_recordings(const char *dir)
{
    char d[1024];
    tgen_file_t a, b;

    /* Recording 1: the program before its exec. */
    snprintf(d, sizeof d, "%s/rip-%d", dir, XPID);
    tgen_fresh_dir(d);
    exec_process(d, 1, XSTART1, 1000, "exec");
    rip_header_t ha = tgen_thread_header(XPID, XPID, 1, XSTART1);
    rip_header_t hb = tgen_thread_header(XPID, XPID + 1, 2, XSTART1);
    tgen_open(&a, d, "t5150.rip", &ha);
    tgen_open(&b, d, "t5151.rip", &hb);
    tgen_modules(&a, 0);
    define(&a, 1, &st_leak);
    define(&a, 2, &st_xfree);
    rip_writer_alloc(a.w, RIP_CALL_MALLOC, 10, 0x10000, 100, 1, 0, 0, 0); /* live at the exec */
    rip_writer_alloc(a.w, RIP_CALL_MALLOC, 20, 0x20000, 200, 1, 0, 0, 0); /* live at the exec */
    rip_writer_alloc(a.w, RIP_CALL_MALLOC, 30, 0x30000, 300, 2, 0, 0, 0);
    rip_writer_free(a.w, 40, 0x30000);
    rip_writer_mark(a.w, 50, "before-exec");
    tgen_close(&a);
    tgen_modules(&b, 0);
    define(&b, 1, &st_leak);
    rip_writer_alloc(b.w, RIP_CALL_MALLOC, 15, 0x40000, 400, 1, 0, 0, 0);
    rip_writer_free(b.w, 60, 0x40000);
    tgen_close(&b);

    /* Recording 2: the new program, same pid and main thread, times from its own start. */
    snprintf(d, sizeof d, "%s/rip-%d-2", dir, XPID);
    tgen_fresh_dir(d);
    exec_process(d, 2, XSTART2, 500, "exit");
    rip_header_t h2 = tgen_thread_header(XPID, XPID, 1, XSTART2);
    h2.recording = 2;
    tgen_open(&a, d, "t5150.rip", &h2);
    tgen_modules(&a, 0);
    define(&a, 1, &st_leak);
    rip_writer_free(a.w, 5, 0x10000);                                    /* not this program's */
    rip_writer_alloc(a.w, RIP_CALL_MALLOC, 10, 0x20000, 22, 1, 0, 0, 0); /* no reuse of a live one */
    rip_writer_alloc(a.w, RIP_CALL_MALLOC, 20, 0x30000, 33, 1, 0, 0, 0);
    rip_writer_free(a.w, 25, 0x30000);
    rip_writer_alloc(a.w, RIP_CALL_MALLOC, 40, 0x50000, 55, 0, 0, 0, 0); /* sampled out */
    rip_writer_mark(a.w, 30, "after-exec");
    tgen_close(&a);
}

static void check_exec(sqlite3 *db)
{
    /* Per recording: rows, never freed, and the processes rows. */
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM allocations WHERE pid = %d", XPID), 7);
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM allocations WHERE pid = %d AND recording = 1", XPID), 4);
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM allocations WHERE pid = %d AND recording = 2", XPID), 3);
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM allocations WHERE recording = 1 AND dealloc_after IS NULL"), 2);
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM allocations WHERE recording = 2 AND dealloc_after IS NULL"), 2);
    CHECK_INT(tgen_int(db, "SELECT sum(size) FROM allocations WHERE recording = 1"), 1000);
    CHECK_INT(tgen_int(db, "SELECT sum(size) FROM allocations WHERE recording = 2"), 110);
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM processes WHERE pid = %d", XPID), 2);
    CHECK_STR(tgen_text(db, "SELECT exe FROM processes WHERE pid = %d AND recording = 2", XPID), "/usr/bin/after");
    CHECK_INT(tgen_int(db, "SELECT start_ns FROM processes WHERE pid = %d AND recording = 2", XPID), XSTART2);

    /* No block of recording 1 is paired with a free of recording 2: the free of 0x10000 is
     * unmatched in recording 2, and the allocation at 0x20000 does not close recording 1's
     * block as a reuse. */
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM allocations WHERE recording = 1 AND dealloc_after IS NOT NULL"), 2);
    CHECK_INT(tgen_int(db, "SELECT dealloc_after IS NULL FROM allocations WHERE recording = 1 AND addr = 0x10000"), 1);
    CHECK_INT(tgen_int(db, "SELECT dealloc_after IS NULL FROM allocations WHERE recording = 1 AND addr = 0x20000"), 1);
    CHECK_INT(tgen_int(db, "SELECT dealloc_after FROM allocations WHERE recording = 1 AND addr = 0x30000"), 40);
    CHECK_INT(tgen_int(db, "SELECT dealloc_after FROM allocations WHERE recording = 1 AND addr = 0x40000"), 60);
    CHECK_INT(tgen_int(db, "SELECT dealloc_after FROM allocations WHERE recording = 2 AND addr = 0x30000"), 25);
    CHECK_INT(tgen_int(db, "SELECT dealloc_after IS NULL FROM allocations WHERE recording = 2 AND addr = 0x20000"), 1);
    CHECK_INT(tgen_int(db, "SELECT unmatched_frees FROM processes WHERE pid = %d AND recording = 1", XPID), 0);
    CHECK_INT(tgen_int(db, "SELECT unmatched_frees FROM processes WHERE pid = %d AND recording = 2", XPID), 1);
    CHECK_INT(tgen_int(db, "SELECT value FROM meta WHERE key = 'unmatched_frees'"), 1);
    CHECK_INT(tgen_int(db, "SELECT value FROM meta WHERE key = 'reused_live'"), 0);
    /* Row ids run on: the second recording's rows come after the first's. */
    CHECK_INT(tgen_int(db, "SELECT min(id) > (SELECT max(id) FROM allocations WHERE recording = 1) FROM allocations WHERE recording = 2"), 1);

    /* Threads, markers, windows and modules each name their recording. */
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM threads WHERE pid = %d AND recording = 1", XPID), 2);
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM threads WHERE pid = %d AND recording = 2", XPID), 1);
    CHECK_INT(tgen_int(db, "SELECT events FROM threads WHERE tid = %d AND recording = 1", XPID), 4);
    CHECK_INT(tgen_int(db, "SELECT events FROM threads WHERE tid = %d AND recording = 2", XPID), 5);
    CHECK_INT(tgen_int(db, "SELECT recording FROM markers WHERE label = 'before-exec'"), 1);
    CHECK_INT(tgen_int(db, "SELECT recording FROM markers WHERE label = 'after-exec'"), 2);
    CHECK_INT(tgen_int(db, "SELECT t FROM markers WHERE label = 'after-exec'"), 30);
    CHECK_STR(tgen_text(db, "SELECT off_how FROM windows WHERE pid = %d AND recording = 1", XPID), "exec");
    CHECK_INT(tgen_int(db, "SELECT off_t FROM windows WHERE pid = %d AND recording = 1", XPID), 1000);
    CHECK_STR(tgen_text(db, "SELECT off_how FROM windows WHERE pid = %d AND recording = 2", XPID), "exit");
    CHECK_INT(tgen_int(db, "SELECT off_t FROM windows WHERE pid = %d AND recording = 2", XPID), 500);
    /* An exec that replaced the program ends its recording as an exit does: the first image's
     * blocks never freed are leaks (no recording of the pid goes on by `exec` after it). */
    CHECK_STR(tgen_text(db, "SELECT group_concat(recording || ':' || off_how || ':' || until_exit, ' ') "
                            "FROM (SELECT * FROM recording_ends WHERE pid = %d ORDER BY recording)", XPID),
              "1:exec:1 2:exit:1");
    CHECK_INT(tgen_int(db, "SELECT count(DISTINCT recording) FROM modules WHERE pid = %d AND path LIKE '%%convert_scenarios%%' AND status = 'ok'", XPID), 2);
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM modules WHERE pid = %d AND path LIKE '%%convert_scenarios%%'", XPID), 2);

    /* Views: leaks per recording; the same code shares one backtrace across recordings. */
    CHECK_INT(tgen_int(db, "SELECT blocks FROM leaks WHERE recording = 1 AND sym = 'leak_site'"), 2);
    CHECK_INT(tgen_int(db, "SELECT bytes FROM leaks WHERE recording = 1 AND sym = 'leak_site'"), 300);
    CHECK_INT(tgen_int(db, "SELECT bytes FROM leaks WHERE recording = 2 AND sym = 'leak_site'"), 22);
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM leaks WHERE recording = 2"), 2);
    CHECK_INT(tgen_int(db, "SELECT count(DISTINCT bt) FROM allocation_sites WHERE sym = 'leak_site'"), 1);
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM allocation_sites WHERE recording = 2 AND sym = 'leak_site'"), 2);
}

static int convert(const char *rheap, const char *dir, const char *db, char *err, size_t errlen)
{
    char p1[1024], p2[1024];
    snprintf(p1, sizeof p1, "%s/rip-%d", dir, PID);
    snprintf(p2, sizeof p2, "%s/rip-%d", dir, CHILD);
    unlink(db);
    char *argv[] = {(char *)rheap, "convert", "--no-progress", p1, p2, "-o", (char *)db, NULL};
    return tgen_run(argv, err, errlen);
}

static int convert_exec(const char *rheap, const char *dir, const char *db, char *err,
                        size_t errlen)
{
    char p1[1024], p2[1024];
    snprintf(p1, sizeof p1, "%s/rip-%d", dir, XPID);
    snprintf(p2, sizeof p2, "%s/rip-%d-2", dir, XPID);
    unlink(db);
    char *argv[] = {(char *)rheap, "convert", "--no-progress", p1, p2, "-o", (char *)db, NULL};
    return tgen_run(argv, err, errlen);
}

static const char *base(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

#define ROW(cond) "(SELECT id FROM allocations WHERE " cond ")"

static void check_basic(sqlite3 *db)
{
    /* Row counts: 19 blocks in the parent, 1 in the child, 11 + 1 never freed. */
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM allocations WHERE pid = %d", PID), 19);
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM allocations WHERE pid = %d", CHILD), 1);
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM allocations WHERE pid = %d AND dealloc_after IS NULL", PID), 11);
    CHECK_INT(tgen_int(db, "SELECT value FROM meta WHERE key = 'events'"), 26);
    CHECK_INT(tgen_int(db, "SELECT value FROM meta WHERE key = 'unmatched_frees'"), 1);
    CHECK_INT(tgen_int(db, "SELECT unmatched_frees FROM processes WHERE pid = %d", PID), 1);
    CHECK_INT(tgen_int(db, "SELECT value FROM meta WHERE key = 'reused_live'"), 0);

    /* Leaks per site, with function and file:line. */
    CHECK_INT(tgen_int(db, "SELECT blocks FROM leaks WHERE pid = %d AND sym = 'leak_site'", PID), 7);
    CHECK_INT(tgen_int(db, "SELECT bytes FROM leaks WHERE pid = %d AND sym = 'leak_site'", PID), 606);
    CHECK_INT(tgen_int(db, "SELECT line FROM leaks WHERE pid = %d AND sym = 'leak_site'", PID), line_leak);
    CHECK_STR(base(tgen_text(db, "SELECT file FROM leaks WHERE pid = %d AND sym = 'leak_site'", PID)), "scenarios.c");
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM allocations WHERE size = 100 AND dealloc_after IS NULL AND bt = "
                           "(SELECT id FROM backtraces WHERE sym = 'leak_site' AND line = %d AND frame_no = 0)", line_leak), 5);
    /* One backtrace id for the same code in both threads and in the child. */
    CHECK_INT(tgen_int(db, "SELECT count(DISTINCT bt) FROM allocation_sites WHERE sym = 'leak_site'"), 1);
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM allocation_sites WHERE sym = 'leak_site' AND pid = %d", CHILD), 1);
    /* Frame 1 of the leak is main, calling capture_all's callee: the whole stack is there. */
    CHECK_STR(tgen_text(db, "SELECT sym FROM backtraces WHERE id = (SELECT bt FROM allocations WHERE addr = 0x10000 AND pid = %d) AND frame_no = 1", PID), "capture_all");

    /* Inlined frames: the inline function at its own line, then its caller at the call line. */
    const char *inl = ROW("addr = 0x11000");
    CHECK_STR(tgen_text(db, "SELECT sym FROM backtraces WHERE id = (SELECT bt FROM allocations WHERE addr = 0x11000) AND frame_no = 0"), "inl_alloc");
    CHECK_INT(tgen_int(db, "SELECT line FROM backtraces WHERE id = (SELECT bt FROM allocations WHERE addr = 0x11000) AND frame_no = 0"), line_inl_in);
    CHECK_INT(tgen_int(db, "SELECT inlined FROM backtraces WHERE id = (SELECT bt FROM allocations WHERE addr = 0x11000) AND frame_no = 0"), 1);
    CHECK_STR(tgen_text(db, "SELECT sym FROM backtraces WHERE id = (SELECT bt FROM allocations WHERE addr = 0x11000) AND frame_no = 1"), "outer_inl");
    CHECK_INT(tgen_int(db, "SELECT line FROM backtraces WHERE id = (SELECT bt FROM allocations WHERE addr = 0x11000) AND frame_no = 1"), line_inl_call);
    CHECK_INT(tgen_int(db, "SELECT inlined FROM backtraces WHERE id = (SELECT bt FROM allocations WHERE addr = 0x11000) AND frame_no = 1"), 0);
    CHECK_INT(tgen_int(db, "SELECT ip_index FROM backtraces WHERE id = (SELECT bt FROM allocations WHERE addr = 0x11000) AND frame_no = 1"), 0);
    CHECK_STR(tgen_text(db, "SELECT sym FROM backtraces WHERE id = (SELECT bt FROM allocations WHERE addr = 0x11000) AND frame_no = 2"), "capture_all");
    CHECK_INT(tgen_int(db, "SELECT ip_index FROM backtraces WHERE id = (SELECT bt FROM allocations WHERE addr = 0x11000) AND frame_no = 2"), 1);
    CHECK_STR(tgen_text(db, "SELECT name FROM calls WHERE id = (SELECT call FROM allocations WHERE id = %s)", inl), "calloc");
    /* Frame numbers are dense in every stack. */
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM (SELECT id FROM backtraces GROUP BY id HAVING max(frame_no) + 1 != count(*))"), 0);

    /* A block freed by another thread shows both threads. */
    CHECK_INT(tgen_int(db, "SELECT alloc_thread FROM allocations WHERE addr = 0x20000"), 1001);
    CHECK_INT(tgen_int(db, "SELECT dealloc_thread FROM allocations WHERE addr = 0x20000"), 1002);
    CHECK_INT(tgen_int(db, "SELECT dealloc_after FROM allocations WHERE addr = 0x20000"), 150);
    CHECK_STR(tgen_text(db, "SELECT name FROM threads WHERE tid = 1002"), "worker");
    CHECK_STR(tgen_text(db, "SELECT name FROM threads WHERE tid = 1001"), "(null)");
    CHECK_INT(tgen_int(db, "SELECT events FROM threads WHERE tid = 1001"), 21);

    /* The realloc chain 10 -> 20 (in place) -> 40 (moved) is linked back to its start. */
    const char *r1 = ROW("addr = 0x30000 AND size = 10");
    const char *r2 = ROW("addr = 0x30000 AND size = 20");
    CHECK_INT(tgen_int(db, "SELECT realloc_of FROM allocations WHERE addr = 0x31000") ,
              tgen_int(db, "SELECT id FROM allocations WHERE addr = 0x30000 AND size = 20"));
    CHECK_INT(tgen_int(db, "SELECT realloc_of = %s FROM allocations WHERE id = %s", r1, r2), 1);
    CHECK_INT(tgen_int(db, "SELECT realloc_of IS NULL FROM allocations WHERE id = %s", r1), 1);
    CHECK_INT(tgen_int(db, "SELECT dealloc_after FROM allocations WHERE id = %s", r1), 210);
    CHECK_INT(tgen_int(db, "SELECT dealloc_after FROM allocations WHERE id = %s", r2), 230);
    CHECK_INT(tgen_int(db, "SELECT alloc_after FROM allocations WHERE id = %s", r2), 220);
    CHECK_INT(tgen_int(db, "SELECT dealloc_after FROM allocations WHERE addr = 0x31000"), 250);
    CHECK_STR(tgen_text(db, "SELECT name FROM calls WHERE id = (SELECT call FROM allocations WHERE addr = 0x31000)"), "realloc");
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM reallocs"), 3);

    /* The old block of a realloc is released at old_t, so B may reuse it before the realloc
     * returns. */
    CHECK_INT(tgen_int(db, "SELECT dealloc_after FROM allocations WHERE addr = 0x40000 AND size = 8"), 300);
    CHECK_INT(tgen_int(db, "SELECT dealloc_thread FROM allocations WHERE addr = 0x40000 AND size = 8"), 1001);
    CHECK_INT(tgen_int(db, "SELECT dealloc_after IS NULL FROM allocations WHERE addr = 0x40000 AND size = 99"), 1);
    CHECK_INT(tgen_int(db, "SELECT alloc_thread FROM allocations WHERE addr = 0x40000 AND size = 99"), 1002);
    CHECK_INT(tgen_int(db, "SELECT realloc_of = " ROW("addr = 0x40000 AND size = 8") " FROM allocations WHERE addr = 0x41000"), 1);

    /* Same nanosecond: the free sorts before the allocation reusing the address. */
    CHECK_INT(tgen_int(db, "SELECT dealloc_after FROM allocations WHERE addr = 0x50000 AND size = 6"), 500);
    CHECK_INT(tgen_int(db, "SELECT dealloc_thread FROM allocations WHERE addr = 0x50000 AND size = 6"), 1002);
    CHECK_INT(tgen_int(db, "SELECT dealloc_after IS NULL FROM allocations WHERE addr = 0x50000 AND size = 7"), 1);

    /* Demangling: Rust legacy and C++. */
    CHECK_STR(tgen_text(db, "SELECT sym FROM allocation_sites WHERE addr = 0x60000"), "demo::leak");
    CHECK_INT(tgen_int(db, "SELECT line FROM allocation_sites WHERE addr = 0x60000"), line_rust);
    CHECK_STR(tgen_text(db, "SELECT sym FROM allocation_sites WHERE addr = 0x61000"), "demo::Pool<int>::grow(unsigned long)");
    CHECK_STR(base(tgen_text(db, "SELECT file FROM allocation_sites WHERE addr = 0x61000")), "cxx_sites.cpp");
    CHECK_INT(tgen_int(db, "SELECT line FROM allocation_sites WHERE addr = 0x61000"), tgen_cxx_line);
    CHECK_STR(tgen_text(db, "SELECT sym FROM backtraces WHERE id = (SELECT bt FROM allocations WHERE addr = 0x61000) AND frame_no = 1"), "tgen_cxx_site");

    /* Sampled out: no backtrace. Aligned calls keep their alignment. */
    CHECK_INT(tgen_int(db, "SELECT bt IS NULL FROM allocations WHERE addr = 0x62000"), 1);
    CHECK_STR(tgen_text(db, "SELECT name FROM calls WHERE id = (SELECT call FROM allocations WHERE addr = 0x63000)"), "posix_memalign");
    CHECK_INT(tgen_int(db, "SELECT align FROM allocations WHERE addr = 0x63000"), 64);
    CHECK_INT(tgen_int(db, "SELECT align IS NULL FROM allocations WHERE addr = 0x10000 AND pid = %d", PID), 1);

    /* Processes, windows, markers, modules, meta. */
    CHECK_INT(tgen_int(db, "SELECT ppid FROM processes WHERE pid = %d", CHILD), PID);
    CHECK_STR(tgen_text(db, "SELECT cmdline FROM processes WHERE pid = %d", PID), "./testprog --flag x");
    CHECK_STR(tgen_text(db, "SELECT exe FROM processes WHERE pid = %d", PID), "/usr/bin/testprog");
    CHECK_INT(tgen_int(db, "SELECT start_ns FROM processes WHERE pid = %d", CHILD), START + 5000);
    CHECK_INT(tgen_int(db, "SELECT off_t FROM windows WHERE pid = %d", PID), 1000);
    CHECK_STR(tgen_text(db, "SELECT off_how FROM windows WHERE pid = %d", PID), "exit");
    CHECK_INT(tgen_int(db, "SELECT off_t IS NULL FROM windows WHERE pid = %d", CHILD), 1);
    CHECK_STR(tgen_text(db, "SELECT label FROM markers WHERE tid = 1001 AND t = 40"), "phase1");
    CHECK_STR(tgen_text(db, "SELECT status FROM modules WHERE pid = %d AND path LIKE '%%convert_scenarios%%'", PID), "ok");
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM modules WHERE pid = %d AND path LIKE '%%convert_scenarios%%'", PID), 1);
    /* The version the writer put in the files it wrote for this scenario. */
#define VERSION_TEXT_(major, minor) #major "." #minor
#define VERSION_TEXT(major, minor) VERSION_TEXT_(major, minor)
    CHECK_STR(tgen_text(db, "SELECT value FROM meta WHERE key = 'format_version'"),
              VERSION_TEXT(RIP_FORMAT_MAJOR, RIP_FORMAT_MINOR));
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM meta WHERE key = 'rheap_version'"), 1);
}

/* The rheaper article's queries, as written: they must run and return their shape. */
static void check_article(sqlite3 *db)
{
    static const struct {
        const char *sql;
        int cols;
    } q[] = {
        {"SELECT * FROM allocations ORDER BY size DESC LIMIT 5;", 13},
        {"SELECT * FROM backtraces WHERE file like '%main%' AND line = 14;", 9},
        {"SELECT frame_no, sym FROM backtraces WHERE id = 1;", 2},
        {"SELECT avg(size), min(size), max(size) FROM allocations WHERE bt = (SELECT id FROM backtraces WHERE file LIKE '%main%' AND line = 22);", 3},
        {"SELECT sum(size), avg(size), avg(dealloc_after - alloc_after) as live_for FROM allocations, backtraces as bt WHERE bt.sym LIKE '%RawVec%';", 3},
    };
    for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
        sqlite3_stmt *st;
        int rc = sqlite3_prepare_v2(db, q[i].sql, -1, &st, NULL);
        CHECK_INT(rc, SQLITE_OK);
        if (rc != SQLITE_OK) {
            fprintf(stderr, "  %s: %s\n", q[i].sql, sqlite3_errmsg(db));
            continue;
        }
        CHECK_INT(sqlite3_column_count(st), q[i].cols);
        while ((rc = sqlite3_step(st)) == SQLITE_ROW)
            ;
        CHECK_INT(rc, SQLITE_DONE);
        sqlite3_finalize(st);
    }
    /* The columns keep their names and order; recording was added after them. */
    static const char *const cols[] = {"id", "alloc_after", "dealloc_after", "bt", "size", "addr",
                                       "alloc_thread", "dealloc_thread", "pid", "call", "align",
                                       "realloc_of", "recording"};
    sqlite3_stmt *st;
    CHECK_INT(sqlite3_prepare_v2(db, "SELECT * FROM allocations", -1, &st, NULL), SQLITE_OK);
    for (int i = 0; i < (int)(sizeof cols / sizeof cols[0]); i++)
        CHECK_STR(sqlite3_column_name(st, i), cols[i]);
    sqlite3_finalize(st);
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM (SELECT * FROM allocations ORDER BY size DESC LIMIT 5)"), 5);
    CHECK_INT(tgen_int(db, "SELECT size FROM allocations ORDER BY size DESC LIMIT 1"), 1000);
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM backtraces WHERE id = 1"),
              tgen_int(db, "SELECT max(frame_no) + 1 FROM backtraces WHERE id = 1"));
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s basic|article|exec RHEAP DIR\n", argv[0]);
        return 2;
    }
    const char *mode = argv[1], *rheap = argv[2], *dir = argv[3];
    capture_all();
    char sub[1024], dbpath[1200];
    snprintf(sub, sizeof sub, "%s/%s", dir, mode);
    tgen_fresh_dir(sub);
    int exec_mode = !strcmp(mode, "exec");
    if (exec_mode)
        write_exec_recordings(sub);
    else
        write_recording(sub);
    snprintf(dbpath, sizeof dbpath, "%s/out.db", sub);
    char err[8192];
    int rc = exec_mode ? convert_exec(rheap, sub, dbpath, err, sizeof err)
                       : convert(rheap, sub, dbpath, err, sizeof err);
    /* The forked child of the basic recording has no "off" record (it was killed): that is a
     * warning, exit status 3, naming its directory. */
    int want_rc = exec_mode ? 0 : 3;
    if (rc != want_rc) {
        fprintf(stderr, "rheap convert exited %d, expected %d:\n%s", rc, want_rc, err);
        return 1;
    }
    if (!exec_mode) {
        char want[128];
        snprintf(want, sizeof want, "the recording has no end (process %d was killed", CHILD);
        if (!strstr(err, want)) {
            fprintf(stderr, "missing warning '%s' in:\n%s", want, err);
            return 1;
        }
    }
    sqlite3 *db = tgen_db_open(dbpath);
    if (!strcmp(mode, "basic"))
        check_basic(db);
    else if (!strcmp(mode, "article"))
        check_article(db);
    else if (exec_mode)
        check_exec(db);
    else {
        fprintf(stderr, "unknown mode %s\n", mode);
        return 2;
    }
    sqlite3_close(db);
    if (check_failures) {
        fprintf(stderr, "%d check(s) failed; rheap said:\n%s", check_failures, err);
        return 1;
    }
    printf("ok\n");
    return 0;
}
