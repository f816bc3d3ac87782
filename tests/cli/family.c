/*
 * family: the program the `rheap run` tests record. Each mode allocates blocks of a size no
 * other code uses, so a test counts exactly its blocks per process with SQL. Output goes
 * through write(2) from a stack buffer: stdio would allocate a buffer of its own.
 *
 *   family tree      7 x 1111 (4 freed) in the parent; a forked child 5 x 2222 (none freed);
 *                    a second child execs `family leaf`: 3 x 3333 (1 freed). Prints the pids.
 *   family leaf      the exec'd part of `tree`.
 *   family orphan    the parent allocates 1 x 1111 (freed), forks and exits at once; its
 *                    child outlives it, then allocates 4 x 4444 and exits (rheap run must
 *                    wait for it).
 *   family exit N    allocates 2 x 1234, exits with status N.
 *   family kill      allocates 2 x 1234, then kills itself with SIGKILL.
 *   family toggle    2 x 1234, SIGUSR2 to itself, 3 x 3210 (1 freed), SIGUSR2, 2 x 1234: run
 *                    with recording off and USR2 as the toggle, only the 3210s are recorded.
 *   family marks     markers "fill", 2 x 1234, "drain", 1 x 3210, through librheap's
 *                    rheap_mark when it is preloaded.
 *   family execnap   3 x 3210 (1 freed), then executes `family nap`: 2 x 1234, 3 s of sleep.
 *   family driver    a build's driver: 1 x 1111 (freed), `family leaf` executed in a child
 *                    and waited for, then 1,500,000 x 48 allocated and freed at once (some
 *                    3 MiB of recording, most of the run's), 3 s of sleep and 2 x 1234.
 */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void say(const char *fmt, long a, long b, long c)
{
    char buf[256];
    int n = snprintf(buf, sizeof buf, fmt, a, b, c);
    if (n > 0 && write(1, buf, (size_t)n) < 0)
        _exit(99);
}

/* Allocates n blocks of size bytes and frees the first `freed` of them; the rest leak. */
static void blocks(int n, size_t size, int freed)
{
    void *p[16];
    for (int i = 0; i < n; i++) {
        p[i] = malloc(size);
        memset(p[i], i, size);
    }
    for (int i = 0; i < freed; i++)
        free(p[i]);
}

static int tree(const char *self)
{
    blocks(7, 1111, 4);
    pid_t c = fork();
    if (c == 0) {
        blocks(5, 2222, 0);
        exit(0);
    }
    waitpid(c, NULL, 0);
    pid_t e = fork();
    if (e == 0) {
        execl(self, "family", "leaf", (char *)NULL);
        _exit(98);
    }
    int st;
    waitpid(e, &st, 0);
    say("parent=%ld child=%ld exec=%ld\n", (long)getpid(), (long)c, (long)e);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 97;
}

static int driver(const char *self)
{
    blocks(1, 1111, 1); /* recording starts before the fork: the child names this parent */
    pid_t c = fork();
    if (c == 0) {
        execl(self, "family", "leaf", (char *)NULL);
        _exit(98);
    }
    int st;
    waitpid(c, &st, 0);
    for (int i = 0; i < 1500000; i++)
        free(malloc(48));
    sleep(3);
    blocks(2, 1234, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 97;
}

static int orphan(void)
{
    int pfd[2];
    if (pipe(pfd) != 0)
        return 96;
    /* The tracer starts at the first allocation: before the fork, so the child's recording
     * starts at the fork and names this process as its parent. */
    blocks(1, 1111, 1);
    pid_t c = fork();
    if (c == 0) {
        /* Waits until the parent is gone (the pipe's write end closes with it). */
        char x;
        close(pfd[1]);
        while (read(pfd[0], &x, 1) > 0)
            ;
        blocks(4, 4444, 0);
        say("orphan=%ld\n", (long)getpid(), 0, 0);
        exit(0);
    }
    close(pfd[0]);
    say("parent=%ld\n", (long)getpid(), 0, 0);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "tree"))
        return tree(argv[0]);
    if (argc >= 2 && !strcmp(argv[1], "leaf")) {
        blocks(3, 3333, 1);
        return 0;
    }
    if (argc >= 2 && !strcmp(argv[1], "orphan"))
        return orphan();
    if (argc >= 2 && !strcmp(argv[1], "driver"))
        return driver(argv[0]);
    if (argc >= 2 && !strcmp(argv[1], "execnap")) {
        blocks(3, 3210, 1);
        execl(argv[0], "family", "nap", (char *)NULL);
        return 98;
    }
    if (argc >= 2 && !strcmp(argv[1], "nap")) {
        blocks(2, 1234, 0);
        sleep(3);
        return 0;
    }
    if (argc >= 3 && !strcmp(argv[1], "exit")) {
        blocks(2, 1234, 0);
        return atoi(argv[2]);
    }
    if (argc >= 2 && !strcmp(argv[1], "toggle")) {
        blocks(2, 1234, 0);
        raise(SIGUSR2);
        blocks(3, 3210, 1);
        raise(SIGUSR2);
        blocks(2, 1234, 0);
        return 0;
    }
    if (argc >= 2 && !strcmp(argv[1], "marks")) {
        int (*mark)(const char *) = (int (*)(const char *))dlsym(RTLD_DEFAULT, "rheap_mark");
        if (!mark)
            return 3;
        mark("fill");
        blocks(2, 1234, 0);
        mark("drain");
        blocks(1, 3210, 0);
        return 0;
    }
    if (argc >= 2 && !strcmp(argv[1], "kill")) {
        blocks(2, 1234, 0);
        raise(SIGKILL);
        return 95;
    }
    say("usage: family tree|leaf|orphan|driver|execnap|exit N|kill|toggle|marks\n", 0, 0, 0);
    return 2;
}
