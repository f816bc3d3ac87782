/*
 * sigjump NSIGNALS: signal handlers that allocate, and every 7th one jumps out of what it
 * interrupted. A worker thread makes malloc(64)/free pairs without pause and takes SIGUSR1
 * NSIGNALS times, most of them inside the recorder. The handler makes one malloc(333)/free pair, and on every 7th signal then leaves
 * with siglongjmp to the worker's loop. The signals come from a timer every 100 us aimed at the
 * worker (signals that arrive while one is pending merge: the handler counts its runs). At the
 * end it prints
 *   worker tid=T done=D started=S handler=H jumps=J
 * D and S count the worker's calls completed and started (S - D were abandoned by jumps), H the
 * handler's pairs (each complete before any jump). The recording must hold exactly H pairs of
 * 333 bytes, and between D and S calls of 64 bytes.
 * A handler that allocates or jumps may interrupt the allocator itself: run it over
 * tests/stress/progs/bump.c, preloaded after librheap.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static long nsignals;
static atomic_int stop, ready;
static volatile long started, done, handler_pairs, jumps;
static _Atomic long handled;
static sigjmp_buf env;

static void on_signal(int sig)
{
    (void)sig;
    void *volatile p = malloc(333);
    free(p);
    handler_pairs++;
    long n = atomic_fetch_add(&handled, 1) + 1;
    if (n % 7 == 0) {
        jumps++;
        siglongjmp(env, 1);
    }
}

static volatile long worker_tid;

static void *work(void *arg)
{
    (void)arg;
    worker_tid = gettid();
    if (sigsetjmp(env, 1) == 0)
        atomic_store(&ready, 1);
    while (!atomic_load(&stop)) {
        started++;
        void *volatile p = malloc(64);
        done++;
        started++;
        free(p);
        done++;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    nsignals = argc > 1 ? atol(argv[1]) : 7000;
    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    pthread_t worker;
    pthread_create(&worker, NULL, work, NULL);
    while (!atomic_load(&ready))
        sched_yield();
    struct sigevent ev = {0};
    ev.sigev_notify = SIGEV_THREAD_ID;
    ev.sigev_signo = SIGUSR1;
    ev._sigev_un._tid = (pid_t)worker_tid;
    timer_t timer;
    if (timer_create(CLOCK_MONOTONIC, &ev, &timer) != 0)
        return 2;
    struct itimerspec every = {{0, 100000}, {0, 100000}}, off = {{0, 0}, {0, 0}};
    timer_settime(timer, 0, &every, NULL);
    while (atomic_load(&handled) < nsignals) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    timer_settime(timer, 0, &off, NULL);
    timer_delete(timer);
    atomic_store(&stop, 1);
    pthread_join(worker, NULL);
    printf("worker tid=%ld done=%ld started=%ld handler=%ld jumps=%ld\n", worker_tid, done,
           started, handler_pairs, jumps);
    return 0;
}
