/*
 * exit_return: never disables recording and leaves main by return. Five blocks of 4242 bytes
 * are never freed; everything must still reach the files (off how=exit), with exactly those
 * five blocks live at the end among the program's own allocations.
 */
#include "progs.h"

PROGS_SINK_DEFINITION;

int main(void)
{
    tally_t t = {0};
    progs_mark("begin");
    for (int i = 0; i < 5; i++) {
        SINK(malloc(4242)); /* leaked on purpose */
        tally_alloc(&t, T_MALLOC, 4242);
    }
    for (int i = 0; i < 300; i++) {
        void *p = malloc(50 + (size_t)i);
        tally_alloc(&t, T_MALLOC, 50 + (unsigned long)i);
        SINK(p);
        free(p);
        tally_free(&t);
    }
    progs_mark("end");
    tally_print(&t, getpid());
    return 0;
}
