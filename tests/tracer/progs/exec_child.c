/*
 * exec_child: the program exec_parent execs. Allocates a known set between "begin" and "end"
 * and prints its pid (the same as exec_parent's) and its arguments.
 */
#include "progs.h"

PROGS_SINK_DEFINITION;

int main(int argc, char **argv)
{
    tally_t t = {0};
    void *p[9];
    progs_mark("begin");
    for (int i = 0; i < 9; i++) {
        p[i] = calloc(1, 999);
        tally_alloc(&t, T_CALLOC, 999);
    }
    for (int i = 0; i < 9; i++) {
        free(p[i]);
        tally_free(&t);
    }
    progs_mark("end");
    say("exec_child pid=%d argc=%d", (int)getpid(), argc);
    for (int i = 1; i < argc; i++)
        say(" %s", argv[i]);
    say("\n");
    tally_print(&t, getpid());
    return 0;
}
