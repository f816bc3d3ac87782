/*
 * spawn_prog: starts argv[1] (exec_child) three ways that run no fork handlers: vfork + execv,
 * posix_spawn, and system() (a shell that runs it). The child side of vfork shares the
 * parent's memory, so its exec must not complete the parent's recording: the parent keeps
 * recording and its counts between "begin" and "end" stay exact.
 */
#include "progs.h"

#include <spawn.h>
#include <sys/wait.h>

PROGS_SINK_DEFINITION;

extern char **environ;

static int wait_ok(pid_t pid)
{
    int status;
    return waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        say("usage: spawn_prog PROGRAM\n");
        return 2;
    }
    tally_t t = {0};
    progs_mark("begin");
    void *before = malloc(1212);
    tally_alloc(&t, T_MALLOC, 1212);

    char *args[] = {"exec_child", "vfork", NULL};
    pid_t pid = vfork();
    if (pid == 0) {
        execv(argv[1], args);
        _exit(127);
    }
    if (pid < 0 || !wait_ok(pid))
        return 1;
    void *mid = malloc(1313);
    tally_alloc(&t, T_MALLOC, 1313);

    char *spawn_args[] = {"exec_child", "spawn", NULL};
    if (posix_spawn(&pid, argv[1], NULL, NULL, spawn_args, environ) != 0 || !wait_ok(pid))
        return 1;
    free(before);
    tally_free(&t);
    free(mid);
    tally_free(&t);
    progs_mark("end");

    char command[4200];
    snprintf(command, sizeof command, "'%s' system", argv[1]);
    if (system(command) != 0)
        return 1;
    say("spawn_prog pid=%d\n", (int)getpid());
    tally_print(&t, getpid());
    return 0;
}
