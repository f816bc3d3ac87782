/*
 * raw_fork_race N: a child made by the fork system call (no fork handlers) makes N malloc(77)/
 * free pairs and ends with the raw exit_group system call (as Go programs end), while its
 * parent makes N malloc(1111)/free pairs at the same time. The parent then waits for it and
 * prints "parent PID child CPID". The parent's recording must hold exactly its own N pairs:
 * the child's copy of the recorder shares the parent's staging areas (shared mappings).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void pairs(long n, size_t size)
{
    for (long i = 0; i < n; i++) {
        void *volatile p = malloc(size);
        free(p);
    }
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 100000;
    void *volatile first = malloc(10); /* the recording starts before the fork */
    pid_t child = (pid_t)syscall(SYS_fork);
    if (child < 0)
        return 2;
    if (child == 0) {
        pairs(n, 77);
        syscall(SYS_exit_group, 0);
    }
    pairs(n, 1111);
    int ws;
    if (waitpid(child, &ws, 0) != child || !WIFEXITED(ws) || WEXITSTATUS(ws) != 0)
        return 3;
    free(first);
    printf("parent %d child %d\n", (int)getpid(), (int)child);
    return 0;
}
