/*
 * follow.c: a reader following a file its writer is still appending to (rip_reader_follow), as
 * `rheap run` reads the program's thread files. The real writer with a staging area (FORMAT.md
 * section 6) writes into a file mapped shared, step by step, and after each step the follower
 * must deliver exactly the records written since, in order, then RIP_AGAIN:
 *   - records committed in the staging area, a few at a time;
 *   - a flush, which moves those records into the frame: nothing new;
 *   - enough records to fill blocks on their own, with some staged after them;
 *   - follow mode off with records still staged: those, then RIP_END.
 * A file without a staging area is followed block by block. Every record is compared by its
 * time and address with what was written.
 */
#include "test_util.h"

#define BS 65536u

static uint64_t written; /* allocations written so far: the i-th has time 1000 + i */
static uint64_t read_n;  /* allocations the follower delivered */

static void write_allocs(rip_writer_t *w, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++, written++)
        CHECK_STATUS(rip_writer_alloc(w, RIP_CALL_MALLOC, 1000 + written,
                                      0x100000 + 48 * (written % 5000), 24 + written % 9, 0, 0, 0,
                                      0),
                     RIP_OK);
}

/* Reads until the reader has nothing more; every allocation must be the next one written.
 * Returns the status that ended the reading. */
static rip_status_t drain(rip_reader_t *r)
{
    rip_record_t rec;
    rip_error_t err;
    rip_status_t st;
    while ((st = rip_reader_next(r, &rec, &err)) == RIP_OK) {
        if (rec.kind != RIP_REC_ALLOC)
            continue;
        if (rec.t != 1000 + read_n || rec.u.alloc.addr != 0x100000 + 48 * (read_n % 5000)) {
            CHECK_FAIL("allocation %llu: got time %llu address 0x%llx",
                       (unsigned long long)read_n, (unsigned long long)rec.t,
                       (unsigned long long)rec.u.alloc.addr);
            return RIP_E_CORRUPT;
        }
        read_n++;
    }
    if (st != RIP_AGAIN && st != RIP_END) {
        char buf[1024];
        CHECK_FAIL("reading stopped: %s", rip_error_format(&err, buf, sizeof buf));
    }
    return st;
}

static void expect_caught_up(rip_reader_t *r, rip_status_t want, const char *when)
{
    rip_status_t st = drain(r);
    if (st != want || read_n != written)
        CHECK_FAIL("%s: %llu of %llu allocations read, ended with %s", when,
                   (unsigned long long)read_n, (unsigned long long)written, rip_strerror(st));
}

static void staged_file(void)
{
    rip_header_t h = thread_header();
    tstaged_t f;
    tstaged_open(&f, "follow", BS, &h);
    rip_writer_t *w = f.w;
    CHECK_STATUS(rip_writer_flush(w), RIP_OK); /* the first block, with the header */
    written = read_n = 0;

    rip_reader_t *r;
    rip_error_t err;
    CHECK_STATUS(rip_reader_open(f.path, &r, &err), RIP_OK);
    CHECK(rip_reader_staged(r));
    rip_reader_detach(r);
    rip_reader_follow(r, 1);
    expect_caught_up(r, RIP_AGAIN, "nothing written");

    write_allocs(w, 3);
    expect_caught_up(r, RIP_AGAIN, "3 staged");
    write_allocs(w, 2);
    expect_caught_up(r, RIP_AGAIN, "2 more staged");
    CHECK_STATUS(rip_writer_flush(w), RIP_OK);
    expect_caught_up(r, RIP_AGAIN, "the 5 flushed");
    write_allocs(w, 1);
    CHECK_STATUS(rip_writer_flush(w), RIP_OK);
    expect_caught_up(r, RIP_AGAIN, "1 staged and flushed before the follower looked");
    write_allocs(w, 4);
    expect_caught_up(r, RIP_AGAIN, "4 staged");
    /* About 5 bytes a record: 60,000 records fill several blocks, the writer flushing each
     * when full; the follower looks every 7,000. */
    for (int k = 0; k < 9; k++) {
        write_allocs(w, 7000);
        expect_caught_up(r, RIP_AGAIN, "blocks filled as the writer went");
    }
    write_allocs(w, 3);
    expect_caught_up(r, RIP_AGAIN, "3 staged after full blocks");
    write_allocs(w, 2);
    rip_reader_follow(r, 0);
    expect_caught_up(r, RIP_END, "follow mode off with 2 records staged");
    rip_reader_close(r);

    /* A reader opened now reads the same records once each. */
    read_n = 0;
    CHECK_STATUS(rip_reader_open(f.path, &r, &err), RIP_OK);
    expect_caught_up(r, RIP_END, "the file read whole");
    rip_reader_close(r);
    rip_writer_close(w, 0);
    munmap(f.stage, f.stage_size);
    close(f.fd);
    unlink(f.path);
    free(f.mem);
}

/* Without a staging area (a file written by flushes alone), whole blocks only. */
static void plain_file(void)
{
    rip_header_t h = thread_header();
    tfile_t f;
    tfile_open(&f, "follow-plain", 64 << 10, &h);
    written = read_n = 0;
    CHECK_STATUS(rip_writer_flush(f.w), RIP_OK);
    rip_reader_t *r;
    rip_error_t err;
    CHECK_STATUS(rip_reader_open(f.path, &r, &err), RIP_OK);
    CHECK(!rip_reader_staged(r));
    rip_reader_follow(r, 1);
    expect_caught_up(r, RIP_AGAIN, "nothing written");
    write_allocs(f.w, 10);
    CHECK_STATUS(rip_reader_next(r, &(rip_record_t){0}, &err), RIP_AGAIN);
    CHECK_STATUS(rip_writer_flush(f.w), RIP_OK);
    expect_caught_up(r, RIP_AGAIN, "10 flushed");
    write_allocs(f.w, 10);
    CHECK_STATUS(rip_writer_flush(f.w), RIP_OK);
    rip_reader_follow(r, 0);
    expect_caught_up(r, RIP_END, "10 more, follow mode off");
    rip_reader_close(r);
    tfile_close(&f, 1);
}

int main(void)
{
    staged_file();
    plain_file();
    return check_failures ? 1 : 0;
}
