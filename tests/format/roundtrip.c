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
        FAILF("expected a record, got %s: %s", rip_strerror(st), rip_error_format(&err, buf, sizeof buf));
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
                FAILF("stack %" PRIu64 " ip[%d]: got 0x%" PRIx64 ", expected 0x%" PRIx64, id, i,
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
        FAILF("bulk events took %u blocks, expected at least 7", blocks);
    size_t len;
    free(slurp(path, &len));
    CHECK_U(len, file_size);
}

static void process_file(void)
{
    rip_header_t h = {1, 0, 0, 999, 55 /* ignored */, 1, 9 /* ignored */, 42, 0};
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
 * columns. Times are stored divided by 4; an address delta that is a multiple of 16 is stored
 * in 16-byte units under the plain type code, another one in bytes under the code plus 0x20.
 * Read back, times come rounded down to a multiple of 4 ns and addresses exact. */
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
    CHECK_STATUS(rip_writer_mark(f.w, 27, "m"), RIP_OK);
    CHECK_STATUS(rip_writer_flush(f.w), RIP_OK);

    static bytes_t expect;
    expect.n = 0;
    b_raw(&expect, "RIPT", 4);
    b_le16(&expect, 2);
    b_le16(&expect, 0);
    b_le32(&expect, 28);
    b_le32(&expect, 4711);
    b_le32(&expect, 4712);
    b_le32(&expect, 2);
    b_le32(&expect, 3);
    b_le64(&expect, 123456789012345ull);
    b_le32(&expect, 2);                /* time_shift */
    static const uint8_t dir[16] = {5, 0, 0, 0, 6, 0, 0, 0, 3, 0, 0, 0, 3, 0, 0, 0};
    static const uint8_t rec[] = {
        0x10,                          /* free 0x1000 */
        0x21,                          /* malloc 0x1008: delta 8 in bytes */
        0x10,                          /* free 0xff8: delta -16, one unit */
        0x23, 0x0f, 0x01,              /* realloc 0x1000: delta 8 in bytes; old -8, dt_old 1 */
        0x05, 0x40,                    /* posix_memalign 0x1040: delta 4 units; align 64 */
        0x43, 0x03, 0x06, 0x01, 'm',   /* marker at 6 units (27 ns) */
    };
    static const uint8_t cols[] = {
        0x02, 0x01, 0x02, 0x01, 0x00,        /* time: 10, 13, 21, 24, 25 ns in units of 4 */
        0x80, 0x04, 0x10, 0x01, 0x10, 0x08,  /* address: zigzag 0x200 (0x100 units), 16, 1, 16, 8 */
        0x05, 0x07, 0x40,                    /* size */
        0x00, 0x00, 0x00,                    /* stack */
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
            FAILF("decompressed byte %zu: got 0x%02x, expected 0x%02x", i, out[i], expect.b[i]);
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
    next_ok(r, &rd, RIP_REC_MARK);
    CHECK_U(rd.t, 24);
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
        FAILF("mixed events took %u blocks, expected at least 5", blocks);
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
    printf("roundtrip: ok\n");
    return 0;
}
