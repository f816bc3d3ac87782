/*
 * waves: thousands of short-lived threads, created and joined in waves. Each thread makes a few
 * allocations between its markers, frees all but one, and leaves that one for main to free
 * after the join (outside any marker), so thread files are opened and completed at a high rate
 * and blocks outlive the threads that allocated them.
 *
 * Prints "expect total threads=T allocs=N frees=N bytes=N": the sums over all threads of what
 * riptally counts between "begin" and "end".
 *
 * Usage: waves [WAVES [THREADS_PER_WAVE [BLOCKS]]]   (default 20 x 100 x 4)
 */
#include "progs.h"

#include <pthread.h>

PROGS_SINK_DEFINITION;

#define MAX_PER_WAVE 256

typedef struct {
    int wave, index;
    void *kept;
    tally_t tally;
} worker_t;

static int nwaves = 20, per_wave = 100, nblocks = 4;

static void *work(void *arg)
{
    worker_t *w = arg;
    void *blocks[64];
    progs_mark("begin");
    for (int i = 0; i < nblocks; i++) {
        size_t size = 16 * (size_t)(i + 1) + (size_t)w->wave;
        blocks[i] = malloc(size);
        tally_alloc(&w->tally, T_MALLOC, size);
    }
    for (int i = 1; i < nblocks; i++) {
        free(blocks[i]);
        tally_free(&w->tally);
    }
    progs_mark("end");
    w->kept = blocks[0];
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        nwaves = atoi(argv[1]);
    if (argc > 2)
        per_wave = atoi(argv[2]);
    if (argc > 3)
        nblocks = atoi(argv[3]);
    if (nwaves < 1 || per_wave < 1 || per_wave > MAX_PER_WAVE || nblocks < 1 || nblocks > 64) {
        say("usage: waves [WAVES [THREADS_PER_WAVE<=%d [BLOCKS<=64]]]\n", MAX_PER_WAVE);
        return 2;
    }
    static worker_t workers[MAX_PER_WAVE];
    pthread_t th[MAX_PER_WAVE];
    unsigned long threads = 0, allocs = 0, frees = 0, bytes = 0;
    for (int wave = 0; wave < nwaves; wave++) {
        for (int i = 0; i < per_wave; i++) {
            memset(&workers[i], 0, sizeof workers[i]);
            workers[i].wave = wave;
            workers[i].index = i;
            if (pthread_create(&th[i], NULL, work, &workers[i]) != 0) {
                say("pthread_create failed\n");
                return 1;
            }
        }
        for (int i = 0; i < per_wave; i++) {
            pthread_join(th[i], NULL);
            free(workers[i].kept);
            threads++;
            allocs += workers[i].tally.allocs;
            frees += workers[i].tally.frees;
            bytes += workers[i].tally.bytes;
        }
    }
    say("expect total threads=%lu allocs=%lu frees=%lu bytes=%lu\n", threads, allocs, frees, bytes);
    return 0;
}
