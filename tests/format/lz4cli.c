/*
 * lz4cli.c: the lz4 command accepts a written file (`lz4 -t`) and decompresses it (`lz4 -dc`)
 * to the exact stream the format describes: the 40-byte header of format 3.0 ending in
 * time_shift, then in every block the column directory, the records and the columns. Skipped
 * (exit 77) when lz4 is not installed.
 */
#include "test_util.h"

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int main(void)
{
    if (system("command -v lz4 >/dev/null 2>&1") != 0) {
        printf("lz4cli: the lz4 command is not installed: skipped\n");
        return 77;
    }
    rip_header_t h = thread_header();
    h.time_shift = 2;
    tfile_t f;
    tfile_open(&f, "lz4cli", 64 << 10, &h);
    /* 100000 frees at 20 ns (5 units of 4 ns) of address 8. The first free of each block has dt 5
     * and, with no earlier event of its block to refer to (the previous block's do not count),
     * address delta 8, not a multiple of 16, so it is type 0x30 with the delta in bytes (zigzag
     * 16); the others have dt 0 and refer to the free just before them: type 0x10, value
     * 1 << 1 | 1 = 3. Each free is one byte of records, one of the time column and one of the
     * address column. The writer starts a new block when a free's worst case (21 bytes) would
     * pass the 65264 raw bytes of a 64 KiB block: the first block (40-byte header, 16-byte
     * directory) takes 21730 frees, the next ones (directory only) 21743 each, and the fifth the
     * 13041 left. */
    for (int i = 0; i < 100000; i++)
        CHECK_STATUS(rip_writer_free(f.w, 20, 8), RIP_OK);
    CHECK_STATUS(rip_writer_flush(f.w), RIP_OK);

    char cmd[512];
    snprintf(cmd, sizeof cmd, "lz4 -t %s 2>&1", f.path);
    int rc = system(cmd);
    if (rc != 0)
        CHECK_FAIL("%s: exit status %d", cmd, rc);

    snprintf(cmd, sizeof cmd, "lz4 -dc %s", f.path);
    FILE *p = popen(cmd, "r");
    CHECK(p != NULL);
    static uint8_t out[400000];
    size_t n = 0, k;
    while ((k = fread(out + n, 1, sizeof out - n, p)) > 0)
        n += k;
    CHECK_U(pclose(p), 0);
    CHECK_U(n, 40 + 5 * 16 + 3 * 100000);

    static bytes_t header;
    b_raw(&header, "RIPT", 4);
    b_le16(&header, RIP_FORMAT_MAJOR); /* major */
    b_le16(&header, RIP_FORMAT_MINOR); /* minor */
    b_le32(&header, 28);          /* header_len */
    b_le32(&header, 4711);        /* pid */
    b_le32(&header, 4712);        /* tid */
    b_le32(&header, 2);           /* recording */
    b_le32(&header, 3);           /* serial */
    b_le64(&header, 123456789012345ull);
    b_le32(&header, 2);           /* time_shift */
    CHECK_U(header.n, 40);
    CHECK(memcmp(out, header.b, 40) == 0);

    static const uint32_t frees[5] = {21730, 21743, 21743, 21743, 13041};
    size_t at = 40;
    for (int b = 0; b < 5; b++) {
        uint32_t c = frees[b];
        /* Directory: time and address columns of one byte per free, no size or stack. */
        CHECK_U(le32(out + at), c);
        CHECK_U(le32(out + at + 4), c);
        CHECK_U(le32(out + at + 8), 0);
        CHECK_U(le32(out + at + 12), 0);
        at += 16;
        const uint8_t *rec = out + at, *dt = rec + c, *addr = dt + c;
        for (uint32_t i = 0; i < c; i++) {
            uint8_t want_type = i ? 0x10 : 0x30, want_dt = i ? 0 : 5, want_addr = i ? 3 : 16;
            if (rec[i] != want_type || dt[i] != want_dt || addr[i] != want_addr)
                CHECK_FAIL("block %d, free %u: type 0x%02x dt %u address %u, expected 0x%02x %u %u", b,
                      i, rec[i], dt[i], addr[i], want_type, want_dt, want_addr);
        }
        at += 3 * (size_t)c;
    }
    CHECK_U(at, n);
    tfile_close(&f, 1);
    printf("lz4cli: ok\n");
    return 0;
}
