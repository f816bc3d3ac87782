/*
 * test_util.h: assertions and helpers shared by the format tests: those of ../check.h, where
 * each failure exits with status 1 (a later step would only trip over the first failure), and
 * two for the format's own types.
 */
#ifndef RIP_TEST_UTIL_H
#define RIP_TEST_UTIL_H

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <lz4.h>

#include "rip.h"

#define CHECK_STOP_ON_FAILURE 1
#include "check.h"

#define CHECK_STATUS(a, b)                                                                \
    do {                                                                                  \
        rip_status_t a_ = (a), b_ = (b);                                                  \
        if (a_ != b_)                                                                     \
            CHECK_FAIL("check failed: %s: got %s, expected %s", #a, rip_strerror(a_),     \
                       rip_strerror(b_));                                                 \
    } while (0)

/* Compares a rip_str_t with a C string. */
#define CHECK_RSTR(s, expect)                                                             \
    do {                                                                                  \
        rip_str_t s_ = (s);                                                               \
        const char *e_ = (expect);                                                        \
        if (s_.len != strlen(e_) || memcmp(s_.ptr, e_, s_.len) != 0)                      \
            CHECK_FAIL("check failed: %s: got \"%.*s\" (%zu bytes), expected \"%s\" (%zu " \
                       "bytes)",                                                          \
                       #s, (int)(s_.len > 200 ? 200 : s_.len), s_.ptr, s_.len, e_,        \
                       strlen(e_));                                                       \
    } while (0)

/* ---- A writer on a temporary file ---- */

typedef struct {
    char path[256];
    int fd;
    void *mem;
    rip_writer_t *w;
} tfile_t;

/* Directory for temporary files: the test's working directory (the build tree). */
static inline void tfile_open(tfile_t *f, const char *name, uint32_t block, const rip_header_t *h)
{
    snprintf(f->path, sizeof f->path, "%s-%d.rip", name, (int)getpid());
    f->fd = open(f->path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (f->fd < 0)
        CHECK_FAIL("cannot create %s", f->path);
    size_t n = rip_writer_footprint(block);
    f->mem = aligned_alloc(16, (n + 15) & ~(size_t)15);
    CHECK(f->mem != NULL);
    f->w = rip_writer_init(f->mem, block, f->fd, h);
    CHECK(f->w == f->mem);
}

/* A writer on a temporary file with a staging area (FORMAT.md section 6), made as the tracer
 * makes its thread files: the area's blocks allocated, the area mapped shared. */
typedef struct {
    char path[64];
    int fd;
    void *stage, *mem;
    size_t stage_size;
    rip_writer_t *w;
} tstaged_t;

static inline void tstaged_open(tstaged_t *f, const char *name, uint32_t block,
                                const rip_header_t *h)
{
    snprintf(f->path, sizeof f->path, "%s-%d.rip", name, (int)getpid());
    f->fd = open(f->path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (f->fd < 0)
        CHECK_FAIL("cannot create %s", f->path);
    f->stage_size = rip_stage_size(block);
    CHECK(posix_fallocate(f->fd, 0, (off_t)f->stage_size) == 0);
    f->stage = mmap(NULL, f->stage_size, PROT_READ | PROT_WRITE, MAP_SHARED, f->fd, 0);
    CHECK(f->stage != MAP_FAILED);
    f->mem = aligned_alloc(16, (rip_writer_footprint_staged(block) + 15) & ~(size_t)15);
    CHECK(f->mem != NULL);
    f->w = rip_writer_init_staged(f->mem, block, f->fd, h, f->stage);
}

static inline void tfile_close(tfile_t *f, int remove)
{
    close(f->fd);
    free(f->mem);
    if (remove)
        unlink(f->path);
}

static inline rip_header_t thread_header(void)
{
    rip_header_t h = {0};
    h.is_process = 0;
    h.pid = 4711;
    h.tid = 4712;
    h.recording = 2;
    h.serial = 3;
    h.start_ns = 123456789012345ull;
    return h;
}

/* Reads a whole file; exits on failure. */
static inline uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        CHECK_FAIL("cannot open %s", path);
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    size_t k;
    while ((k = fread(buf + n, 1, cap - n, f)) > 0) {
        n += k;
        if (n == cap)
            buf = realloc(buf, cap *= 2);
    }
    fclose(f);
    *len = n;
    return buf;
}

static inline void spill(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, len, f) != len || fclose(f) != 0)
        CHECK_FAIL("cannot write %s", path);
}

/* ---- Building raw streams and frames by hand, for inputs the writer never makes ---- */

typedef struct {
    uint8_t b[1 << 17];
    size_t n;
} bytes_t;

static inline void b_u8(bytes_t *b, uint8_t v) { b->b[b->n++] = v; }
static inline void b_raw(bytes_t *b, const void *p, size_t n) { memcpy(b->b + b->n, p, n); b->n += n; }
static inline void b_le16(bytes_t *b, uint16_t v) { b_u8(b, (uint8_t)v); b_u8(b, (uint8_t)(v >> 8)); }
static inline void b_le32(bytes_t *b, uint32_t v) { b_le16(b, (uint16_t)v); b_le16(b, (uint16_t)(v >> 16)); }
static inline void b_le64(bytes_t *b, uint64_t v) { b_le32(b, (uint32_t)v); b_le32(b, (uint32_t)(v >> 32)); }
static inline void b_var(bytes_t *b, uint64_t v)
{
    while (v >= 0x80) {
        b_u8(b, (uint8_t)(v | 0x80));
        v >>= 7;
    }
    b_u8(b, (uint8_t)v);
}
static inline void b_zz(bytes_t *b, int64_t v) { b_var(b, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63)); }
static inline void b_str(bytes_t *b, const char *s) { b_var(b, strlen(s)); b_raw(b, s, strlen(s)); }

/* A stream header as FORMAT.md section 2 describes, with the given version and header_len
 * (extra header bytes are zero). */
static inline void b_header(bytes_t *b, const char *magic, uint16_t major, uint16_t minor,
                            uint32_t header_len)
{
    b_raw(b, magic, 4);
    b_le16(b, major);
    b_le16(b, minor);
    b_le32(b, header_len);
    b_le32(b, 1000);         /* pid */
    b_le32(b, 1001);         /* tid */
    b_le32(b, 1);            /* recording */
    b_le32(b, 1);            /* serial */
    b_le64(b, 5000000000ull);
    for (uint32_t i = 24; i < header_len; i++)
        b_u8(b, 0xEE);
}

/* A stream header of format 2.x: the fields of b_header, then time_shift at offset 36.
 * header_len must be at least 28 (extra header bytes are 0xEE). */
static inline void b_header_v2(bytes_t *b, const char *magic, uint16_t minor, uint32_t header_len,
                               uint32_t time_shift)
{
    size_t at = b->n;
    b_header(b, magic, 2, minor, header_len);
    size_t end = b->n;
    b->n = at + 36;
    b_le32(b, time_shift);
    b->n = end;
}

/* The content of a format 2.x block under construction: its records and its four columns
 * (time, address, size, stack), kept apart until b_join lays them out. */
typedef struct {
    bytes_t rec;
    bytes_t col[4];
} block2_t;

static inline void block2_reset(block2_t *k)
{
    k->rec.n = 0;
    for (int i = 0; i < 4; i++)
        k->col[i].n = 0;
}

/* Appends a block's content as format 2.x lays it out: the column directory (the four column
 * lengths), the records, then the columns in order. */
static inline void b_join(bytes_t *b, const block2_t *k)
{
    for (int i = 0; i < 4; i++)
        b_le32(b, (uint32_t)k->col[i].n);
    b_raw(b, k->rec.b, k->rec.n);
    for (int i = 0; i < 4; i++)
        b_raw(b, k->col[i].b, k->col[i].n);
}

/* Frame header for block max id 4..7. */
static inline void b_frame_header(bytes_t *f, uint8_t bd_id)
{
    uint8_t d[2] = {0x70, (uint8_t)(bd_id << 4)};
    b_le32(f, 0x184D2204u);
    b_raw(f, d, 2);
    b_u8(f, (uint8_t)(rip_xxh32(d, 2, 0) >> 8));
}

/* Appends one block, compressed as rip requires, with its checksum. */
static inline void b_block(bytes_t *f, const void *data, size_t n)
{
    uint8_t *at = f->b + f->n + 4;
    int c = LZ4_compress_default(data, (char *)at, (int)n, (int)(sizeof f->b - f->n - 8));
    if (c <= 0)
        CHECK_FAIL("cannot compress a test block of %zu bytes", n);
    b_le32(f, (uint32_t)c);
    f->n += (size_t)c;
    b_le32(f, rip_xxh32(at, (size_t)c, 0));
}

/* Appends one block stored uncompressed (bit 31), which rip readers reject. */
static inline void b_block_raw(bytes_t *f, const void *data, size_t n)
{
    b_le32(f, (uint32_t)n | 0x80000000u);
    b_raw(f, data, n);
    b_le32(f, rip_xxh32(data, n, 0));
}

/* A whole frame of one block holding `raw`, with end mark. */
static inline void b_frame(bytes_t *f, const bytes_t *raw)
{
    f->n = 0;
    b_frame_header(f, 4);
    b_block(f, raw->b, raw->n);
    b_le32(f, 0);
}

/* Opens bytes in memory and reads until the end; returns the final status and counts records. */
static inline rip_status_t read_all_mem(const void *data, size_t n, size_t *records,
                                        rip_error_t *err)
{
    rip_reader_t *r;
    *records = 0;
    rip_status_t st = rip_reader_open_mem(data, n, "mem.rip", &r, err);
    if (st != RIP_OK)
        return st;
    rip_record_t rec;
    while ((st = rip_reader_next(r, &rec, err)) == RIP_OK)
        (*records)++;
    rip_reader_close(r);
    return st;
}



/* ---- Record fingerprints, to compare what a damaged file yields with the original ---- */

static inline uint64_t fp_mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
    return h;
}

static inline uint64_t fp_str(uint64_t h, rip_str_t s)
{
    h = fp_mix(h, s.len);
    for (size_t i = 0; i < s.len; i++)
        h = fp_mix(h, (uint8_t)s.ptr[i]);
    return h;
}

/* A hash of every field of a record (not its block offset). */
static inline uint64_t fingerprint(const rip_record_t *r)
{
    uint64_t h = fp_mix(fp_mix(0, r->kind), r->t);
    switch (r->kind) {
    case RIP_REC_ALLOC:
        h = fp_mix(h, r->u.alloc.call);
        h = fp_mix(h, r->u.alloc.addr);
        h = fp_mix(h, r->u.alloc.size);
        h = fp_mix(h, r->u.alloc.stack);
        h = fp_mix(h, r->u.alloc.align);
        h = fp_mix(h, r->u.alloc.old_addr);
        h = fp_mix(h, r->u.alloc.old_t);
        break;
    case RIP_REC_FREE:
        h = fp_mix(h, r->u.free.addr);
        break;
    case RIP_REC_STACK:
        h = fp_mix(fp_mix(h, r->u.stack.id), r->u.stack.depth);
        for (uint32_t i = 0; i < r->u.stack.depth; i++)
            h = fp_mix(h, r->u.stack.ips[i]);
        break;
    case RIP_REC_MODULES:
        h = fp_mix(h, r->u.modules.count);
        break;
    case RIP_REC_MODULE:
        h = fp_str(fp_str(fp_mix(h, r->u.module.bias), r->u.module.path), r->u.module.build_id);
        for (uint32_t i = 0; i < r->u.module.nseg; i++)
            h = fp_mix(fp_mix(fp_mix(h, r->u.module.segs[i].start), r->u.module.segs[i].size),
                       r->u.module.segs[i].flags);
        break;
    case RIP_REC_THREAD_NAME:
    case RIP_REC_MARK:
        h = fp_str(h, r->u.name.text);
        break;
    case RIP_REC_LOST:
        h = fp_str(fp_mix(h, r->u.lost.count), r->u.lost.reason);
        break;
    case RIP_REC_PROCESS:
        h = fp_str(fp_mix(h, r->u.process.ppid), r->u.process.exe);
        for (uint32_t i = 0; i < r->u.process.argc; i++)
            h = fp_str(h, r->u.process.argv[i]);
        h = fp_str(fp_mix(h, r->u.process.wall_ns), r->u.process.clock);
        h = fp_mix(h, r->u.process.page_size);
        break;
    case RIP_REC_CONFIG:
        h = fp_mix(fp_mix(fp_mix(h, r->u.config.depth), r->u.config.sample_ppm), r->u.config.buffer_kb);
        h = fp_mix(fp_mix(h, r->u.config.max_threads), r->u.config.signal);
        h = fp_str(h, r->u.config.dir);
        break;
    case RIP_REC_ON:
    case RIP_REC_OFF:
        h = fp_str(h, r->u.onoff.how);
        break;
    case RIP_REC_TOTALS:
        h = fp_mix(fp_mix(fp_mix(h, r->u.totals.allocs), r->u.totals.bytes), r->u.totals.frees);
        break;
    case RIP_REC_UNSEEN:
        h = fp_str(fp_str(fp_str(h, r->u.unseen.allocator), r->u.unseen.module), r->u.unseen.symbol);
        break;
    case RIP_REC_SAMPLING:
        h = fp_mix(fp_mix(h, r->u.sampling.interval), r->u.sampling.seed);
        break;
    case RIP_REC_POOL:
        h = fp_mix(h, r->u.pool.op);
        h = fp_mix(h, r->u.pool.pool);
        h = fp_mix(h, r->u.pool.addr);
        h = fp_mix(h, r->u.pool.size);
        h = fp_mix(h, r->u.pool.stack);
        h = fp_str(h, r->u.pool.name);
        break;
    case RIP_REC_RSS:
        h = fp_mix(fp_mix(h, r->u.rss.rss), r->u.rss.anon);
        h = fp_mix(fp_mix(h, r->u.rss.file), r->u.rss.swap);
        break;
    case RIP_REC_MAP:
        h = fp_mix(fp_mix(h, r->u.map.op), r->u.map.addr);
        h = fp_mix(fp_mix(h, r->u.map.len), r->u.map.stack);
        h = fp_mix(fp_mix(h, r->u.map.old), r->u.map.old_len);
        break;
    case RIP_REC_CHECKPOINT:
        h = fp_mix(fp_mix(h, r->u.checkpoint.number), r->u.checkpoint.nranges);
        for (uint32_t i = 0; i < r->u.checkpoint.nranges; i++)
            h = fp_mix(fp_mix(h, r->u.checkpoint.ranges[i].first), r->u.checkpoint.ranges[i].last);
        break;
    case RIP_REC_UNKNOWN:
        h = fp_mix(h, r->u.unknown.type);
        break;
    }
    return h;
}

/* Writes a small thread file of several blocks (a flush every `per_block` events) with every
 * kind of thread record; returns its bytes. */
static inline uint8_t *small_thread_file(const char *name, int events, int per_block, size_t *len)
{
    rip_header_t h = thread_header();
    tfile_t f;
    tfile_open(&f, name, 64 << 10, &h);
    rip_segment_t seg = {0x400000, 0x1000, 5};
    uint64_t ips[3] = {0x401234, 0x401000, 0x7f0000001000ull};
    CHECK_STATUS(rip_writer_modules(f.w, 1, 1), RIP_OK);
    CHECK_STATUS(rip_writer_module(f.w, 0, "/bin/prog", "\x12\x34", 2, &seg, 1), RIP_OK);
    CHECK_STATUS(rip_writer_thread_name(f.w, 2, "main"), RIP_OK);
    CHECK_STATUS(rip_writer_stack(f.w, 1, ips, 3), RIP_OK);
    for (int i = 0; i < events; i++) {
        uint64_t t = 100 + (uint64_t)i * 13, a = 0x5500000 + (uint64_t)(i % 17) * 48;
        if (i % 2)
            CHECK_STATUS(rip_writer_free(f.w, t, a), RIP_OK);
        else
            CHECK_STATUS(rip_writer_alloc(f.w, (rip_call_t)(1 + (i / 2) % 9), t, a,
                                          (uint64_t)i * 3, (uint64_t)(i % 4 == 0), 16,
                                          i % 3 ? a + 64 : 0, t - 5), RIP_OK);
        if (i % per_block == per_block - 1)
            CHECK_STATUS(rip_writer_flush(f.w), RIP_OK);
    }
    CHECK_STATUS(rip_writer_mark(f.w, 100000, "end"), RIP_OK);
    CHECK_STATUS(rip_writer_flush(f.w), RIP_OK);
    uint8_t *data = slurp(f.path, len);
    CHECK_U(*len, rip_writer_file_size(f.w));
    tfile_close(&f, 1);
    return data;
}

/* The fingerprints of all records of a complete file. */
static inline size_t all_fingerprints(const uint8_t *data, size_t len, uint64_t *fps,
                                      uint64_t *offsets, size_t cap)
{
    rip_reader_t *r;
    rip_error_t err;
    rip_record_t rec;
    CHECK_STATUS(rip_reader_open_mem(data, len, "orig.rip", &r, &err), RIP_OK);
    size_t n = 0;
    rip_status_t st;
    while ((st = rip_reader_next(r, &rec, &err)) == RIP_OK) {
        CHECK(n < cap);
        fps[n] = fingerprint(&rec);
        offsets[n] = rec.offset;
        n++;
    }
    CHECK_STATUS(st, RIP_END);
    rip_reader_close(r);
    return n;
}
#endif
