/*
 * realloc_stop: recording stops (rheap_disable) while another thread's realloc has moved a
 * block and freed the old one but has not been recorded yet (slow_realloc holds it there for
 * 20 ms), and this thread has meanwhile been handed the old address by malloc. The recording
 * must show the old block released by that realloc before the address is allocated again, not
 * the address allocated twice: stopping waits for the realloc to be recorded.
 *
 * Run with librheap preloaded (RHEAP_ENABLE=1), slow_realloc linked, MALLOC_ARENA_MAX=1 (one
 * arena, so this thread's malloc can get the other thread's freed block). Prints "reused 1"
 * when malloc returned the old address (else the case cannot be made here) and "disabled R".
 */
#include "progs.h"

#include <pthread.h>
#include <stdatomic.h>

PROGS_SINK_DEFINITION;

extern _Atomic int slow_realloc_freed;
extern int rheap_disable(void) __attribute__((weak));

static void *_Atomic block;

static void *mover(void *arg)
{
    (void)arg;
    /* Blocks on both sides: the realloc cannot grow in place, and the freed block does not
     * merge with a free neighbour. */
    void *before = malloc(2000);
    void *p = malloc(2000);
    void *after = malloc(2000);
    atomic_store(&block, p);
    void *q = realloc(p, 123456); /* moves: glibc frees p inside, then slow_realloc waits */
    free(q);
    free(after);
    free(before);
    return NULL;
}

int main(void)
{
    if (!rheap_disable) {
        say("not traced\n");
        return 2;
    }
    pthread_t th;
    pthread_create(&th, NULL, mover, NULL);
    while (!atomic_load(&slow_realloc_freed))
        sched_yield();
    void *again = malloc(2000);
    say("reused %d\n", again == atomic_load(&block));
    int r = rheap_disable();
    say("disabled %d\n", r);
    pthread_join(th, NULL);
    free(again);
    return 0;
}
