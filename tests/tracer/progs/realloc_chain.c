/*
 * realloc_chain: one block grown by realloc from NULL through many sizes, shrunk, then freed by
 * realloc(p, 0); realloc to the same size; reallocarray from NULL and growing; and failed calls,
 * which must leave no record. Prints the exact event list riptally must print between the
 * markers "begin" and "end".
 */
#include "progs.h"

#include <stdint.h>

PROGS_SINK_DEFINITION;

int main(void)
{
    char lines[64][128];
    int n = 0;
#define EXPECT(...) snprintf(lines[n++], sizeof lines[0], __VA_ARGS__)

    progs_mark("begin");
    char *p = realloc(NULL, 10);
    EXPECT("alloc call=realloc size=10 in=exe old=none");
    size_t size = 10;
    for (int i = 0; i < 14; i++) {
        size_t bigger = size * 2 + 3;
        p = realloc(p, bigger);
        EXPECT("alloc call=realloc size=%zu in=exe old=realloc:%zu", bigger, size);
        p[bigger - 1] = 1;
        size = bigger;
    }
    p = realloc(p, 5);
    EXPECT("alloc call=realloc size=5 in=exe old=realloc:%zu", size);
    /* glibc frees the block and returns NULL: recorded as a free. */
    p = realloc(p, 0);
    EXPECT("free of=realloc:5");
    SINK(p);

    char *q = malloc(100);
    EXPECT("alloc call=malloc size=100 in=exe");
    q = realloc(q, 100);
    EXPECT("alloc call=realloc size=100 in=exe old=malloc:100");
    free(q);
    EXPECT("free of=realloc:100");

    int *r = reallocarray(NULL, 10, 30);
    EXPECT("alloc call=reallocarray size=300 in=exe old=none");
    r = reallocarray(r, 20, 30);
    EXPECT("alloc call=reallocarray size=600 in=exe old=reallocarray:300");
    /* Failures: nothing is recorded and the block lives on. */
    volatile size_t huge = SIZE_MAX; /* volatile: no compile-time size warnings */
    errno = 0;
    void *fail = reallocarray(r, huge / 2, 4);
    if (fail || errno != ENOMEM) {
        say("reallocarray overflow did not fail with ENOMEM\n");
        return 1;
    }
    fail = realloc(r, huge - 4096);
    if (fail) {
        say("huge realloc did not fail\n");
        return 1;
    }
    free(r);
    EXPECT("free of=reallocarray:600");
    progs_mark("end");

    say("expect-list thread tid=%d\n", (int)gettid());
    for (int i = 0; i < n; i++)
        say("expect-list %s\n", lines[i]);
    return 0;
}
