/*
 * jumpstay: threads left inside the recorder by a signal handler's jump, which then never
 * allocate again, must not hold up the program's exit.
 *
 * Four worker threads make malloc(64)/free pairs without pause, each sent SIGUSR1 by its own
 * 100 us timer. The handler makes one malloc(333)/free pair and, on a worker's 50th signal,
 * leaves with siglongjmp to that worker, which then waits on a pipe that is never written: its
 * last allocation call was the one the jump left. Most signals land inside the recorder (the
 * workers do nothing else), so most workers stay inside an event, from which only their next
 * allocation call would take them. Once all four wait, main returns: exit must flush the
 * recording and end the process.
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

#define WORKERS 4
#define JUMP_AT 50

static int never[2];
static atomic_int parked;
static __thread sigjmp_buf env;
static __thread long handled;

static void on_signal(int sig)
{
    (void)sig;
    void *volatile p = malloc(333);
    free(p);
    if (++handled == JUMP_AT)
        siglongjmp(env, 1);
}

static void *work(void *arg)
{
    _Atomic long *tid = arg;
    /* No mask saved: after the jump SIGUSR1 stays blocked as the handler had it, so no later
     * handler allocates on this thread (which would take it out of the event). */
    if (sigsetjmp(env, 0) != 0) {
        atomic_fetch_add(&parked, 1);
        char c;
        for (;;)
            if (read(never[0], &c, 1) == 1)
                break;
        return NULL;
    }
    atomic_store(tid, gettid());
    for (;;) {
        void *volatile p = malloc(64);
        free(p);
    }
}

int main(void)
{
    if (pipe(never) != 0)
        return 2;
    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    static _Atomic long tids[WORKERS];
    pthread_t th[WORKERS];
    timer_t timers[WORKERS];
    for (int i = 0; i < WORKERS; i++) {
        pthread_create(&th[i], NULL, work, &tids[i]);
        while (!atomic_load(&tids[i]))
            sched_yield();
        struct sigevent ev = {0};
        ev.sigev_notify = SIGEV_THREAD_ID;
        ev.sigev_signo = SIGUSR1;
        ev._sigev_un._tid = (pid_t)tids[i];
        if (timer_create(CLOCK_MONOTONIC, &ev, &timers[i]) != 0)
            return 2;
        struct itimerspec every = {{0, 100000}, {0, 100000}};
        timer_settime(timers[i], 0, &every, NULL);
    }
    while (atomic_load(&parked) < WORKERS) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    for (int i = 0; i < WORKERS; i++)
        timer_delete(timers[i]);
    printf("jumpstay: %d workers parked\n", WORKERS);
    fflush(stdout);
    return 0;
}
