/*
 * roundtrip.c: writes every record type with the writer, reads the file back with the reader and
 * compares every field. A bulk of generated events spans several 64 KiB blocks, so block
 * boundaries and the per-block reset of the delta bases are exercised; extreme values (top of
 * the address space, size 2^40, huge time steps, stacks of depth 1 and 1024, strings over the
 * 4096-byte limit, an argv too long for a block) check the encodings at their edges. A file
 * with time_shift 2 checks the writer's exact block content (header, column directory, records,
 * columns, both address delta forms) and, over several blocks, that times come back rounded down
 * to 4 ns and addresses aligned to 16 or not come back exact.
 */
#include "test_util.h"

#define BULK 60000

static char long_path[5001];
static char long_args[40][4001];
static const char *argv_long[40];
static uint64_t deep[RIP_MAX_DEPTH + 5];

/* The bulk events: event i, deterministic, so the checker can regenerate them. Times grow, and
 * every 7th event jumps far. */
typedef struct {
    int is_free;
    rip_call_t call;
    uint64_t t, addr, size, stack, align, old, old_t;
} ev_t;

static ev_t bulk_event(uint32_t i)
{
    ev_t e = {0};
    uint64_t x = (uint64_t)i * 0x9E3779B97F4A7C15ull;
    e.t = 1000000ull + (uint64_t)i * 37 + (i / 7) * 1000003ull;
    e.addr = 0x7f0000000000ull + (x >> 20) % (1ull << 36);
    if (i % 3 == 2) {
        e.is_free = 1;
        return e;
    }
    e.call = (rip_call_t)(RIP_CALL_MALLOC + i % 9);
    e.size = (x >> 7) % 100000;
    e.stack = 1 + i % 2;
    if (e.call >= RIP_CALL_POSIX_MEMALIGN)
        e.align = 1ull << (4 + i % 8);
    if (e.call == RIP_CALL_REALLOC || e.call == RIP_CALL_REALLOCARRAY) {
        if (i % 4 != 0) {
            e.old = e.addr ^ 0x1230;
            e.old_t = e.t - i % 500;
        }
    }
    return e;
}

static void write_thread_file(tfile_t *f)
{
    rip_writer_t *w = f->w;
    uint64_t ips1[1] = {0xffffffffffffff00ull};
    deep[0] = 0x401000;
    for (int i = 1; i < RIP_MAX_DEPTH + 5; i++)
        deep[i] = (i % 2) ? deep[i - 1] + 0x7fff0000ull * (uint64_t)i : deep[i - 1] - 12345;

    rip_segment_t segs[3] = {{0x555555554000ull, 0x1000, 4}, {0x555555555000ull, 0x2345, 5},
                             {0x555555558000ull, 0x800, 6}};
    CHECK_STATUS(rip_writer_modules(w, 0, 2), RIP_OK);
    CHECK_STATUS(rip_writer_module(w, 0x555555554000ull, "/usr/bin/prog with space",
                                   "\x01\x02\xab\xcd", 4, segs, 3), RIP_OK);
    CHECK_STATUS(rip_writer_module(w, 0, long_path, "", 0, NULL, 0), RIP_OK);
    CHECK_STATUS(rip_writer_thread_name(w, 5, "worker-1"), RIP_OK);
    CHECK_STATUS(rip_writer_stack(w, 1, ips1, 1), RIP_OK);
    CHECK_STATUS(rip_writer_stack(w, 2, deep, RIP_MAX_DEPTH), RIP_OK);
    CHECK_STATUS(rip_writer_stack(w, 3, deep, RIP_MAX_DEPTH + 5), RIP_OK);   /* cut to 1024 */

    /* Extreme values. */
    CHECK_STATUS(rip_writer_alloc(w, RIP_CALL_MALLOC, 10, 0xffffffffffff0000ull, 0, 1, 0, 0, 0), RIP_OK);
    CHECK_STATUS(rip_writer_alloc(w, RIP_CALL_CALLOC, 10, 0x10, 1ull << 40, 2, 0, 0, 0), RIP_OK);
    CHECK_STATUS(rip_writer_free(w, 1ull << 50, 0xffffffffffff0000ull), RIP_OK);
    CHECK_STATUS(rip_writer_alloc(w, RIP_CALL_REALLOC, (1ull << 50) + 1, 0x20, 5, 0, 0, 0, 0), RIP_OK);
    CHECK_STATUS(rip_writer_alloc(w, RIP_CALL_REALLOC, (1ull << 50) + 9, 0xffffffffffff0000ull, 7, 3,
                                  0, 0x20, (1ull << 50) + 2), RIP_OK);
    CHECK_STATUS(rip_writer_alloc(w, RIP_CALL_REALLOCARRAY, (1ull << 62), 0x30, UINT64_MAX, 0, 0,
                                  0xfffffffffffffff0ull, 1), RIP_OK);
    CHECK_STATUS(rip_writer_alloc(w, RIP_CALL_POSIX_MEMALIGN, (1ull << 62), 0x40, 64, 1, 64, 0, 0), RIP_OK);
    CHECK_STATUS(rip_writer_alloc(w, RIP_CALL_ALIGNED_ALLOC, (1ull << 62), 0x80, 128, 1, 1ull << 63, 0, 0), RIP_OK);
    CHECK_STATUS(rip_writer_alloc(w, RIP_CALL_MEMALIGN, (1ull << 62), 0x1000, 1, 1, 4096, 0, 0), RIP_OK);
    CHECK_STATUS(rip_writer_alloc(w, RIP_CALL_VALLOC, (1ull << 62), 0x2000, 1, 1, 4096, 0, 0), RIP_OK);
    CHECK_STATUS(rip_writer_alloc(w, RIP_CALL_PVALLOC, (1ull << 62), 0x3000, 4096, 1, 4096, 0, 0), RIP_OK);
    CHECK_STATUS(rip_writer_free(w, (1ull << 62) + 1, 0), RIP_OK);
    CHECK_STATUS(rip_writer_mark(w, 77, "phase one \\ \n done"), RIP_OK);
    CHECK_STATUS(rip_writer_lost(w, 78, UINT64_MAX, "buffer full"), RIP_OK);
    CHECK_STATUS(rip_writer_totals(w, 78, 1000003, UINT64_MAX, 0), RIP_OK);
    CHECK_STATUS(rip_writer_mark(w, 79, NULL), RIP_OK);

    /* Bulk: times restart low, which the writer clamps to the last time; a new block resets the
     * base. Write them after a flush so their times are exact. */
    CHECK_STATUS(rip_writer_flush(w), RIP_OK);
    for (uint32_t i = 0; i < BULK; i++) {
        ev_t e = bulk_event(i);
        if (e.is_free)
            CHECK_STATUS(rip_writer_free(w, e.t, e.addr), RIP_OK);
        else
            CHECK_STATUS(rip_writer_alloc(w, e.call, e.t, e.addr, e.size, e.stack, e.align, e.old,
                                          e.old_t), RIP_OK);
    }
    CHECK_STATUS(rip_writer_flush(w), RIP_OK);
    CHECK_U(rip_writer_pending(w), 0);
}

static void next_ok(rip_reader_t *r, rip_record_t *rec, rip_rec_kind_t kind)
{
    rip_error_t err;
    rip_status_t st = rip_reader_next(r, rec, &err);
    if (st != RIP_OK) {
        char buf[1024];
        CHECK_FAIL("expected a record, got %s: %s", rip_strerror(st), rip_error_format(&err, buf, sizeof buf));
    }
    CHECK_U(rec->kind, kind);
}

static void check_alloc(const rip_record_t *rec, rip_call_t call, uint64_t t, uint64_t addr,
                        uint64_t size, uint64_t stack, uint64_t align, uint64_t old, uint64_t old_t)
{
    CHECK_U(rec->kind, RIP_REC_ALLOC);
    CHECK_U(rec->u.alloc.call, call);
    CHECK_U(rec->t, t);
    CHECK_U(rec->u.alloc.addr, addr);
    CHECK_U(rec->u.alloc.size, size);
    CHECK_U(rec->u.alloc.stack, stack);
    CHECK_U(rec->u.alloc.align, align);
    CHECK_U(rec->u.alloc.old_addr, old);
    CHECK_U(rec->u.alloc.old_t, old_t);
}

static void read_thread_file(const char *path, uint64_t file_size)
{
    rip_reader_t *r;
    rip_error_t err;
    rip_record_t rec;
    CHECK_STATUS(rip_reader_open(path, &r, &err), RIP_OK);
    const rip_header_t *h = rip_reader_header(r);
    CHECK_U(h->is_process, 0);
    CHECK_U(h->major, RIP_FORMAT_MAJOR);
    CHECK_U(h->minor, RIP_FORMAT_MINOR);
    CHECK_U(h->time_shift, 0);
    CHECK_U(h->pid, 4711);
    CHECK_U(h->tid, 4712);
    CHECK_U(h->recording, 2);
    CHECK_U(h->serial, 3);
    CHECK_U(h->start_ns, 123456789012345ull);

    next_ok(r, &rec, RIP_REC_MODULES);
    CHECK_U(rec.t, 0);
    CHECK_U(rec.u.modules.count, 2);
    CHECK_U(rec.offset, 7);
    next_ok(r, &rec, RIP_REC_MODULE);
    CHECK_U(rec.u.module.bias, 0x555555554000ull);
    CHECK_RSTR(rec.u.module.path, "/usr/bin/prog with space");
    CHECK_U(rec.u.module.build_id.len, 4);
    CHECK(memcmp(rec.u.module.build_id.ptr, "\x01\x02\xab\xcd", 4) == 0);
    CHECK_U(rec.u.module.nseg, 3);
    CHECK_U(rec.u.module.segs[1].start, 0x555555555000ull);
    CHECK_U(rec.u.module.segs[1].size, 0x2345);
    CHECK_U(rec.u.module.segs[1].flags, 5);
    CHECK_U(rec.u.module.segs[2].flags, 6);
    next_ok(r, &rec, RIP_REC_MODULE);
    CHECK_U(rec.u.module.path.len, RIP_MAX_STRING);
    CHECK(memcmp(rec.u.module.path.ptr, long_path, RIP_MAX_STRING) == 0);
    CHECK_U(rec.u.module.build_id.len, 0);
    CHECK_U(rec.u.module.nseg, 0);
    next_ok(r, &rec, RIP_REC_THREAD_NAME);
    CHECK_U(rec.t, 5);
    CHECK_RSTR(rec.u.name.text, "worker-1");
    next_ok(r, &rec, RIP_REC_STACK);
    CHECK_U(rec.u.stack.id, 1);
    CHECK_U(rec.u.stack.depth, 1);
    CHECK_U(rec.u.stack.ips[0], 0xffffffffffffff00ull);
    for (uint64_t id = 2; id <= 3; id++) {
        next_ok(r, &rec, RIP_REC_STACK);
        CHECK_U(rec.u.stack.id, id);
        CHECK_U(rec.u.stack.depth, RIP_MAX_DEPTH);
        for (int i = 0; i < RIP_MAX_DEPTH; i++)
            if (rec.u.stack.ips[i] != deep[i])
                CHECK_FAIL("stack %" PRIu64 " ip[%d]: got 0x%" PRIx64 ", expected 0x%" PRIx64, id, i,
                      rec.u.stack.ips[i], deep[i]);
    }

    const uint64_t T = 1ull << 50, T62 = 1ull << 62;
    next_ok(r, &rec, RIP_REC_ALLOC);
    check_alloc(&rec, RIP_CALL_MALLOC, 10, 0xffffffffffff0000ull, 0, 1, 0, 0, 0);
    next_ok(r, &rec, RIP_REC_ALLOC);
    check_alloc(&rec, RIP_CALL_CALLOC, 10, 0x10, 1ull << 40, 2, 0, 0, 0);
    next_ok(r, &rec, RIP_REC_FREE);
    CHECK_U(rec.t, T);
    CHECK_U(rec.u.free.addr, 0xffffffffffff0000ull);
    next_ok(r, &rec, RIP_REC_ALLOC);
    check_alloc(&rec, RIP_CALL_REALLOC, T + 1, 0x20, 5, 0, 0, 0, 0);
    next_ok(r, &rec, RIP_REC_ALLOC);
    check_alloc(&rec, RIP_CALL_REALLOC, T + 9, 0xffffffffffff0000ull, 7, 3, 0, 0x20, T + 2);
    next_ok(r, &rec, RIP_REC_ALLOC);
    check_alloc(&rec, RIP_CALL_REALLOCARRAY, T62, 0x30, UINT64_MAX, 0, 0, 0xfffffffffffffff0ull, 1);
    next_ok(r, &rec, RIP_REC_ALLOC);
    check_alloc(&rec, RIP_CALL_POSIX_MEMALIGN, T62, 0x40, 64, 1, 64, 0, 0);
    next_ok(r, &rec, RIP_REC_ALLOC);
    check_alloc(&rec, RIP_CALL_ALIGNED_ALLOC, T62, 0x80, 128, 1, 1ull << 63, 0, 0);
    next_ok(r, &rec, RIP_REC_ALLOC);
    check_alloc(&rec, RIP_CALL_MEMALIGN, T62, 0x1000, 1, 1, 4096, 0, 0);
    next_ok(r, &rec, RIP_REC_ALLOC);
    check_alloc(&rec, RIP_CALL_VALLOC, T62, 0x2000, 1, 1, 4096, 0, 0);
    next_ok(r, &rec, RIP_REC_ALLOC);
    check_alloc(&rec, RIP_CALL_PVALLOC, T62, 0x3000, 4096, 1, 4096, 0, 0);
    next_ok(r, &rec, RIP_REC_FREE);
    CHECK_U(rec.t, T62 + 1);
    CHECK_U(rec.u.free.addr, 0);
    next_ok(r, &rec, RIP_REC_MARK);
    CHECK_U(rec.t, 77);
    CHECK_RSTR(rec.u.name.text, "phase one \\ \n done");
    next_ok(r, &rec, RIP_REC_LOST);
    CHECK_U(rec.t, 78);
    CHECK_U(rec.u.lost.count, UINT64_MAX);
    CHECK_RSTR(rec.u.lost.reason, "buffer full");
    next_ok(r, &rec, RIP_REC_TOTALS);
    CHECK_U(rec.t, 78);
    CHECK_U(rec.u.totals.allocs, 1000003);
    CHECK_U(rec.u.totals.bytes, UINT64_MAX);
    CHECK_U(rec.u.totals.frees, 0);
    next_ok(r, &rec, RIP_REC_MARK);
    CHECK_RSTR(rec.u.name.text, "");
    uint64_t first_block = rec.offset;
    CHECK_U(first_block, 7);

    uint64_t last_offset = first_block;
    unsigned blocks = 1;
    for (uint32_t i = 0; i < BULK; i++) {
        ev_t e = bulk_event(i);
        next_ok(r, &rec, e.is_free ? RIP_REC_FREE : RIP_REC_ALLOC);
        if (rec.offset != last_offset) {
            CHECK(rec.offset > last_offset);
            last_offset = rec.offset;
            blocks++;
        }
        if (e.is_free) {
            CHECK_U(rec.t, e.t);
            CHECK_U(rec.u.free.addr, e.addr);
        } else {
            check_alloc(&rec, e.call, e.t, e.addr, e.size, e.stack, e.align, e.old,
                        e.old ? e.old_t : 0);
        }
    }
    CHECK_STATUS(rip_reader_next(r, &rec, &err), RIP_END);
    CHECK_STATUS(rip_reader_next(r, &rec, &err), RIP_END);   /* sticky */
    rip_reader_close(r);
    /* About 7 bytes per bulk event: at least 6 full 64 KiB blocks after the first. */
    if (blocks < 7)
        CHECK_FAIL("bulk events took %u blocks, expected at least 7", blocks);
    size_t len;
    free(slurp(path, &len));
    CHECK_U(len, file_size);
}

static void process_file(void)
{
    rip_header_t h = {1, 0, 0, 999, 55 /* ignored */, 1, 9 /* ignored */, 42, 0, 0, 0};
    tfile_t f;
    tfile_open(&f, "roundtrip-process", 64 << 10, &h);
    const char *argv[3] = {"./server", "--port", "8080"};
    for (int i = 0; i < 40; i++) {
        memset(long_args[i], 'a' + i % 26, 4000);
        argv_long[i] = long_args[i];
    }
    CHECK_STATUS(rip_writer_process(f.w, 1, "/usr/bin/server", 3, argv, 1700000000123456789ull,
                                    "monotonic", 4096), RIP_OK);
    CHECK_STATUS(rip_writer_config(f.w, 64, 1000000, 1024, 4096, 12, "/tmp/out dir"), RIP_OK);
    CHECK_STATUS(rip_writer_sampling(f.w, 524288, 999999999), RIP_OK);
    CHECK_STATUS(rip_writer_on(f.w, 0, "env"), RIP_OK);
    CHECK_STATUS(rip_writer_process(f.w, 2, long_path, 40, argv_long, 1, "monotonic", 65536), RIP_OK);
    CHECK_STATUS(rip_writer_off(f.w, 999999, "error: disk full"), RIP_OK);
    CHECK_STATUS(rip_writer_flush(f.w), RIP_OK);
    uint64_t size = rip_writer_file_size(f.w);

    rip_reader_t *r;
    rip_error_t err;
    rip_record_t rec;
    CHECK_STATUS(rip_reader_open(f.path, &r, &err), RIP_OK);
    const rip_header_t *rh = rip_reader_header(r);
    CHECK_U(rh->is_process, 1);
    CHECK_U(rh->pid, 999);
    CHECK_U(rh->tid, 0);
    CHECK_U(rh->serial, 0);
    CHECK_U(rh->recording, 1);
    CHECK_U(rh->start_ns, 42);
    next_ok(r, &rec, RIP_REC_PROCESS);
    CHECK_U(rec.u.process.ppid, 1);
    CHECK_RSTR(rec.u.process.exe, "/usr/bin/server");
    CHECK_U(rec.u.process.argc, 3);
    CHECK_RSTR(rec.u.process.argv[0], "./server");
    CHECK_RSTR(rec.u.process.argv[2], "8080");
    CHECK_U(rec.u.process.wall_ns, 1700000000123456789ull);
    CHECK_RSTR(rec.u.process.clock, "monotonic");
    CHECK_U(rec.u.process.page_size, 4096);
    next_ok(r, &rec, RIP_REC_CONFIG);
    CHECK_U(rec.u.config.depth, 64);
    CHECK_U(rec.u.config.sample_ppm, 1000000);
    CHECK_U(rec.u.config.buffer_kb, 1024);
    CHECK_U(rec.u.config.max_threads, 4096);
    CHECK_U(rec.u.config.signal, 12);
    CHECK_RSTR(rec.u.config.dir, "/tmp/out dir");
    next_ok(r, &rec, RIP_REC_SAMPLING);
    CHECK_U(rec.u.sampling.interval, 524288);
    CHECK_U(rec.u.sampling.seed, 999999999);
    next_ok(r, &rec, RIP_REC_ON);
    CHECK_U(rec.t, 0);
    CHECK_RSTR(rec.u.onoff.how, "env");
    /* 40 arguments of 4000 bytes do not fit a 64 KiB block with a 4096-byte exe: the first
     * ones that fit are kept and "..." ends the list. */
    next_ok(r, &rec, RIP_REC_PROCESS);
    CHECK_U(rec.u.process.exe.len, RIP_MAX_STRING);
    /* Room for arguments: 65264 (a 64 KiB block's raw capacity) - 16 (column directory) - 1
     * (type) - 3 (length) - 4123 (other fields, argc counted as 10 bytes) = 61121 bytes; an
     * argument takes 4002, so 15 fit (60030), and "..." (4 bytes) still fits after them: 16
     * arguments. */
    CHECK_U(rec.u.process.argc, 16);
    for (uint32_t i = 0; i + 1 < rec.u.process.argc; i++) {
        CHECK_U(rec.u.process.argv[i].len, 4000);
        CHECK(memcmp(rec.u.process.argv[i].ptr, long_args[i], 4000) == 0);
    }
    CHECK_RSTR(rec.u.process.argv[rec.u.process.argc - 1], "...");
    CHECK_U(rec.u.process.page_size, 65536);
    next_ok(r, &rec, RIP_REC_OFF);
    CHECK_U(rec.t, 999999);
    CHECK_RSTR(rec.u.onoff.how, "error: disk full");
    CHECK_STATUS(rip_reader_next(r, &rec, &err), RIP_END);
    rip_reader_close(r);
    size_t len;
    free(slurp(f.path, &len));
    CHECK_U(len, size);
    tfile_close(&f, 1);
}

/* The exact content of a block the writer made with time_shift 2: the header ending in
 * time_shift, the column directory, the records, then the time, address, size and stack
 * columns. Times are stored divided by 4. An address that an event of the block had at most
 * 4096 events before, and that no other address of the same hash slot ((addr >> 4) & 4095)
 * displaced since, is stored as the distance to that event (value distance << 1 | 1, plain
 * code, even when the address is not a multiple of 16); otherwise an address delta that is a
 * multiple of 16 is stored in 16-byte units under the plain type code (value units << 1 in
 * zigzag), another one in bytes under the code plus 0x20. Read back, times come rounded down to
 * a multiple of 4 ns and addresses exact. */
static void encoding(void)
{
    rip_header_t h = thread_header();
    h.time_shift = 2;
    tfile_t f;
    tfile_open(&f, "roundtrip-enc", 64 << 10, &h);
    CHECK_STATUS(rip_writer_free(f.w, 10, 0x1000), RIP_OK);
    CHECK_STATUS(rip_writer_alloc(f.w, RIP_CALL_MALLOC, 13, 0x1008, 5, 0, 0, 0, 0), RIP_OK);
    CHECK_STATUS(rip_writer_free(f.w, 21, 0xff8), RIP_OK);
    CHECK_STATUS(rip_writer_alloc(f.w, RIP_CALL_REALLOC, 24, 0x1000, 7, 0, 0, 0xff8, 22), RIP_OK);
    CHECK_STATUS(rip_writer_alloc(f.w, RIP_CALL_POSIX_MEMALIGN, 25, 0x1040, 64, 0, 64, 0, 0), RIP_OK);
    CHECK_STATUS(rip_writer_free(f.w, 26, 0x1040), RIP_OK);
    CHECK_STATUS(rip_writer_alloc(f.w, RIP_CALL_MALLOC, 29, 0xff8, 9, 0, 0, 0, 0), RIP_OK);
    CHECK_STATUS(rip_writer_free(f.w, 30, 0x1000), RIP_OK);
    CHECK_STATUS(rip_writer_free(f.w, 30, 0xff8), RIP_OK);
    CHECK_STATUS(rip_writer_alloc(f.w, RIP_CALL_MALLOC, 33, 0x2003, 3, 0, 0, 0, 0), RIP_OK);
    CHECK_STATUS(rip_writer_free(f.w, 40, 0x2003), RIP_OK);
    CHECK_STATUS(rip_writer_mark(f.w, 41, "m"), RIP_OK);
    CHECK_STATUS(rip_writer_flush(f.w), RIP_OK);

    static bytes_t expect;
    expect.n = 0;
    b_raw(&expect, "RIPT", 4);
    b_le16(&expect, RIP_FORMAT_MAJOR);
    b_le16(&expect, RIP_FORMAT_MINOR);
    b_le32(&expect, 28);
    b_le32(&expect, 4711);
    b_le32(&expect, 4712);
    b_le32(&expect, 2);
    b_le32(&expect, 3);
    b_le64(&expect, 123456789012345ull);
    b_le32(&expect, 2);                /* time_shift */
    static const uint8_t dir[16] = {11, 0, 0, 0, 13, 0, 0, 0, 5, 0, 0, 0, 5, 0, 0, 0};
    /* Events 0-10; slot is the hash slot of the address. */
    static const uint8_t rec[] = {
        0x10,                          /* 0 free 0x1000 (slot 0x100) */
        0x21,                          /* 1 malloc 0x1008: slot 0x100 holds 0x1000; 8 bytes */
        0x10,                          /* 2 free 0xff8 (slot 0xff): delta -16, one unit */
        0x23, 0x0f, 0x01,              /* 3 realloc 0x1000: slot 0x100 now holds 0x1008, so
                                        * no reference; 8 bytes. old -8, dt_old 1 */
        0x05, 0x40,                    /* 4 posix_memalign 0x1040: 4 units; align 64 */
        0x10,                          /* 5 free 0x1040: event 4, 1 back */
        0x01,                          /* 6 malloc 0xff8: event 2, 4 back */
        0x10,                          /* 7 free 0x1000: event 3, 4 back */
        0x10,                          /* 8 free 0xff8: event 6, 2 back */
        0x21,                          /* 9 malloc 0x2003: new, 0x100b bytes from 0xff8 */
        0x10,                          /* 10 free 0x2003: event 9, 1 back, under the plain
                                        * code though not a multiple of 16 */
        0x43, 0x03, 0x0a, 0x01, 'm',   /* marker at 10 units (41 ns) */
    };
    static const uint8_t cols[] = {
        /* time: 10, 13, 21, 24, 25, 26, 29, 30, 30, 33, 40 ns in units of 4 (2, 3, 5, 6, 6, 6,
         * 7, 7, 7, 8, 10), as deltas */
        0x02, 0x01, 0x02, 0x01, 0x00, 0x00, 0x01, 0x00, 0x00, 0x01, 0x02,
        /* address: zigzag(0x100 units) << 1 = 0x400, zigzag 8 = 16, zigzag(-1) << 1 = 2, 16,
         * zigzag(4) << 1 = 16, then 1 << 1 | 1, 4 << 1 | 1, 4 << 1 | 1, 2 << 1 | 1, zigzag
         * 0x100b = 0x2016, 1 << 1 | 1 */
        0x80, 0x08, 0x10, 0x02, 0x10, 0x10, 0x03, 0x09, 0x09, 0x05, 0x96, 0x40, 0x03,
        0x05, 0x07, 0x40, 0x09, 0x03,        /* size */
        0x00, 0x00, 0x00, 0x00, 0x00,        /* stack */
    };
    b_raw(&expect, dir, sizeof dir);
    b_raw(&expect, rec, sizeof rec);
    b_raw(&expect, cols, sizeof cols);

    size_t len;
    uint8_t *data = slurp(f.path, &len);
    uint32_t stored = (uint32_t)data[7] | (uint32_t)data[8] << 8 | (uint32_t)data[9] << 16 |
                      (uint32_t)data[10] << 24;
    CHECK_U(len, 7 + 4 + (size_t)stored + 4 + 4);   /* one block and the end mark */
    static uint8_t out[1 << 16];
    int n = LZ4_decompress_safe((const char *)data + 11, (char *)out, (int)stored, (int)sizeof out);
    CHECK_U(n, expect.n);
    for (size_t i = 0; i < expect.n; i++)
        if (out[i] != expect.b[i])
            CHECK_FAIL("decompressed byte %zu: got 0x%02x, expected 0x%02x", i, out[i], expect.b[i]);
    free(data);

    rip_reader_t *r;
    rip_error_t err;
    rip_record_t rd;
    CHECK_STATUS(rip_reader_open(f.path, &r, &err), RIP_OK);
    CHECK_U(rip_reader_header(r)->time_shift, 2);
    next_ok(r, &rd, RIP_REC_FREE);
    CHECK_U(rd.t, 8);
    CHECK_U(rd.u.free.addr, 0x1000);
    next_ok(r, &rd, RIP_REC_ALLOC);
    check_alloc(&rd, RIP_CALL_MALLOC, 12, 0x1008, 5, 0, 0, 0, 0);
    next_ok(r, &rd, RIP_REC_FREE);
    CHECK_U(rd.t, 20);
    CHECK_U(rd.u.free.addr, 0xff8);
    next_ok(r, &rd, RIP_REC_ALLOC);
    check_alloc(&rd, RIP_CALL_REALLOC, 24, 0x1000, 7, 0, 0, 0xff8, 20);
    next_ok(r, &rd, RIP_REC_ALLOC);
    check_alloc(&rd, RIP_CALL_POSIX_MEMALIGN, 24, 0x1040, 64, 0, 64, 0, 0);
    next_ok(r, &rd, RIP_REC_FREE);
    CHECK_U(rd.t, 24);
    CHECK_U(rd.u.free.addr, 0x1040);
    next_ok(r, &rd, RIP_REC_ALLOC);
    check_alloc(&rd, RIP_CALL_MALLOC, 28, 0xff8, 9, 0, 0, 0, 0);
    next_ok(r, &rd, RIP_REC_FREE);
    CHECK_U(rd.t, 28);
    CHECK_U(rd.u.free.addr, 0x1000);
    next_ok(r, &rd, RIP_REC_FREE);
    CHECK_U(rd.t, 28);
    CHECK_U(rd.u.free.addr, 0xff8);
    next_ok(r, &rd, RIP_REC_ALLOC);
    check_alloc(&rd, RIP_CALL_MALLOC, 32, 0x2003, 3, 0, 0, 0, 0);
    next_ok(r, &rd, RIP_REC_FREE);
    CHECK_U(rd.t, 40);
    CHECK_U(rd.u.free.addr, 0x2003);
    next_ok(r, &rd, RIP_REC_MARK);
    CHECK_U(rd.t, 40);
    CHECK_RSTR(rd.u.name.text, "m");
    CHECK_STATUS(rip_reader_next(r, &rd, &err), RIP_END);
    rip_reader_close(r);
    tfile_close(&f, 1);
}

/* time_shift 2 through several blocks: every time comes back as (t >> 2) << 2, a realloc's
 * old_t too, and addresses aligned to 16 or not, in any order, come back exact. */
#define MIXED 40000

static ev_t mixed_event(uint32_t i)
{
    /* Neighbours' deltas are then multiples of 16 or not in every combination: aligned to
     * aligned, aligned to unaligned, unaligned to unaligned with a multiple-of-16 delta (1, 1)
     * and without one, unaligned to aligned. */
    static const uint64_t low[5] = {0, 8, 1, 1, 15};
    ev_t e = bulk_event(i);
    e.t = 3 + (uint64_t)i * 5 + i % 3 + (i / 11) * 999983ull;   /* grows; mostly not a multiple of 4 */
    e.addr = (e.addr & ~(uint64_t)15) | low[i % 5];
    if (e.old) {
        e.old = e.addr ^ 0x1237;
        e.old_t = e.t - i % 500;
    }
    return e;
}

static uint64_t down4(uint64_t t)
{
    return t >> 2 << 2;
}

static void shifted(void)
{
    rip_header_t h = thread_header();
    h.time_shift = 2;
    tfile_t f;
    tfile_open(&f, "roundtrip-shift", 64 << 10, &h);
    rip_writer_t *w = f.w;
    CHECK_STATUS(rip_writer_thread_name(w, 3, "t"), RIP_OK);
    CHECK_STATUS(rip_writer_modules(w, 6, 0), RIP_OK);
    CHECK_STATUS(rip_writer_lost(w, 1001, 2, "x"), RIP_OK);
    CHECK_STATUS(rip_writer_mark(w, UINT64_MAX, "top"), RIP_OK);
    CHECK_STATUS(rip_writer_stack(w, 1, deep, 1), RIP_OK);
    CHECK_STATUS(rip_writer_stack(w, 2, deep, 2), RIP_OK);
    for (uint32_t i = 0; i < MIXED; i++) {
        ev_t e = mixed_event(i);
        if (e.is_free)
            CHECK_STATUS(rip_writer_free(w, e.t, e.addr), RIP_OK);
        else
            CHECK_STATUS(rip_writer_alloc(w, e.call, e.t, e.addr, e.size, e.stack, e.align, e.old,
                                          e.old_t), RIP_OK);
    }
    /* Deltas at the edges, in a block of their own so the bases start from 0. */
    CHECK_STATUS(rip_writer_flush(w), RIP_OK);
    CHECK_STATUS(rip_writer_free(w, 1, 0x8), RIP_OK);
    CHECK_STATUS(rip_writer_free(w, 2, 0x8000000000000008ull), RIP_OK);   /* delta -2^63: units */
    CHECK_STATUS(rip_writer_free(w, 7, 0xfffffffffffffff9ull), RIP_OK);   /* 2^63 - 15: bytes */
    CHECK_STATUS(rip_writer_free(w, 1ull << 40, 0x9), RIP_OK);            /* 16 across the top */
    CHECK_STATUS(rip_writer_alloc(w, RIP_CALL_REALLOC, UINT64_MAX, 0xfffffffffffffff0ull, 1, 0, 0,
                                  0x9, UINT64_MAX - 9), RIP_OK);
    CHECK_STATUS(rip_writer_flush(w), RIP_OK);

    rip_reader_t *r;
    rip_error_t err;
    rip_record_t rec;
    CHECK_STATUS(rip_reader_open(f.path, &r, &err), RIP_OK);
    CHECK_U(rip_reader_header(r)->major, RIP_FORMAT_MAJOR);
    CHECK_U(rip_reader_header(r)->time_shift, 2);
    next_ok(r, &rec, RIP_REC_THREAD_NAME);
    CHECK_U(rec.t, 0);
    next_ok(r, &rec, RIP_REC_MODULES);
    CHECK_U(rec.t, 4);
    next_ok(r, &rec, RIP_REC_LOST);
    CHECK_U(rec.t, 1000);
    CHECK_U(rec.u.lost.count, 2);
    next_ok(r, &rec, RIP_REC_MARK);
    CHECK_U(rec.t, UINT64_MAX - 3);
    next_ok(r, &rec, RIP_REC_STACK);
    next_ok(r, &rec, RIP_REC_STACK);
    uint64_t last_offset = rec.offset;
    unsigned blocks = 1;
    for (uint32_t i = 0; i < MIXED; i++) {
        ev_t e = mixed_event(i);
        next_ok(r, &rec, e.is_free ? RIP_REC_FREE : RIP_REC_ALLOC);
        if (rec.offset != last_offset) {
            last_offset = rec.offset;
            blocks++;
        }
        if (e.is_free) {
            CHECK_U(rec.t, down4(e.t));
            CHECK_U(rec.u.free.addr, e.addr);
        } else {
            check_alloc(&rec, e.call, down4(e.t), e.addr, e.size, e.stack, e.align, e.old,
                        e.old ? down4(e.old_t) : 0);
        }
    }
    if (blocks < 5)
        CHECK_FAIL("mixed events took %u blocks, expected at least 5", blocks);
    next_ok(r, &rec, RIP_REC_FREE);
    CHECK_U(rec.t, 0);
    CHECK_U(rec.u.free.addr, 0x8);
    next_ok(r, &rec, RIP_REC_FREE);
    CHECK_U(rec.t, 0);
    CHECK_U(rec.u.free.addr, 0x8000000000000008ull);
    next_ok(r, &rec, RIP_REC_FREE);
    CHECK_U(rec.t, 4);
    CHECK_U(rec.u.free.addr, 0xfffffffffffffff9ull);
    next_ok(r, &rec, RIP_REC_FREE);
    CHECK_U(rec.t, 1ull << 40);
    CHECK_U(rec.u.free.addr, 0x9);
    next_ok(r, &rec, RIP_REC_ALLOC);
    check_alloc(&rec, RIP_CALL_REALLOC, UINT64_MAX - 3, 0xfffffffffffffff0ull, 1, 0, 0, 0x9,
                UINT64_MAX - 11);
    CHECK_STATUS(rip_reader_next(r, &rec, &err), RIP_END);
    rip_reader_close(r);
    tfile_close(&f, 1);
}

/* References through the real writer and reader: addresses reused at distances 1, 2, 4095,
 * 4096 (references), 4097 and 5000 (too far: deltas), across block boundaries the writer made
 * itself and ones made by a flush, between two addresses of the same hash slot, and at
 * addresses not aligned to 16. Every time and address must come back exact, and the file's
 * type codes and address column must be what the rule predicts, computed here by scanning the
 * block's earlier events for the latest one of the same slot. */
#define REFS_MAX 65536

typedef struct {
    int is_free;
    uint64_t t, addr;
} rev_t;

static rev_t revs[REFS_MAX];
static uint8_t rev_flush[REFS_MAX];    /* a flush follows this event */
static uint32_t nrevs;
static uint64_t rev_now;

/* Parsed from the file, per event: type code, address column value, block number. */
static uint8_t got_code[REFS_MAX];
static uint64_t got_value[REFS_MAX];
static uint32_t got_block[REFS_MAX];

static uint32_t rev_add(int is_free, uint64_t addr)
{
    CHECK(nrevs < REFS_MAX);
    /* Steps of 0 to 12 ns, and a jump of 2^33 ns every 1000 events. */
    rev_now += (nrevs * 7919u) % 13 + (nrevs % 1000 == 999 ? 1ull << 33 : 0);
    revs[nrevs] = (rev_t){is_free, rev_now, addr};
    return nrevs++;
}

static void rev_flush_here(void)
{
    rev_flush[nrevs - 1] = 1;
}

static uint64_t zz(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static size_t var_len(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static uint32_t slot_of(uint64_t addr)
{
    return (uint32_t)(addr >> 4) & 4095;
}

/* Walks the frame's blocks and fills got_* from each block's records (one type byte per event:
 * the file holds nothing else) and address column. Returns the number of blocks; addr_len gets
 * each block's address column length. */
static uint32_t parse_events(const uint8_t *data, size_t len, size_t *addr_len, uint32_t cap)
{
    static uint8_t out[1 << 16];
    size_t at = 7;
    uint32_t blocks = 0, ev = 0;
    for (;;) {
        CHECK(at + 4 <= len);
        uint32_t stored = (uint32_t)data[at] | (uint32_t)data[at + 1] << 8 |
                          (uint32_t)data[at + 2] << 16 | (uint32_t)data[at + 3] << 24;
        if (stored == 0)
            break;
        int n = LZ4_decompress_safe((const char *)data + at + 4, (char *)out, (int)stored,
                                    (int)sizeof out);
        CHECK(n > 0);
        size_t p = blocks == 0 ? 40 : 0, cols = 0, clen[4];
        for (int i = 0; i < 4; i++) {
            const uint8_t *d = out + p + 4 * (size_t)i;
            clen[i] = (size_t)d[0] | (size_t)d[1] << 8 | (size_t)d[2] << 16 | (size_t)d[3] << 24;
            cols += clen[i];
        }
        size_t rec = p + 16, rec_end = (size_t)n - cols;
        const uint8_t *a = out + rec_end + clen[0], *a_end = a + clen[1];
        CHECK(blocks < cap);
        addr_len[blocks] = clen[1];
        for (size_t i = rec; i < rec_end; i++) {
            CHECK(ev < REFS_MAX);
            uint64_t v = 0;
            unsigned shift = 0;
            do {
                CHECK(a < a_end);
                v |= (uint64_t)(*a & 0x7f) << shift;
                shift += 7;
            } while (*a++ & 0x80);
            got_code[ev] = out[i];
            got_value[ev] = v;
            got_block[ev] = blocks;
            ev++;
        }
        CHECK(a == a_end);
        at += 4 + stored + 4;
        blocks++;
    }
    CHECK_U(ev, nrevs);
    return blocks;
}

static void references(void)
{
    nrevs = 0;
    rev_now = 1000;
    memset(rev_flush, 0, sizeof rev_flush);

    /* Block 0: 1000 alternating mallocs and frees of one address: distance 1. */
    const uint64_t X = 0x7f0000001230ull;
    for (int i = 0; i < 1000; i++)
        rev_add(i % 2, X);
    rev_flush_here();
    /* Block 1: two addresses 2^40 + 16 apart (of different hash slots), each used every other
     * event: distance 2, one byte where a delta would take six. */
    const uint64_t A = 0x7f0000004000ull, B = A + (1ull << 40) + 16;
    CHECK(slot_of(A) != slot_of(B));
    uint32_t s2 = nrevs;
    for (int i = 0; i < 250; i++) {
        rev_add(0, A);
        rev_add(0, B);
        rev_add(1, A);
        rev_add(1, B);
    }
    rev_flush_here();
    /* Blocks 2-5: T (hash slot 7) allocated, then D - 1 allocations of other addresses (slots
     * 8-4007, none twice), then T freed D events later. Each block starts with T again, one
     * event after the free of T that ended the block before. */
    static const uint32_t dist[4] = {4095, 4096, 4097, 5000};
    uint32_t t_malloc[4], t_free[4];
    const uint64_t T = 0x600001000070ull;
    CHECK_U(slot_of(T), 7);
    for (int d = 0; d < 4; d++) {
        t_malloc[d] = rev_add(0, T);
        for (uint32_t k = 0; k + 1 < dist[d]; k++)
            rev_add(0, 0x600000000000ull + 16 * (8 + k % 4000) + (k / 4000) * 0x100000ull);
        t_free[d] = rev_add(1, T);
        CHECK_U(t_free[d] - t_malloc[d], dist[d]);
        rev_flush_here();
    }
    /* Block 6: C1 and C2 share a hash slot and alternate, so each displaces the other and
     * neither is found; then C1 alternates with C3 of another slot, and both are. */
    const uint64_t C1 = 0x500000000100ull, C2 = C1 + 0x10000, C3 = 0x500000000200ull;
    CHECK_U(slot_of(C1), slot_of(C2));
    CHECK(slot_of(C1) != slot_of(C3));
    uint32_t s6 = nrevs;
    for (int i = 0; i < 200; i++) {
        rev_add(0, C1);
        rev_add(0, C2);
        rev_add(1, C1);
        rev_add(1, C2);
    }
    uint32_t s6b = nrevs;
    for (int i = 0; i < 200; i++) {
        rev_add(0, C1);
        rev_add(0, C3);
        rev_add(1, C1);
        rev_add(1, C3);
    }
    rev_flush_here();
    /* Block 7: addresses not aligned to 16, found by reference under the plain codes. */
    const uint64_t U = 0x500000000009ull, V = 0x50000000001full;
    uint32_t s7 = nrevs;
    for (int i = 0; i < 300; i++) {
        rev_add(0, U);
        rev_add(0, V);
        rev_add(1, U);
        rev_add(1, V);
    }
    rev_flush_here();
    /* Then, with no flush, enough events for the writer to start blocks itself: three addresses
     * allocated and freed in turn (distance 3), whose first event in each new block must be a
     * delta. */
    uint32_t s8 = nrevs;
    const uint64_t G[3] = {0x7e0000000040ull, 0x7e0001000080ull, 0x7e00030000c0ull};
    CHECK(slot_of(G[0]) != slot_of(G[1]) && slot_of(G[1]) != slot_of(G[2]) &&
          slot_of(G[0]) != slot_of(G[2]));
    for (int i = 0; i < 36000; i++)
        rev_add(i % 6 >= 3, G[i % 3]);

    rip_header_t h = thread_header();
    tfile_t f;
    tfile_open(&f, "roundtrip-refs", 64 << 10, &h);
    for (uint32_t i = 0; i < nrevs; i++) {
        const rev_t *e = &revs[i];
        if (e->is_free)
            CHECK_STATUS(rip_writer_free(f.w, e->t, e->addr), RIP_OK);
        else
            CHECK_STATUS(rip_writer_alloc(f.w, RIP_CALL_MALLOC, e->t, e->addr, i % 1000, 0, 0, 0,
                                          0), RIP_OK);
        if (rev_flush[i])
            CHECK_STATUS(rip_writer_flush(f.w), RIP_OK);
    }
    CHECK_STATUS(rip_writer_flush(f.w), RIP_OK);

    size_t len, addr_len[64];
    uint8_t *data = slurp(f.path, &len);
    CHECK_U(len, rip_writer_file_size(f.w));
    uint32_t blocks = parse_events(data, len, addr_len, 64);
    free(data);

    /* Read back: every event exact, and in the block the file says. */
    rip_reader_t *r;
    rip_error_t err;
    rip_record_t rec;
    CHECK_STATUS(rip_reader_open(f.path, &r, &err), RIP_OK);
    uint64_t offset = 0;
    uint32_t block = 0;
    for (uint32_t i = 0; i < nrevs; i++) {
        const rev_t *e = &revs[i];
        next_ok(r, &rec, e->is_free ? RIP_REC_FREE : RIP_REC_ALLOC);
        if (i == 0)
            offset = rec.offset;
        else if (rec.offset != offset) {
            offset = rec.offset;
            block++;
        }
        if (block != got_block[i])
            CHECK_FAIL("event %u: read in block %u, the file has it in block %u", i, block,
                  got_block[i]);
        if (rec.t != e->t || (e->is_free ? rec.u.free.addr : rec.u.alloc.addr) != e->addr)
            CHECK_FAIL("event %u: t %" PRIu64 " address 0x%" PRIx64 ", expected %" PRIu64
                  " 0x%" PRIx64, i, rec.t, e->is_free ? rec.u.free.addr : rec.u.alloc.addr,
                  e->t, e->addr);
        if (!e->is_free) {
            CHECK_U(rec.u.alloc.call, RIP_CALL_MALLOC);
            CHECK_U(rec.u.alloc.size, i % 1000);
        }
    }
    CHECK_STATUS(rip_reader_next(r, &rec, &err), RIP_END);
    rip_reader_close(r);
    tfile_close(&f, 1);

    /* The encoding of every event, as the rule predicts. */
    uint32_t refs = 0, first = 0;
    uint64_t base = 0;
    for (uint32_t i = 0; i < nrevs; i++) {
        if (i > 0 && got_block[i] != got_block[i - 1]) {
            first = i;
            base = 0;
        }
        uint64_t a = revs[i].addr, back = 0, v;
        for (uint32_t j = i; j > first && i - (j - 1) <= 4096; j--) {
            if (slot_of(revs[j - 1].addr) == slot_of(a)) {
                if (revs[j - 1].addr == a)
                    back = i - (j - 1);
                break;
            }
        }
        uint8_t code = revs[i].is_free ? 0x10 : 0x01;
        int64_t d = (int64_t)(a - base);
        if (back)
            v = back << 1 | 1;
        else if (d & 15)
            v = zz(d), code |= 0x20;
        else
            v = zz(d / 16) << 1;
        if (got_code[i] != code || got_value[i] != v)
            CHECK_FAIL("event %u (block %u, address 0x%" PRIx64 "): code 0x%02x value %" PRIu64
                  ", expected 0x%02x %" PRIu64, i, got_block[i], a, got_code[i], got_value[i],
                  code, v);
        refs += back != 0;
        base = a;
    }

    /* The cases the blocks were made for. Blocks 0-7 as flushed, then at least 3 the writer
     * started itself. */
    CHECK(blocks >= 11);
    CHECK_U(got_block[s2], 1);
    CHECK_U(got_block[s6], 6);
    CHECK_U(got_block[s7], 7);
    CHECK_U(got_block[s8], 8);
    CHECK(got_block[nrevs - 1] >= 10);
    /* Block 0: the first address as a delta, then 999 references of one byte. */
    CHECK_U(addr_len[0], var_len(zz(X / 16) << 1) + 999);
    CHECK_U(got_value[0], zz(X / 16) << 1);
    for (uint32_t i = 1; i < 1000; i++)
        CHECK_U(got_value[i], 1 << 1 | 1);
    /* Block 1: two deltas, then 998 references. */
    CHECK_U(addr_len[1], var_len(zz(A / 16) << 1) + var_len(zz((1ll << 36) + 1) << 1) + 998);
    for (uint32_t i = s2 + 2; i < s2 + 1000; i++)
        CHECK_U(got_value[i], 2 << 1 | 1);
    /* Blocks 2-5: 4095 and 4096 back are references, 4097 and 5000 deltas from the address
     * before; T at a block's start is a delta from 0 though the event before it had it. */
    CHECK_U(got_value[t_free[0]], 4095 << 1 | 1);
    CHECK_U(got_value[t_free[1]], 4096 << 1 | 1);
    for (int d = 2; d < 4; d++)
        CHECK_U(got_value[t_free[d]], zz((int64_t)(T - revs[t_free[d] - 1].addr) / 16) << 1);
    for (int d = 0; d < 4; d++) {
        CHECK_U(got_block[t_malloc[d]], 2 + d);
        CHECK_U(got_value[t_malloc[d]], zz(T / 16) << 1);
    }
    /* Block 6: no references while C1 and C2 alternate, after the first event of C3 and of C1
     * with it, all of them are. */
    for (uint32_t i = s6; i < s6b; i++)
        CHECK_U(got_value[i] & 1, 0);
    CHECK_U(got_value[s6b + 1] & 1, 0);
    for (uint32_t i = s6b + 2; i < s7; i++)
        CHECK_U(got_value[i], 2 << 1 | 1);
    /* Block 7: the first two in bytes, then references under the plain codes. */
    CHECK_U(got_code[s7], 0x21);
    CHECK_U(got_code[s7 + 1], 0x21);
    for (uint32_t i = s7 + 2; i < s8; i++) {
        CHECK_U(got_code[i], revs[i].is_free ? 0x10 : 0x01);
        CHECK_U(got_value[i], 2 << 1 | 1);
    }
    /* The blocks the writer started: each begins with a delta. */
    for (uint32_t i = s8 + 1; i < nrevs; i++)
        if (got_block[i] != got_block[i - 1])
            CHECK_U(got_value[i] & 1, 0);
    /* References in all: 999 + 998 in blocks 0 and 1, 2 in blocks 2-5, 798 in block 6, 1198 in
     * block 7, and all but the first three events of each later block. */
    CHECK_U(refs, 999 + 998 + 2 + 798 + 1198 + 36000 - 3 * (blocks - 8));
}

/* Block sizes round up to the four the frame format allows; BD says which. */
static void block_sizes(void)
{
    static const struct { uint32_t ask; uint8_t bd; } cases[] = {
        {0, 0x40}, {65536, 0x40}, {65537, 0x50}, {100000, 0x50}, {1u << 20, 0x60},
        {3u << 20, 0x70}, {64u << 20, 0x70}};
    CHECK(rip_writer_footprint(1) < rip_writer_footprint(1u << 20));
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        rip_header_t h = thread_header();
        tfile_t f;
        tfile_open(&f, "roundtrip-bs", cases[i].ask, &h);
        CHECK_STATUS(rip_writer_free(f.w, 1, 2), RIP_OK);
        CHECK_STATUS(rip_writer_flush(f.w), RIP_OK);
        size_t len;
        uint8_t *data = slurp(f.path, &len);
        CHECK_U(data[5], cases[i].bd);
        size_t n;
        rip_error_t err;
        CHECK_STATUS(read_all_mem(data, len, &n, &err), RIP_END);
        CHECK_U(n, 1);
        free(data);
        tfile_close(&f, 1);
    }
}

int main(void)
{
    memset(long_path, 'p', sizeof long_path - 1);
    long_path[0] = '/';
    rip_header_t h = thread_header();
    tfile_t f;
    tfile_open(&f, "roundtrip-thread", 64 << 10, &h);
    write_thread_file(&f);
    read_thread_file(f.path, rip_writer_file_size(f.w));
    tfile_close(&f, 1);
    process_file();
    block_sizes();
    encoding();
    shifted();
    references();
    printf("roundtrip: ok\n");
    return 0;
}
