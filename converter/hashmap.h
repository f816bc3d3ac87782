/*
 * hashmap.h: the converter's open-addressing hash tables.
 *
 * Every table here keys on a nonzero 64-bit number (0 marks an empty slot), keeps its keys in
 * an array of their own beside a parallel array of values (probing reads keys only, eight to a
 * cache line), probes linearly from a Fibonacci-hashed home slot and doubles when it would be
 * more than half full. cv__u64map_t is such a table from keys to 64-bit values; the stack
 * table (stacks.c) and the live-block store's side table of unpacked blocks (pair.c) keep their
 * own lookups, tuned to their values, and share the growing. The store's packed blocks live in
 * shards of their own layout (pair.c).
 */
#ifndef RHEAP_HASHMAP_H
#define RHEAP_HASHMAP_H

#include <stddef.h>
#include <stdint.h>

/* The home slot of key in a table of 2^(64 - shift) slots: the top bits of a multiplicative
 * hash, which spread clustered keys (aligned addresses, small ids) evenly. */
static inline size_t cv__hash_slot(uint64_t key, unsigned shift)
{
    return (size_t)((key * 0x9E3779B97F4A7C15ull) >> shift);
}

/* Doubles a table of *mask + 1 slots: allocates keys and values for twice as many, re-inserts
 * every entry of (*keys, *valsp) at its home slot for the new size (cv__hash_slot with
 * *shift - 1), frees the old arrays and updates *mask and *shift. valsp: a pointer to the
 * values array (of any type, val_size bytes each). 0, or -1 when out of memory (the table is
 * left as it was). Equal keys are kept as they are (a table may hold several entries per key).
 * The cost is one pass over the old table; doubling keeps it amortized constant per insert. */
int cv__hash_grow(uint64_t **keys, void *valsp, size_t val_size, size_t *mask, unsigned *shift);

/* A map from nonzero 64-bit keys to 64-bit values. */
typedef struct {
    uint64_t *keys; /* 0 = empty */
    uint64_t *vals;
    size_t mask, count;
    unsigned shift;
} cv__u64map_t;

/* 0, or -1 when out of memory. */
int cv__u64map_init(cv__u64map_t *m);
/* Frees the arrays; the map may be initialized again. */
void cv__u64map_free(cv__u64map_t *m);
/* Sets key (nonzero) to value. 0, or -1 when out of memory (the map is unchanged). */
int cv__u64map_put(cv__u64map_t *m, uint64_t key, uint64_t value);
/* 1 and *value set when key is present, else 0. */
int cv__u64map_get(const cv__u64map_t *m, uint64_t key, uint64_t *value);

#endif
