/*
 * atfork_prog: forks three times while fork handlers that allocate, registered before
 * librheap's (atfork_lib), are in place; an alarm ends the program if a fork hangs. Parent and
 * children each allocate a known set between "begin" and "end". The handlers' own allocations
 * (size 555) pass through untraced, as their calls come while the recorder's locks are held.
 */
#include "progs.h"

#include <sys/wait.h>

PROGS_SINK_DEFINITION;

extern int atfork_calls __attribute__((weak));

int main(void)
{
    if (!&atfork_calls)
        return 3; /* atfork_lib is not preloaded */
    alarm(15);
    tally_t parent = {0};
    progs_mark("begin");
    for (int round = 0; round < 3; round++) {
        void *p = malloc(100 + round);
        tally_alloc(&parent, T_MALLOC, 100 + round);
        SINK(p);
        free(p);
        tally_free(&parent);
        pid_t pid = fork();
        if (pid < 0)
            return 1;
        if (pid == 0) {
            tally_t child = {0};
            progs_mark("begin");
            for (int i = 0; i < 10; i++) {
                void *q = calloc(1, 200 + round);
                tally_alloc(&child, T_CALLOC, 200 + round);
                SINK(q);
                free(q);
                tally_free(&child);
            }
            progs_mark("end");
            say("child pid=%d handler_calls=%d\n", (int)getpid(), atfork_calls);
            tally_print(&child, getpid());
            exit(0);
        }
        int status;
        if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
            return 1;
    }
    progs_mark("end");
    say("parent pid=%d handler_calls=%d\n", (int)getpid(), atfork_calls);
    say("parent ");
    tally_print(&parent, getpid());
    return 0;
}
