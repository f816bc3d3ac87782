/*
 * slow_realloc: a realloc that sits between librheap and glibc (librheap's next realloc is this
 * one) and, for the size 123456, sleeps 20 ms after glibc's realloc returned, as if the thread
 * had been preempted there: the old block is already free, and the tracer has not yet recorded
 * the call. slow_realloc_freed tells the program that moment has come.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <stddef.h>
#include <time.h>

_Atomic int slow_realloc_freed;

void *realloc(void *p, size_t n)
{
    static void *(*next)(void *, size_t);
    if (!next)
        next = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
    void *q = next(p, n);
    if (n == 123456) {
        atomic_store(&slow_realloc_freed, 1);
        struct timespec ts = {0, 20000000};
        nanosleep(&ts, NULL);
    }
    return q;
}
