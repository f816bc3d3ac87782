/*
 * handlers: a worker thread allocates and frees without pause (malloc(64) then free, one event
 * each) while another thread sends it SIGUSR1 NSIGNALS times, each once the last was handled, so
 * that most signals land while the worker is inside the tracer (fewer if the worker reaches
 * 20 million calls first). What the handler does depends on MODE:
 *   alloc    it allocates a block the worker frees later (with the signal blocked) and makes a
 *            malloc/free pair of its own;
 *   longjmp  it jumps back to the worker's loop with siglongjmp, leaving the interrupted call;
 *   exit     at the last signal it prints the ground truth and calls exit(0).
 * The worker counts each allocator call as started before it and done after it returns; the
 * handler counts its own calls. At the end (or at the exit) the program prints
 *   expect worker tid=T done=D started=S jumps=J
 * where D and S include the handler's calls: the worker's recorded events must be at least D and
 * at most S (S - D calls were interrupted and never returned, at most one per jump).
 * A handler may allocate, or jump, while glibc's malloc is mid-update: the program must run with
 * an allocator that allows it, tests/stress/progs/bump.c, preloaded (after librheap when traced).
 *
 * Usage: handlers alloc|longjmp|exit NSIGNALS
 */
#include "progs.h"

#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>

PROGS_SINK_DEFINITION;

#define RING 4096
#define MAX_CALLS 20000000

static const char *mode;
static long nsignals;
static atomic_int stop, ready;
static pthread_t worker;
static long worker_tid;
static volatile long started, done;           /* the worker's calls */
static volatile long h_calls, jumps;          /* the handler's calls, its jumps */
static _Atomic long received;                  /* signals the handler saw */
static void *volatile ring[RING];              /* blocks the handler made, for the worker */
static volatile unsigned ring_head, ring_tail;
static sigjmp_buf env;

static void print_truth(void)
{
    say("expect worker tid=%ld done=%ld started=%ld jumps=%ld\n", worker_tid, done + h_calls,
        started + h_calls, jumps);
}

static void on_signal(int sig)
{
    (void)sig;
    received++;
    if (strcmp(mode, "alloc") == 0) {
        if (ring_tail - ring_head < RING) {
            void *p = malloc(200);
            h_calls++;
            ring[ring_tail % RING] = p;
            ring_tail++;
        }
        void *q = malloc(216);
        h_calls++;
        SINK(q);
        free(q);
        h_calls++;
    } else if (strcmp(mode, "longjmp") == 0) {
        jumps++;
        siglongjmp(env, 1);
    } else if (received == nsignals) {
        print_truth();
        exit(0);
    }
}

/* Frees the handler's blocks, with the signal blocked: the handler adds to the ring. */
static void free_ring(void)
{
    sigset_t set, old;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &set, &old);
    while (ring_head != ring_tail) {
        started++;
        free(ring[ring_head % RING]);
        done++;
        ring_head++;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void *work(void *arg)
{
    (void)arg;
    worker_tid = gettid();
    progs_mark("begin");
    if (sigsetjmp(env, 1) == 0)
        atomic_store(&ready, 1); /* signals come once the jump has somewhere to go */
    while (!atomic_load(&stop)) {
        started++;
        void *p = malloc(64);
        done++;
        SINK(p);
        started++;
        free(p);
        done++;
        if (ring_tail - ring_head > RING / 2)
            free_ring();
        if (started > MAX_CALLS)
            atomic_store(&stop, 1); /* signals came slowly (a loaded machine): enough */
    }
    free_ring();
    progs_mark("end");
    return NULL;
}

int main(int argc, char **argv)
{
    mode = argc > 1 ? argv[1] : "";
    nsignals = argc > 2 ? atol(argv[2]) : 0;
    if ((strcmp(mode, "alloc") && strcmp(mode, "longjmp") && strcmp(mode, "exit")) ||
        nsignals < 1) {
        say("usage: handlers alloc|longjmp|exit NSIGNALS\n");
        return 2;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    pthread_create(&worker, NULL, work, NULL);
    while (!atomic_load(&ready))
        sched_yield();
    for (long i = 0; i < nsignals && !atomic_load(&stop); i++) {
        pthread_kill(worker, SIGUSR1);
        while (received <= i) /* a signal sent while one is pending would merge with it */
            sched_yield();
    }
    atomic_store(&stop, 1);
    pthread_join(worker, NULL);
    print_truth();
    return 0;
}
