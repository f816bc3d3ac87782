/*
 * reject.c: what FORMAT.md section 4 says a reader must reject, each with its offset and
 * message; and what it must accept: a higher minor version with a longer header, trailing
 * fields it does not know, unknown extended records.
 */
#include "test_util.h"

static bytes_t raw, frame;

/* Reads `frame`; expects `records` records, then `code` at `offset` with `detail` in the
 * message. */
static void expect(size_t records, rip_status_t code, uint64_t offset, const char *detail, int line)
{
    size_t n;
    rip_error_t err;
    rip_status_t st = read_all_mem(frame.b, frame.n, &n, &err);
    if (st != code || n != records || err.offset != offset || !strstr(err.detail, detail))
        FAILF("(case at line %d) got %zu records then %s at offset %" PRIu64 " (%s), expected %zu "
              "records then %s at offset %" PRIu64 " (%s)",
              line, n, rip_strerror(st), err.offset, err.detail, records, rip_strerror(code),
              offset, detail);
}
#define EXPECT(records, code, offset, detail) expect(records, code, offset, detail, __LINE__)

/* A one-block thread file: header, then whatever the case appends to `raw`. */
static void start(void)
{
    raw.n = 0;
    b_header(&raw, "RIPT", 1, 0, 24);
}

static void finish(void)
{
    b_frame(&frame, &raw);
}

static void versions(void)
{
    raw.n = 0;
    b_header(&raw, "RIPT", 2, 0, 24);
    finish();
    EXPECT(0, RIP_E_VERSION, 7, "format version 2.0, this reader reads version 1.x");
    raw.n = 0;
    b_header(&raw, "RIPP", 0, 9, 24);
    finish();
    EXPECT(0, RIP_E_VERSION, 7, "format version 0.9");

    /* A later minor version: a longer header, a new trailing field in a known record, a new
     * extended record. All read; the new parts are skipped. */
    raw.n = 0;
    b_header(&raw, "RIPT", 1, 7, 40);
    b_u8(&raw, 0x42);          /* thread name with one extra field */
    b_var(&raw, 1 + 5 + 3);
    b_var(&raw, 9);
    b_str(&raw, "main");
    b_raw(&raw, "\x01\x02\x03", 3);
    b_u8(&raw, 0x7e);          /* unknown extended record */
    b_var(&raw, 3);
    b_raw(&raw, "\x10\x05\x06", 3);   /* looks like a free, but is payload */
    b_u8(&raw, 0x10);          /* a free after it, deltas unaffected by the skipped record */
    b_var(&raw, 7);
    b_zz(&raw, 0x1000);
    finish();
    rip_reader_t *r;
    rip_error_t err;
    rip_record_t rec;
    CHECK_STATUS(rip_reader_open_mem(frame.b, frame.n, "mem.rip", &r, &err), RIP_OK);
    CHECK_U(rip_reader_header(r)->minor, 7);
    CHECK_U(rip_reader_header(r)->start_ns, 5000000000ull);
    CHECK_STATUS(rip_reader_next(r, &rec, &err), RIP_OK);
    CHECK_U(rec.kind, RIP_REC_THREAD_NAME);
    CHECK_U(rec.t, 9);
    CHECK_RSTR(rec.u.name.text, "main");
    CHECK_STATUS(rip_reader_next(r, &rec, &err), RIP_OK);
    CHECK_U(rec.kind, RIP_REC_UNKNOWN);
    CHECK_U(rec.u.unknown.type, 0x7e);
    CHECK_STATUS(rip_reader_next(r, &rec, &err), RIP_OK);
    CHECK_U(rec.kind, RIP_REC_FREE);
    CHECK_U(rec.t, 7);
    CHECK_U(rec.u.free.addr, 0x1000);
    CHECK_STATUS(rip_reader_next(r, &rec, &err), RIP_END);
    rip_reader_close(r);
}

static void header_problems(void)
{
    raw.n = 0;
    b_header(&raw, "RIPX", 1, 0, 24);
    finish();
    EXPECT(0, RIP_E_NOT_RIP, 7, "does not start with RIPT or RIPP");
    raw.n = 0;
    b_header(&raw, "RIPT", 1, 0, 20);
    finish();
    EXPECT(0, RIP_E_CORRUPT, 7, "header_len 20, expected at least 24");
    raw.n = 0;
    b_header(&raw, "RIPT", 1, 0, 24);
    raw.n -= 2;
    finish();
    EXPECT(0, RIP_E_CORRUPT, 7, "header_len 24 runs past the end of the first block");
    raw.n = 0;
    b_raw(&raw, "RIPT\x01\x00", 6);
    finish();
    EXPECT(0, RIP_E_CORRUPT, 7, "ends inside the rip header");

    /* Frame header fields. */
    start();
    finish();
    EXPECT(0, RIP_END, frame.n - 4, "end of file");   /* at the end mark */
    frame.b[4] = 0x60;   /* no block checksums */
    EXPECT(0, RIP_E_NOT_RIP, 4, "lz4 frame flags 0x60, expected 0x70");
    frame.b[4] = 0x70;
    frame.b[5] = 0x30;   /* 64 KiB is the smallest block max rip allows */
    EXPECT(0, RIP_E_NOT_RIP, 5, "block descriptor 0x30");
    frame.b[5] = 0x41;
    EXPECT(0, RIP_E_NOT_RIP, 5, "block descriptor 0x41");
    frame.b[5] = 0x40;
    frame.b[6] ^= 1;
    EXPECT(0, RIP_E_CORRUPT, 6, "lz4 frame header checksum mismatch");
}

static void block_problems(void)
{
    start();
    finish();
    b_u8(&frame, 0);   /* a byte after the end mark */
    EXPECT(0, RIP_E_CORRUPT, frame.n - 1, "data after the end mark");

    start();
    finish();
    frame.b[7 + 4 + 3] ^= 0x40;   /* a byte inside the block: the checksum catches it */
    EXPECT(0, RIP_E_CORRUPT, 7, "block checksum mismatch");

    /* A valid lz4 block stored uncompressed: rip never writes one, and trusting the flag would
     * let one flipped bit decode compressed bytes as records. */
    start();
    frame.n = 0;
    b_frame_header(&frame, 4);
    b_block_raw(&frame, raw.b, raw.n);
    b_le32(&frame, 0);
    EXPECT(0, RIP_E_CORRUPT, 7, "block stored uncompressed (size field 0x80000024)");

    /* A block claiming more than the block max size. */
    frame.n = 0;
    b_frame_header(&frame, 4);
    b_le32(&frame, 65537);
    EXPECT(0, RIP_E_CORRUPT, 7, "block of 65537 bytes is larger than the block max size 65536");

    /* A compressed block that does not decompress, with a valid checksum: a literal run longer
     * than the data. */
    frame.n = 0;
    b_frame_header(&frame, 4);
    static const uint8_t bad[] = {0xF0, 0xFF, 0x10, 'R', 'I', 'P', 'T'};
    b_le32(&frame, sizeof bad);
    b_raw(&frame, bad, sizeof bad);
    b_le32(&frame, rip_xxh32(bad, sizeof bad, 0));
    b_le32(&frame, 0);
    EXPECT(0, RIP_E_CORRUPT, 7, "block does not decompress");

    /* Problems in a second block are reported at that block, after the first block's records. */
    start();
    b_u8(&raw, 0x10);
    b_var(&raw, 1);
    b_zz(&raw, 64);
    frame.n = 0;
    b_frame_header(&frame, 4);
    b_block(&frame, raw.b, raw.n);
    uint64_t second = frame.n;
    raw.n = 0;
    b_u8(&raw, 0x10);
    b_var(&raw, 1);
    b_zz(&raw, 64);
    b_u8(&raw, 0x17);
    b_block(&frame, raw.b, raw.n);
    b_le32(&frame, 0);
    EXPECT(2, RIP_E_CORRUPT, second, "record type 0x17 unknown");
}

static void record_problems(void)
{
    start();
    b_u8(&raw, 0x17);
    finish();
    EXPECT(0, RIP_E_CORRUPT, 7, "record type 0x17 unknown");

    start();
    b_u8(&raw, 0x01);   /* malloc naming stack 5, never defined */
    b_var(&raw, 1);
    b_zz(&raw, 0x100);
    b_var(&raw, 16);
    b_var(&raw, 5);
    finish();
    EXPECT(0, RIP_E_CORRUPT, 7, "allocation names undefined stack id 5");

    start();
    b_u8(&raw, 0x11);   /* stack 5 defined, then used: fine */
    b_var(&raw, 5);
    b_var(&raw, 1);
    b_var(&raw, 0x401000);
    b_u8(&raw, 0x05);   /* posix_memalign with stack 5 */
    b_var(&raw, 1);
    b_zz(&raw, 0x100);
    b_var(&raw, 16);
    b_var(&raw, 5);
    b_var(&raw, 64);
    finish();
    EXPECT(2, RIP_END, frame.n - 4, "end of file");   /* at the end mark */

    start();
    b_u8(&raw, 0x11);
    b_var(&raw, 1);
    b_var(&raw, 0);
    finish();
    EXPECT(0, RIP_E_CORRUPT, 7, "stack depth 0, expected 1-1024");
    start();
    b_u8(&raw, 0x11);
    b_var(&raw, 1);
    b_var(&raw, 1025);
    finish();
    EXPECT(0, RIP_E_CORRUPT, 7, "stack depth 1025, expected 1-1024");
    start();
    b_u8(&raw, 0x11);
    b_var(&raw, 0);
    b_var(&raw, 1);
    b_var(&raw, 1);
    finish();
    EXPECT(0, RIP_E_CORRUPT, 7, "stack id 0 is reserved");
    start();
    b_u8(&raw, 0x11);   /* depth 3, but the block ends after two frames */
    b_var(&raw, 1);
    b_var(&raw, 3);
    b_var(&raw, 0x401000);
    b_zz(&raw, -16);
    finish();
    EXPECT(0, RIP_E_CORRUPT, 7, "record runs past end of block (record type 0x11 at byte 36 of the block)");

    start();
    b_u8(&raw, 0x10);   /* an 11-byte varint */
    for (int i = 0; i < 10; i++)
        b_u8(&raw, 0x80);
    b_u8(&raw, 0x00);
    finish();
    EXPECT(0, RIP_E_CORRUPT, 7, "varint longer than 10 bytes");
    start();
    b_u8(&raw, 0x10);   /* ten bytes, but the last one overflows 64 bits */
    for (int i = 0; i < 9; i++)
        b_u8(&raw, 0xff);
    b_u8(&raw, 0x02);
    b_var(&raw, 0);
    finish();
    EXPECT(0, RIP_E_CORRUPT, 7, "varint longer than 10 bytes");
    start();
    b_u8(&raw, 0x10);   /* the largest ten-byte varint is fine */
    for (int i = 0; i < 9; i++)
        b_u8(&raw, 0xff);
    b_u8(&raw, 0x01);
    b_var(&raw, 0);
    finish();
    EXPECT(1, RIP_END, frame.n - 4, "end of file");   /* at the end mark */

    start();
    b_u8(&raw, 0x10);   /* free cut by the block end */
    b_var(&raw, 1);
    finish();
    EXPECT(0, RIP_E_CORRUPT, 7, "record runs past end of block");
    start();
    b_u8(&raw, 0x43);   /* extended record longer than the block */
    b_var(&raw, 50);
    b_var(&raw, 1);
    finish();
    EXPECT(0, RIP_E_CORRUPT, 7, "record runs past end of block (record type 0x43 of 50 bytes");
    start();
    b_u8(&raw, 0x43);   /* a field longer than its record */
    b_var(&raw, 2);
    b_var(&raw, 1);
    b_var(&raw, 5);
    b_str(&raw, "abcde");
    finish();
    EXPECT(0, RIP_E_CORRUPT, 7, "record runs past its length");
    start();
    b_u8(&raw, 0x41);   /* a module claiming more segments than its payload can hold */
    b_var(&raw, 5);
    b_var(&raw, 0);
    b_str(&raw, "");
    b_str(&raw, "");
    b_var(&raw, 1000000);
    finish();
    EXPECT(0, RIP_E_CORRUPT, 7, "record runs past its length");
    start();
    b_u8(&raw, 0x03);   /* realloc whose old block was freed before time 0 */
    b_var(&raw, 5);
    b_zz(&raw, 0x100);
    b_var(&raw, 1);
    b_var(&raw, 0);
    b_zz(&raw, 0x40);
    b_var(&raw, 6);
    finish();
    EXPECT(0, RIP_E_CORRUPT, 7, "realloc dt_old 6 is larger than its time 5");
    start();
    b_u8(&raw, 0x10);   /* times that overflow 64 bits */
    b_var(&raw, UINT64_MAX);
    b_zz(&raw, 0);
    b_u8(&raw, 0x10);
    b_var(&raw, 1);
    b_zz(&raw, 0);
    finish();
    EXPECT(1, RIP_E_CORRUPT, 7, "time overflows 64 bits");
}

int main(void)
{
    versions();
    header_problems();
    block_problems();
    record_problems();

    /* The whole message, as tools print it. */
    start();
    b_u8(&raw, 0x17);
    finish();
    size_t n;
    rip_error_t err;
    char buf[600];
    read_all_mem(frame.b, frame.n, &n, &err);
    CHECK(strcmp(rip_error_format(&err, buf, sizeof buf),
                 "mem.rip: offset 7: record type 0x17 unknown (a core record of a newer format or "
                 "corrupted data; record at byte 36 of the block)") == 0);
    printf("reject: ok\n");
    return 0;
}
