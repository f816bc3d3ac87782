/*
 * stackuse: how deep one malloc and one free reach below their caller's frame. A thread with a
 * 1 MiB stack paints 64 KiB below its frame with a pattern, makes the call, and finds the
 * deepest byte that changed. Each call is measured at a return address seen before (five times:
 * the last is printed) and once at a new call site. Run untraced and traced, the difference is
 * what the tracer adds to the stack of an event. Prints
 *   stack malloc=N free=N new_site_malloc=N first_malloc=N
 * (first_malloc: the thread's first event, which registers the thread, opens its file and writes
 * the first module snapshot, and which glibc's malloc takes to set up the thread's arena).
 * The program is linked with -z now (CMakeLists.txt): bound lazily, the first call of malloc
 * would run the dynamic linker's resolver, deeper than either, in both runs alike.
 */
#include "progs.h"

#include <pthread.h>

PROGS_SINK_DEFINITION;

#define SPAN (64 * 1024)

static __attribute__((noinline)) void call_malloc(void) { SINK(malloc(64)); }
static __attribute__((noinline)) void call_malloc_elsewhere(void) { SINK(malloc(64)); }
static __attribute__((noinline)) void call_free(void) { free(progs_sink); }

static __attribute__((noinline)) size_t depth_of(void (*f)(void))
{
    volatile unsigned char *sp = __builtin_frame_address(0);
    volatile unsigned char *lo = sp - SPAN, *p = lo;
    for (size_t i = 0; i < SPAN - 64; i++) /* a loop, not memset: no call below the frame */
        lo[i] = 0xA5;
    f();
    while (p < sp - 64 && *p == 0xA5)
        p++;
    return (size_t)(sp - p);
}

static void *run(void *arg)
{
    (void)arg;
    size_t first = depth_of(call_malloc), m = 0, f = 0;
    depth_of(call_free);
    for (int i = 0; i < 5; i++) {
        m = depth_of(call_malloc);
        f = depth_of(call_free);
    }
    size_t site = depth_of(call_malloc_elsewhere);
    depth_of(call_free);
    say("stack malloc=%zu free=%zu new_site_malloc=%zu first_malloc=%zu\n", m, f, site, first);
    return NULL;
}

int main(void)
{
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setstacksize(&a, 1 << 20);
    pthread_t t;
    pthread_create(&t, &a, run, NULL);
    pthread_join(t, NULL);
    return 0;
}
