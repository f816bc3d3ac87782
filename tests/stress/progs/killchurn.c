/*
 * killchurn: NTHREADS threads each repeat malloc / free on a private set of slots (one event per
 * operation) until killed, or until each has done MAX_OPS operations. Each thread keeps its
 * counts in COUNTERS_FILE, a file mapped shared, whose pages outlive a kill -9: per thread three
 * 8-byte numbers, its tid, the operations started and the operations done. A thread stores
 * `started` before each allocator call and `done` after it returns, so after a kill the file
 * says exactly how many calls completed, and whether one more was in flight. Prints "ready" once
 * every thread runs. `od -An -t d8 -w24 COUNTERS_FILE` prints one line per thread. With MAX_OPS
 * each thread then frees what its slots still hold, counting those calls too, and exits. Every
 * thread waits after its first call until all have made theirs, so all are alive at once.
 *
 * Usage: killchurn NTHREADS COUNTERS_FILE [MAX_OPS]
 */
#include "progs.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>

PROGS_SINK_DEFINITION;

#define MAX_THREADS 32
#define SLOTS 128

typedef struct {
    _Atomic int64_t tid, started, done;
} counts_t;

static counts_t *counts;
static long max_ops;
static int nthreads;
static atomic_int running, started_all;

static void *work(void *arg)
{
    unsigned i = (unsigned)(uintptr_t)arg, seed = 31 + i;
    counts_t *c = &counts[i];
    void *slot[SLOTS] = {0};
    atomic_store(&c->tid, gettid());
    atomic_fetch_add(&running, 1);
    for (long ops = 1; max_ops == 0 || ops <= max_ops; ops++) {
        unsigned r = (unsigned)rand_r(&seed);
        void **s = &slot[r % SLOTS];
        atomic_store_explicit(&c->started, ops, memory_order_release);
        if (*s) {
            free(*s);
            *s = NULL;
        } else {
            *s = malloc(1 + (r >> 8) % 1000);
        }
        atomic_store_explicit(&c->done, ops, memory_order_release);
        if (ops == 1) {
            /* Every thread has made its first call before any goes on: their lives overlap. */
            atomic_fetch_add(&started_all, 1);
            while (atomic_load(&started_all) < nthreads)
                sched_yield();
        }
    }
    long ops = atomic_load(&c->done);
    for (int k = 0; k < SLOTS; k++) {
        if (!slot[k])
            continue;
        atomic_store_explicit(&c->started, ++ops, memory_order_release);
        free(slot[k]);
        atomic_store_explicit(&c->done, ops, memory_order_release);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        say("usage: killchurn NTHREADS COUNTERS_FILE [MAX_OPS]\n");
        return 2;
    }
    int n = atoi(argv[1]);
    max_ops = argc > 3 ? atol(argv[3]) : 0;
    if (n < 1 || n > MAX_THREADS)
        return 2;
    nthreads = n;
    int fd = open(argv[2], O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || ftruncate(fd, (off_t)(n * sizeof(counts_t))) != 0)
        return 1;
    counts = mmap(NULL, n * sizeof(counts_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (counts == MAP_FAILED)
        return 1;
    pthread_t th[MAX_THREADS];
    for (int i = 0; i < n; i++)
        pthread_create(&th[i], NULL, work, (void *)(uintptr_t)i);
    while (atomic_load(&running) < n)
        sched_yield();
    say("ready\n");
    for (int i = 0; i < n; i++)
        pthread_join(th[i], NULL);
    say("finished\n");
    return 0;
}
