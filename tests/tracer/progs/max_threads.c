/*
 * max_threads: linked with librheap. Records with max_threads = 2 while 4 threads, all alive at
 * the same time, each make 100 mallocs and 100 frees. Two thread files get their threads'
 * events; the events of the others are counted as lost. Prints the total the program made.
 */
#include "progs.h"

#include <pthread.h>

#include "rheap.h"

PROGS_SINK_DEFINITION;

#define NTHREADS 4

static pthread_barrier_t start, done;

static void *work(void *arg)
{
    (void)arg;
    void *blocks[100];
    pthread_barrier_wait(&start);
    for (int i = 0; i < 100; i++)
        blocks[i] = malloc(64);
    for (int i = 0; i < 100; i++)
        free(blocks[i]);
    pthread_barrier_wait(&done);
    return NULL;
}

int main(void)
{
    pthread_barrier_init(&start, NULL, NTHREADS + 1);
    pthread_barrier_init(&done, NULL, NTHREADS + 1);
    pthread_t th[NTHREADS];
    for (int i = 0; i < NTHREADS; i++)
        pthread_create(&th[i], NULL, work, NULL);
    rheap_config cfg = RHEAP_CONFIG_INIT;
    cfg.max_threads = 2;
    if (rheap_enable(&cfg) != 0)
        return 1;
    pthread_barrier_wait(&start);
    pthread_barrier_wait(&done);
    if (rheap_disable() != 0)
        return 1;
    for (int i = 0; i < NTHREADS; i++)
        pthread_join(th[i], NULL);
    say("events %d\n", NTHREADS * 200);
    return 0;
}
