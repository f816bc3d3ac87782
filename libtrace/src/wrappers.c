/*
 * wrappers.c: the allocator entry points librheap interposes, and the bootstrap arena.
 *
 * Each wrapper calls the next allocator in the chain (glibc's, or another preloaded one) and,
 * while recording, writes one event. The shape of every wrapper is the same:
 *
 *   - calls while not recording, and the tracer's own calls (the guard is set by tracer code
 *     outside a wrapper, or inside one in a region that may allocate: rheap__tl.internal), go
 *     straight to the real function;
 *   - a call from a signal handler that interrupted a wrapper (the guard is set by a wrapper
 *     whose frame is still live) is recorded without a backtrace (rheap__record_nested), so a
 *     handler's blocks and their frees pair; a guard left set by a handler that jumped out of
 *     a wrapper (siglongjmp) is found stale and released (nested_kind);
 *   - a free is stamped before the real free and an allocation after the real allocation
 *     returns, so when another thread reuses an address its allocation sorts after the free;
 *   - a realloc frees its old block inside the real call, before it is recorded: it marks itself
 *     in flight (rheap__realloc_begin), and a recording that stops waits for its record, which
 *     is only the release of the old block if the stop began during the call;
 *   - errno is whatever the real function left.
 *
 * Before dlsym has resolved the real functions, allocations come from a small static arena:
 * dlsym itself may allocate. Those blocks are never freed and never recorded; free() and
 * realloc() recognize them by address.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"
#include "sample.h"

rheap__real_t rheap__real;
RHEAP_TLS rheap__tl_t rheap__tl;

/* ---- Bootstrap arena ---- */

#define BOOT_SIZE (256 * 1024)
static _Alignas(64) unsigned char boot_arena[BOOT_SIZE];
static _Atomic size_t boot_used;
static RHEAP_TLS int tl_resolving;
static _Atomic int resolve_state; /* 0 not started, 1 in progress, 2 done */

/* 1 when the real malloc and free belong to an allocator whose own functions librheap also
 * wraps (jemalloc, tcmalloc, mimalloc: their free calls sdallocx or mi_free through their PLT):
 * while a recorded call runs, `internal` is then raised by one, so that those inner calls pass
 * instead of being taken for a signal handler's. Set once, by rheap__resolve. The price: with
 * such an allocator, a signal handler's allocations during a recorded call are not recorded. */
static int nest_inside;

/* Each bootstrap block is preceded by its size, so realloc can copy it out. */
static void *boot_alloc(size_t size, size_t align) {
    if (align < 16)
        align = 16;
    for (;;) {
        size_t used = atomic_load(&boot_used);
        size_t start = (used + sizeof(size_t) + align - 1) & ~(align - 1);
        size_t end = start + size;
        if (end > BOOT_SIZE || end < start)
            return NULL;
        if (atomic_compare_exchange_weak(&boot_used, &used, end)) {
            memcpy(boot_arena + start - sizeof(size_t), &size, sizeof(size_t));
            return boot_arena + start; /* static memory is already zero: fine for calloc */
        }
    }
}

static inline int is_boot(const void *p) {
    return (const unsigned char *)p >= boot_arena && (const unsigned char *)p < boot_arena + BOOT_SIZE;
}

static size_t boot_size(const void *p) {
    size_t size;
    memcpy(&size, (const unsigned char *)p - sizeof(size_t), sizeof size);
    return size;
}

void rheap__resolve(void) {
    int expected = 0;
    if (!atomic_compare_exchange_strong(&resolve_state, &expected, 1)) {
        /* Another thread is resolving: wait for it (this only happens at start-up). */
        while (atomic_load(&resolve_state) != 2)
            sched_yield();
        return;
    }
    tl_resolving = 1;
    rheap__real_t r;
    r.malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
    r.free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
    r.calloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
    r.realloc = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
    r.posix_memalign = (int (*)(void **, size_t, size_t))dlsym(RTLD_NEXT, "posix_memalign");
    r.aligned_alloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "aligned_alloc");
    r.memalign = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "memalign");
    r.valloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "valloc");
    r.pvalloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "pvalloc");
    r.mmap = (void *(*)(void *, size_t, int, int, int, off_t))dlsym(RTLD_NEXT, "mmap");
    r.munmap = (int (*)(void *, size_t))dlsym(RTLD_NEXT, "munmap");
    r.mremap = (void *(*)(void *, size_t, size_t, int, ...))dlsym(RTLD_NEXT, "mremap");
    if (!r.malloc || !r.free || !r.calloc || !r.realloc) {
        rheap__log("cannot find the real malloc (dlsym RTLD_NEXT failed)", NULL);
        syscall(SYS_exit_group, 127); /* not _exit: that is our own wrapper, which would wait here */
    }
    rheap__real = r;
    nest_inside = rheap__families_resolve();
    tl_resolving = 0;
    atomic_store(&resolve_state, 2);
}

int rheap__resolved(void) {
    return atomic_load_explicit(&resolve_state, memory_order_acquire) == 2;
}

/* True when the caller must use the bootstrap arena: this thread is inside dlsym. */
static inline int need_boot(void) {
    if (RHEAP_LIKELY(atomic_load_explicit(&resolve_state, memory_order_acquire) == 2))
        return 0;
    if (tl_resolving)
        return 1;
    rheap__resolve();
    return 0;
}

/* ---- Common wrapper prologue ---- */

enum { PASS, RECORD, NESTED };

/* Whether the calling thread runs on its signal stack. One system call, on the rare path only. */
static int on_signal_stack(void) {
    stack_t ss;
    return syscall(SYS_sigaltstack, NULL, &ss) == 0 && (ss.ss_flags & SS_ONSTACK);
}

/* A call that finds the guard set. PASS: tracer code is running (set outside any wrapper, or in
 * a region that may allocate). NESTED: a signal handler interrupted a wrapper of this thread; its
 * frame, where the guard was taken, lies above this call's on the stack (stacks grow down) or
 * the handler runs on the signal stack. RECORD: the frame that took the guard is gone, since
 * this call's frame is not below it: a handler left the wrapper with siglongjmp. The guard and
 * whatever the wrapper held are released, and the call goes on as any other. In profile mode a
 * handler's calls pass: they are neither sampled nor counted. */
static __attribute__((noinline)) int nested_kind(uintptr_t frame) {
    if (!rheap__tl.guard_frame)
        return PASS;
    if (frame < rheap__tl.guard_frame || on_signal_stack())
        return rheap__tl.internal || rheap__profiling() ? PASS : NESTED;
    int saved = errno;
    rheap__threads_recover();
    errno = saved;
    rheap__tl.guard = 0;
    rheap__tl.guard_frame = 0;
    rheap__tl.internal = 0;
    return RECORD;
}

/* Releases the guard: in the reverse order of enter(). */
static inline void leave(void) {
    rheap__tl.internal -= nest_inside;
    atomic_signal_fence(memory_order_seq_cst);
    rheap__tl.guard = 0;
    atomic_signal_fence(memory_order_seq_cst);
    rheap__tl.guard_frame = 0;
}

/* The rare states (first call, a pending toggle), with the guard held: returns whether a
 * recording is on afterwards. Apart from the wrappers, so that its signal set (128 bytes) is
 * not on the stack of every event. */
static __attribute__((noinline)) int slow_enter(void) {
    int saved = errno; /* starting or stopping a recording makes system calls */
    sigset_t old;
    rheap__sys_block_signals(&old);
    rheap__tl.internal++;
    rheap__slow_path();
    rheap__tl.internal--;
    rheap__sys_restore_signals(&old);
    errno = saved;
    return (atomic_load_explicit(&rheap__word, memory_order_relaxed) & RHEAP__ON) != 0;
}

/* RECORD if this call must be recorded: then the guard is held, taken by the wrapper whose
 * frame is `frame` (its own), and the caller releases it with leave(). NESTED: record it with
 * rheap__record_nested, without the guard. PASS: call the real function only. */
static inline int enter(uintptr_t frame) {
    if (RHEAP_UNLIKELY(rheap__tl.guard)) {
        int k = nested_kind(frame);
        if (k != RECORD)
            return k;
    }
    int word = atomic_load_explicit(&rheap__word, memory_order_acquire);
    if (RHEAP_LIKELY(word == 0))
        return PASS;
    /* A handler may run between any two stores: the frame first, so that a set guard always
     * comes with its frame (a guard without one means tracer code outside a wrapper). A handler
     * that runs between the first two and records a call of its own leaves with the frame
     * cleared: it is stored again once the guard is set. */
    rheap__tl.guard_frame = frame;
    atomic_signal_fence(memory_order_seq_cst);
    rheap__tl.guard = 1;
    atomic_signal_fence(memory_order_seq_cst);
    rheap__tl.guard_frame = frame;
    atomic_signal_fence(memory_order_seq_cst);
    rheap__tl.internal += nest_inside;
    if ((word & ~RHEAP__PROFILE) != RHEAP__ON && !slow_enter()) {
        leave();
        return PASS;
    }
    return RECORD;
}

#define ENTER() enter((uintptr_t)__builtin_frame_address(0))

/* A handler's allocation: p from `call`, or NULL (nothing to record). Returns p. */
static void *nested_alloc(rip_call_t call, void *p, uint64_t size, uint64_t align, void *old) {
    int saved = errno;
    if (p)
        rheap__record_nested(call, p, size, align, old, rheap__now_abs());
    errno = saved;
    return p;
}

/* Profile mode: remembers a sampled block, or turns recording off when it cannot (its free
 * would go unseen). 0 when tracked. */
static __attribute__((noinline)) int track(void *p) {
    if (RHEAP_LIKELY(rheap__sample_track(p) == 0))
        return 0;
    int saved = errno;
    rheap__fail("cannot remember a sampled block", ENOMEM);
    errno = saved;
    return -1;
}

/* Records an allocation; in profile mode, counts it and records it only when sampled. */
static inline void record(rip_call_t call, void *p, uint64_t size, uint64_t align,
                          const rheap__frame_t *from) {
    if (rheap__profiling()) {
        rheap__count_alloc(size);
        if (RHEAP_LIKELY(!rheap__sample_pick(size)) || track(p) != 0)
            return;
    }
    int saved = errno;
    rheap__record_alloc(call, p, size, align, NULL, 0, rheap__now_abs(), from);
    errno = saved;
}

/* The common case of the busiest entry points, kept to a few instructions so that a process with
 * librheap loaded but not recording pays little: the real functions are resolved and this call
 * is not recorded (recording off, or the tracer itself allocating outside a wrapper): CALL_PASS.
 * While a profile-mode recording is on (CALL_PROFILE), most calls go through after a few
 * thread-local updates (the rheap__sample_skip functions); a trace-mode recording asks no such
 * question and goes to the slow function at once. The rest, and a call made while a wrapper
 * holds the guard (the tracer's own, or a signal handler's: the _slow function tells them
 * apart), goes to the entry point's _slow function, called as the wrapper's last act: the
 * compiler makes that a jump, so the slow function's caller is the program (were it a call, the
 * walk would step through the wrapper's frame as one of the tracer's own). A call that only
 * needs counting is counted before the real call, so that the real call is the wrapper's last act
 * too (a jump, with no frame of the wrapper's to keep): a call that then fails, which only a
 * process out of memory sees for a block below its sample point, is counted all the same. */
enum { CALL_PASS, CALL_PROFILE, CALL_SLOW };

static inline int call_state(void) {
    /* The word loses RHEAP__UNINIT only after the real functions are resolved (lifecycle.c's
     * init runs after rheap__resolve, whose stores this acquire load sees): a word of 0 or of
     * profile mode says both that they are and what to do. */
    int word = atomic_load_explicit(&rheap__word, memory_order_acquire);
    if (RHEAP_UNLIKELY(word != 0 && word != (RHEAP__ON | RHEAP__PROFILE)))
        return CALL_SLOW;
    if (rheap__tl.guard)
        return rheap__tl.guard_frame ? CALL_SLOW : CALL_PASS;
    /* With an allocator whose free calls its own wrapped functions, a profile-mode call takes
     * the guard, so that those inner calls are not counted again. */
    return RHEAP_LIKELY(word == 0) ? CALL_PASS : nest_inside ? CALL_SLOW : CALL_PROFILE;
}

/* ---- The entry points ---- */

static __attribute__((noinline)) void *malloc_slow(size_t size) {
    if (RHEAP_UNLIKELY(need_boot()))
        return boot_alloc(size, 16);
    int e = ENTER();
    if (e != RECORD)
        return e == PASS ? rheap__real.malloc(size)
                         : nested_alloc(RIP_CALL_MALLOC, rheap__real.malloc(size), size, 0, NULL);
    void *p = rheap__real.malloc(size);
    if (p)
        record(RIP_CALL_MALLOC, p, size, 0, RHEAP__CALLER());
    leave();
    return p;
}

RHEAP_EXPORT void *malloc(size_t size) {
    int state = call_state();
    if (RHEAP_LIKELY(state == CALL_PASS))
        return rheap__real.malloc(size);
    rheap__counts_t *c = state == CALL_PROFILE ? rheap__sample_skip(size) : NULL;
    if (c) {
        rheap__count_alloc_to(c, size);
        return rheap__real.malloc(size);
    }
    return malloc_slow(size);
}

static __attribute__((noinline)) void free_slow(void *p) {
    if (!p || RHEAP_UNLIKELY(is_boot(p)))
        return;
    if (RHEAP_UNLIKELY(need_boot()))
        return;
    int e = ENTER();
    if (e != RECORD) {
        if (e == NESTED) {
            int saved = errno;
            rheap__record_nested(0, p, 0, 0, NULL, rheap__now_abs());
            errno = saved;
        }
        rheap__real.free(p);
        return;
    }
    if (rheap__profiling()) {
        /* Only a sampled block's free is stamped and recorded; the filter answers for the rest
         * with one load. */
        rheap__count_free();
        if (RHEAP_UNLIKELY(rheap__sample_forget(p))) {
            int saved = errno;
            rheap__record_free(p, rheap__now_abs());
            errno = saved;
        }
        rheap__real.free(p);
        leave();
        return;
    }
    int saved = errno;
    rheap__record_free(p, rheap__now_abs());
    errno = saved;
    rheap__real.free(p);
    leave();
}

RHEAP_EXPORT void free(void *p) {
    int state = RHEAP_LIKELY(!is_boot(p)) ? call_state() : CALL_SLOW;
    if (RHEAP_LIKELY(state == CALL_PASS)) {
        rheap__real.free(p);
        return;
    }
    rheap__counts_t *c = state == CALL_PROFILE ? rheap__sample_skip_free(p) : NULL;
    if (c) {
        rheap__counts_add(&c->frees, 1);
        rheap__real.free(p);
        return;
    }
    free_slow(p);
}

static __attribute__((noinline)) void *calloc_slow(size_t n, size_t size) {
    if (RHEAP_UNLIKELY(need_boot())) {
        size_t total;
        if (__builtin_mul_overflow(n, size, &total))
            return NULL;
        return boot_alloc(total, 16);
    }
    int e = ENTER();
    if (e != RECORD)
        return e == PASS ? rheap__real.calloc(n, size)
                         : nested_alloc(RIP_CALL_CALLOC, rheap__real.calloc(n, size),
                                        (uint64_t)n * size, 0, NULL);
    void *p = rheap__real.calloc(n, size);
    if (p)
        record(RIP_CALL_CALLOC, p, (uint64_t)n * size, 0, RHEAP__CALLER());
    leave();
    return p;
}

RHEAP_EXPORT void *calloc(size_t n, size_t size) {
    int state = call_state();
    if (RHEAP_LIKELY(state == CALL_PASS))
        return rheap__real.calloc(n, size);
    size_t total;
    rheap__counts_t *c = state == CALL_PROFILE && !__builtin_mul_overflow(n, size, &total)
                             ? rheap__sample_skip(total)
                             : NULL;
    if (c) {
        rheap__count_alloc_to(c, total);
        return rheap__real.calloc(n, size);
    }
    return calloc_slow(n, size);
}

/* realloc and reallocarray share this: the old block is released at t0 (before the call), the
 * new one exists from the moment the call returns. */
static void record_realloc(rip_call_t call, void *old, void *p, uint64_t size, uint64_t t0,
                           int marked, const rheap__frame_t *from) {
    int saved = errno;
    if (marked && !(atomic_load_explicit(&rheap__word, memory_order_relaxed) & RHEAP__ON)) {
        /* The recording began to stop during the call: the new block may come from frees that
         * other threads made after the stop and did not record, so only the release of the
         * old block is written (the stop waits for it). A block resized in place stays as it
         * was recorded. */
        if (old && p != old && (p || size == 0))
            rheap__record_free(old, t0);
    } else if (p) {
        rheap__record_alloc(call, p, size, 0, old, t0, rheap__now_abs(), from);
    } else if (old && size == 0) {
        rheap__record_free(old, t0); /* glibc's realloc(p, 0) frees p and returns NULL */
    }
    errno = saved;
}

/* A realloc of a bootstrap block moves it to the real heap; the arena copy stays behind. */
static void *realloc_from_boot(void *old, size_t size) {
    void *p = malloc(size);
    if (p) {
        size_t n = boot_size(old);
        memcpy(p, old, n < size ? n : size);
    }
    return p;
}

/* A realloc in profile mode: a free of the old block, recorded if it was sampled, and an
 * allocation of the new one, sampled by its size. The old block leaves the sampled set before
 * the call, which may hand its address to another thread. */
static void *resize_profiled(rip_call_t call, void *old, size_t size, const rheap__frame_t *from) {
    int saved = errno;
    int marked = rheap__realloc_begin();
    int was = old && rheap__sample_forget(old);
    uint64_t t0 = was ? rheap__now_abs() : 0;
    errno = saved;
    void *p = rheap__real.realloc(old, size);
    saved = errno;
    if (marked && !(atomic_load_explicit(&rheap__word, memory_order_relaxed) & RHEAP__ON)) {
        if (was && p != old && (p || size == 0))
            rheap__record_free(old, t0); /* as in record_realloc */
    } else if (p) {
        rheap__count_alloc(size);
        if (rheap__sample_pick(size) && track(p) == 0)
            rheap__record_alloc(call, p, size, 0, was ? old : NULL, t0, rheap__now_abs(), from);
        else if (was)
            rheap__record_free(old, t0);
    } else if (old && size == 0) {
        rheap__count_free();
        if (was)
            rheap__record_free(old, t0);
    } else if (was) {
        track(old); /* the call failed: the old block lives on */
    }
    errno = saved;
    if (marked)
        rheap__realloc_end();
    leave();
    return p;
}

/* A handler's realloc: recorded as a realloc when it returns a block, as a free when it freed
 * (size 0). */
static void *nested_realloc(rip_call_t call, void *old, size_t size) {
    void *p = rheap__real.realloc(old, size);
    if (p)
        return nested_alloc(call, p, size, 0, old);
    if (old && size == 0) {
        int saved = errno;
        rheap__record_nested(0, old, 0, 0, NULL, rheap__now_abs());
        errno = saved;
    }
    return p;
}

/* A recorded realloc: the old block is released at t0, before the call. */
static void *resize(rip_call_t call, void *old, size_t size, const rheap__frame_t *from) {
    if (rheap__profiling())
        return resize_profiled(call, old, size, from);
    int saved = errno;
    int marked = rheap__realloc_begin();
    uint64_t t0 = rheap__now_abs();
    errno = saved;
    void *p = rheap__real.realloc(old, size);
    record_realloc(call, old, p, size, t0, marked, from);
    if (marked)
        rheap__realloc_end();
    leave();
    return p;
}

static __attribute__((noinline)) void *realloc_slow(void *old, size_t size) {
    if (RHEAP_UNLIKELY(need_boot())) {
        void *p = boot_alloc(size, 16);
        if (p && old)
            memcpy(p, old, boot_size(old) < size ? boot_size(old) : size);
        return p;
    }
    if (RHEAP_UNLIKELY(old && is_boot(old)))
        return realloc_from_boot(old, size);
    int e = ENTER();
    if (e != RECORD)
        return e == PASS ? rheap__real.realloc(old, size) : nested_realloc(RIP_CALL_REALLOC, old, size);
    return resize(RIP_CALL_REALLOC, old, size, RHEAP__CALLER());
}

RHEAP_EXPORT void *realloc(void *old, size_t size) {
    int state = RHEAP_LIKELY(!is_boot(old)) ? call_state() : CALL_SLOW;
    if (RHEAP_LIKELY(state == CALL_PASS))
        return rheap__real.realloc(old, size);
    /* Profile mode: an unsampled block resized to an unsampled one records nothing, so no
     * stop can come between its release and a record (resize's concern). */
    rheap__counts_t *c = state == CALL_PROFILE && size && (!old || rheap__sample_skip_free(old))
                             ? rheap__sample_skip(size)
                             : NULL;
    if (c) {
        rheap__count_alloc_to(c, size);
        return rheap__real.realloc(old, size);
    }
    return realloc_slow(old, size);
}

/* reallocarray is realloc once the product is known not to overflow, which is all glibc's does. */
RHEAP_EXPORT void *reallocarray(void *old, size_t n, size_t size) {
    size_t total;
    if (__builtin_mul_overflow(n, size, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    if (RHEAP_UNLIKELY(need_boot()) || RHEAP_UNLIKELY(old && is_boot(old)))
        return realloc(old, total);
    int e = ENTER();
    if (e != RECORD)
        return e == PASS ? rheap__real.realloc(old, total)
                         : nested_realloc(RIP_CALL_REALLOCARRAY, old, total);
    return resize(RIP_CALL_REALLOCARRAY, old, total, RHEAP__CALLER());
}

RHEAP_EXPORT int posix_memalign(void **out, size_t align, size_t size) {
    if (RHEAP_UNLIKELY(need_boot())) {
        void *p = boot_alloc(size, align);
        if (!p)
            return ENOMEM;
        *out = p;
        return 0;
    }
    int e = ENTER();
    if (e != RECORD) {
        int r = rheap__real.posix_memalign(out, align, size);
        if (e == NESTED && r == 0)
            nested_alloc(RIP_CALL_POSIX_MEMALIGN, *out, size, align, NULL);
        return r;
    }
    int saved = errno;
    int r = rheap__real.posix_memalign(out, align, size);
    if (r == 0)
        record(RIP_CALL_POSIX_MEMALIGN, *out, size, align, RHEAP__CALLER());
    errno = saved; /* posix_memalign reports through its result, never errno */
    leave();
    return r;
}

RHEAP_EXPORT void *aligned_alloc(size_t align, size_t size) {
    if (RHEAP_UNLIKELY(need_boot()))
        return boot_alloc(size, align);
    int e = ENTER();
    if (e != RECORD)
        return e == PASS ? rheap__real.aligned_alloc(align, size)
                         : nested_alloc(RIP_CALL_ALIGNED_ALLOC, rheap__real.aligned_alloc(align, size), size, align, NULL);
    void *p = rheap__real.aligned_alloc(align, size);
    if (p)
        record(RIP_CALL_ALIGNED_ALLOC, p, size, align, RHEAP__CALLER());
    leave();
    return p;
}

RHEAP_EXPORT void *memalign(size_t align, size_t size) {
    if (RHEAP_UNLIKELY(need_boot()))
        return boot_alloc(size, align);
    int e = ENTER();
    if (e != RECORD)
        return e == PASS ? rheap__real.memalign(align, size)
                         : nested_alloc(RIP_CALL_MEMALIGN, rheap__real.memalign(align, size), size, align, NULL);
    void *p = rheap__real.memalign(align, size);
    if (p)
        record(RIP_CALL_MEMALIGN, p, size, align, RHEAP__CALLER());
    leave();
    return p;
}

RHEAP_EXPORT void *valloc(size_t size) {
    if (RHEAP_UNLIKELY(need_boot()))
        return boot_alloc(size, 4096);
    int e = ENTER();
    if (e != RECORD)
        return e == PASS ? rheap__real.valloc(size)
                         : nested_alloc(RIP_CALL_VALLOC, rheap__real.valloc(size), size, (uint64_t)sysconf(_SC_PAGESIZE), NULL);
    void *p = rheap__real.valloc(size);
    if (p)
        record(RIP_CALL_VALLOC, p, size, (uint64_t)sysconf(_SC_PAGESIZE), RHEAP__CALLER());
    leave();
    return p;
}

RHEAP_EXPORT void *pvalloc(size_t size) {
    if (RHEAP_UNLIKELY(need_boot()))
        return boot_alloc(size, 4096);
    int e = ENTER();
    if (e != RECORD)
        return e == PASS ? rheap__real.pvalloc(size)
                         : nested_alloc(RIP_CALL_PVALLOC, rheap__real.pvalloc(size), size,
                                        (uint64_t)sysconf(_SC_PAGESIZE), NULL);
    void *p = rheap__real.pvalloc(size);
    /* The size recorded is the one asked for, as for every call; pvalloc's rounding up to whole
     * pages shows in the alignment. */
    if (p)
        record(RIP_CALL_PVALLOC, p, size, (uint64_t)sysconf(_SC_PAGESIZE), RHEAP__CALLER());
    leave();
    return p;
}

/* ---- The mapping functions' prologue and epilogue (maps.c) ---- */

/* Only a call the program itself makes is recorded: any set guard (the tracer's own code, an
 * allocator's call inside a wrapper, a signal handler that interrupted one) passes, as do calls
 * before the real functions are resolved. */
int rheap__map_enter(uintptr_t frame) {
    if (rheap__tl.guard || !rheap__resolved())
        return 0;
    return enter(frame) == RECORD;
}

void rheap__map_leave(void) {
    leave();
}

/* ---- What the other families' entry points share (families.c) ----
 *
 * The C++ operators and the allocators' own functions are recorded as the libc ones are, with
 * one addition: while their real function runs, the thread's `internal` count is raised, so
 * that the calls it makes into other wrapped entry points (libstdc++'s operator new calls
 * malloc, mimalloc's mi_zalloc may call mi_malloc) pass through: each block is recorded once,
 * under the call the program made. */

int rheap__family_enter(uintptr_t frame) {
    if (RHEAP_UNLIKELY(need_boot()))
        return PASS; /* inside dlsym: nothing of ours is resolved yet */
    int e = enter(frame);
    if (e != PASS)
        rheap__tl.internal++;
    return e;
}

void rheap__family_leave(int e) {
    if (e == PASS)
        return;
    rheap__tl.internal--;
    if (e == RECORD)
        leave();
}

void rheap__family_alloc(int e, rip_call_t call, void *p, uint64_t size, uint64_t align,
                         const rheap__frame_t *from) {
    if (e == PASS)
        return;
    rheap__tl.internal--;
    if (e == NESTED) {
        nested_alloc(call, p, size, align, NULL);
        return;
    }
    if (p)
        record(call, p, size, align, from);
    leave();
}

int rheap__family_free_begin(uintptr_t frame, void *p) {
    if (!p || RHEAP_UNLIKELY(is_boot(p)) || RHEAP_UNLIKELY(need_boot()))
        return PASS;
    int e = enter(frame);
    if (e == PASS)
        return PASS;
    int saved = errno;
    if (e == NESTED)
        rheap__record_nested(0, p, 0, 0, NULL, rheap__now_abs());
    else if (!rheap__profiling())
        rheap__record_free(p, rheap__now_abs());
    else {
        rheap__count_free();
        if (RHEAP_UNLIKELY(rheap__sample_forget(p)))
            rheap__record_free(p, rheap__now_abs());
    }
    errno = saved;
    rheap__tl.internal++;
    return e;
}

/* One block of a heap being destroyed: its free, recorded as free_slow records one. */
static _Bool destroyed_block(const void *heap, const void *area, void *block, size_t size,
                             void *arg)
{
    (void)heap, (void)area, (void)size;
    if (!block)
        return 1;
    if (*(const int *)arg == NESTED)
        rheap__record_nested(0, block, 0, 0, NULL, rheap__now_abs());
    else if (!rheap__profiling())
        rheap__record_free(block, rheap__now_abs());
    else {
        rheap__count_free();
        if (RHEAP_UNLIKELY(rheap__sample_forget(block)))
            rheap__record_free(block, rheap__now_abs());
    }
    return 1;
}

int rheap__family_destroy_begin(uintptr_t frame, void *heap, rheap__visit_t visit) {
    if (!heap || RHEAP_UNLIKELY(need_boot()))
        return PASS;
    int e = enter(frame);
    if (e == PASS)
        return PASS;
    /* Raised before the visit too: whatever the allocator calls from it passes through. */
    rheap__tl.internal++;
    int saved = errno;
    if (visit)
        visit(heap, 1, destroyed_block, &e);
    errno = saved;
    return e;
}

int rheap__family_resize_begin(uintptr_t frame, void *old, rheap__resize_t *r) {
    r->marked = 0;
    r->was = 0;
    r->t0 = 0;
    int e = rheap__family_enter(frame);
    if (e != RECORD)
        return e;
    int saved = errno;
    r->marked = rheap__realloc_begin();
    if (rheap__profiling()) {
        r->was = old && rheap__sample_forget(old);
        r->t0 = r->was ? rheap__now_abs() : 0;
    } else {
        r->t0 = rheap__now_abs();
    }
    errno = saved;
    return e;
}

void rheap__family_resize_end(int e, rheap__resize_t *r, rip_call_t call, void *old, void *p,
                              uint64_t size, int freed, const rheap__frame_t *from) {
    if (e == PASS)
        return;
    rheap__tl.internal--;
    int saved = errno;
    if (e == NESTED) {
        if (p)
            rheap__record_nested(call, p, size, 0, old, rheap__now_abs());
        else if (freed)
            rheap__record_nested(0, old, 0, 0, NULL, rheap__now_abs());
        errno = saved;
        return;
    }
    if (!rheap__profiling()) {
        /* record_realloc takes a failed call for a release when its size is 0: `freed` says
         * whether the call released old without returning a block. */
        record_realloc(call, old, p, p ? size : freed ? 0 : 1, r->t0, r->marked, from);
    } else if (r->marked && !(atomic_load_explicit(&rheap__word, memory_order_relaxed) & RHEAP__ON)) {
        if (r->was && p != old && (p || freed))
            rheap__record_free(old, r->t0);
    } else if (p) {
        rheap__count_alloc(size);
        if (rheap__sample_pick(size) && track(p) == 0)
            rheap__record_alloc(call, p, size, 0, r->was ? old : NULL, r->t0, rheap__now_abs(), from);
        else if (r->was)
            rheap__record_free(old, r->t0);
    } else if (freed) {
        rheap__count_free();
        if (r->was)
            rheap__record_free(old, r->t0);
    } else if (r->was) {
        track(old);
    }
    errno = saved;
    if (r->marked)
        rheap__realloc_end();
    leave();
}
