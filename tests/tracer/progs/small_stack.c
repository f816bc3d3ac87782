/*
 * small_stack: allocations from a thread with the smallest stack pthreads allows
 * (PTHREAD_STACK_MIN, 16 KiB here), one of them in a signal handler on that stack, where a
 * backtrace must go through the signal frame (libunwind's part of the recorder's work). The
 * recorder must not overflow the stack: the program ends normally and every allocation is
 * recorded, with a backtrace where one fits. Sizes 3001-3003 occur nowhere else.
 */
#include "progs.h"

#include <limits.h>
#include <pthread.h>
#include <signal.h>

PROGS_SINK_DEFINITION;

static void on_signal(int sig)
{
    (void)sig;
    void *p = malloc(3002);
    SINK(p);
    free(p);
}

static void *thread_main(void *arg)
{
    (void)arg;
    void *a = malloc(3001);
    SINK(a);
    raise(SIGUSR1);
    void *b = calloc(1, 3003);
    SINK(b);
    free(b);
    free(a);
    return NULL;
}

int main(void)
{
    signal(SIGUSR1, on_signal);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    if (pthread_attr_setstacksize(&attr, PTHREAD_STACK_MIN) != 0)
        return 1;
    pthread_t t;
    if (pthread_create(&t, &attr, thread_main, NULL) != 0)
        return 1;
    pthread_join(t, NULL);
    say("done\n");
    return 0;
}
