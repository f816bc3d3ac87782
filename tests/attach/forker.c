/*
 * forker.c: a process that forks all the time, for rheap attach: 400 rounds of 100 malloc/free
 * pairs, then a child that makes 1,000 pairs of its own and exits. Prints "ok" when every child
 * exited with status 0. A child of an attached process must not record: it has no rheap attach
 * to end its recording.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
    for (int r = 0; r < 400; r++) {
        for (int i = 0; i < 100; i++)
            free(malloc((size_t)(64 + i)));
        pid_t p = fork();
        if (p < 0)
            return 2;
        if (p == 0) {
            for (int i = 0; i < 1000; i++)
                free(malloc(32));
            _exit(0);
        }
        int st;
        if (waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            printf("child %d failed\n", (int)p);
            return 1;
        }
        usleep(2000);
    }
    printf("ok\n");
    return 0;
}
