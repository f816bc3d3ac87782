/*
 * forkgate.c: keeps the test's threads out of TSan's allocator across a fork.
 *
 * Here the recorder's "real" allocator is TSan's (CMakeLists.txt), and TSan's allocator as
 * Debian 12's compilers ship it takes no lock around a fork: a child forked while another thread
 * was inside it (refilling or draining a size class) inherits that thread's lock held and hangs
 * in its first allocation, in TSan, with the recorder nowhere on its stack (LLVM's runtime locks
 * its allocator across fork from version 19 on). glibc's malloc, the real allocator of a traced
 * program, does what is missing: it holds its locks across a fork. This file gives TSan's the
 * same: the recorder's calls into it pass a gate, which a fork handler closes after the
 * recorder's own prepare handler has run (so no thread waits at the gate holding what that
 * handler waits for), waiting for the threads inside to leave; the parent and the child open it.
 *
 * Compiled with the recorder's renames, so that rheap__real is the recorder's own.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>

#include "internal.h"

void rheap_tsan_forkgate_install(void);

static rheap__real_t tsan_alloc; /* TSan's allocator, as the recorder found it */
static _Atomic int installed, closed;
static _Atomic unsigned inside; /* threads between enter and leave */
static pthread_t closer;

static void enter(void) {
    for (;;) {
        atomic_fetch_add(&inside, 1);
        if (!atomic_load(&closed) || pthread_equal(closer, pthread_self()))
            return;
        atomic_fetch_sub(&inside, 1);
        while (atomic_load(&closed))
            sched_yield();
    }
}

static void leave(void) {
    atomic_fetch_sub(&inside, 1);
}

/* Runs after the recorder's prepare handler: handlers registered earlier prepare later. */
static void prepare(void) {
    if (!atomic_load(&installed))
        return;
    int e = errno;
    closer = pthread_self();
    atomic_store(&closed, 1);
    while (atomic_load(&inside) != 0)
        sched_yield();
    errno = e;
}

static void parent(void) {
    if (atomic_load(&installed))
        atomic_store(&closed, 0);
}

/* The child's only thread is the one that closed the gate; whoever else was counted is gone. */
static void child(void) {
    if (!atomic_load(&installed))
        return;
    atomic_store(&inside, 0);
    atomic_store(&closed, 0);
}

/* Before the recorder's constructor, so that the recorder's handlers are registered after. */
__attribute__((constructor(101))) static void register_handlers(void) {
    pthread_atfork(prepare, parent, child);
}

static void *gate_malloc(size_t n) {
    enter();
    void *p = tsan_alloc.malloc(n);
    leave();
    return p;
}

static void gate_free(void *p) {
    enter();
    tsan_alloc.free(p);
    leave();
}

static void *gate_calloc(size_t n, size_t size) {
    enter();
    void *p = tsan_alloc.calloc(n, size);
    leave();
    return p;
}

static void *gate_realloc(void *old, size_t n) {
    enter();
    void *p = tsan_alloc.realloc(old, n);
    leave();
    return p;
}

static int gate_posix_memalign(void **out, size_t align, size_t n) {
    enter();
    int r = tsan_alloc.posix_memalign(out, align, n);
    leave();
    return r;
}

static void *gate_aligned_alloc(size_t align, size_t n) {
    enter();
    void *p = tsan_alloc.aligned_alloc(align, n);
    leave();
    return p;
}

static void *gate_memalign(size_t align, size_t n) {
    enter();
    void *p = tsan_alloc.memalign(align, n);
    leave();
    return p;
}

static void *gate_valloc(size_t n) {
    enter();
    void *p = tsan_alloc.valloc(n);
    leave();
    return p;
}

static void *gate_pvalloc(size_t n) {
    enter();
    void *p = tsan_alloc.pvalloc(n);
    leave();
    return p;
}

/* Puts the gate between the recorder and TSan's allocator. Before any other thread starts. */
void rheap_tsan_forkgate_install(void) {
    rheap__resolve();
    tsan_alloc = rheap__real;
    rheap__real = (rheap__real_t){.malloc = gate_malloc,
                                  .free = gate_free,
                                  .calloc = gate_calloc,
                                  .realloc = gate_realloc,
                                  .posix_memalign = gate_posix_memalign,
                                  .aligned_alloc = gate_aligned_alloc,
                                  .memalign = gate_memalign,
                                  .valloc = gate_valloc,
                                  .pvalloc = gate_pvalloc};
    atomic_store(&installed, 1);
}
