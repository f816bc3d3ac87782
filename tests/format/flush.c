/*
 * flush.c: the file is a complete lz4 frame after every flush, the size the writer reports is
 * the size on disk, and a failed write makes the writer fail for good without a crash.
 */
#include <errno.h>

#include "test_util.h"

static size_t count_records(const char *path, rip_status_t expect)
{
    size_t len, n;
    rip_error_t err;
    uint8_t *data = slurp(path, &len);
    rip_status_t st = read_all_mem(data, len, &n, &err);
    if (st != expect) {
        char buf[600];
        CHECK_FAIL("%s: got %s (%s), expected %s", path, rip_strerror(st),
              rip_error_format(&err, buf, sizeof buf), rip_strerror(expect));
    }
    free(data);
    return n;
}

static void complete_after_each_flush(void)
{
    rip_header_t h = thread_header();
    tfile_t f;
    tfile_open(&f, "flush", 64 << 10, &h);

    /* Nothing is written before the first flush. */
    size_t len;
    free(slurp(f.path, &len));
    CHECK_U(len, 0);
    CHECK_U(rip_writer_file_size(f.w), 0);
    CHECK_U(rip_writer_pending(f.w), 40);   /* the stream header (12 + header_len 28) */

    /* A flush with only the header: a frame whose block holds no records. */
    CHECK_STATUS(rip_writer_flush(f.w), RIP_OK);
    CHECK_U(count_records(f.path, RIP_END), 0);
    free(slurp(f.path, &len));
    CHECK_U(len, rip_writer_file_size(f.w));
    uint64_t before = rip_writer_file_size(f.w);
    CHECK_STATUS(rip_writer_flush(f.w), RIP_OK);   /* nothing pending: nothing written */
    CHECK_U(rip_writer_file_size(f.w), before);

    size_t total = 0;
    for (int round = 1; round <= 5; round++) {
        for (int i = 0; i < round * 1000; i++)
            CHECK_STATUS(rip_writer_free(f.w, (uint64_t)total + (uint64_t)i, 0x1000 + 16 * (uint64_t)i), RIP_OK);
        total += (size_t)round * 1000;
        CHECK(rip_writer_pending(f.w) > 0);
        CHECK_STATUS(rip_writer_flush(f.w), RIP_OK);
        CHECK_U(rip_writer_pending(f.w), 0);
        CHECK_U(count_records(f.path, RIP_END), total);
        free(slurp(f.path, &len));
        CHECK_U(len, rip_writer_file_size(f.w));
    }
    tfile_close(&f, 1);
}

static void write_failure(void)
{
    rip_header_t h = thread_header();
    tfile_t f;
    tfile_open(&f, "flush-fail", 64 << 10, &h);
    CHECK_STATUS(rip_writer_free(f.w, 1, 2), RIP_OK);
    /* A read-only descriptor makes pwrite fail with EBADF. */
    int ro = open(f.path, O_RDONLY);
    CHECK(ro >= 0);
    void *mem = aligned_alloc(16, (rip_writer_footprint(1) + 15) & ~(size_t)15);
    rip_writer_t *w = rip_writer_init(mem, 1, ro, &h);
    CHECK_STATUS(rip_writer_free(w, 1, 2), RIP_OK);
    errno = 0;
    CHECK_STATUS(rip_writer_flush(w), RIP_E_IO);
    CHECK_U(errno, EBADF);
    errno = 0;
    CHECK_STATUS(rip_writer_free(w, 3, 4), RIP_E_IO);   /* failed for good */
    CHECK_STATUS(rip_writer_flush(w), RIP_E_IO);
    CHECK_U(errno, 0);                                   /* and does not touch errno again */
    CHECK_U(rip_writer_file_size(w), 0);
    free(mem);
    close(ro);

    /* A full disk: /dev/full fails every write with ENOSPC, also when a block fills up. */
    int full = open("/dev/full", O_WRONLY);
    if (full >= 0) {
        mem = aligned_alloc(16, (rip_writer_footprint(1) + 15) & ~(size_t)15);
        w = rip_writer_init(mem, 1, full, &h);
        rip_status_t st = RIP_OK;
        int n = 0;
        while (st == RIP_OK && n < 100000) {
            st = rip_writer_free(w, (uint64_t)n, (uint64_t)n * 4096);
            n++;
        }
        CHECK_STATUS(st, RIP_E_IO);
        CHECK(n > 1000);   /* the first block filled before anything was written */
        free(mem);
        close(full);
    }
    tfile_close(&f, 1);
}

/* A record too big for any block is refused, and nothing else is lost. */
static void too_big(void)
{
    rip_header_t h = thread_header();
    tfile_t f;
    tfile_open(&f, "flush-big", 64 << 10, &h);
    static rip_segment_t segs[5000];
    for (int i = 0; i < 5000; i++)
        segs[i] = (rip_segment_t){0xffffffffffff0000ull, 0xffffffffffffull, 7};
    CHECK_STATUS(rip_writer_module(f.w, 0, "/lib/x.so", "", 0, segs, 5000), RIP_E_FULL);
    uint64_t ip = 1;
    CHECK_STATUS(rip_writer_stack(f.w, 1, &ip, 0), RIP_E_FULL);
    CHECK_STATUS(rip_writer_module(f.w, 0, "/lib/x.so", "", 0, segs, 100), RIP_OK);
    CHECK_STATUS(rip_writer_flush(f.w), RIP_OK);
    CHECK_U(count_records(f.path, RIP_END), 1);
    tfile_close(&f, 1);
}

int main(void)
{
    complete_after_each_flush();
    write_failure();
    too_big();
    printf("flush: ok\n");
    return 0;
}
