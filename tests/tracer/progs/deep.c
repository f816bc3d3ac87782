/*
 * deep: allocates 50 blocks of 700 bytes from 20 calls deep between the markers "begin" and
 * "end", so that a stack depth limit below 20 is visible in every backtrace.
 */
#include "progs.h"

PROGS_SINK_DEFINITION;

static tally_t t;

__attribute__((noinline)) static void down(int level)
{
    if (level > 0) {
        down(level - 1);
        SINK(&t); /* not a tail call */
        return;
    }
    for (int i = 0; i < 50; i++) {
        void *p = malloc(700);
        tally_alloc(&t, T_MALLOC, 700);
        SINK(p);
        free(p);
        tally_free(&t);
    }
}

int main(void)
{
    progs_mark("begin");
    down(20);
    progs_mark("end");
    tally_print(&t, getpid());
    return 0;
}
