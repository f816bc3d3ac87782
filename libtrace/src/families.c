/*
 * families.c: the allocation functions beyond the C library's that librheap interposes: every
 * form of C++'s operator new and delete, and the functions of their own that jemalloc, tcmalloc
 * and mimalloc export. The list is entries.h; each wrapper is generated from its row.
 *
 * Why they are needed: an allocator that replaces malloc also defines operator new and delete,
 * and its own functions, and these reach its malloc internally, never through the exported
 * malloc. A program linked with -ljemalloc therefore makes nearly all its allocations where a
 * malloc wrapper does not see them.
 *
 * Each wrapper calls the next definition of its symbol (dlsym RTLD_NEXT, looked up with the libc
 * functions; a library loaded later is looked up at its first call) and records as the libc
 * wrappers do (wrappers.c's family functions): once, under the call the program made, even when
 * the real function calls another wrapped one (libstdc++'s operator new calls malloc, jemalloc's
 * sized delete calls sdallocx): the inner call passes through. A throwing operator new that
 * throws leaves through a cleanup (this file is built with -fexceptions) that releases what the
 * wrapper held. A symbol that no loaded library defines (a program that looked mallocx up
 * without jemalloc loaded) fails as an allocator out of memory would: NULL, 0 or ENOMEM, and a
 * free of nothing; one line says so.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "entries.h"
#include "internal.h"

static _Atomic(void *) reals[RHEAP_E_COUNT];

static const char *const names[RHEAP_E_COUNT] = {
#define NAME(slot, symbol, shape, call) [RHEAP_E_##slot] = symbol,
    RHEAP_FAMILY_ENTRIES(NAME)
#undef NAME
};

int rheap__families_resolve(void) {
    for (int i = 0; i < RHEAP_E_COUNT; i++)
        atomic_store_explicit(&reals[i], dlsym(RTLD_NEXT, names[i]), memory_order_relaxed);
#define MARK(slot) || atomic_load_explicit(&reals[RHEAP_E_##slot], memory_order_relaxed)
    return 0 RHEAP_REPLACING_MARKS(MARK);
#undef MARK
}

/* A symbol not found at start-up: looked up again (a library loaded since), once per call until
 * found. dlsym may allocate: as tracer code (guard without frame) unless the wrapper holds the
 * guard already, whose raised `internal` lets those calls pass. */
static __attribute__((noinline)) void *late(int slot) {
    static _Atomic int said;
    int saved = errno;
    int mine = !rheap__tl.guard;
    if (mine)
        rheap__tl.guard = 1;
    void *f = dlsym(RTLD_NEXT, names[slot]);
    if (mine)
        rheap__tl.guard = 0;
    if (f)
        atomic_store_explicit(&reals[slot], f, memory_order_release);
    else if (!atomic_exchange(&said, 1))
        rheap__log("the program called ", names[slot], ", which no loaded library defines: "
                   "the call fails", NULL);
    errno = saved;
    return f;
}

/* Whether the call goes straight to the real function: no recording (whose word is also
 * nonzero until the real functions are resolved), or the tracer's own call. As wrappers.c's
 * call_state. */
static inline int passing(void) {
    if (RHEAP_LIKELY(atomic_load_explicit(&rheap__word, memory_order_acquire) != 0))
        return 0;
    return !rheap__tl.guard || !rheap__tl.guard_frame;
}

#define REAL(slot) atomic_load_explicit(&reals[RHEAP_E_##slot], memory_order_relaxed)
#define FRAME ((uintptr_t)__builtin_frame_address(0))
#define DONE (-1)

/* The cleanup of an allocating wrapper's state: runs only when an exception leaves the call
 * (the wrapper sets DONE once it has recorded). */
static void unwound(int *e) {
    if (*e != DONE)
        rheap__family_leave(*e);
}

/* jemalloc's flags: bits 0-5 hold log2 of the alignment (MALLOCX_ALIGN, MALLOCX_LG_ALIGN). */
static inline uint64_t mallocx_align(int flags) {
    return (flags & 63) ? (uint64_t)1 << (flags & 63) : 0;
}

static inline uint64_t times(size_t n, size_t size) {
    size_t total;
    return __builtin_mul_overflow(n, size, &total) ? UINT64_MAX : total;
}

/* ---- Generators, one per shape (entries.h) ---- */

#define ALLOC_WRAPPER(slot, symbol, call, type, params, args, size, align)                         \
    RHEAP_EXPORT void *w_##slot params __asm__(symbol);                                            \
    RHEAP_EXPORT void *w_##slot params {                                                           \
        type fn = (type)REAL(slot);                                                                \
        if (RHEAP_LIKELY(passing() && fn))                                                         \
            return fn args;                                                                        \
        int e __attribute__((cleanup(unwound))) = rheap__family_enter(FRAME);                      \
        if (!fn && !(fn = (type)late(RHEAP_E_##slot))) {                                           \
            rheap__family_leave(e);                                                                \
            e = DONE;                                                                              \
            return NULL;                                                                           \
        }                                                                                          \
        void *p = fn args;                                                                         \
        rheap__family_alloc(e, RIP_CALL_##call, p, size, align, RHEAP__CALLER());                  \
        e = DONE;                                                                                  \
        return p;                                                                                  \
    }

#define FREE_WRAPPER(slot, symbol, type, params, args, p)                                          \
    RHEAP_EXPORT void w_##slot params __asm__(symbol);                                             \
    RHEAP_EXPORT void w_##slot params {                                                            \
        type fn = (type)REAL(slot);                                                                \
        if (RHEAP_LIKELY(passing() && fn)) {                                                       \
            fn args;                                                                               \
            return;                                                                                \
        }                                                                                          \
        int e = rheap__family_free_begin(FRAME, p);                                                \
        if (fn || (fn = (type)late(RHEAP_E_##slot)))                                               \
            fn args;                                                                               \
        rheap__family_leave(e);                                                                    \
    }

/* A resizing call: `freed` says when a NULL result released the old block. */
#define RESIZE_WRAPPER(slot, symbol, call, type, params, args, old, size, freed)                   \
    RHEAP_EXPORT void *w_##slot params __asm__(symbol);                                            \
    RHEAP_EXPORT void *w_##slot params {                                                           \
        type fn = (type)REAL(slot);                                                                \
        if (RHEAP_LIKELY(passing() && fn))                                                         \
            return fn args;                                                                        \
        rheap__resize_t r;                                                                         \
        int e = rheap__family_resize_begin(FRAME, old, &r);                                        \
        void *p = NULL;                                                                            \
        if (fn || (fn = (type)late(RHEAP_E_##slot)))                                               \
            p = fn args;                                                                           \
        rheap__family_resize_end(e, &r, RIP_CALL_##call, old, p, size, freed, RHEAP__CALLER());    \
        return p;                                                                                  \
    }

typedef void *(*n_s_t)(size_t);
typedef void *(*n_sn_t)(size_t, const void *);
typedef void *(*n_sa_t)(size_t, size_t);
typedef void *(*n_san_t)(size_t, size_t, const void *);
typedef void *(*n_nsa_t)(size_t, size_t, size_t);
typedef void *(*n_x_t)(size_t, int);
typedef int (*pm_t)(void **, size_t, size_t);
typedef void *(*r_ps_t)(void *, size_t);
typedef void *(*r_psa_t)(void *, size_t, size_t);
typedef void *(*r_psx_t)(void *, size_t, int);
typedef size_t (*xa_t)(void *, size_t, size_t, int);
typedef void (*f_p_t)(void *);
typedef void (*f_ps_t)(void *, size_t);
typedef void (*f_pn_t)(void *, const void *);
typedef void (*f_psa_t)(void *, size_t, size_t);
typedef void (*f_pan_t)(void *, size_t, const void *);
typedef void (*f_pi_t)(void *, int);
typedef void (*f_psi_t)(void *, size_t, int);

#define W_N_S(slot, symbol, call) ALLOC_WRAPPER(slot, symbol, call, n_s_t, (size_t s), (s), s, 0)
#define W_N_SN(slot, symbol, call)                                                                 \
    ALLOC_WRAPPER(slot, symbol, call, n_sn_t, (size_t s, const void *nt), (s, nt), s, 0)
#define W_N_SA(slot, symbol, call)                                                                 \
    ALLOC_WRAPPER(slot, symbol, call, n_sa_t, (size_t s, size_t a), (s, a), s, a)
#define W_N_SAN(slot, symbol, call)                                                                \
    ALLOC_WRAPPER(slot, symbol, call, n_san_t, (size_t s, size_t a, const void *nt), (s, a, nt), s, a)
#define W_N_AS(slot, symbol, call)                                                                 \
    ALLOC_WRAPPER(slot, symbol, call, n_sa_t, (size_t a, size_t s), (a, s), s, a)
#define W_N_NS(slot, symbol, call)                                                                 \
    ALLOC_WRAPPER(slot, symbol, call, n_sa_t, (size_t n, size_t s), (n, s), times(n, s), 0)
#define W_N_NSA(slot, symbol, call)                                                                \
    ALLOC_WRAPPER(slot, symbol, call, n_nsa_t, (size_t n, size_t s, size_t a), (n, s, a),          \
                  times(n, s), a)
#define W_N_X(slot, symbol, call)                                                                  \
    ALLOC_WRAPPER(slot, symbol, call, n_x_t, (size_t s, int f), (s, f), s, mallocx_align(f))

#define W_R_PS(slot, symbol, call)                                                                 \
    RESIZE_WRAPPER(slot, symbol, call, r_ps_t, (void *o, size_t s), (o, s), o, s, o && s == 0)
#define W_R_PSA(slot, symbol, call)                                                                \
    RESIZE_WRAPPER(slot, symbol, call, r_psa_t, (void *o, size_t s, size_t a), (o, s, a), o, s,    \
                   o && s == 0)
#define W_R_PSX(slot, symbol, call)                                                                \
    RESIZE_WRAPPER(slot, symbol, call, r_psx_t, (void *o, size_t s, int f), (o, s, f), o, s, 0)

#define W_F_P(slot, symbol, call) FREE_WRAPPER(slot, symbol, f_p_t, (void *p), (p), p)
#define W_F_PS(slot, symbol, call) FREE_WRAPPER(slot, symbol, f_ps_t, (void *p, size_t s), (p, s), p)
#define W_F_PN(slot, symbol, call)                                                                 \
    FREE_WRAPPER(slot, symbol, f_pn_t, (void *p, const void *nt), (p, nt), p)
#define W_F_PSA(slot, symbol, call)                                                                \
    FREE_WRAPPER(slot, symbol, f_psa_t, (void *p, size_t s, size_t a), (p, s, a), p)
#define W_F_PAN(slot, symbol, call)                                                                \
    FREE_WRAPPER(slot, symbol, f_pan_t, (void *p, size_t a, const void *nt), (p, a, nt), p)
#define W_F_PI(slot, symbol, call) FREE_WRAPPER(slot, symbol, f_pi_t, (void *p, int f), (p, f), p)
#define W_F_PSI(slot, symbol, call)                                                                \
    FREE_WRAPPER(slot, symbol, f_psi_t, (void *p, size_t s, int f), (p, s, f), p)

/* tcmalloc's posix_memalign reports through its result. */
#define W_PM(slot, symbol, call)                                                                   \
    RHEAP_EXPORT int w_##slot(void **out, size_t a, size_t s) __asm__(symbol);                     \
    RHEAP_EXPORT int w_##slot(void **out, size_t a, size_t s) {                                    \
        pm_t fn = (pm_t)REAL(slot);                                                                \
        if (RHEAP_LIKELY(passing() && fn))                                                         \
            return fn(out, a, s);                                                                  \
        int e = rheap__family_enter(FRAME);                                                        \
        int r = ENOMEM;                                                                            \
        if (fn || (fn = (pm_t)late(RHEAP_E_##slot)))                                               \
            r = fn(out, a, s);                                                                     \
        rheap__family_alloc(e, RIP_CALL_##call, r == 0 ? *out : NULL, s, a, RHEAP__CALLER());      \
        return r;                                                                                  \
    }

/* xallocx resizes in place or not at all: it returns the block's size afterwards, which reaches
 * `size` when the resize happened; that is recorded as a resize of the block into itself. */
#define W_XA(slot, symbol, call)                                                                   \
    RHEAP_EXPORT size_t w_##slot(void *p, size_t s, size_t x, int f) __asm__(symbol);              \
    RHEAP_EXPORT size_t w_##slot(void *p, size_t s, size_t x, int f) {                             \
        xa_t fn = (xa_t)REAL(slot);                                                                \
        if (RHEAP_LIKELY(passing() && fn))                                                         \
            return fn(p, s, x, f);                                                                 \
        rheap__resize_t r;                                                                         \
        int e = rheap__family_resize_begin(FRAME, p, &r);                                          \
        size_t got = 0;                                                                            \
        if (fn || (fn = (xa_t)late(RHEAP_E_##slot)))                                               \
            got = fn(p, s, x, f);                                                                  \
        rheap__family_resize_end(e, &r, RIP_CALL_##call, p, got >= s ? p : NULL, s, 0,             \
                                 RHEAP__CALLER());                                                 \
        return got;                                                                                \
    }

#define GENERATE(slot, symbol, shape, call) W_##shape(slot, symbol, call)
RHEAP_FAMILY_ENTRIES(GENERATE)
#undef GENERATE
