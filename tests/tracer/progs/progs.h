/*
 * progs.h: helpers shared by the tracer's test programs.
 *
 * Each test program knows exactly which allocations it makes and prints that ground truth in
 * the format riptally prints, prefixed with "expect ", so a test compares the two outputs
 * line by line. Output goes through write(2) from a stack buffer: stdio would allocate its
 * buffer with malloc and add events the program cannot count.
 */
#ifndef RHEAP_TEST_PROGS_H
#define RHEAP_TEST_PROGS_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* gettid, pthread_setname_np, reallocarray, memalign */
#endif

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Resolved by the dynamic linker when librheap is preloaded or linked, NULL otherwise, so the
 * programs also run untraced. */
extern int rheap_mark(const char *label) __attribute__((weak));

static inline void progs_mark(const char *label)
{
    if (rheap_mark)
        rheap_mark(label);
}

/* printf to stdout without allocating. */
__attribute__((format(printf, 1, 2))) static inline void say(const char *fmt, ...)
{
    char buf[4096];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    size_t len = (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1;
    size_t off = 0;
    while (off < len) {
        ssize_t w = write(1, buf + off, len - off);
        if (w <= 0) {
            if (w < 0 && errno == EINTR)
                continue;
            return;
        }
        off += (size_t)w;
    }
}

/* Keeps the compiler from removing an allocation whose result is otherwise unused. */
extern void *volatile progs_sink;
#define SINK(p) (progs_sink = (void *)(p))
#define PROGS_SINK_DEFINITION void *volatile progs_sink

/* What one thread did between its markers, counted the way riptally counts it. Index by the
 * rip_call_t values: 1 malloc .. 9 pvalloc. */
typedef struct {
    unsigned long allocs, frees, bytes, calls[10];
} tally_t;

static const char *const tally_call_names[10] = {
    "?", "malloc", "calloc", "realloc", "reallocarray", "posix_memalign", "aligned_alloc",
    "memalign", "valloc", "pvalloc",
};

enum { T_MALLOC = 1, T_CALLOC, T_REALLOC, T_REALLOCARRAY, T_POSIX_MEMALIGN, T_ALIGNED_ALLOC,
       T_MEMALIGN, T_VALLOC, T_PVALLOC };

static inline void tally_alloc(tally_t *t, int call, unsigned long size)
{
    t->allocs++;
    t->bytes += size;
    t->calls[call]++;
}

static inline void tally_free(tally_t *t)
{
    t->frees++;
}

/* Prints "expect thread tid=T allocs=N frees=N bytes=N calls=..." */
static inline void tally_print(const tally_t *t, long tid)
{
    char calls[512] = "";
    size_t at = 0;
    for (int c = 1; c < 10; c++) {
        if (!t->calls[c])
            continue;
        at += (size_t)snprintf(calls + at, sizeof calls - at, "%s%s:%lu", at ? "," : "",
                               tally_call_names[c], t->calls[c]);
    }
    say("expect thread tid=%ld allocs=%lu frees=%lu bytes=%lu calls=%s\n", tid, t->allocs,
        t->frees, t->bytes, at ? calls : "none");
}

#ifdef __cplusplus
}
#endif
#endif
