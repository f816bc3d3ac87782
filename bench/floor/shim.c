/*
 * shim.c: the floor of a backtrace-on-every-allocation tracer, for comparison with librheap.
 * Preloaded, it wraps malloc, calloc, realloc and free and, on each call, does only what any
 * such tracer must: read the clock, and for allocations unwind with libunwind's unw_backtrace
 * and hash the frames. It records nothing. SHIM_UNWIND=0 leaves out the unwinding.
 *
 * Not part of rheap: a measuring stick for bench/floor/run.sh.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <libunwind.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static void (*real_free)(void *);
static __thread int busy __attribute__((tls_model("initial-exec")));
static int unwind = 1;
static volatile uint64_t sink;
static char boot[65536];
static size_t boot_used;

static void init(void) {
    if (real_malloc)
        return;
    busy = 1;
    real_malloc = dlsym(RTLD_NEXT, "malloc");
    real_calloc = dlsym(RTLD_NEXT, "calloc");
    real_realloc = dlsym(RTLD_NEXT, "realloc");
    real_free = dlsym(RTLD_NEXT, "free");
    const char *u = getenv("SHIM_UNWIND");
    unwind = !(u && strcmp(u, "0") == 0);
    busy = 0;
}

static inline uint64_t now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void event(int alloc) {
    if (busy)
        return;
    busy = 1;
    uint64_t h = now();
    if (alloc && unwind) {
        void *ips[64];
        int n = unw_backtrace(ips, 64);
        for (int i = 0; i < n; i++)
            h = (h ^ (uintptr_t)ips[i]) * 0x100000001b3ull;
    }
    sink = h;
    busy = 0;
}

void *malloc(size_t n) {
    if (!real_malloc) {
        if (busy) {
            void *p = boot + boot_used;
            boot_used += (n + 15) & ~(size_t)15;
            return p;
        }
        init();
    }
    void *p = real_malloc(n);
    event(1);
    return p;
}

void *calloc(size_t n, size_t s) {
    if (!real_calloc) {
        if (busy)
            return malloc(n * s); /* the static arena is zeroed */
        init();
    }
    void *p = real_calloc(n, s);
    event(1);
    return p;
}

void *realloc(void *old, size_t n) {
    init();
    event(0);
    void *p = real_realloc(old, n);
    event(1);
    return p;
}

void free(void *p) {
    if ((char *)p >= boot && (char *)p < boot + sizeof boot)
        return;
    init();
    event(0);
    real_free(p);
}
