/*
 * sorted.h: lookups in arrays sorted by a 64-bit key (a module's segments by start address, a
 * module's CU ranges and symbols by their low address).
 */
#ifndef RHEAP_SORTED_H
#define RHEAP_SORTED_H

#include <stddef.h>
#include <stdint.h>

/* For base[0, n), elements of `size` bytes sorted by the uint64_t at byte `key_offset` of each
 * (offsetof of the key field): how many elements have a key <= x. The element that starts
 * at or below x, if any, is therefore the one before the result; a caller checks that x lies
 * within it, and steps further back when ranges overlap. O(log n). */
size_t cv__upper_bound(const void *base, size_t n, size_t size, size_t key_offset, uint64_t x);

#endif
