/*
 * killchurn: NTHREADS threads each repeat malloc / free on a private set of slots (one event per
 * operation) until killed, or until each has done MAX_OPS operations. Every 1000 operations a
 * thread appends "progress tid=T ops=N" to SIDE_FILE with one O_APPEND write, so after a
 * kill -9 the file says how many events each thread had made at least (and at most 1000 more).
 * Prints "ready" once every thread runs.
 *
 * Usage: killchurn NTHREADS SIDE_FILE [MAX_OPS]
 */
#include "progs.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>

PROGS_SINK_DEFINITION;

#define MAX_THREADS 32
#define SLOTS 128
#define REPORT_EVERY 1000

static int side_fd;
static long max_ops;
static atomic_int running;

static void *work(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    void *slot[SLOTS] = {0};
    long tid = gettid();
    atomic_fetch_add(&running, 1);
    for (long ops = 1; max_ops == 0 || ops <= max_ops; ops++) {
        unsigned r = (unsigned)rand_r(&seed);
        void **s = &slot[r % SLOTS];
        if (*s) {
            free(*s);
            *s = NULL;
        } else {
            *s = malloc(1 + (r >> 8) % 1000);
        }
        if (ops % REPORT_EVERY == 0) {
            char line[64];
            int n = snprintf(line, sizeof line, "progress tid=%ld ops=%ld\n", tid, ops);
            if (write(side_fd, line, (size_t)n) != n)
                abort();
        }
    }
    for (int i = 0; i < SLOTS; i++)
        free(slot[i]);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        say("usage: killchurn NTHREADS SIDE_FILE [MAX_OPS]\n");
        return 2;
    }
    int n = atoi(argv[1]);
    max_ops = argc > 3 ? atol(argv[3]) : 0;
    if (n < 1 || n > MAX_THREADS)
        return 2;
    side_fd = open(argv[2], O_WRONLY | O_CREAT | O_APPEND | O_TRUNC, 0644);
    if (side_fd < 0)
        return 1;
    pthread_t th[MAX_THREADS];
    for (int i = 0; i < n; i++)
        pthread_create(&th[i], NULL, work, (void *)(uintptr_t)(31 + i));
    while (atomic_load(&running) < n)
        sched_yield();
    say("ready\n");
    for (int i = 0; i < n; i++)
        pthread_join(th[i], NULL);
    say("finished\n");
    return 0;
}
