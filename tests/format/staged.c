/*
 * staged.c: the staging area of format 3.0 (FORMAT.md section 6), through the real writer on a
 * file mapped shared, then read back from memory as a process that died would leave it, and
 * altered the ways the section describes:
 *   - as left: the frame's records, then the staged ones, each exactly once;
 *   - killed between a block's write and the commit word's update (the commit word names a
 *     block already in the frame): the staged bytes are ignored, nothing is delivered twice;
 *   - killed inside a block's write (the frame ends inside the block the staging area holds):
 *     the staged records are delivered and the file reads as complete;
 *   - a commit word naming a later block (a live file whose writer moved on): only the frame;
 *   - a bad kind, block size or length, a commit word past the block, a file cut inside the
 *     area's header: one error naming the offset and what was expected;
 *   - given back (rip_writer_give_back) after a flush: the area's disk space after its first
 *     page is freed, its pages read as zeros, the file reads the same; the next record takes
 *     the space back before it is stored and is staged as usual; a failure to take it back is a
 *     failed write that leaves the area untouched.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "test_util.h"

#define BS 65536u

static uint8_t *file;
static size_t file_len;

/* Counts records until the end; returns the final status, err filled. */
static rip_status_t count(const uint8_t *data, size_t len, uint64_t *n, rip_error_t *err)
{
    rip_reader_t *r;
    rip_status_t st = rip_reader_open_mem(data, len, "staged.rip", &r, err);
    *n = 0;
    if (st != RIP_OK)
        return st;
    rip_record_t rec;
    while ((st = rip_reader_next(r, &rec, err)) == RIP_OK)
        (*n)++;
    rip_reader_close(r);
    return st;
}

static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static void expect_error(const uint8_t *data, size_t len, rip_status_t want, uint64_t offset,
                         const char *detail)
{
    uint64_t n;
    rip_error_t err;
    rip_status_t st = count(data, len, &n, &err);
    CHECK_STATUS(st, want);
    CHECK_U(err.offset, offset);
    if (!strstr(err.detail, detail))
        CHECK_FAIL("error detail \"%s\" lacks \"%s\"", err.detail, detail);
}

int main(void)
{
    rip_header_t h = thread_header();
    tstaged_t f;
    tstaged_open(&f, "staged", BS, &h);
    const char *path = f.path;
    int fd = f.fd;
    size_t stage_size = f.stage_size;
    CHECK_U(stage_size, 4096 + 5 * BS);
    void *stage = f.stage, *mem = f.mem;
    rip_writer_t *w = f.w;
    /* The header a tracer writes into a new file before extending it: the writer's own. */
    uint8_t head[RIP_STAGE_HEADER_LEN];
    rip_stage_header(head, BS);
    CHECK(memcmp(head, stage, 64) == 0);
    CHECK_U(get64(head + 64), 0);
    CHECK_U(head[12] | head[13] << 8 | head[14] << 16 | (uint64_t)head[15] << 24, BS);

    /* Two blocks in the frame (10 + 10 frees), 7 records staged. */
    for (int b = 0; b < 2; b++) {
        for (uint64_t i = 0; i < 10; i++)
            CHECK_STATUS(rip_writer_free(w, 100 * (uint64_t)b + i, 0x1000 + 16 * i), RIP_OK);
        CHECK_STATUS(rip_writer_flush(w), RIP_OK);
    }
    uint64_t frame_end = rip_writer_file_size(w);
    for (uint64_t i = 0; i < 6; i++)
        CHECK_STATUS(rip_writer_alloc(w, RIP_CALL_MALLOC, 300 + i, 0x2000 + 32 * i, 24, 0, 0, 0, 0),
                     RIP_OK);
    CHECK_STATUS(rip_writer_mark(w, 400, "staged"), RIP_OK);
    uint64_t commit = get64((uint8_t *)stage + 64);
    CHECK_U(commit >> 32, 2); /* the third block is staged */

    file_len = (size_t)frame_end;
    file = malloc(file_len);
    CHECK(file != NULL);
    CHECK(pread(fd, file, file_len, 0) == (ssize_t)file_len);
    uint64_t n;
    rip_error_t err;

    CHECK_STATUS(count(file, file_len, &n, &err), RIP_END);
    CHECK_U(n, 20 + 7);

    /* Written, but the commit word not yet updated: block 1 is already in the frame. */
    uint8_t *copy = malloc(file_len);
    CHECK(copy != NULL);
    memcpy(copy, file, file_len);
    put64(copy + 64, (uint64_t)1 << 32 | (commit & 0xffffffffu));
    CHECK_STATUS(count(copy, file_len, &n, &err), RIP_END);
    CHECK_U(n, 20);

    /* A later block than the frame holds: only the frame. */
    put64(copy + 64, (uint64_t)3 << 32 | (commit & 0xffffffffu));
    CHECK_STATUS(count(copy, file_len, &n, &err), RIP_END);
    CHECK_U(n, 20);

    /* Killed inside the write of the staged block: the frame ends with part of it. */
    static const uint8_t partial[] = {0x40, 0x00, 0x00, 0x00, 0x11, 0x22};
    size_t cut = file_len - 4; /* the end mark goes: the next block is written over it */
    uint8_t *cut_file = malloc(cut + sizeof partial);
    CHECK(cut_file != NULL);
    memcpy(cut_file, file, cut);
    memcpy(cut_file + cut, partial, sizeof partial);
    CHECK_STATUS(count(cut_file, cut + sizeof partial, &n, &err), RIP_END);
    CHECK_U(n, 20 + 7);
    /* The same without a staging area that holds it: truncated at the partial block. */
    put64(cut_file + 64, (uint64_t)1 << 32 | 16);
    CHECK_STATUS(count(cut_file, cut + sizeof partial, &n, &err), RIP_E_TRUNCATED);
    CHECK_U(n, 20);
    CHECK_U(err.offset, cut);

    /* Bad staging areas. */
    memcpy(copy, file, file_len);
    memcpy(copy + 8, "RIPX", 4);
    expect_error(copy, file_len, RIP_E_NOT_RIP, 8, "without RIPS");
    memcpy(copy, file, file_len);
    copy[12] = 0x39; /* 65536 + 0x39 */
    expect_error(copy, file_len, RIP_E_CORRUPT, 12, "block size 65593");
    memcpy(copy, file, file_len);
    copy[4] ^= 1;
    expect_error(copy, file_len, RIP_E_CORRUPT, 4, "expected 331768");
    memcpy(copy, file, file_len);
    put64(copy + 64, (uint64_t)2 << 32 | (BS + 1));
    expect_error(copy, file_len, RIP_E_CORRUPT, 64, "a block holds 65536");
    expect_error(file, 12, RIP_E_TRUNCATED, 0, "inside the staging area's header");

    /* Given back once everything staged is in blocks. */
    struct stat st;
    CHECK(fstat(fd, &st) == 0);
    blkcnt_t held = st.st_blocks;
    rip_writer_give_back(w); /* a staged block not yet written: nothing happens */
    CHECK(fstat(fd, &st) == 0);
    CHECK_U((uint64_t)st.st_blocks, (uint64_t)held);
    CHECK_STATUS(rip_writer_flush(w), RIP_OK);
    CHECK(fstat(fd, &st) == 0);
    held = st.st_blocks;
    errno = 1234;
    rip_writer_give_back(w);
    CHECK_U((uint64_t)errno, 1234);
    CHECK(fstat(fd, &st) == 0);
    CHECK_U((uint64_t)(held - st.st_blocks) * 512, 5 * (uint64_t)BS);
    CHECK_U(get64((uint8_t *)stage + 64), (uint64_t)3 << 32 | 16);
    static const uint8_t zeros[5 * BS];
    CHECK(memcmp((uint8_t *)stage + 4096, zeros, sizeof zeros) == 0);
    size_t len = (size_t)rip_writer_file_size(w);
    uint8_t *given = malloc(len);
    CHECK(given != NULL);
    CHECK(pread(fd, given, len, 0) == (ssize_t)len);
    CHECK_STATUS(count(given, len, &n, &err), RIP_END);
    CHECK_U(n, 20 + 7);

    /* The next record takes the space back first, then is staged as any other. */
    CHECK_STATUS(rip_writer_free(w, 500, 0x3000), RIP_OK);
    CHECK(fstat(fd, &st) == 0);
    CHECK_U((uint64_t)st.st_blocks, (uint64_t)held);
    CHECK_U(get64((uint8_t *)stage + 64), (uint64_t)3 << 32 | 17);
    CHECK(pread(fd, given, len, 0) == (ssize_t)len);
    CHECK_STATUS(count(given, len, &n, &err), RIP_END);
    CHECK_U(n, 20 + 7 + 1);

    /* Taking it back fails (here: the descriptor is gone): a failed write, the area as it was. */
    CHECK_STATUS(rip_writer_flush(w), RIP_OK);
    rip_writer_give_back(w);
    CHECK(fstat(fd, &st) == 0);
    CHECK_U((uint64_t)(held - st.st_blocks) * 512, 5 * (uint64_t)BS);
    int spare = dup(fd);
    CHECK(spare >= 0);
    close(fd);
    CHECK_STATUS(rip_writer_free(w, 600, 0x3000), RIP_E_IO);
    CHECK_U((uint64_t)errno, EBADF);
    CHECK_U(get64((uint8_t *)stage + 64), (uint64_t)4 << 32 | 16);
    CHECK(memcmp((uint8_t *)stage + 4096, zeros, sizeof zeros) == 0);
    CHECK_STATUS(rip_writer_free(w, 700, 0x3000), RIP_E_IO);
    fd = spare;

    munmap(stage, stage_size);
    free(mem);
    free(given);
    free(copy);
    free(cut_file);
    free(file);
    close(fd);
    unlink(path);
    printf("staged: ok\n");
    return 0;
}
