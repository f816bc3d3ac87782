/*
 * fork_prog: the parent allocates between "begin" and "end", keeping three blocks; the child
 * allocates its own known set and frees the three inherited blocks; the parent waits and
 * allocates again between "begin2" and "end2". The child's recording is its own directory
 * (rip-<child pid>/, ppid = the parent, on how=fork) and holds only the child's events; the
 * parent's files get nothing from the child.
 */
#include "progs.h"

#include <sys/wait.h>

PROGS_SINK_DEFINITION;

int main(void)
{
    tally_t parent = {0}, parent2 = {0}, child = {0};
    void *kept[3];
    int nkept = 0;

    progs_mark("begin");
    for (int i = 0; i < 10; i++) {
        void *p = malloc(111);
        tally_alloc(&parent, T_MALLOC, 111);
        if (i % 3 == 0 && nkept < 3) {
            kept[nkept++] = p;
        } else {
            free(p);
            tally_free(&parent);
        }
    }
    progs_mark("end");

    pid_t pid = fork();
    if (pid < 0)
        return 1;
    if (pid == 0) {
        void *mine[20];
        progs_mark("begin");
        for (int i = 0; i < 20; i++) {
            mine[i] = calloc(1, 222);
            tally_alloc(&child, T_CALLOC, 222);
        }
        for (int i = 0; i < 20; i++) {
            free(mine[i]);
            tally_free(&child);
        }
        for (int i = 0; i < nkept; i++) {
            free(kept[i]);
            tally_free(&child);
        }
        progs_mark("end");
        say("child pid=%d ppid=%d\n", (int)getpid(), (int)getppid());
        tally_print(&child, getpid());
        exit(0);
    }
    int status;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return 1;

    progs_mark("begin2");
    for (int i = 0; i < 5; i++) {
        void *p = malloc(333);
        tally_alloc(&parent2, T_MALLOC, 333);
        SINK(p);
        free(p);
        tally_free(&parent2);
    }
    progs_mark("end2");
    say("parent pid=%d child=%d\n", (int)getpid(), (int)pid);
    say("begin ");
    tally_print(&parent, getpid());
    say("begin2 ");
    tally_print(&parent2, getpid());
    return 0;
}
