/*
 * setuid: two threads (main and a worker started at once) each make NPAIRS malloc/free pairs,
 * then the process drops root for uid and gid 65534 (setgid, setuid: every thread changes, as
 * glibc applies them process-wide), and both make NPAIRS pairs more, between markers "begin"
 * and "end". The recording directory and files belong to root, mode 0700/0600: from then on
 * the process cannot open them by name. Prints each thread's ground truth and the uid it ended
 * with. Must be started as root.
 *
 * Usage: setuid NPAIRS
 */
#include "progs.h"

#include <pthread.h>

PROGS_SINK_DEFINITION;

static long npairs;
static pthread_barrier_t dropped, before;

typedef struct {
    long tid;
    tally_t tally;
} worker_t;

static void churn(worker_t *w)
{
    for (long i = 0; i < npairs; i++) {
        size_t size = 16 + (size_t)(i % 200);
        void *p = malloc(size);
        SINK(p);
        tally_alloc(&w->tally, T_MALLOC, size);
        free(p);
        tally_free(&w->tally);
    }
}

static void run(worker_t *w)
{
    w->tid = gettid();
    progs_mark("begin");
    churn(w);
    pthread_barrier_wait(&before);
    pthread_barrier_wait(&dropped);
    churn(w);
    progs_mark("end");
}

static void *work(void *arg)
{
    run(arg);
    return NULL;
}

static void *late_work(void *arg)
{
    worker_t *w = arg;
    w->tid = gettid();
    progs_mark("begin");
    churn(w);
    progs_mark("end");
    return NULL;
}

int main(int argc, char **argv)
{
    npairs = argc > 1 ? atol(argv[1]) : 30000;
    if (getuid() != 0) {
        say("setuid: must run as root\n");
        return 2;
    }
    pthread_barrier_init(&before, NULL, 2);
    pthread_barrier_init(&dropped, NULL, 2);
    static worker_t w[3];
    pthread_t th;
    pthread_create(&th, NULL, work, &w[1]);
    w[0].tid = gettid();
    progs_mark("begin");
    churn(&w[0]);
    pthread_barrier_wait(&before);
    if (setgid(65534) != 0 || setuid(65534) != 0) {
        say("setuid: cannot drop to 65534\n");
        return 1;
    }
    pthread_barrier_wait(&dropped);
    churn(&w[0]);
    progs_mark("end");
    pthread_join(th, NULL);
    pthread_t late;
    pthread_create(&late, NULL, late_work, &w[2]);
    pthread_join(late, NULL);
    for (int i = 0; i < 3; i++)
        tally_print(&w[i].tally, w[i].tid);
    say("uid %d\n", (int)getuid());
    return 0;
}
