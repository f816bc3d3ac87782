/*
 * snapshot.c: the reader reads a file as it was when opened. Blocks a writer appends afterwards
 * (the program is still recording) are not read, so reading ends; a detached reader holds no
 * descriptor between blocks, reads on as before, and fails with a clear error when the file it
 * opened has been replaced by another under its name.
 */
#include <errno.h>
#include <fcntl.h>

#include "test_util.h"

/* Appends `n` mallocs from time t and flushes them as one block. */
static void block_of(rip_writer_t *w, uint64_t t, int n)
{
    for (int i = 0; i < n; i++)
        CHECK_STATUS(rip_writer_alloc(w, RIP_CALL_MALLOC, t + (uint64_t)i,
                                      0x10000 + 16 * (t + (uint64_t)i), 8, 0, 0, 0, 0),
                     RIP_OK);
    CHECK_STATUS(rip_writer_flush(w), RIP_OK);
}

/* Reads the allocations up to the end or an error; returns the count, the status in *st. */
static int count_allocs(rip_reader_t *r, rip_status_t *st, rip_error_t *err)
{
    rip_record_t rec;
    int n = 0;
    while ((*st = rip_reader_next(r, &rec, err)) == RIP_OK)
        n += rec.kind == RIP_REC_ALLOC;
    return n;
}

static int open_fds(void)
{
    int n = 0;
    for (int fd = 0; fd < 1024; fd++)
        n += fcntl(fd, F_GETFD) != -1;
    return n;
}

int main(void)
{
    rip_header_t h = thread_header();
    tfile_t f;
    tfile_open(&f, "snapshot", 64 << 10, &h);
    block_of(f.w, 1, 100);
    uint64_t size = rip_writer_file_size(f.w); /* the end mark is its last 4 bytes */

    /* A byte after the end mark, written after the open, is not part of the file the reader
     * reads: no "data after the end mark". A reader opened after it rejects it. */
    rip_reader_t *r;
    rip_error_t err;
    rip_status_t st;
    CHECK_STATUS(rip_reader_open(f.path, &r, &err), RIP_OK);
    CHECK_U(rip_reader_size(r), size);
    CHECK(pwrite(f.fd, "x", 1, (off_t)size) == 1);
    CHECK_INT(count_allocs(r, &st, &err), 100);
    CHECK_STATUS(st, RIP_END);
    rip_reader_close(r);
    CHECK_STATUS(rip_reader_open(f.path, &r, &err), RIP_OK);
    CHECK_INT(count_allocs(r, &st, &err), 100);
    CHECK_STATUS(st, RIP_E_CORRUPT);
    CHECK_CONTAINS(err.detail, "data after the end mark");
    rip_reader_close(r);
    CHECK(ftruncate(f.fd, (off_t)size) == 0);

    /* Two blocks appended after the open: the first replaces the end mark, so the file the
     * reader holds ends inside a block (truncated at the old end mark), and reading ends. */
    CHECK_STATUS(rip_reader_open(f.path, &r, &err), RIP_OK);
    block_of(f.w, 1000, 100);
    block_of(f.w, 2000, 100);
    CHECK_INT(count_allocs(r, &st, &err), 100);
    CHECK_STATUS(st, RIP_E_TRUNCATED);
    CHECK_U(err.offset, size - 4);
    rip_reader_close(r);

    /* Opened again, it reads all three blocks. Detached, it holds no descriptor. */
    int before = open_fds();
    CHECK_STATUS(rip_reader_open(f.path, &r, &err), RIP_OK);
    CHECK_INT(open_fds(), before + 1);
    rip_reader_detach(r);
    CHECK_INT(open_fds(), before);
    CHECK_INT(count_allocs(r, &st, &err), 300);
    CHECK_STATUS(st, RIP_END);
    CHECK_INT(open_fds(), before);
    rip_reader_close(r);

    /* Replaced under its name while a detached reader is inside it: the next block's read
     * fails, saying so, instead of reading another file's bytes. */
    CHECK_STATUS(rip_reader_open(f.path, &r, &err), RIP_OK);
    rip_reader_detach(r);
    rip_record_t rec;
    CHECK_STATUS(rip_reader_next(r, &rec, &err), RIP_OK);
    char other[300];
    snprintf(other, sizeof other, "%s.other", f.path);
    int fd = open(other, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0);
    close(fd);
    CHECK(rename(other, f.path) == 0);
    CHECK_INT(count_allocs(r, &st, &err), 99);
    CHECK_STATUS(st, RIP_E_IO);
    CHECK_CONTAINS(err.detail, strerror(ESTALE));
    rip_reader_close(r);

    tfile_close(&f, 1);
    printf("snapshot: ok\n");
    return 0;
}
