/*
 * busy: a program that keeps the heap busy for a while from several threads, for the test of
 * `rheap run` converting while the program runs (cli.run_live). Counts are exact whatever the
 * timing:
 *
 *   main thread   3 phases of 1500 rounds, each round 64 blocks of 100..163 bytes allocated
 *                 and freed (288,000 allocations, all freed), with a pause of 150 ms after each
 *                 phase; 7 blocks of 7777 bytes never freed.
 *   2 workers     started after the first and the second phase: 1000 rounds of 64 blocks of
 *                 200..263 bytes, allocated and freed (64,000 each); 1000 blocks of 4444 bytes
 *                 handed to the main thread, which frees them after joining the worker; 5
 *                 blocks of 5555 bytes never freed.
 *
 * Before its last 7 blocks, the program waits (up to 30 s) until another process holds its
 * executable open, which is `rheap run`'s converter symbolizing the recording it follows, then
 * a second more: on a loaded machine the converter may otherwise start only after the program
 * ended, and the test could not tell a conversion made while the program ran. The 7 blocks
 * made just before the exit are then, nearly always, converted after it. The descriptors are
 * read through /proc without allocating (opendir's buffer would be a recorded block).
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <stdlib.h>
#include <unistd.h>

#define HANDED 1000

/* The records getdents64 returns (the C library's readdir would allocate its buffer). */
struct entry {
    unsigned long long ino;
    long long off;
    unsigned short reclen;
    unsigned char type;
    char name[];
};

/* Whether the descriptor directory `fds` (/proc/PID/fd) has a link to a file under `mine`. */
static int holds(const char *fds, const char *mine)
{
    int dfd = open(fds, O_RDONLY | O_DIRECTORY);
    if (dfd < 0)
        return 0;
    char buf[4096], target[4096];
    int found = 0;
    long n;
    while (!found && (n = syscall(SYS_getdents64, dfd, buf, sizeof buf)) > 0)
        for (long at = 0; at < n && !found;) {
            struct entry *e = (struct entry *)(void *)(buf + at);
            at += e->reclen;
            ssize_t k = readlinkat(dfd, e->name, target, sizeof target - 1);
            if (k > 0) {
                target[k] = 0;
                found = strstr(target, mine) != NULL;
            }
        }
    close(dfd);
    return found;
}

/* Whether a process other than this one holds this program's file open. */
static int followed(void)
{
    char mine[4096], fds[64];
    ssize_t len = readlink("/proc/self/exe", mine, sizeof mine - 1);
    if (len <= 0)
        return 1;
    mine[len] = 0;
    int dfd = open("/proc", O_RDONLY | O_DIRECTORY);
    if (dfd < 0)
        return 0;
    char buf[8192];
    int found = 0;
    long n;
    while (!found && (n = syscall(SYS_getdents64, dfd, buf, sizeof buf)) > 0)
        for (long at = 0; at < n && !found;) {
            struct entry *e = (struct entry *)(void *)(buf + at);
            at += e->reclen;
            int pid = atoi(e->name);
            if (pid <= 0 || pid == (int)getpid())
                continue;
            snprintf(fds, sizeof fds, "/proc/%d/fd", pid);
            found = holds(fds, mine);
        }
    close(dfd);
    return found;
}

static void churn(int rounds, size_t base)
{
    void *p[64];
    for (int r = 0; r < rounds; r++) {
        for (int i = 0; i < 64; i++)
            p[i] = malloc(base + (size_t)i);
        for (int i = 0; i < 64; i++)
            free(p[i]);
    }
}

static void *worker(void *arg)
{
    void **handed = arg;
    churn(1000, 200);
    for (int i = 0; i < HANDED; i++)
        handed[i] = malloc(4444);
    for (int i = 0; i < 5; i++)
        if (!malloc(5555))
            abort();
    return NULL;
}

int main(void)
{
    static void *handed[2][HANDED];
    pthread_t t[2];
    for (int phase = 0; phase < 3; phase++) {
        churn(1500, 100);
        if (phase < 2 && pthread_create(&t[phase], NULL, worker, handed[phase]) != 0)
            return 1;
        usleep(150000);
    }
    for (int k = 0; k < 2; k++) {
        pthread_join(t[k], NULL);
        for (int i = 0; i < HANDED; i++)
            free(handed[k][i]);
    }
    for (int i = 0; i < 300 && !followed(); i++)
        usleep(100000);
    usleep(1000000);
    for (int i = 0; i < 7; i++)
        if (!malloc(7777))
            return 1;
    return 0;
}
