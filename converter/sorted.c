/*
 * sorted.c: binary search over arrays sorted by a 64-bit key.
 */
#include <string.h>

#include "sorted.h"

size_t cv__upper_bound(const void *base, size_t n, size_t size, size_t key_offset, uint64_t x)
{
    const unsigned char *b = base;
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint64_t key;
        memcpy(&key, b + mid * size + key_offset, sizeof key);
        if (key <= x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}
