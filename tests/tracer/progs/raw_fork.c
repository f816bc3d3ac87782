/*
 * raw_fork HOW N: a child made without fork handlers, by the fork system call (HOW = sysfork)
 * or by clone() without CLONE_VM (HOW = clone), allocates and frees N blocks and leaves with
 * _exit. The parent allocates between "begin" and "end" before the child exists, and between
 * "begin2" and "end2" after it has gone; its recording must hold exactly those, whatever the
 * child did with its copy of the recorder.
 */
#include "progs.h"

#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>

PROGS_SINK_DEFINITION;

static long child_n;

static int child_main(void *arg)
{
    (void)arg;
    for (long i = 0; i < child_n; i++) {
        void *p = malloc(77);
        SINK(p);
        free(p);
    }
    say("child pid=%d allocs=%ld\n", (int)getpid(), child_n);
    _exit(0);
}

static void round_of(tally_t *t, unsigned long size, int n)
{
    for (int i = 0; i < n; i++) {
        void *p = malloc(size);
        tally_alloc(t, T_MALLOC, size);
        SINK(p);
        free(p);
        tally_free(t);
    }
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    child_n = atol(argv[2]);
    tally_t before = {0}, after = {0};
    progs_mark("begin");
    round_of(&before, 1111, 100);
    progs_mark("end");

    pid_t pid;
    if (strcmp(argv[1], "sysfork") == 0) {
        pid = (pid_t)syscall(SYS_fork);
        if (pid == 0)
            child_main(NULL);
    } else {
        static char stack[256 * 1024] __attribute__((aligned(16)));
        pid = clone(child_main, stack + sizeof stack, SIGCHLD, NULL);
    }
    int status;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0)
        return 1;

    progs_mark("begin2");
    round_of(&after, 2222, 50);
    progs_mark("end2");
    say("parent pid=%d child=%d\n", (int)getpid(), (int)pid);
    say("begin ");
    tally_print(&before, getpid());
    say("begin2 ");
    tally_print(&after, getpid());
    return 0;
}
