/*
 * signal_toggle: run with RHEAP_ENABLE=0 RHEAP_SIGNAL=USR2. The program sends itself SIGUSR2
 * (recording goes on at the next allocation call), allocates set A, sends it again (off),
 * allocates set B, which must not be recorded, and sends it a third time (on again, into a new
 * directory) before allocating set C and returning. So rip-<pid>/ holds exactly set A and
 * rip-<pid>-2/ exactly set C.
 */
#include "progs.h"

#include <signal.h>

PROGS_SINK_DEFINITION;

int main(void)
{
    tally_t a = {0}, c = {0};
    void *keep[11];

    /* The ground truth is fixed, so it is printed first, while nothing is recorded. */
    for (int i = 0; i < 11; i++)
        tally_alloc(&a, T_MALLOC, 1111);
    for (int i = 0; i < 5; i++)
        tally_free(&a);
    for (int i = 0; i < 17; i++) {
        tally_alloc(&c, T_CALLOC, 1717);
        tally_free(&c);
    }
    say("first ");
    tally_print(&a, getpid());
    say("second ");
    tally_print(&c, getpid());

    raise(SIGUSR2);
    for (int i = 0; i < 11; i++)
        keep[i] = malloc(1111);
    for (int i = 0; i < 5; i++)
        free(keep[i]);

    raise(SIGUSR2);
    for (int i = 0; i < 13; i++) {
        void *p = malloc(1313);
        SINK(p);
        free(p);
    }
    for (int i = 5; i < 11; i++)
        free(keep[i]);

    raise(SIGUSR2);
    for (int i = 0; i < 17; i++) {
        void *p = calloc(1, 1717);
        SINK(p);
        free(p);
    }
    return 0;
}
