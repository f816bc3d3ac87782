/*
 * xthreads: N threads make M allocations each and pass every block to the next thread through
 * a small locked mailbox; each thread frees what it finds in its own mailbox as it goes, so
 * nearly every free happens on a thread other than the allocating one, while all threads run.
 * Prints each thread's ground truth as "expect thread ..." lines (see progs.h).
 *
 * Usage: xthreads [NTHREADS [OPS]]   (default 8 x 20000)
 */
#include "progs.h"

#include <pthread.h>

PROGS_SINK_DEFINITION;

#define MAX_THREADS 64
#define BOX 64 /* mailbox slots; a full mailbox makes the sender free the block itself */

typedef struct {
    pthread_mutex_t lock;
    void *slot[BOX];
    int head, count;
    unsigned seed;
    long tid;
    tally_t tally;
} worker_t;

static worker_t workers[MAX_THREADS];
static int nthreads = 8, nops = 20000;
static pthread_barrier_t barrier;

static int post(worker_t *to, void *p)
{
    pthread_mutex_lock(&to->lock);
    int ok = to->count < BOX;
    if (ok) {
        to->slot[(to->head + to->count) % BOX] = p;
        to->count++;
    }
    pthread_mutex_unlock(&to->lock);
    return ok;
}

static void *take(worker_t *w)
{
    void *p = NULL;
    pthread_mutex_lock(&w->lock);
    if (w->count) {
        p = w->slot[w->head];
        w->head = (w->head + 1) % BOX;
        w->count--;
    }
    pthread_mutex_unlock(&w->lock);
    return p;
}

static void *work(void *arg)
{
    worker_t *w = arg;
    worker_t *next = &workers[(int)(w - workers + 1) % nthreads];
    w->tid = gettid();
    progs_mark("begin");
    for (int i = 0; i < nops; i++) {
        unsigned r = (unsigned)rand_r(&w->seed);
        size_t size = 1 + r % 2000;
        void *p;
        if (r & 0x100000) {
            p = calloc(1, size);
            tally_alloc(&w->tally, T_CALLOC, size);
        } else {
            p = malloc(size);
            tally_alloc(&w->tally, T_MALLOC, size);
        }
        if (!post(next, p)) {
            free(p);
            tally_free(&w->tally);
        }
        void *q = take(w);
        if (q) {
            free(q);
            tally_free(&w->tally);
        }
    }
    /* Once every thread has stopped posting, each empties its own mailbox. */
    pthread_barrier_wait(&barrier);
    for (void *q; (q = take(w));) {
        free(q);
        tally_free(&w->tally);
    }
    progs_mark("end");
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        nthreads = atoi(argv[1]);
    if (argc > 2)
        nops = atoi(argv[2]);
    if (nthreads < 1 || nthreads > MAX_THREADS || nops < 1) {
        say("usage: xthreads [NTHREADS<=%d [OPS]]\n", MAX_THREADS);
        return 2;
    }
    pthread_barrier_init(&barrier, NULL, (unsigned)nthreads);
    pthread_t th[MAX_THREADS];
    for (int i = 0; i < nthreads; i++) {
        pthread_mutex_init(&workers[i].lock, NULL);
        workers[i].seed = 77u + (unsigned)i;
    }
    for (int i = 0; i < nthreads; i++)
        pthread_create(&th[i], NULL, work, &workers[i]);
    for (int i = 0; i < nthreads; i++)
        pthread_join(th[i], NULL);
    unsigned long allocs = 0, frees = 0;
    for (int i = 0; i < nthreads; i++) {
        tally_print(&workers[i].tally, workers[i].tid);
        allocs += workers[i].tally.allocs;
        frees += workers[i].tally.frees;
    }
    say("done allocs=%lu frees=%lu\n", allocs, frees);
    return 0;
}
