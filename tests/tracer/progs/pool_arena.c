/*
 * pool_arena: two bump arenas, each a pool reported through rheap_pool.h and carved out of one
 * malloc'd chunk, so that each pool's first block has the address of its chunk.
 *
 * "frames": 100 blocks of 32 bytes, 60 given back one by one, then the pool destroyed with its
 * 40 others still live, then its chunk freed. "strings": 50 blocks of 24 bytes, 20 given back,
 * 30 leaked at exit with their chunk. One free names the wrong pool (a block of "frames" given
 * to "strings") and must pair with nothing. Prints what the database must hold ("expect-" lines)
 * and the lines of the two allocation sites.
 */
#include "progs.h"
#include "rheap_pool.h"

PROGS_SINK_DEFINITION;

#define CHUNK 65536

typedef struct {
    char *base;
    size_t used;
} arena_t;

static int frames_line, strings_line;

static void arena_init(arena_t *a, const char *name)
{
    a->base = malloc(CHUNK);
    a->used = 0;
    rheap_pool_create((uintptr_t)a, name);
}

static void *bump(arena_t *a, size_t n)
{
    void *p = a->base + a->used;
    a->used += (n + 15) & ~(size_t)15;
    return p;
}

static __attribute__((noinline)) void *frame_alloc(arena_t *a)
{
    void *p = bump(a, 32);
    rheap_pool_alloc((uintptr_t)a, p, 32); frames_line = __LINE__;
    return p;
}

static __attribute__((noinline)) void *string_alloc(arena_t *a)
{
    void *p = bump(a, 24);
    rheap_pool_alloc((uintptr_t)a, p, 24); strings_line = __LINE__;
    return p;
}

int main(void)
{
    static arena_t frames, strings;
    static void *fb[100], *sb[50];
    arena_init(&frames, "frames");
    arena_init(&strings, "strings");
    for (int i = 0; i < 100; i++)
        fb[i] = frame_alloc(&frames);
    for (int i = 0; i < 50; i++)
        sb[i] = string_alloc(&strings);
    /* Blocks 0, 4, 5, 9, ... stay: the one at the chunk's address among them. */
    for (int i = 0; i < 100; i++)
        if (i % 5 >= 1 && i % 5 <= 3)
            rheap_pool_free((uintptr_t)&frames, fb[i]);
    for (int i = 0; i < 50; i++)
        if (i % 5 >= 3)
            rheap_pool_free((uintptr_t)&strings, sb[i]);
    rheap_pool_free((uintptr_t)&strings, fb[0]); /* the wrong pool: pairs with nothing */
    rheap_pool_destroy((uintptr_t)&frames);
    free(frames.base);
    SINK(strings.base);
    say("expect-pools frames|100|0|3200\n");
    say("expect-pools strings|50|30|1200\n");
    say("expect-destroyed 40\n");
    say("expect-leak string_alloc|pool_arena.c:%d|30\n", strings_line);
    say("expect-site frame_alloc|pool_arena.c:%d|100\n", frames_line);
    say("expect-chunks 2|1\n");
    say("expect-unmatched 1\n");
    return 0;
}
