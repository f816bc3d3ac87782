/*
 * sites.c: a program whose allocations are known, for the profile-mode tests.
 *
 *     sites trace|profile INTERVAL DIR
 *
 * Records itself with rheap_enable() in the given mode (profile: sampled about once every
 * INTERVAL bytes) into DIR, runs five allocation sites, each in a function of its own, stops
 * with rheap_disable() and prints what each site did, exactly:
 *
 *     site NAME calls=N bytes=B leaked_blocks=L leaked_bytes=LB
 *     total calls=N bytes=B frees=F
 *
 * The sizes come from a fixed-seed generator, so every run makes the same calls. Only the
 * printing (after the recording stopped) allocates outside the sites.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rheap.h"

typedef struct {
    const char *name;
    uint64_t calls, bytes, leaked_blocks, leaked_bytes;
} site_t;

static site_t sites[5] = {{.name = "small_temporary"}, {.name = "medium_half_kept"},
                          {.name = "large_blocks"},    {.name = "aligned_pages"},
                          {.name = "grown_by_realloc"}};
static uint64_t frees;
static uint64_t rng = 88172645463325252ull;

static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void count(site_t *s, uint64_t size)
{
    s->calls++;
    s->bytes += size;
}

static void keep(site_t *s, uint64_t size)
{
    s->leaked_blocks++;
    s->leaked_bytes += size;
}

static void release(void *p)
{
    free(p);
    frees++;
}

/* Many small blocks, each freed at once. */
static __attribute__((noinline)) void small_temporary(void)
{
    for (int i = 0; i < 400000; i++) {
        uint64_t size = 16 + next() % 48;
        char *p = malloc(size);
        p[0] = 1;
        count(&sites[0], size);
        release(p);
    }
}

/* Medium blocks by calloc; every other one is never freed. */
static __attribute__((noinline)) void medium_half_kept(void **kept, size_t *nkept)
{
    for (int i = 0; i < 100000; i++) {
        uint64_t size = 128 + next() % 256;
        char *p = calloc(1, size);
        count(&sites[1], size);
        if (i % 2) {
            kept[(*nkept)++] = p;
            keep(&sites[1], size);
        } else {
            release(p);
        }
    }
}

/* Blocks larger than any sampling interval the tests use: nearly all sampled. */
static __attribute__((noinline)) void large_blocks(void **kept, size_t *nkept)
{
    for (int i = 0; i < 300; i++) {
        uint64_t size = (256 << 10) + next() % (256 << 10);
        char *p = malloc(size);
        p[0] = 1;
        count(&sites[2], size);
        if (i % 10 == 0) {
            kept[(*nkept)++] = p;
            keep(&sites[2], size);
        } else {
            release(p);
        }
    }
}

/* Page-aligned blocks, all kept. */
static __attribute__((noinline)) void aligned_pages(void **kept, size_t *nkept)
{
    for (int i = 0; i < 4000; i++) {
        void *p;
        if (posix_memalign(&p, 4096, 4096) != 0)
            abort();
        count(&sites[3], 4096);
        kept[(*nkept)++] = p;
        keep(&sites[3], 4096);
    }
}

/* Buffers grown by realloc from 64 bytes to 4 KiB, then freed. */
static __attribute__((noinline)) void grown_by_realloc(void)
{
    for (int i = 0; i < 5000; i++) {
        char *p = malloc(64);
        count(&sites[4], 64);
        for (uint64_t size = 128; size <= 4096; size *= 2) {
            p = realloc(p, size);
            count(&sites[4], size);
        }
        release(p);
    }
}

int main(int argc, char **argv)
{
    if (argc != 4 || (strcmp(argv[1], "trace") && strcmp(argv[1], "profile"))) {
        fprintf(stderr, "usage: sites trace|profile INTERVAL DIR\n");
        return 2;
    }
    static void *kept[100000];
    size_t nkept = 0;
    rheap_config c = RHEAP_CONFIG_INIT;
    c.mode = strcmp(argv[1], "profile") ? RHEAP_MODE_TRACE : RHEAP_MODE_PROFILE;
    c.sample_interval = strtoul(argv[2], NULL, 10);
    c.output_dir = argv[3];
    if (rheap_enable(&c) != 0) {
        fprintf(stderr, "rheap_enable: %s\n", strerror(errno));
        return 1;
    }
    small_temporary();
    medium_half_kept(kept, &nkept);
    large_blocks(kept, &nkept);
    aligned_pages(kept, &nkept);
    grown_by_realloc();
    if (rheap_disable() != 0) {
        fprintf(stderr, "rheap_disable: %s\n", strerror(errno));
        return 1;
    }
    uint64_t calls = 0, bytes = 0;
    for (int i = 0; i < 5; i++) {
        printf("site %s calls=%llu bytes=%llu leaked_blocks=%llu leaked_bytes=%llu\n",
               sites[i].name, (unsigned long long)sites[i].calls,
               (unsigned long long)sites[i].bytes, (unsigned long long)sites[i].leaked_blocks,
               (unsigned long long)sites[i].leaked_bytes);
        calls += sites[i].calls;
        bytes += sites[i].bytes;
    }
    printf("total calls=%llu bytes=%llu frees=%llu\n", (unsigned long long)calls,
           (unsigned long long)bytes, (unsigned long long)frees);
    printf("recording %s\n", rheap_output_path());
    for (size_t i = 0; i < nkept; i++)
        free(kept[i]);
    return 0;
}
