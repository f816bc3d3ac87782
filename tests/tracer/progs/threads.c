/*
 * threads: N worker threads each make M allocations of known sizes between the markers
 * "begin" and "end", free half of them and hand the other half to the next worker, which frees
 * them: each thread file must hold exactly its own thread's calls, whichever thread allocated
 * the blocks. Workers rename themselves after their allocations, so the last thread name in
 * each file must be the new one.
 *
 * Usage: threads [NTHREADS [ALLOCS_PER_THREAD]]   (default 4 x 2000)
 */
#include "progs.h"

#include <malloc.h>
#include <pthread.h>

PROGS_SINK_DEFINITION;

#define MAX_THREADS 16

typedef struct {
    int index;
    long tid;
    tally_t tally;
    void **handoff; /* blocks this worker leaves for the next one to free */
    int nhandoff;
} worker_t;

static worker_t workers[MAX_THREADS];
static int nthreads = 4, nallocs = 2000;
static pthread_barrier_t barrier;

static void *work(void *arg)
{
    worker_t *w = arg;
    char name[16];
    snprintf(name, sizeof name, "wstart-%d", w->index);
    pthread_setname_np(pthread_self(), name);
    w->tid = gettid();
    /* The handoff array is allocated outside the markers: it is bookkeeping, not the load. */
    w->handoff = malloc(sizeof(void *) * (size_t)nallocs);
    progs_mark("begin");
    for (int j = 0; j < nallocs; j++) {
        size_t size = 16 + (size_t)((j * 7 + w->index * 13) % 1000);
        void *p;
        switch (j % 4) {
        case 0:
            p = calloc(1, size);
            tally_alloc(&w->tally, T_CALLOC, size);
            break;
        case 2:
            p = malloc(size);
            tally_alloc(&w->tally, T_MALLOC, size);
            p = realloc(p, size + 100);
            tally_alloc(&w->tally, T_REALLOC, size + 100);
            break;
        default:
            p = malloc(size);
            tally_alloc(&w->tally, T_MALLOC, size);
            break;
        }
        memset(p, j, 8);
        if (j % 2 == 0) {
            free(p);
            tally_free(&w->tally);
        } else {
            w->handoff[w->nhandoff++] = p;
        }
    }
    free(NULL); /* not recorded */
    pthread_barrier_wait(&barrier);
    worker_t *prev = &workers[(w->index + nthreads - 1) % nthreads];
    for (int j = 0; j < prev->nhandoff; j++) {
        free(prev->handoff[j]);
        tally_free(&w->tally);
    }
    progs_mark("end");
    /* Wait until every worker has freed the blocks handed to it before freeing the arrays. */
    pthread_barrier_wait(&barrier);
    snprintf(name, sizeof name, "wdone-%d", w->index);
    pthread_setname_np(pthread_self(), name);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        nthreads = atoi(argv[1]);
    if (argc > 2)
        nallocs = atoi(argv[2]);
    if (nthreads < 1 || nthreads > MAX_THREADS || nallocs < 1) {
        say("usage: threads [1-%d [ALLOCS]]\n", MAX_THREADS);
        return 2;
    }

    /* The main thread's own share: 100 blocks of 333 bytes. */
    tally_t main_tally = {0};
    void *blocks[100];
    progs_mark("begin");
    for (int i = 0; i < 100; i++) {
        blocks[i] = malloc(333);
        tally_alloc(&main_tally, T_MALLOC, 333);
    }
    for (int i = 0; i < 100; i++) {
        free(blocks[i]);
        tally_free(&main_tally);
    }
    progs_mark("end");

    pthread_barrier_init(&barrier, NULL, (unsigned)nthreads);
    pthread_t th[MAX_THREADS];
    for (int i = 0; i < nthreads; i++) {
        workers[i].index = i;
        pthread_create(&th[i], NULL, work, &workers[i]);
    }
    for (int i = 0; i < nthreads; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < nthreads; i++)
        free(workers[i].handoff);
    pthread_barrier_destroy(&barrier);

    tally_print(&main_tally, getpid());
    for (int i = 0; i < nthreads; i++) {
        tally_print(&workers[i].tally, workers[i].tid);
        say("expect name tid=%ld name=wdone-%d\n", workers[i].tid, i);
    }
    return 0;
}
