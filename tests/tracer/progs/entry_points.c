/*
 * entry_points: every wrapped allocation function once, with sizes no other code uses, plus the
 * calls that must not be recorded (free(NULL), failed allocations). Prints the exact event list
 * riptally must print between the markers "begin" and "end": call kind, size and alignment.
 */
#include "progs.h"

#include <malloc.h>
#include <stdint.h>

PROGS_SINK_DEFINITION;

int main(void)
{
    char lines[64][128];
    int n = 0;
#define EXPECT(...) snprintf(lines[n++], sizeof lines[0], __VA_ARGS__)
    long page = sysconf(_SC_PAGESIZE);
    void *b[16];

    progs_mark("begin");
    b[0] = malloc(1001);
    EXPECT("alloc call=malloc size=1001 in=exe");
    b[1] = calloc(7, 145);
    EXPECT("alloc call=calloc size=1015 in=exe");
    b[2] = realloc(NULL, 1002);
    EXPECT("alloc call=realloc size=1002 in=exe old=none");
    b[3] = reallocarray(NULL, 3, 335);
    EXPECT("alloc call=reallocarray size=1005 in=exe old=none");
    if (posix_memalign(&b[4], 64, 1006) != 0)
        return 1;
    EXPECT("alloc call=posix_memalign size=1006 align=64 in=exe");
    b[5] = aligned_alloc(128, 1280);
    EXPECT("alloc call=aligned_alloc size=1280 align=128 in=exe");
    b[6] = memalign(256, 1007);
    EXPECT("alloc call=memalign size=1007 align=256 in=exe");
    b[7] = valloc(1008);
    EXPECT("alloc call=valloc size=1008 align=%ld in=exe", page);
    b[8] = pvalloc(1009);
    EXPECT("alloc call=pvalloc size=1009 align=%ld in=exe", page);
    /* strdup allocates inside libc. */
    b[9] = strdup("entry points: a string of forty-one bytes");
    EXPECT("alloc call=malloc size=42 in=libc.so.6");
    b[10] = malloc(0);
    EXPECT("alloc call=malloc size=0 in=exe");

    /* None of these is recorded. */
    free(NULL);
    /* volatile: the compiler must not see (and warn about) the impossible sizes. */
    volatile size_t huge = SIZE_MAX;
    errno = 0;
    if (malloc(huge) || errno != ENOMEM)
        return 1;
    if (calloc(huge / 2, 4))
        return 1;
    void *bad = NULL;
    if (posix_memalign(&bad, 3, 10) != EINVAL)
        return 1;
    if (memalign(64, huge - 4096))
        return 1;

    for (int i = 0; i <= 10; i++) {
        SINK(b[i]);
        free(b[i]);
    }
    EXPECT("free of=malloc:1001");
    EXPECT("free of=calloc:1015");
    EXPECT("free of=realloc:1002");
    EXPECT("free of=reallocarray:1005");
    EXPECT("free of=posix_memalign:1006");
    EXPECT("free of=aligned_alloc:1280");
    EXPECT("free of=memalign:1007");
    EXPECT("free of=valloc:1008");
    EXPECT("free of=pvalloc:1009");
    EXPECT("free of=malloc:42");
    EXPECT("free of=malloc:0");
    progs_mark("end");

    say("expect-list thread tid=%d\n", (int)gettid());
    for (int i = 0; i < n; i++)
        say("expect-list %s\n", lines[i]);
    return 0;
}
