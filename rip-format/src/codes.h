/*
 * codes.h: the numbers written to disk (FORMAT.md). These values are frozen: a published code is
 * never changed or reused.
 *
 * When you add a record type: give it a new code here, describe it in FORMAT.md (byte table and a
 * row in the change history), bump RIP_FORMAT_MINOR (new extended record) or RIP_FORMAT_MAJOR
 * (new core record) in include/rip.h, add a rip_rec_kind_t value and its fields to rip.h, and
 * update writer.c, reader.c, cli/dump.c, the round-trip test and the golden files in
 * tests/data/ (keep the old golden files: they prove old recordings still read).
 */
#ifndef RIP_CODES_H
#define RIP_CODES_H

#include "rip.h"
#include "varint.h"

/* lz4 frame (FORMAT.md section 1). */
#define RIP__LZ4_MAGIC 0x184D2204u
#define RIP__LZ4_FLG 0x70u             /* version 01, independent blocks, block checksums */
#define RIP__LZ4_FRAME_HEADER_LEN 7u
#define RIP__LZ4_UNCOMPRESSED 0x80000000u

/* Since 3.0: a thread file may start with its staging area (FORMAT.md section 6), a skippable
 * lz4 frame: magic, 4-byte length, then "RIPS", the block size, the commit word at byte
 * RIP__STAGE_COMMIT, and from byte RIP__STAGE_AREA the raw block and the four columns, one
 * block size each. */
#define RIP__STAGE_MAGIC 0x184D2A52u
#define RIP__MAGIC_STAGE "RIPS"
#define RIP__STAGE_COMMIT 64u
#define RIP__STAGE_AREA 4096u
/* Since 3.2: the check word after the commit word (FORMAT.md section 6): the low 16 bits of
 * the staged block's number << 48 | an end of its records << 24 | a 24-bit checksum of the
 * records and of the column values they use, up to that end. */
#define RIP__STAGE_CHECK 72u

/* The check word's checksum: one 64-bit state, from RIP__CHECK_BASIS at each block start, into
 * which each record (a call record together with the allocation it names) mixes the values it
 * takes from the columns, in column order, then its length and its bytes 8 at a time. One multiply
 * per 8 record bytes or per column value, instead of one per byte: the recorder pays it on every
 * event. A multiply carries a changed bit only upwards, so the top 24 bits are the sum. */
#define RIP__CHECK_BASIS 0x6A09E667F3BCC909u
#define RIP__CHECK_MUL 0x9E3779B97F4A7C15u
static inline uint64_t rip__check_mix(uint64_t h, uint64_t v)
{
    return (h ^ v) * RIP__CHECK_MUL;
}
/* Mixes a record's n bytes at p: the length, then each 8-byte little-endian word, the last one
 * padded with zero bytes. */
static inline uint64_t rip__check_bytes(uint64_t h, const uint8_t *p, size_t n)
{
    h = rip__check_mix(h, n);
    for (; n >= 8; p += 8, n -= 8)
        h = rip__check_mix(h, rip__get_le64(p));
    if (n) {
        uint64_t w = 0;
        for (size_t i = 0; i < n; i++)
            w |= (uint64_t)p[i] << (8 * i);
        h = rip__check_mix(h, w);
    }
    return h;
}
static inline uint32_t rip__check_sum(uint64_t h)
{
    return (uint32_t)(h >> 40);
}

/* Decompressed stream header (FORMAT.md section 2). */
#define RIP__MAGIC_THREAD "RIPT"
#define RIP__MAGIC_PROCESS "RIPP"
#define RIP__STREAM_HEADER_LEN (12u + RIP_HEADER_LEN_2_0)   /* 40 bytes in version 2.0 */

/* Core records: no length, every reader of a major version knows all of that version's. */
#define RIP__T_MALLOC 0x01
#define RIP__T_CALLOC 0x02
#define RIP__T_REALLOC 0x03
#define RIP__T_REALLOCARRAY 0x04
#define RIP__T_POSIX_MEMALIGN 0x05
#define RIP__T_ALIGNED_ALLOC 0x06
#define RIP__T_MEMALIGN 0x07
#define RIP__T_VALLOC 0x08
#define RIP__T_PVALLOC 0x09
#define RIP__T_FREE 0x10
#define RIP__T_STACK 0x11
#define RIP__T_CORE_LAST 0x3F
/* Since 2.0: added to an allocation or free code when its address delta is in bytes rather
 * than in 16-byte units. */
#define RIP__T_EXACT 0x20

/* Since 2.0: every block starts (after the stream header, in the first block) with the lengths
 * of its four columns, 4 bytes each, and the columns follow the records in this order. */
#define RIP__COLUMNS 4
#define RIP__DIR_LEN (4u * RIP__COLUMNS)
#define RIP__COL_DT 0
#define RIP__COL_ADDR 1
#define RIP__COL_SIZE 2
#define RIP__COL_STACK 3

/* Since 2.0: an event's address may name one of the last RIP__RECENT events of its block with
 * the same address, by distance (FORMAT.md section 3). */
#define RIP__RECENT 4096u

/* Extended records: type, varint payload length, payload. Unknown ones are skipped. */
#define RIP__T_EXTENDED_FIRST 0x40
#define RIP__T_MODULES 0x40
#define RIP__T_MODULE 0x41
#define RIP__T_THREAD_NAME 0x42
#define RIP__T_MARK 0x43
#define RIP__T_LOST 0x44
#define RIP__T_TOTALS 0x45 /* since 3.0 */
#define RIP__T_CALL 0x46   /* since 3.1: names the call of the allocation record that follows */
#define RIP__T_POOL 0x47   /* since 3.4: an event of a program's own pool */
#define RIP__T_RSS 0x48    /* since 3.6: a sample of the process's resident memory */
#define RIP__T_MAP 0x49    /* since 3.6: an mmap, munmap or mremap of anonymous memory */
#define RIP__T_CHECKPOINT 0x4F /* since 3.5: a checkpoint file's list of the files it replaces */
#define RIP__T_PROCESS 0x50
#define RIP__T_CONFIG 0x51
#define RIP__T_ON 0x52
#define RIP__T_OFF 0x53
#define RIP__T_SAMPLING 0x54 /* since 3.0 */
#define RIP__T_UNSEEN 0x55   /* since 3.1 */

/* The allocation type codes are laid out so that code == rip_call_t value; these checks keep the
 * in-memory enum and the frozen codes from drifting apart silently. */
#define RIP__T_ALLOC_FIRST RIP__T_MALLOC
#define RIP__T_ALLOC_LAST RIP__T_PVALLOC
_Static_assert(RIP_CALL_MALLOC == RIP__T_MALLOC && RIP_CALL_PVALLOC == RIP__T_PVALLOC &&
               RIP_CALL_REALLOC == RIP__T_REALLOC && RIP_CALL_POSIX_MEMALIGN == RIP__T_POSIX_MEMALIGN,
               "rip_call_t values must equal the allocation type codes");

/* Longest string the writer stores; longer paths and names are cut to this many bytes. */
#define RIP__MAX_STRING RIP_MAX_STRING

#endif
