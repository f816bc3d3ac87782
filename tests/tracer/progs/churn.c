/*
 * churn: 4 threads make 100000 random malloc/calloc/realloc/free calls each on a shared pool
 * of slots, so blocks are freed and reallocated by other threads and addresses are reused
 * across threads all the time. The recording must pair every free with a live allocation in
 * time order (the tracer stamps frees before the real free and allocations after), and each
 * thread file must hold exactly its thread's calls.
 */
#include "progs.h"

#include <pthread.h>

PROGS_SINK_DEFINITION;

#define NTHREADS 4
#define OPS 100000
#define SLOTS 256

static struct {
    pthread_mutex_t lock;
    void *p;
} slots[SLOTS];

typedef struct {
    unsigned seed;
    long tid;
    tally_t tally;
} worker_t;

static worker_t workers[NTHREADS];

static void *work(void *arg)
{
    worker_t *w = arg;
    w->tid = gettid();
    progs_mark("begin");
    for (int i = 0; i < OPS; i++) {
        unsigned r = (unsigned)rand_r(&w->seed);
        unsigned s = r % SLOTS;
        size_t size = 1 + (r >> 8) % 600;
        pthread_mutex_lock(&slots[s].lock);
        void *p = slots[s].p;
        if (!p) {
            if (r & 0x10000) {
                p = calloc(1, size);
                tally_alloc(&w->tally, T_CALLOC, size);
            } else {
                p = malloc(size);
                tally_alloc(&w->tally, T_MALLOC, size);
            }
        } else if (r & 0x20000) {
            p = realloc(p, size);
            tally_alloc(&w->tally, T_REALLOC, size);
        } else {
            free(p);
            tally_free(&w->tally);
            p = NULL;
        }
        slots[s].p = p;
        pthread_mutex_unlock(&slots[s].lock);
    }
    progs_mark("end");
    return NULL;
}

int main(void)
{
    for (int i = 0; i < SLOTS; i++)
        pthread_mutex_init(&slots[i].lock, NULL);
    pthread_t th[NTHREADS];
    for (int i = 0; i < NTHREADS; i++) {
        workers[i].seed = 1234u + (unsigned)i;
        pthread_create(&th[i], NULL, work, &workers[i]);
    }
    for (int i = 0; i < NTHREADS; i++)
        pthread_join(th[i], NULL);
    /* What is left is freed by main, outside the markers. */
    int left = 0;
    for (int i = 0; i < SLOTS; i++) {
        if (slots[i].p)
            left++;
        free(slots[i].p);
    }
    for (int i = 0; i < NTHREADS; i++)
        tally_print(&workers[i].tally, workers[i].tid);
    say("left %d\n", left);
    return 0;
}
