/*
 * truth.c: a program whose heap behaviour is known exactly, for testing the canned queries.
 *
 * Every allocation the queries must attribute sits on a line tagged with a comment of the form
 * "@name"; the expected files refer to those tags instead of line numbers, so editing this file
 * does not break them. What each phase does, and what the queries must see:
 *
 *   leak_big      5 x malloc(1000), never freed
 *   leak_names    20 x strdup of a 9-character string (10 bytes), never freed; the site is
 *                 leak_names, not strdup
 *   leak_zeroed   3 x calloc(4, 25), never freed
 *   scratch       50 x malloc(64) each freed before the next allocation: all temporary
 *   keeper        10 x malloc(32), then all freed: only the last is temporary
 *   grow_buffer   malloc(16), then realloc to 32, 64, ... 4096, then freed
 *   peak          malloc(1 MiB) and 2 x malloc(4096), then freed: the peak of live heap
 *   held          4 x malloc(128) held across a 20 ms sleep: lifetimes of at least 10 ms
 *   diff          3 x malloc(500) live at marker "A" and freed after it; 7 x malloc(300) made
 *                 after "A", live at marker "B", freed after it
 *   threads       main allocates 4 x 512 that a thread named "worker" frees; the worker
 *                 allocates 6 x 256 that main frees, 2 x 24 it frees itself and leaks 77 bytes
 *   growth        8 phases, each opened by the marker "phase", each leaking 40 bytes at
 *                 grow_leak; in the fourth phase only, oneshot leaks 8 x 40 bytes
 *
 * Nothing prints until the end, so stdio allocates nothing in between. It runs with or without
 * librheap: rheap_mark is a weak reference.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

extern int rheap_mark(const char *label) __attribute__((weak));

#define NOINLINE __attribute__((noinline))

/* Every block is stored here so that the compiler cannot drop an allocation and a leak checker
 * would still call the never-freed ones reachable; the queries only care that free is never
 * called on them. */
static void *volatile keep[64];
static int nkeep;

static void mark(const char *label)
{
    if (rheap_mark)
        rheap_mark(label);
}

static void sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0)
        ;
}

NOINLINE static void leak_big(void)
{
    for (int i = 0; i < 5; i++)
        keep[nkeep++] = malloc(1000); /* @leak_big */
}

NOINLINE static void leak_names(void)
{
    for (int i = 0; i < 20; i++) {
        char *s = strdup("abcdefghi"); /* @leak_names */
        keep[i % 4] = s;
    }
}

NOINLINE static void leak_zeroed(void)
{
    for (int i = 0; i < 3; i++)
        keep[nkeep++] = calloc(4, 25); /* @leak_zeroed */
}

NOINLINE static void scratch(void)
{
    for (int i = 0; i < 50; i++) {
        char *p = malloc(64); /* @scratch */
        p[0] = (char)i;
        free(p);
    }
}

NOINLINE static void keeper(void)
{
    void *blocks[10];
    for (int i = 0; i < 10; i++)
        blocks[i] = malloc(32); /* @keeper */
    for (int i = 0; i < 10; i++)
        free(blocks[i]);
}

NOINLINE static void grow_buffer(void)
{
    char *buf = malloc(16); /* @grow_first */
    for (size_t cap = 32; cap <= 4096; cap *= 2)
        buf = realloc(buf, cap); /* @grow_realloc */
    free(buf);
}

NOINLINE static void peak(void)
{
    char *big = malloc(1 << 20); /* @peak_big */
    char *a = malloc(4096);      /* @peak_small */
    char *b = malloc(4096);      /* @peak_small2 */
    free(big);
    free(a);
    free(b);
}

NOINLINE static void held(void)
{
    void *blocks[4];
    for (int i = 0; i < 4; i++)
        blocks[i] = malloc(128); /* @held */
    sleep_ms(20);
    for (int i = 0; i < 4; i++)
        free(blocks[i]);
}

NOINLINE static void diff(void)
{
    void *drop[3], *grow[7];
    for (int i = 0; i < 3; i++)
        drop[i] = malloc(500); /* @diff_drop */
    mark("A");
    for (int i = 0; i < 3; i++)
        free(drop[i]);
    for (int i = 0; i < 7; i++)
        grow[i] = malloc(300); /* @diff_grow */
    mark("B");
    for (int i = 0; i < 7; i++)
        free(grow[i]);
}

struct handoff {
    void *from_main[4];
    void *to_main[6];
};

static void *worker(void *arg)
{
    struct handoff *h = arg;
    pthread_setname_np(pthread_self(), "worker");
    for (int i = 0; i < 4; i++)
        free(h->from_main[i]);
    for (int i = 0; i < 6; i++)
        h->to_main[i] = malloc(256); /* @worker_gives */
    for (int i = 0; i < 2; i++) {
        char *p = malloc(24); /* @worker_own */
        p[0] = 1;
        free(p);
    }
    keep[nkeep++] = malloc(77); /* @worker_leak */
    return NULL;
}

NOINLINE static void threads(void)
{
    static struct handoff h;
    for (int i = 0; i < 4; i++)
        h.from_main[i] = malloc(512); /* @main_gives */
    pthread_t t;
    if (pthread_create(&t, NULL, worker, &h) != 0 || pthread_join(t, NULL) != 0) /* @spawn */
        abort();
    for (int i = 0; i < 6; i++)
        free(h.to_main[i]);
}

NOINLINE static void oneshot(void)
{
    for (int i = 0; i < 8; i++)
        keep[nkeep++] = malloc(40); /* @oneshot */
}

NOINLINE static void grow_leak(void)
{
    keep[nkeep++] = malloc(40); /* @grow_leak */
}

NOINLINE static void growth(void)
{
    for (int i = 0; i < 8; i++) {
        mark("phase");
        grow_leak();
        if (i == 3)
            oneshot();
    }
}

int main(void)
{
    mark("start");
    leak_big(); /* @call_leak_big */
    leak_names(); /* @call_leak_names */
    leak_zeroed(); /* @call_leak_zeroed */
    scratch();
    keeper();
    grow_buffer();
    peak();
    held();
    diff();
    threads();
    growth();
    printf("truth: done, %d blocks kept\n", nkeep); /* @stdout_buffer */
    return 0;
}
