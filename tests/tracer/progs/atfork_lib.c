/*
 * atfork_lib: preloaded after librheap, its constructor runs first and registers fork handlers
 * that allocate (as libraries that reset their own state in a child do). It counts its
 * handlers' calls in atfork_calls.
 */
#include <pthread.h>
#include <stdlib.h>

void *volatile atfork_sink;
int atfork_calls;

static void allocate(void)
{
    void *p = malloc(555);
    atfork_sink = p;
    free(p);
    atfork_calls++;
}

__attribute__((constructor)) static void register_handlers(void)
{
    pthread_atfork(allocate, allocate, allocate);
}
