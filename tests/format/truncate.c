/*
 * truncate.c: a file cut at every byte delivers exactly the records of its complete blocks,
 * then RIP_E_TRUNCATED with the offset of the incomplete block (or of the missing end mark).
 */
#include "test_util.h"

#define MAXREC 4096

int main(void)
{
    size_t len;
    uint8_t *data = small_thread_file("truncate", 400, 60, &len);
    static uint64_t fps[MAXREC], offs[MAXREC];
    size_t total = all_fingerprints(data, len, fps, offs, MAXREC);
    CHECK_U(total, 405);   /* 400 events, modules, module, thread name, stack, mark */

    /* Walk the frame: where each block starts, and where the end mark is. */
    uint64_t blocks[64];
    size_t nblocks = 0;
    uint64_t pos = 7;
    for (;;) {
        uint32_t v = (uint32_t)data[pos] | (uint32_t)data[pos + 1] << 8 |
                     (uint32_t)data[pos + 2] << 16 | (uint32_t)data[pos + 3] << 24;
        if (v == 0)
            break;
        blocks[nblocks++] = pos;
        pos += 4 + (v & 0x7fffffff) + 4;
    }
    uint64_t end_mark = pos;
    CHECK_U(end_mark + 4, len);
    CHECK_U(nblocks, 7);   /* six flushes of 60 events, then 40 events and the mark */

    for (size_t cut = 0; cut < len; cut++) {
        /* The block the cut falls in (or the end mark) is the one reported. */
        uint64_t expect_off = cut < 7 ? 0 : end_mark;
        size_t complete = 0;
        for (size_t b = 0; b < nblocks; b++) {
            uint64_t next = b + 1 < nblocks ? blocks[b + 1] : end_mark;
            if (cut < next) {
                expect_off = cut < 7 ? 0 : blocks[b];
                break;
            }
            complete = b + 1;
        }
        size_t expect_records = 0;
        while (expect_records < total && complete > 0 &&
               offs[expect_records] <= blocks[complete - 1])
            expect_records++;

        rip_reader_t *r;
        rip_error_t err;
        rip_status_t st = rip_reader_open_mem(data, cut, "cut.rip", &r, &err);
        if (complete == 0) {
            if (st != RIP_E_TRUNCATED)
                CHECK_FAIL("cut at %zu: open gave %s, expected truncated", cut, rip_strerror(st));
            CHECK(r == NULL);
            CHECK_U(err.offset, expect_off);
            continue;
        }
        if (st != RIP_OK)
            CHECK_FAIL("cut at %zu: open gave %s (%s)", cut, rip_strerror(st), err.detail);
        rip_record_t rec;
        size_t n = 0;
        while ((st = rip_reader_next(r, &rec, &err)) == RIP_OK) {
            CHECK(n < total);
            if (fingerprint(&rec) != fps[n])
                CHECK_FAIL("cut at %zu: record %zu differs from the original", cut, n);
            n++;
        }
        if (st != RIP_E_TRUNCATED)
            CHECK_FAIL("cut at %zu: ended with %s (%s), expected truncated", cut, rip_strerror(st),
                  err.detail);
        if (n != expect_records || err.offset != expect_off)
            CHECK_FAIL("cut at %zu: %zu records then offset %" PRIu64 ", expected %zu records then "
                  "offset %" PRIu64 " (%s)",
                  cut, n, err.offset, expect_records, expect_off, err.detail);
        CHECK_STATUS(rip_reader_next(r, &rec, &err), RIP_E_TRUNCATED);   /* sticky */
        CHECK(strcmp(err.path, "cut.rip") == 0);
        rip_reader_close(r);
    }

    /* The messages name what is missing. */
    size_t n;
    rip_error_t err;
    CHECK_STATUS(read_all_mem(data, len - 4, &n, &err), RIP_E_TRUNCATED);
    CHECK_CONTAINS(err.detail, "file ends before the end mark");
    CHECK_STATUS(read_all_mem(data, len - 6, &n, &err), RIP_E_TRUNCATED);
    CHECK_CONTAINS(err.detail, "incomplete block");
    CHECK_STATUS(read_all_mem(data, 0, &n, &err), RIP_E_TRUNCATED);
    CHECK_CONTAINS(err.detail, "empty file");
    free(data);
    printf("truncate: %zu cut points ok\n", len);
    return 0;
}
