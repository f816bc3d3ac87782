/*
 * xxh32.c: the 32-bit xxHash, which the lz4 frame format uses for its header and block
 * checksums. Written from the published algorithm description; it needs no allocation, so the
 * writer can use it inside malloc wrappers.
 */
#include "rip.h"

#define P1 0x9E3779B1u
#define P2 0x85EBCA77u
#define P3 0xC2B2AE3Du
#define P4 0x27D4EB2Fu
#define P5 0x165667B1u

static inline uint32_t rotl(uint32_t x, unsigned r)
{
    return (x << r) | (x >> (32 - r));
}

/* Byte-wise load: the data may be unaligned and the hash is defined on little-endian lanes. */
static inline uint32_t lane(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint32_t round32(uint32_t acc, uint32_t in)
{
    return rotl(acc + in * P2, 13) * P1;
}

uint32_t rip_xxh32(const void *data, size_t len, uint32_t seed)
{
    const uint8_t *p = data;
    const uint8_t *end = p + len;
    uint32_t h;

    if (len >= 16) {
        uint32_t v1 = seed + P1 + P2, v2 = seed + P2, v3 = seed, v4 = seed - P1;
        const uint8_t *limit = end - 16;
        do {
            v1 = round32(v1, lane(p));
            v2 = round32(v2, lane(p + 4));
            v3 = round32(v3, lane(p + 8));
            v4 = round32(v4, lane(p + 12));
            p += 16;
        } while (p <= limit);
        h = rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18);
    } else {
        h = seed + P5;
    }
    h += (uint32_t)len;
    for (; p + 4 <= end; p += 4)
        h = rotl(h + lane(p) * P3, 17) * P4;
    for (; p < end; p++)
        h = rotl(h + *p * P5, 11) * P1;
    h ^= h >> 15;
    h *= P2;
    h ^= h >> 13;
    h *= P3;
    h ^= h >> 16;
    return h;
}
