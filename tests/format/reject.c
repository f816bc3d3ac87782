/*
 * reject.c: what FORMAT.md section 4 says a reader must reject, each with its offset and
 * message; and what it must accept: a higher minor version with a longer header, trailing
 * fields it does not know, unknown extended records. The files are built by hand, in format
 * 1.0 (rows of records, the reading path kept for old recordings) and in format 2.0 (the
 * time_shift header field, each block's column directory, records and columns, both address
 * delta forms and references to an earlier event's address), with every 2.0 check of a block's
 * columns and references.
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
        CHECK_FAIL("(case at line %d) got %zu records then %s at offset %" PRIu64 " (%s), expected %zu "
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
    b_header(&raw, "RIPT", 4, 0, 28);
    finish();
    EXPECT(0, RIP_E_VERSION, 7, "format version 4.0, this reader reads versions 1.x to 3.x");
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
    CHECK_U(rip_reader_header(r)->major, 1);
    CHECK_U(rip_reader_header(r)->minor, 7);
    CHECK_U(rip_reader_header(r)->start_ns, 5000000000ull);
    /* Bytes 36-39 are a later 1.x field here (0xEE...), not the time_shift of 2.0: a 1.x file
     * counts ns. */
    CHECK_U(rip_reader_header(r)->time_shift, 0);
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

/* ---- Format 1.0 records, one case a row ---- */

/* One field of a hand-built record: a byte, a varint, a zigzag varint, a string (its length
 * varint and bytes), or n raw bytes. */
typedef struct {
    char kind; /* 'b', 'v', 'z', 's', 'r'; 0 ends the list */
    uint64_t v;
    const char *s;
} field_t;
#define U8(x) {'b', (x), NULL}
#define VAR(x) {'v', (uint64_t)(x), NULL}
#define ZZ(x) {'z', (uint64_t)(int64_t)(x), NULL}
#define STR(x) {'s', 0, (x)}
#define RAW(x, n) {'r', (n), (x)}

/* A one-block 1.0 thread file of these records, and what reading it must give: `records`
 * records, then `code` at the end mark (at_end) or at the block (offset 7), with `detail` in
 * the message. */
typedef struct {
    int line;
    field_t fields[12];
    size_t records;
    rip_status_t code;
    int at_end;
    const char *detail;
} record_case_t;

static const record_case_t record_cases[] = {
    {__LINE__, {U8(0x17)}, 0, RIP_E_CORRUPT, 0, "record type 0x17 unknown"},
    /* malloc naming stack 5, never defined */
    {__LINE__, {U8(0x01), VAR(1), ZZ(0x100), VAR(16), VAR(5)},
     0, RIP_E_CORRUPT, 0, "allocation names undefined stack id 5"},
    /* stack 5 defined, then used by a posix_memalign: fine */
    {__LINE__, {U8(0x11), VAR(5), VAR(1), VAR(0x401000),
                U8(0x05), VAR(1), ZZ(0x100), VAR(16), VAR(5), VAR(64)},
     2, RIP_END, 1, "end of file"},
    {__LINE__, {U8(0x11), VAR(1), VAR(0)}, 0, RIP_E_CORRUPT, 0, "stack depth 0, expected 1-1024"},
    {__LINE__, {U8(0x11), VAR(1), VAR(1025)},
     0, RIP_E_CORRUPT, 0, "stack depth 1025, expected 1-1024"},
    {__LINE__, {U8(0x11), VAR(0), VAR(1), VAR(1)}, 0, RIP_E_CORRUPT, 0, "stack id 0 is reserved"},
    /* depth 3, but the block ends after two frames */
    {__LINE__, {U8(0x11), VAR(1), VAR(3), VAR(0x401000), ZZ(-16)},
     0, RIP_E_CORRUPT, 0, "record runs past end of block (record type 0x11 at byte 36 of the block)"},
    /* an 11-byte varint */
    {__LINE__, {U8(0x10), RAW("\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x00", 11)},
     0, RIP_E_CORRUPT, 0, "varint longer than 10 bytes"},
    /* ten bytes, but the last one overflows 64 bits */
    {__LINE__, {U8(0x10), RAW("\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02", 10), VAR(0)},
     0, RIP_E_CORRUPT, 0, "varint longer than 10 bytes"},
    /* the largest ten-byte varint is fine */
    {__LINE__, {U8(0x10), RAW("\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 10), VAR(0)},
     1, RIP_END, 1, "end of file"},
    /* free cut by the block end */
    {__LINE__, {U8(0x10), VAR(1)}, 0, RIP_E_CORRUPT, 0, "record runs past end of block"},
    /* extended record longer than the block */
    {__LINE__, {U8(0x43), VAR(50), VAR(1)},
     0, RIP_E_CORRUPT, 0, "record runs past end of block (record type 0x43 of 50 bytes"},
    /* a field longer than its record */
    {__LINE__, {U8(0x43), VAR(2), VAR(1), VAR(5), STR("abcde")},
     0, RIP_E_CORRUPT, 0, "record runs past its length"},
    /* a module claiming more segments than its payload can hold */
    {__LINE__, {U8(0x41), VAR(5), VAR(0), STR(""), STR(""), VAR(1000000)},
     0, RIP_E_CORRUPT, 0, "record runs past its length"},
    /* realloc whose old block was freed before time 0 */
    {__LINE__, {U8(0x03), VAR(5), ZZ(0x100), VAR(1), VAR(0), ZZ(0x40), VAR(6)},
     0, RIP_E_CORRUPT, 0, "realloc dt_old 6 is larger than its time 5"},
    /* times that overflow 64 bits */
    {__LINE__, {U8(0x10), VAR(UINT64_MAX), ZZ(0), U8(0x10), VAR(1), ZZ(0)},
     1, RIP_E_CORRUPT, 0, "time overflows 64 bits"},
    /* In 1.0 the byte-delta codes (0x20 added to an event's code in 2.0) do not exist, even
     * with fields that would decode. */
    {__LINE__, {U8(0x21), VAR(1), ZZ(1), VAR(16), VAR(0)},
     0, RIP_E_CORRUPT, 0, "record type 0x21 unknown"},
    {__LINE__, {U8(0x30), VAR(1), ZZ(1)}, 0, RIP_E_CORRUPT, 0, "record type 0x30 unknown"},
};

static void record_problems(void)
{
    for (size_t i = 0; i < sizeof record_cases / sizeof record_cases[0]; i++) {
        const record_case_t *c = &record_cases[i];
        start();
        for (const field_t *f = c->fields; f->kind; f++) {
            switch (f->kind) {
            case 'b': b_u8(&raw, (uint8_t)f->v); break;
            case 'v': b_var(&raw, f->v); break;
            case 'z': b_zz(&raw, (int64_t)f->v); break;
            case 's': b_str(&raw, f->s); break;
            case 'r': b_raw(&raw, f->s, f->v); break;
            }
        }
        finish();
        expect(c->records, c->code, c->at_end ? frame.n - 4 : 7, c->detail, c->line);
    }
}

/* ---- Format 2.x: blocks with a column directory ---- */

static block2_t blk;

/* A one-block 2.0 thread file: a header with this time_shift, then the records and columns the
 * case puts in `blk`. Records start at byte 56 of the block (40-byte header, 16-byte
 * directory). */
static void start2(uint32_t time_shift)
{
    raw.n = 0;
    b_header_v2(&raw, "RIPT", 0, 28, time_shift);
    block2_reset(&blk);
}

static void finish2(void)
{
    b_join(&raw, &blk);
    finish();
}

/* An event: its type byte in the records, its dt and address delta in their columns. The delta
 * is in the unit of the type code: bytes under a code with 0x20, otherwise 16-byte units, whose
 * value carries a 0 bit below it (a 1 bit there makes it a reference, see ref2). */
static void ev2(uint8_t type, uint64_t dt, int64_t da)
{
    b_u8(&blk.rec, type);
    b_var(&blk.col[0], dt);
    if (type & 0x20)
        b_zz(&blk.col[1], da);
    else
        b_var(&blk.col[1], (((uint64_t)da << 1) ^ (uint64_t)(da >> 63)) << 1);
}

/* An event whose address is that of the event `back` events earlier in the block: the value
 * back << 1 | 1 under a plain type code. */
static void ref2(uint8_t type, uint64_t dt, uint64_t back)
{
    b_u8(&blk.rec, type);
    b_var(&blk.col[0], dt);
    b_var(&blk.col[1], back << 1 | 1);
}

/* An allocation: ev2 and its size and stack columns. The caller appends align, old and dt_old
 * to blk.rec. */
static void alloc2(uint8_t type, uint64_t dt, int64_t da, uint64_t size, uint64_t stack)
{
    ev2(type, dt, da);
    b_var(&blk.col[2], size);
    b_var(&blk.col[3], stack);
}

static void next2(rip_reader_t *r, rip_record_t *rec, rip_rec_kind_t kind, uint64_t offset,
                  uint64_t t)
{
    rip_error_t err;
    rip_status_t st = rip_reader_next(r, rec, &err);
    if (st != RIP_OK)
        CHECK_FAIL("expected a record, got %s: %s", rip_strerror(st), err.detail);
    CHECK_U(rec->kind, kind);
    CHECK_U(rec->offset, offset);
    CHECK_U(rec->t, t);
}

static void check_alloc2(const rip_record_t *rec, rip_call_t call, uint64_t addr, uint64_t size,
                         uint64_t stack, uint64_t align, uint64_t old, uint64_t old_t)
{
    CHECK_U(rec->u.alloc.call, call);
    CHECK_U(rec->u.alloc.addr, addr);
    CHECK_U(rec->u.alloc.size, size);
    CHECK_U(rec->u.alloc.stack, stack);
    CHECK_U(rec->u.alloc.align, align);
    CHECK_U(rec->u.alloc.old_addr, old);
    CHECK_U(rec->u.alloc.old_t, old_t);
}

/* Every kind of event, both address forms, records without columns in between, and a second
 * block whose bases start again from 0. time_shift 2: the file's times are 4 ns units. */
static void v2_decode(void)
{
    start2(2);
    b_u8(&blk.rec, 0x11);              /* stack 1: whole in the records */
    b_var(&blk.rec, 1);
    b_var(&blk.rec, 1);
    b_var(&blk.rec, 0x401000);
    alloc2(0x01, 10, 0x100, 24, 1);    /* malloc, delta in 16-byte units: 0x1000 at 10 units */
    alloc2(0x21, 1, 9, 7, 0);          /* malloc, delta in bytes: 0x1009 at 11 */
    b_u8(&blk.rec, 0x43);              /* marker at 20 units: no columns, bases untouched */
    b_var(&blk.rec, 1 + 3);
    b_var(&blk.rec, 20);
    b_str(&blk.rec, "ab");
    ev2(0x10, 0, -0x10);               /* free, 16-byte units from an odd base: 0xf09 at 11 */
    ev2(0x30, 2, -9);                  /* free, bytes: 0xf00 at 13 */
    alloc2(0x03, 5, 0x20, 100, 1);     /* realloc to 0x1100 at 18 from 0x1000 released at 15 */
    b_zz(&blk.rec, -0x100);
    b_var(&blk.rec, 3);
    alloc2(0x24, 1, 3, 50, 0);         /* reallocarray, bytes: 0x1103 at 19, from NULL */
    b_zz(&blk.rec, -0x1103);
    b_var(&blk.rec, 0);
    alloc2(0x25, 0, 0xfd, 64, 1);      /* posix_memalign, bytes: 0x1200 at 19 */
    b_var(&blk.rec, 64);
    alloc2(0x06, 3, 0x10, 4096, 0);    /* aligned_alloc, units: 0x1300 at 22 */
    b_var(&blk.rec, 4096);
    frame.n = 0;
    b_frame_header(&frame, 4);
    b_join(&raw, &blk);
    b_block(&frame, raw.b, raw.n);
    uint64_t second = frame.n;
    raw.n = 0;
    block2_reset(&blk);
    ev2(0x10, 3, 1);                   /* free 0x10 at 3 units: the bases were reset */
    b_join(&raw, &blk);
    b_block(&frame, raw.b, raw.n);
    b_le32(&frame, 0);

    rip_reader_t *r;
    rip_error_t err;
    rip_record_t rec;
    CHECK_STATUS(rip_reader_open_mem(frame.b, frame.n, "mem.rip", &r, &err), RIP_OK);
    CHECK_U(rip_reader_header(r)->major, 2);
    CHECK_U(rip_reader_header(r)->minor, 0);
    CHECK_U(rip_reader_header(r)->pid, 1000);
    CHECK_U(rip_reader_header(r)->start_ns, 5000000000ull);
    CHECK_U(rip_reader_header(r)->time_shift, 2);
    next2(r, &rec, RIP_REC_STACK, 7, 0);
    CHECK_U(rec.u.stack.id, 1);
    CHECK_U(rec.u.stack.depth, 1);
    CHECK_U(rec.u.stack.ips[0], 0x401000);
    next2(r, &rec, RIP_REC_ALLOC, 7, 40);
    check_alloc2(&rec, RIP_CALL_MALLOC, 0x1000, 24, 1, 0, 0, 0);
    next2(r, &rec, RIP_REC_ALLOC, 7, 44);
    check_alloc2(&rec, RIP_CALL_MALLOC, 0x1009, 7, 0, 0, 0, 0);
    next2(r, &rec, RIP_REC_MARK, 7, 80);
    CHECK_RSTR(rec.u.name.text, "ab");
    next2(r, &rec, RIP_REC_FREE, 7, 44);
    CHECK_U(rec.u.free.addr, 0xf09);
    next2(r, &rec, RIP_REC_FREE, 7, 52);
    CHECK_U(rec.u.free.addr, 0xf00);
    next2(r, &rec, RIP_REC_ALLOC, 7, 72);
    check_alloc2(&rec, RIP_CALL_REALLOC, 0x1100, 100, 1, 0, 0x1000, 60);
    next2(r, &rec, RIP_REC_ALLOC, 7, 76);
    check_alloc2(&rec, RIP_CALL_REALLOCARRAY, 0x1103, 50, 0, 0, 0, 0);
    next2(r, &rec, RIP_REC_ALLOC, 7, 76);
    check_alloc2(&rec, RIP_CALL_POSIX_MEMALIGN, 0x1200, 64, 1, 64, 0, 0);
    next2(r, &rec, RIP_REC_ALLOC, 7, 88);
    check_alloc2(&rec, RIP_CALL_ALIGNED_ALLOC, 0x1300, 4096, 0, 4096, 0, 0);
    next2(r, &rec, RIP_REC_FREE, second, 12);
    CHECK_U(rec.u.free.addr, 0x10);
    CHECK_STATUS(rip_reader_next(r, &rec, &err), RIP_END);
    CHECK_U(err.offset, frame.n - 4);
    rip_reader_close(r);
}

static void v2_header(void)
{
    /* 16 is the largest time_shift. */
    start2(17);
    finish2();
    EXPECT(0, RIP_E_CORRUPT, 7, "header time_shift 17, expected 0-16");
    start2(16);
    ev2(0x10, 1, 1);
    finish2();
    rip_reader_t *r;
    rip_error_t err;
    rip_record_t rec;
    CHECK_STATUS(rip_reader_open_mem(frame.b, frame.n, "mem.rip", &r, &err), RIP_OK);
    next2(r, &rec, RIP_REC_FREE, 7, 65536);
    CHECK_U(rec.u.free.addr, 16);
    rip_reader_close(r);

    /* A 2.x header holds time_shift: the 1.0 length is too short. */
    raw.n = 0;
    b_header(&raw, "RIPT", 2, 0, 24);
    block2_reset(&blk);
    finish2();
    EXPECT(0, RIP_E_CORRUPT, 7, "header_len 24, expected at least 28 for version 2");

    /* A later minor version's longer header is skipped up to the column directory. */
    raw.n = 0;
    b_header_v2(&raw, "RIPT", 3, 36, 1);
    block2_reset(&blk);
    ev2(0x10, 5, 2);
    finish2();
    CHECK_STATUS(rip_reader_open_mem(frame.b, frame.n, "mem.rip", &r, &err), RIP_OK);
    CHECK_U(rip_reader_header(r)->minor, 3);
    CHECK_U(rip_reader_header(r)->time_shift, 1);
    next2(r, &rec, RIP_REC_FREE, 7, 10);
    CHECK_U(rec.u.free.addr, 32);
    CHECK_STATUS(rip_reader_next(r, &rec, &err), RIP_END);
    rip_reader_close(r);

    /* Times that fit 64 bits in units but not in ns. */
    start2(2);
    ev2(0x10, (1ull << 62) - 1, 0);
    ev2(0x10, 1, 0);
    finish2();
    CHECK_STATUS(rip_reader_open_mem(frame.b, frame.n, "mem.rip", &r, &err), RIP_OK);
    next2(r, &rec, RIP_REC_FREE, 7, UINT64_MAX - 3);
    CHECK_STATUS(rip_reader_next(r, &rec, &err), RIP_E_CORRUPT);
    CHECK_U(err.offset, 7);
    CHECK_CONTAINS(err.detail, "time overflows 64 bits in ns (record at byte 57 of the block)");
    rip_reader_close(r);
}

static void v2_directory(void)
{
    /* The first block ends inside the directory after the header. */
    start2(0);
    b_raw(&raw, "\0\0\0\0\0\0\0\0\0\0", 10);
    finish();
    EXPECT(0, RIP_E_CORRUPT, 7,
           "block of 50 bytes ends inside its column directory (expected 16 bytes at byte 40)");

    /* A later block too short for its directory, reported at that block. */
    start2(0);
    ev2(0x10, 1, 1);
    frame.n = 0;
    b_frame_header(&frame, 4);
    b_join(&raw, &blk);
    b_block(&frame, raw.b, raw.n);
    uint64_t second = frame.n;
    b_block(&frame, "\0\0\0\0\0", 5);
    b_le32(&frame, 0);
    EXPECT(1, RIP_E_CORRUPT, second,
           "block of 5 bytes ends inside its column directory (expected 16 bytes at byte 0)");

    /* Column lengths adding up past the end of the block. */
    start2(0);
    b_le32(&raw, 3);
    b_le32(&raw, 0);
    b_le32(&raw, 0);
    b_le32(&raw, 0);
    b_raw(&raw, "\x10\x01", 2);
    finish();
    EXPECT(0, RIP_E_CORRUPT, 7,
           "column directory at byte 40 gives 3 bytes of columns, the block has 2 after it");
    /* Their sum is not cut to 32 bits (it would be 0 here). */
    start2(0);
    b_le32(&raw, 0x80000000u);
    b_le32(&raw, 0x80000000u);
    b_le32(&raw, 0);
    b_le32(&raw, 0);
    finish();
    EXPECT(0, RIP_E_CORRUPT, 7,
           "column directory at byte 40 gives 4294967296 bytes of columns, the block has 0 after it");
}

static void v2_columns(void)
{
    /* Each column running out under the second of two mallocs (every value is one byte). */
    static const char *const names[4] = {"time", "address", "size", "stack"};
    char msg[200];
    for (int i = 0; i < 4; i++) {
        start2(0);
        alloc2(0x01, 1, 1, 16, 0);
        alloc2(0x01, 1, 1, 16, 0);
        blk.col[i].n--;
        finish2();
        snprintf(msg, sizeof msg,
                 "%s column ends before the record that needs it (record type 0x01 at byte 57 of "
                 "the block)",
                 names[i]);
        EXPECT(1, RIP_E_CORRUPT, 7, msg);
    }
    start2(0);
    ev2(0x10, 1, 1);
    blk.col[1].n = 0;
    finish2();
    EXPECT(0, RIP_E_CORRUPT, 7,
           "address column ends before the record that needs it (record type 0x10 at byte 56");
    /* Messages name the type byte as stored, the byte-delta code included. */
    start2(0);
    ev2(0x30, 1, 1);
    blk.col[1].n = 0;
    finish2();
    EXPECT(0, RIP_E_CORRUPT, 7,
           "address column ends before the record that needs it (record type 0x30 at byte 56");

    /* Bad varints in a column: 11 bytes, and 10 whose last overflows 64 bits. */
    start2(0);
    b_u8(&blk.rec, 0x01);
    b_var(&blk.col[0], 1);
    b_zz(&blk.col[1], 1);
    for (int i = 0; i < 10; i++)
        b_u8(&blk.col[2], 0x80);
    b_u8(&blk.col[2], 0x00);
    b_var(&blk.col[3], 0);
    finish2();
    EXPECT(0, RIP_E_CORRUPT, 7,
           "varint longer than 10 bytes in the size column (record type 0x01 at byte 56 of the "
           "block)");
    start2(0);
    b_u8(&blk.rec, 0x10);
    for (int i = 0; i < 9; i++)
        b_u8(&blk.col[0], 0xff);
    b_u8(&blk.col[0], 0x02);
    b_zz(&blk.col[1], 0);
    finish2();
    EXPECT(0, RIP_E_CORRUPT, 7, "varint longer than 10 bytes in the time column");

    /* Column bytes no record used: after the records, in a block without records, and in a
     * middle block (reported at that block, before the next one is read). */
    start2(0);
    ev2(0x10, 1, 1);
    b_var(&blk.col[1], 300);
    finish2();
    EXPECT(1, RIP_E_CORRUPT, 7, "address column has 2 bytes left after the block's last record");
    start2(0);
    b_var(&blk.col[3], 5);
    b_var(&blk.col[3], 6);
    finish2();
    EXPECT(0, RIP_E_CORRUPT, 7, "stack column has 2 bytes left after the block's last record");
    start2(0);
    ev2(0x10, 1, 1);
    frame.n = 0;
    b_frame_header(&frame, 4);
    b_join(&raw, &blk);
    b_block(&frame, raw.b, raw.n);
    uint64_t second = frame.n;
    raw.n = 0;
    block2_reset(&blk);
    ev2(0x10, 1, 1);
    b_var(&blk.col[2], 1000);
    b_join(&raw, &blk);
    b_block(&frame, raw.b, raw.n);
    raw.n = 0;
    block2_reset(&blk);
    ev2(0x10, 1, 1);
    b_join(&raw, &blk);
    b_block(&frame, raw.b, raw.n);
    b_le32(&frame, 0);
    EXPECT(2, RIP_E_CORRUPT, second, "size column has 2 bytes left after the block's last record");
}

static void v2_records(void)
{
    /* 0x20 marks a byte delta on events only: added to any other core code it is unknown. */
    start2(0);
    b_u8(&blk.rec, 0x31);
    finish2();
    EXPECT(0, RIP_E_CORRUPT, 7, "record type 0x31 unknown");
    start2(0);
    b_u8(&blk.rec, 0x20);
    finish2();
    EXPECT(0, RIP_E_CORRUPT, 7, "record type 0x20 unknown");
    /* In 1.0 those codes do not exist: record_cases. */

    /* The stack id comes from the stack column and must be defined. */
    start2(0);
    alloc2(0x01, 1, 1, 16, 5);
    finish2();
    EXPECT(0, RIP_E_CORRUPT, 7, "allocation names undefined stack id 5 (record at byte 56");

    /* The records end where the columns begin: fields missing from a record are not taken from
     * the column bytes after it. */
    start2(0);
    alloc2(0x05, 1, 1, 16, 0);         /* posix_memalign without its align */
    finish2();
    EXPECT(0, RIP_E_CORRUPT, 7,
           "record runs past end of block (record type 0x05 at byte 56 of the block)");
    start2(0);
    b_u8(&blk.rec, 0x43);              /* a marker of 3 bytes with 1 before the columns */
    b_var(&blk.rec, 3);
    b_var(&blk.rec, 1);
    b_var(&blk.col[0], 0);
    b_var(&blk.col[0], 0);
    finish2();
    EXPECT(0, RIP_E_CORRUPT, 7, "record runs past end of block (record type 0x43 of 3 bytes");
}

/* Since 3.1: a call record (0x46) names the call of the allocation record that follows it in
 * its block; without one after it, or naming a call below 10, the file is corrupt. One that is
 * right gives the allocation its call. */
static void call_records(void)
{
    start2(0);
    b_u8(&blk.rec, 0x46);              /* operator new, then a free: no allocation */
    b_var(&blk.rec, 1);
    b_var(&blk.rec, RIP_CALL_NEW);
    ev2(0x10, 1, 1);
    finish2();
    EXPECT(0, RIP_E_CORRUPT, 7, "call record not followed by an allocation record (record at byte 56");
    start2(0);
    b_u8(&blk.rec, 0x46);              /* the last record of the block */
    b_var(&blk.rec, 1);
    b_var(&blk.rec, RIP_CALL_NEW);
    finish2();
    EXPECT(0, RIP_E_CORRUPT, 7, "call record not followed by an allocation record (record at byte 56");
    start2(0);
    b_u8(&blk.rec, 0x46);              /* call 3 has a type code of its own */
    b_var(&blk.rec, 1);
    b_var(&blk.rec, RIP_CALL_REALLOC);
    alloc2(0x01, 1, 1, 16, 0);
    finish2();
    EXPECT(0, RIP_E_CORRUPT, 7, "call record names call 3, expected 10 or more (record at byte 56");
    start2(0);
    b_u8(&blk.rec, 0x46);              /* a length beyond the block's records */
    b_var(&blk.rec, 9);
    b_var(&blk.rec, RIP_CALL_NEW);
    finish2();
    EXPECT(0, RIP_E_CORRUPT, 7, "call record runs past its length or the block (record at byte 56");

    /* A later minor version's trailing field is skipped; the allocation reads as mallocx. */
    start2(0);
    b_u8(&blk.rec, 0x46);
    b_var(&blk.rec, 2);
    b_var(&blk.rec, RIP_CALL_MALLOCX);
    b_var(&blk.rec, 7);
    alloc2(0x06, 1, 1, 100, 0);
    b_var(&blk.rec, 4096);             /* aligned_alloc's align */
    finish2();
    rip_reader_t *r;
    rip_error_t e;
    if (rip_reader_open_mem(frame.b, frame.n, "mem.rip", &r, &e) != RIP_OK)
        CHECK_FAIL("open: %s", e.detail);
    rip_record_t rec;
    CHECK(rip_reader_next(r, &rec, &e) == RIP_OK);
    CHECK(rec.kind == RIP_REC_ALLOC && rec.u.alloc.call == RIP_CALL_MALLOCX &&
          rec.u.alloc.size == 100 && rec.u.alloc.align == 4096);
    CHECK(rip_reader_next(r, &rec, &e) == RIP_END);
    rip_reader_close(r);
}

/* Pool records (0x47, since 3.4): an op beyond destroy is refused; a later minor version's
 * trailing field is skipped. */
static void pool_records(void)
{
    start2(0);
    b_u8(&blk.rec, 0x47);
    b_var(&blk.rec, 3);
    b_var(&blk.rec, 5);                /* t */
    b_var(&blk.rec, 4);                /* op 4: none */
    b_var(&blk.rec, 7);                /* pool */
    finish2();
    EXPECT(0, RIP_E_CORRUPT, 7, "pool record at block offset 56: op 4, expected 0-3");

    start2(0);
    b_u8(&blk.rec, 0x47);              /* alloc of 48 bytes at 0x1000 in pool 7, then one byte more */
    b_var(&blk.rec, 8);
    b_var(&blk.rec, 5);
    b_var(&blk.rec, RIP_POOL_ALLOC);
    b_var(&blk.rec, 7);
    b_var(&blk.rec, 0x1000);
    b_var(&blk.rec, 48);
    b_var(&blk.rec, 0);
    b_var(&blk.rec, 9);
    finish2();
    rip_reader_t *r;
    rip_error_t e;
    if (rip_reader_open_mem(frame.b, frame.n, "mem.rip", &r, &e) != RIP_OK)
        CHECK_FAIL("open: %s", e.detail);
    rip_record_t rec;
    CHECK(rip_reader_next(r, &rec, &e) == RIP_OK);
    CHECK(rec.kind == RIP_REC_POOL && rec.u.pool.op == RIP_POOL_ALLOC && rec.u.pool.pool == 7 &&
          rec.u.pool.addr == 0x1000 && rec.u.pool.size == 48 && rec.u.pool.stack == 0 &&
          rec.t == 5);
    CHECK(rip_reader_next(r, &rec, &e) == RIP_END);
    rip_reader_close(r);
}

/* Checkpoint records (0x4F, since 3.5): ranges of serials as gaps and lengths; a range that does
 * not start above the one before (or touches it) is refused. */
static void checkpoint_records(void)
{
    start2(0);
    b_u8(&blk.rec, 0x4F);              /* t 5, number 2, ranges 1-3 and 7 */
    b_var(&blk.rec, 7);
    b_var(&blk.rec, 5);
    b_var(&blk.rec, 2);
    b_var(&blk.rec, 2);
    b_var(&blk.rec, 1);
    b_var(&blk.rec, 2);
    b_var(&blk.rec, 4);
    b_var(&blk.rec, 0);
    finish2();
    rip_reader_t *r;
    rip_error_t e;
    if (rip_reader_open_mem(frame.b, frame.n, "mem.rip", &r, &e) != RIP_OK)
        CHECK_FAIL("open: %s", e.detail);
    rip_record_t rec;
    CHECK(rip_reader_next(r, &rec, &e) == RIP_OK);
    CHECK(rec.kind == RIP_REC_CHECKPOINT && rec.t == 5 && rec.u.checkpoint.number == 2 &&
          rec.u.checkpoint.nranges == 2 && rec.u.checkpoint.nfiles == 4 &&
          rec.u.checkpoint.ranges[0].first == 1 && rec.u.checkpoint.ranges[0].last == 3 &&
          rec.u.checkpoint.ranges[1].first == 7 && rec.u.checkpoint.ranges[1].last == 7);
    CHECK(rip_ranges_have(rec.u.checkpoint.ranges, 2, 2) && rip_ranges_have(rec.u.checkpoint.ranges, 2, 7) &&
          !rip_ranges_have(rec.u.checkpoint.ranges, 2, 4) && !rip_ranges_have(rec.u.checkpoint.ranges, 2, 8) &&
          !rip_ranges_have(rec.u.checkpoint.ranges, 2, 0));
    CHECK(rip_reader_next(r, &rec, &e) == RIP_END);
    rip_reader_close(r);

    start2(0);
    b_u8(&blk.rec, 0x4F);              /* ranges 1-3 and 4: adjacent, so not one list */
    b_var(&blk.rec, 7);
    b_var(&blk.rec, 5);
    b_var(&blk.rec, 2);
    b_var(&blk.rec, 2);
    b_var(&blk.rec, 1);
    b_var(&blk.rec, 2);
    b_var(&blk.rec, 1);
    b_var(&blk.rec, 0);
    finish2();
    EXPECT(0, RIP_E_CORRUPT, 7,
           "checkpoint record at block offset 56: range 1 of its list does not start above the "
           "one before it or ends beyond 2^32");
}

/* A map record (0x49, since 3.6) with an op beyond remap is refused; a remap reads all its fields, and
 * an rss record (0x48) with a trailing field of a later minor version reads. */
static void map_records(void)
{
    start2(0);
    b_u8(&blk.rec, 0x49);
    b_var(&blk.rec, 4);
    b_var(&blk.rec, 5);                /* t */
    b_var(&blk.rec, 3);                /* op 3: none */
    b_var(&blk.rec, 0x1000);
    b_var(&blk.rec, 1);
    finish2();
    EXPECT(0, RIP_E_CORRUPT, 7, "map record at block offset 56: op 3, expected 0-2");

    start2(0);
    b_u8(&blk.rec, 0x49);              /* remap of 0x2000, 4096 bytes, to 0x3000, 8192 */
    b_var(&blk.rec, 11);
    b_var(&blk.rec, 6);
    b_var(&blk.rec, RIP_MAP_REMAP);
    b_var(&blk.rec, 0x3000);
    b_var(&blk.rec, 8192);
    b_var(&blk.rec, 0);
    b_var(&blk.rec, 0x2000);
    b_var(&blk.rec, 4096);
    b_u8(&blk.rec, 0x48);              /* rss, then one byte more */
    b_var(&blk.rec, 6);
    b_var(&blk.rec, 7);
    b_var(&blk.rec, 100);
    b_var(&blk.rec, 60);
    b_var(&blk.rec, 40);
    b_var(&blk.rec, 1);
    b_var(&blk.rec, 9);
    finish2();
    rip_reader_t *r;
    rip_error_t e;
    if (rip_reader_open_mem(frame.b, frame.n, "mem.rip", &r, &e) != RIP_OK)
        CHECK_FAIL("open: %s", e.detail);
    rip_record_t rec;
    CHECK(rip_reader_next(r, &rec, &e) == RIP_OK);
    CHECK(rec.kind == RIP_REC_MAP && rec.u.map.op == RIP_MAP_REMAP && rec.u.map.addr == 0x3000 &&
          rec.u.map.len == 8192 && rec.u.map.stack == 0 && rec.u.map.old == 0x2000 &&
          rec.u.map.old_len == 4096 && rec.t == 6);
    CHECK(rip_reader_next(r, &rec, &e) == RIP_OK);
    CHECK(rec.kind == RIP_REC_RSS && rec.t == 7 && rec.u.rss.rss == 100 && rec.u.rss.anon == 60 &&
          rec.u.rss.file == 40 && rec.u.rss.swap == 1);
    CHECK(rip_reader_next(r, &rec, &e) == RIP_END);
    rip_reader_close(r);
}

/* References (an odd address value under a plain code): the distance counts the events of the
 * block only (allocations and frees, not markers or stacks), from 0 at each block start, and is
 * 1 to 4096 and at most the events before it. */
static void v2_references(void)
{
    /* Resolved: to an unaligned address under a plain code; past a marker, which is no event;
     * in a realloc, whose old address is relative to the resolved one; and each sets the address
     * base for the delta after it. An odd value under a byte-delta code stays a delta. */
    start2(0);
    b_u8(&blk.rec, 0x11);              /* stack 1 */
    b_var(&blk.rec, 1);
    b_var(&blk.rec, 1);
    b_var(&blk.rec, 0x401000);
    alloc2(0x21, 10, 0x1009, 24, 1);   /* event 0: malloc 0x1009 at 10 */
    alloc2(0x01, 1, 0x10, 8, 0);       /* event 1: malloc 0x1109 at 11 */
    b_u8(&blk.rec, 0x43);              /* marker: would make the distance below 3 if counted */
    b_var(&blk.rec, 2);
    b_var(&blk.rec, 12);
    b_str(&blk.rec, "");
    ref2(0x10, 2, 2);                  /* event 2: free of event 0's 0x1009 at 13 */
    ev2(0x10, 1, 1);                   /* event 3: free 0x1019 at 14, one unit from 0x1009 */
    ref2(0x03, 1, 3);                  /* event 4: realloc to event 1's 0x1109 at 15 */
    b_var(&blk.col[2], 100);
    b_var(&blk.col[3], 1);
    b_zz(&blk.rec, -0x100);            /* from 0x1009, released at 13 */
    b_var(&blk.rec, 2);
    ev2(0x30, 0, -2);                  /* event 5: free 0x1107 at 15: value 3, but in bytes */
    ref2(0x10, 0, 1);                  /* event 6: free of event 5's 0x1107 */
    ref2(0x01, 4, 6);                  /* event 7: malloc at event 1's 0x1109 at 19 */
    b_var(&blk.col[2], 1);
    b_var(&blk.col[3], 0);
    finish2();
    rip_reader_t *r;
    rip_error_t err;
    rip_record_t rec;
    CHECK_STATUS(rip_reader_open_mem(frame.b, frame.n, "mem.rip", &r, &err), RIP_OK);
    next2(r, &rec, RIP_REC_STACK, 7, 0);
    next2(r, &rec, RIP_REC_ALLOC, 7, 10);
    check_alloc2(&rec, RIP_CALL_MALLOC, 0x1009, 24, 1, 0, 0, 0);
    next2(r, &rec, RIP_REC_ALLOC, 7, 11);
    check_alloc2(&rec, RIP_CALL_MALLOC, 0x1109, 8, 0, 0, 0, 0);
    next2(r, &rec, RIP_REC_MARK, 7, 12);
    next2(r, &rec, RIP_REC_FREE, 7, 13);
    CHECK_U(rec.u.free.addr, 0x1009);
    next2(r, &rec, RIP_REC_FREE, 7, 14);
    CHECK_U(rec.u.free.addr, 0x1019);
    next2(r, &rec, RIP_REC_ALLOC, 7, 15);
    check_alloc2(&rec, RIP_CALL_REALLOC, 0x1109, 100, 1, 0, 0x1009, 13);
    next2(r, &rec, RIP_REC_FREE, 7, 15);
    CHECK_U(rec.u.free.addr, 0x1107);
    next2(r, &rec, RIP_REC_FREE, 7, 15);
    CHECK_U(rec.u.free.addr, 0x1107);
    next2(r, &rec, RIP_REC_ALLOC, 7, 19);
    check_alloc2(&rec, RIP_CALL_MALLOC, 0x1109, 1, 0, 0, 0, 0);
    CHECK_STATUS(rip_reader_next(r, &rec, &err), RIP_END);
    rip_reader_close(r);

    /* The farthest reference, 4096, names the event whose address the reader is about to
     * replace with the current one's: first with exactly 4096 events before it, then with more.
     * Events i < 4096 free 16 * (i + 1). */
    start2(0);
    for (int i = 0; i < 4096; i++)
        ev2(0x10, 1, 1);
    ref2(0x10, 1, 4096);               /* event 4096: event 0's 16 */
    ref2(0x10, 1, 4096);               /* event 4097: event 1's 32 */
    ref2(0x10, 1, 4095);               /* event 4098: event 3's 64 */
    ev2(0x10, 1, 1);                   /* event 4099: 80, from the base the reference set */
    finish2();
    CHECK_STATUS(rip_reader_open_mem(frame.b, frame.n, "mem.rip", &r, &err), RIP_OK);
    for (uint64_t i = 0; i < 4096; i++) {
        next2(r, &rec, RIP_REC_FREE, 7, i + 1);
        CHECK_U(rec.u.free.addr, 16 * (i + 1));
    }
    static const uint64_t last[4] = {16, 32, 64, 80};
    for (uint64_t i = 0; i < 4; i++) {
        next2(r, &rec, RIP_REC_FREE, 7, 4097 + i);
        CHECK_U(rec.u.free.addr, last[i]);
    }
    CHECK_STATUS(rip_reader_next(r, &rec, &err), RIP_END);
    rip_reader_close(r);

    /* Distance 0, and past the start of the block: from its first event, from an event whose
     * block holds fewer events before it (the marker does not count), and the largest value. */
    start2(0);
    ev2(0x10, 1, 1);
    ref2(0x10, 1, 0);
    finish2();
    EXPECT(1, RIP_E_CORRUPT, 7,
           "address refers to the event 0 back, the block has 1 before it (at most 4096; record "
           "at byte 57 of the block)");
    start2(0);
    ref2(0x10, 1, 1);
    finish2();
    EXPECT(0, RIP_E_CORRUPT, 7,
           "address refers to the event 1 back, the block has 0 before it (at most 4096; record "
           "at byte 56 of the block)");
    start2(0);
    ev2(0x10, 1, 1);
    b_u8(&blk.rec, 0x43);              /* marker, bytes 57-60 */
    b_var(&blk.rec, 2);
    b_var(&blk.rec, 1);
    b_str(&blk.rec, "");
    alloc2(0x01, 1, 1, 16, 0);
    ref2(0x10, 1, 3);
    finish2();
    EXPECT(3, RIP_E_CORRUPT, 7,
           "address refers to the event 3 back, the block has 2 before it (at most 4096; record "
           "at byte 62 of the block)");
    start2(0);
    ev2(0x10, 1, 1);
    b_u8(&blk.rec, 0x10);
    b_var(&blk.col[0], 1);
    b_var(&blk.col[1], UINT64_MAX);
    finish2();
    EXPECT(1, RIP_E_CORRUPT, 7,
           "address refers to the event 9223372036854775807 back, the block has 1 before it");

    /* Across a block boundary: the first event of the second block names the last event of the
     * first, which a reader starting at the second block has not seen. */
    start2(0);
    ev2(0x10, 1, 1);
    ev2(0x10, 1, 0);
    frame.n = 0;
    b_frame_header(&frame, 4);
    b_join(&raw, &blk);
    b_block(&frame, raw.b, raw.n);
    uint64_t second = frame.n;
    raw.n = 0;
    block2_reset(&blk);
    ref2(0x10, 1, 1);
    b_join(&raw, &blk);
    b_block(&frame, raw.b, raw.n);
    b_le32(&frame, 0);
    EXPECT(2, RIP_E_CORRUPT, second,
           "address refers to the event 1 back, the block has 0 before it (at most 4096; record "
           "at byte 16 of the block)");

    /* 4097 is past the limit even with 4097 events before it. */
    start2(0);
    for (int i = 0; i < 4097; i++)
        ev2(0x10, 1, 1);
    ref2(0x10, 1, 4097);
    finish2();
    EXPECT(4097, RIP_E_CORRUPT, 7,
           "address refers to the event 4097 back, the block has 4097 before it (at most 4096; "
           "record at byte 4153 of the block)");

    /* A 1.0 file has no references: an odd value is a byte delta there. */
    start();
    b_u8(&raw, 0x10);
    b_var(&raw, 1);
    b_var(&raw, 3);
    finish();
    CHECK_STATUS(rip_reader_open_mem(frame.b, frame.n, "mem.rip", &r, &err), RIP_OK);
    CHECK_STATUS(rip_reader_next(r, &rec, &err), RIP_OK);
    CHECK_U(rec.u.free.addr, (uint64_t)-2);
    rip_reader_close(r);
}

int main(void)
{
    versions();
    header_problems();
    block_problems();
    record_problems();
    v2_decode();
    v2_header();
    v2_directory();
    v2_columns();
    v2_records();
    call_records();
    checkpoint_records();
    pool_records();
    map_records();
    v2_references();

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
