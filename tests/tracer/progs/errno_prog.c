/*
 * errno_prog: every wrapper must leave errno as the real function left it: unchanged after
 * successful calls and free, ENOMEM after a failed malloc. Also counts its allocations between
 * the markers "begin" and "end".
 */
#include "progs.h"

#include <malloc.h>
#include <stdint.h>

PROGS_SINK_DEFINITION;

#define SENTINEL 4242

#define KEEPS_ERRNO(expr)                                                                      \
    do {                                                                                       \
        errno = SENTINEL;                                                                      \
        expr;                                                                                  \
        if (errno != SENTINEL) {                                                               \
            say("errno changed by %s: %d\n", #expr, errno);                                    \
            return 1;                                                                          \
        }                                                                                      \
    } while (0)

int main(void)
{
    tally_t t = {0};
    void *p = NULL, *q = NULL;
    volatile size_t huge = SIZE_MAX;

    progs_mark("begin");
    KEEPS_ERRNO(p = malloc(10));
    tally_alloc(&t, T_MALLOC, 10);
    KEEPS_ERRNO(p = realloc(p, 20000));
    tally_alloc(&t, T_REALLOC, 20000);
    KEEPS_ERRNO(free(p));
    tally_free(&t);
    KEEPS_ERRNO(p = calloc(3, 7));
    tally_alloc(&t, T_CALLOC, 21);
    KEEPS_ERRNO(p = reallocarray(p, 5, 7));
    tally_alloc(&t, T_REALLOCARRAY, 35);
    KEEPS_ERRNO(free(p));
    tally_free(&t);
    KEEPS_ERRNO(if (posix_memalign(&q, 32, 64) != 0) return 1);
    tally_alloc(&t, T_POSIX_MEMALIGN, 64);
    KEEPS_ERRNO(free(q));
    tally_free(&t);
    KEEPS_ERRNO(p = aligned_alloc(64, 128));
    tally_alloc(&t, T_ALIGNED_ALLOC, 128);
    KEEPS_ERRNO(free(p));
    tally_free(&t);
    KEEPS_ERRNO(p = memalign(64, 100));
    tally_alloc(&t, T_MEMALIGN, 100);
    KEEPS_ERRNO(free(p));
    tally_free(&t);
    KEEPS_ERRNO(p = valloc(100));
    tally_alloc(&t, T_VALLOC, 100);
    KEEPS_ERRNO(free(p));
    tally_free(&t);
    KEEPS_ERRNO(p = pvalloc(100));
    tally_alloc(&t, T_PVALLOC, 100);
    KEEPS_ERRNO(free(p));
    tally_free(&t);
    KEEPS_ERRNO(free(NULL));
    /* A large block goes to mmap and back to munmap inside the real calls. */
    KEEPS_ERRNO(p = malloc(1 << 22));
    tally_alloc(&t, T_MALLOC, 1 << 22);
    KEEPS_ERRNO(free(p));
    tally_free(&t);

    errno = 0;
    p = malloc(huge);
    if (p || errno != ENOMEM) {
        say("failed malloc: errno %d, expected ENOMEM\n", errno);
        return 1;
    }
    errno = 0;
    p = calloc(huge / 2, 4);
    if (p || errno != ENOMEM) {
        say("overflowing calloc: errno %d, expected ENOMEM\n", errno);
        return 1;
    }
    progs_mark("end");
    say("errno preserved\n");
    tally_print(&t, getpid());
    return 0;
}
