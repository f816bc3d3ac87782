/*
 * exec_parent: allocates between "begin" and "end", tries to exec a program that does not
 * exist (the recording is completed before the exec and restarted when it fails), allocates
 * again between "begin2" and "end2", then execs argv[1] with the arguments "hello 42". With
 * librheap preloaded that makes three recordings of one pid: rip-<pid>/ (off how=exec),
 * rip-<pid>-2/ (on how=exec, off how=exec) and the new program's rip-<pid>-3/ (on how=env).
 */
#include "progs.h"

PROGS_SINK_DEFINITION;

int main(int argc, char **argv)
{
    if (argc != 2) {
        say("usage: exec_parent PROGRAM\n");
        return 2;
    }
    tally_t first = {0}, second = {0};
    void *p[7];
    progs_mark("begin");
    for (int i = 0; i < 7; i++) {
        p[i] = malloc(777);
        tally_alloc(&first, T_MALLOC, 777);
    }
    for (int i = 0; i < 4; i++) {
        free(p[i]);
        tally_free(&first);
    }
    progs_mark("end");
    say("exec_parent pid=%d\n", (int)getpid());
    say("begin ");
    tally_print(&first, getpid());

    char *none[] = {"does-not-exist", NULL};
    execv("/nonexistent/rheap-test/does-not-exist", none);
    if (errno != ENOENT)
        return 1;

    progs_mark("begin2");
    for (int i = 0; i < 3; i++) {
        void *q = malloc(888);
        tally_alloc(&second, T_MALLOC, 888);
        SINK(q);
        free(q);
        tally_free(&second);
    }
    progs_mark("end2");
    say("begin2 ");
    tally_print(&second, getpid());

    char *args[] = {"exec_child", "hello", "42", NULL};
    execv(argv[1], args);
    say("exec failed: %s\n", strerror(errno));
    return 1;
}
