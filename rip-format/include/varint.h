/*
 * varint.h: little-endian and LEB128 helpers shared by the writer and the reader, and the one
 * LEB128 decoder of the project (librheap's call-frame decoder reads DWARF with it, the
 * converter encodes its compact allocation rows with it). The format library's second public
 * header: byte-level helpers, no format knowledge (that is rip.h). Everything on
 * disk goes through these, never through a struct copy, so the format does not depend on the
 * compiler's layout or the host's byte order.
 */
#ifndef RIP_VARINT_H
#define RIP_VARINT_H

#include <stddef.h>
#include <stdint.h>

#define RIP__VARINT_MAX 10

static inline void rip__put_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static inline void rip__put_le16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static inline void rip__put_le64(uint8_t *p, uint64_t v)
{
    rip__put_le32(p, (uint32_t)v);
    rip__put_le32(p + 4, (uint32_t)(v >> 32));
}

static inline uint32_t rip__get_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint16_t rip__get_le16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint64_t rip__get_le64(const uint8_t *p)
{
    return (uint64_t)rip__get_le32(p) | (uint64_t)rip__get_le32(p + 4) << 32;
}

/* Bytes the LEB128 encoding of v takes (1-10). */
static inline size_t rip__varint_len(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

/* Writes v as LEB128 at p, returns the bytes written. The caller made room (rip__varint_len). */
static inline size_t rip__put_varint(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

static inline uint64_t rip__zigzag(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t rip__unzigzag(uint64_t u)
{
    return (int64_t)((u >> 1) ^ (~(u & 1) + 1));
}

/* Result of rip__get_varint. */
enum {
    RIP__VARINT_OK = 0,
    RIP__VARINT_SHORT,      /* the bytes end inside the varint */
    RIP__VARINT_LONG,       /* more than 10 bytes, or a 10th byte that overflows 64 bits */
};

/* Reads one LEB128 value from [*p, end). On success advances *p. */
static inline int rip__get_varint(const uint8_t **p, const uint8_t *end, uint64_t *out)
{
    const uint8_t *q = *p;
    uint64_t v = 0;
    for (unsigned i = 0; i < RIP__VARINT_MAX; i++) {
        if (q >= end)
            return RIP__VARINT_SHORT;
        uint8_t b = *q++;
        /* The tenth byte may only hold the top bit of a 64-bit value. */
        if (i == RIP__VARINT_MAX - 1 && b > 1)
            return RIP__VARINT_LONG;
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *p = q;
            *out = v;
            return RIP__VARINT_OK;
        }
    }
    return RIP__VARINT_LONG;
}

/* Reads one signed LEB128 value (DWARF's SLEB128, two's complement: the last byte's bit 6 is
 * the sign) from [*p, end): the bytes rip__get_varint reads, then the sign extended from the
 * last of them. On success advances *p. The format itself stores signed numbers zigzagged; the
 * tracer's call-frame decoder reads DWARF with this. */
static inline int rip__get_svarint(const uint8_t **p, const uint8_t *end, int64_t *out)
{
    const uint8_t *start = *p;
    uint64_t v;
    int st = rip__get_varint(p, end, &v);
    if (st != RIP__VARINT_OK)
        return st;
    unsigned bits = 7 * (unsigned)(*p - start);
    if (bits < 64 && ((v >> (bits - 1)) & 1))
        v |= ~(uint64_t)0 << bits;
    *out = (int64_t)v;
    return RIP__VARINT_OK;
}

#endif
