/*
 * exec_threads: two worker threads allocate a known set between "begin" and "end" and then
 * stay alive, blocked, while the main thread execs argv[1]. Their events are still in their
 * buffers when exec is called: the recorder must write them out before the exec, so the first
 * recording holds each worker's exact counts (off how=exec).
 */
#include "progs.h"

#include <pthread.h>

PROGS_SINK_DEFINITION;

#define NTHREADS 2

static pthread_barrier_t ready;
static pthread_mutex_t forever = PTHREAD_MUTEX_INITIALIZER;

static void *work(void *arg)
{
    int index = (int)(intptr_t)arg;
    tally_t t = {0};
    void *p[30];
    progs_mark("begin");
    for (int i = 0; i < 30; i++) {
        p[i] = malloc(500 + (size_t)index);
        tally_alloc(&t, T_MALLOC, 500 + (unsigned long)index);
    }
    for (int i = 0; i < 20; i++) {
        free(p[i]);
        tally_free(&t);
    }
    progs_mark("end");
    tally_print(&t, gettid());
    pthread_barrier_wait(&ready);
    pthread_mutex_lock(&forever); /* held by main: blocks until the exec ends the process */
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        say("usage: exec_threads PROGRAM\n");
        return 2;
    }
    pthread_mutex_lock(&forever);
    pthread_barrier_init(&ready, NULL, NTHREADS + 1);
    pthread_t th[NTHREADS];
    for (int i = 0; i < NTHREADS; i++)
        pthread_create(&th[i], NULL, work, (void *)(intptr_t)i);
    pthread_barrier_wait(&ready);
    say("exec_threads pid=%d\n", (int)getpid());
    char *args[] = {"exec_child", "after-threads", NULL};
    execv(argv[1], args);
    return 1;
}
