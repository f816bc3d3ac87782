/*
 * shapes.h: the wrapper of an allocator entry point, one generator per signature (entries.h's
 * shapes). Two files generate wrappers from it: families.c, the functions librheap exports (the
 * next definition of the symbol is the real function), and patch.c, the hooks of an allocator
 * linked statically into a module (the real function is the trampoline that runs the entry's
 * relocated first instructions). Both record alike: once, under the call the program made, with
 * the inner calls of the real function passing through.
 *
 * The including file defines, before including it:
 *
 *   SHAPE_DECL(slot, symbol, ret, params)  the function's declaration: its name and linkage
 *   SHAPE_REAL(slot)                       the real function's address, NULL when not known yet
 *   SHAPE_LATE(slot)                       a last look for it when NULL (NULL: none found)
 *   SHAPE_VISIT()                          mimalloc's mi_heap_visit_blocks, or NULL (the HD shape)
 *
 * and then expands RHEAP_SHAPE_<shape>(slot, symbol, call) for each entry.
 */
#ifndef RHEAP_SHAPES_H
#define RHEAP_SHAPES_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

/* Whether the call goes straight to the real function: no recording (whose word is also
 * nonzero until the real functions are resolved), or the tracer's own call. As wrappers.c's
 * call_state. */
static inline int passing(void) {
    if (RHEAP_LIKELY(atomic_load_explicit(&rheap__word, memory_order_acquire) != 0))
        return 0;
    return !rheap__tl.guard || !rheap__tl.guard_frame;
}

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

/* An allocating call; `kept` is the block it made, from its result p (NULL: none, as for a
 * realpath given a buffer), and `size` may read p too (a string's length). */
#define ALLOC_WRAPPER_KEPT(slot, symbol, call, type, params, args, size, align, kept)              \
    SHAPE_DECL(slot, symbol, void *, params) {                                                     \
        type fn = (type)SHAPE_REAL(slot);                                                          \
        if (RHEAP_LIKELY(passing() && fn))                                                         \
            return fn args;                                                                        \
        int e __attribute__((cleanup(unwound))) = rheap__family_enter(FRAME);                      \
        if (!fn && !(fn = (type)SHAPE_LATE(slot))) {                                               \
            rheap__family_leave(e);                                                                \
            e = DONE;                                                                              \
            return NULL;                                                                           \
        }                                                                                          \
        void *p = fn args;                                                                         \
        rheap__family_alloc(e, RIP_CALL_##call, kept, size, align, RHEAP__CALLER());               \
        e = DONE;                                                                                  \
        return p;                                                                                  \
    }
#define ALLOC_WRAPPER(slot, symbol, call, type, params, args, size, align)                         \
    ALLOC_WRAPPER_KEPT(slot, symbol, call, type, params, args, size, align, p)

#define FREE_WRAPPER(slot, symbol, type, params, args, p)                                          \
    SHAPE_DECL(slot, symbol, void, params) {                                                       \
        type fn = (type)SHAPE_REAL(slot);                                                          \
        if (RHEAP_LIKELY(passing() && fn)) {                                                       \
            fn args;                                                                               \
            return;                                                                                \
        }                                                                                          \
        int e = rheap__family_free_begin(FRAME, p);                                                \
        if (fn || (fn = (type)SHAPE_LATE(slot)))                                                   \
            fn args;                                                                               \
        rheap__family_leave(e);                                                                    \
    }

/* A resizing call: `freed` says when a NULL result released the old block. */
#define RESIZE_WRAPPER(slot, symbol, call, type, params, args, old, size, freed)                   \
    SHAPE_DECL(slot, symbol, void *, params) {                                                     \
        type fn = (type)SHAPE_REAL(slot);                                                          \
        if (RHEAP_LIKELY(passing() && fn))                                                         \
            return fn args;                                                                        \
        rheap__resize_t r;                                                                         \
        int e = rheap__family_resize_begin(FRAME, old, &r);                                        \
        void *p = NULL;                                                                            \
        if (fn || (fn = (type)SHAPE_LATE(slot)))                                                   \
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
typedef void *(*r_pns_t)(void *, size_t, size_t);
typedef void *(*r_psx_t)(void *, size_t, int);
typedef size_t (*xa_t)(void *, size_t, size_t, int);
typedef void (*f_p_t)(void *);
typedef void (*f_ps_t)(void *, size_t);
typedef void (*f_pn_t)(void *, const void *);
typedef void (*f_psa_t)(void *, size_t, size_t);
typedef void (*f_pan_t)(void *, size_t, const void *);
typedef void (*f_pi_t)(void *, int);
typedef void (*f_psi_t)(void *, size_t, int);
typedef void *(*h_s_t)(void *, size_t);
typedef void *(*h_ns_t)(void *, size_t, size_t);
typedef void *(*h_r_ps_t)(void *, void *, size_t);
typedef void *(*h_nsa_t)(void *, size_t, size_t, size_t);
typedef void *(*h_r_pns_t)(void *, void *, size_t, size_t);
typedef void *(*str_t)(const char *);
typedef void *(*strn_t)(const char *, size_t);
typedef void *(*rp_t)(const char *, char *);
typedef void *(*h_str_t)(void *, const char *);
typedef void *(*h_strn_t)(void *, const char *, size_t);
typedef void *(*h_rp_t)(void *, const char *, char *);
typedef void (*hd_t)(void *);
typedef void *(*hn_t)(void);

#define RHEAP_SHAPE_N_S(slot, symbol, call) ALLOC_WRAPPER(slot, symbol, call, n_s_t, (size_t s), (s), s, 0)
#define RHEAP_SHAPE_N_SN(slot, symbol, call)                                                                 \
    ALLOC_WRAPPER(slot, symbol, call, n_sn_t, (size_t s, const void *nt), (s, nt), s, 0)
#define RHEAP_SHAPE_N_SA(slot, symbol, call)                                                                 \
    ALLOC_WRAPPER(slot, symbol, call, n_sa_t, (size_t s, size_t a), (s, a), s, a)
#define RHEAP_SHAPE_N_SAN(slot, symbol, call)                                                                \
    ALLOC_WRAPPER(slot, symbol, call, n_san_t, (size_t s, size_t a, const void *nt), (s, a, nt), s, a)
#define RHEAP_SHAPE_N_AS(slot, symbol, call)                                                                 \
    ALLOC_WRAPPER(slot, symbol, call, n_sa_t, (size_t a, size_t s), (a, s), s, a)
#define RHEAP_SHAPE_N_NS(slot, symbol, call)                                                                 \
    ALLOC_WRAPPER(slot, symbol, call, n_sa_t, (size_t n, size_t s), (n, s), times(n, s), 0)
#define RHEAP_SHAPE_N_NSA(slot, symbol, call)                                                                \
    ALLOC_WRAPPER(slot, symbol, call, n_nsa_t, (size_t n, size_t s, size_t a), (n, s, a),          \
                  times(n, s), a)
#define RHEAP_SHAPE_N_X(slot, symbol, call)                                                                  \
    ALLOC_WRAPPER(slot, symbol, call, n_x_t, (size_t s, int f), (s, f), s, mallocx_align(f))

/* valloc and pvalloc: the alignment recorded is the page's, as wrappers.c records it. */
#define RHEAP_SHAPE_N_P(slot, symbol, call)                                                        \
    ALLOC_WRAPPER(slot, symbol, call, n_s_t, (size_t s), (s), s, (uint64_t)sysconf(_SC_PAGESIZE))

#define RHEAP_SHAPE_R_PS(slot, symbol, call)                                                                 \
    RESIZE_WRAPPER(slot, symbol, call, r_ps_t, (void *o, size_t s), (o, s), o, s, o && s == 0)
#define RHEAP_SHAPE_R_PSA(slot, symbol, call)                                                                \
    RESIZE_WRAPPER(slot, symbol, call, r_psa_t, (void *o, size_t s, size_t a), (o, s, a), o, s,    \
                   o && s == 0)
#define RHEAP_SHAPE_R_PNS(slot, symbol, call)                                                      \
    RESIZE_WRAPPER(slot, symbol, call, r_pns_t, (void *o, size_t n, size_t s), (o, n, s), o,       \
                   times(n, s), o && times(n, s) == 0)
#define RHEAP_SHAPE_R_PSX(slot, symbol, call)                                                                \
    RESIZE_WRAPPER(slot, symbol, call, r_psx_t, (void *o, size_t s, int f), (o, s, f), o, s, 0)

#define RHEAP_SHAPE_F_P(slot, symbol, call) FREE_WRAPPER(slot, symbol, f_p_t, (void *p), (p), p)
#define RHEAP_SHAPE_F_PS(slot, symbol, call) FREE_WRAPPER(slot, symbol, f_ps_t, (void *p, size_t s), (p, s), p)
#define RHEAP_SHAPE_F_PN(slot, symbol, call)                                                                 \
    FREE_WRAPPER(slot, symbol, f_pn_t, (void *p, const void *nt), (p, nt), p)
#define RHEAP_SHAPE_F_PSA(slot, symbol, call)                                                                \
    FREE_WRAPPER(slot, symbol, f_psa_t, (void *p, size_t s, size_t a), (p, s, a), p)
#define RHEAP_SHAPE_F_PAN(slot, symbol, call)                                                                \
    FREE_WRAPPER(slot, symbol, f_pan_t, (void *p, size_t a, const void *nt), (p, a, nt), p)
#define RHEAP_SHAPE_F_PI(slot, symbol, call) FREE_WRAPPER(slot, symbol, f_pi_t, (void *p, int f), (p, f), p)
#define RHEAP_SHAPE_F_PSI(slot, symbol, call)                                                                \
    FREE_WRAPPER(slot, symbol, f_psi_t, (void *p, size_t s, int f), (p, s, f), p)

/* tcmalloc's posix_memalign reports through its result. */
#define RHEAP_SHAPE_PM(slot, symbol, call)                                                                   \
    SHAPE_DECL(slot, symbol, int, (void **out, size_t a, size_t s)) {                              \
        pm_t fn = (pm_t)SHAPE_REAL(slot);                                                          \
        if (RHEAP_LIKELY(passing() && fn))                                                         \
            return fn(out, a, s);                                                                  \
        int e = rheap__family_enter(FRAME);                                                        \
        int r = ENOMEM;                                                                            \
        if (fn || (fn = (pm_t)SHAPE_LATE(slot)))                                                   \
            r = fn(out, a, s);                                                                     \
        rheap__family_alloc(e, RIP_CALL_##call, r == 0 ? *out : NULL, s, a, RHEAP__CALLER());      \
        return r;                                                                                  \
    }

/* xallocx resizes in place or not at all: it returns the block's size afterwards, which reaches
 * `size` when the resize happened; that is recorded as a resize of the block into itself. */
#define RHEAP_SHAPE_XA(slot, symbol, call)                                                                   \
    SHAPE_DECL(slot, symbol, size_t, (void *p, size_t s, size_t x, int f)) {                       \
        xa_t fn = (xa_t)SHAPE_REAL(slot);                                                          \
        if (RHEAP_LIKELY(passing() && fn))                                                         \
            return fn(p, s, x, f);                                                                 \
        rheap__resize_t r;                                                                         \
        int e = rheap__family_resize_begin(FRAME, p, &r);                                          \
        size_t got = 0;                                                                            \
        if (fn || (fn = (xa_t)SHAPE_LATE(slot)))                                                   \
            got = fn(p, s, x, f);                                                                  \
        rheap__family_resize_end(e, &r, RIP_CALL_##call, p, got >= s ? p : NULL, s, 0,             \
                                 RHEAP__CALLER());                                                 \
        return got;                                                                                \
    }

/* mimalloc's per-heap functions: the heap comes first, the rest as the plain function's. */
#define RHEAP_SHAPE_H_S(slot, symbol, call)                                                        \
    ALLOC_WRAPPER(slot, symbol, call, h_s_t, (void *h, size_t s), (h, s), s, 0)
#define RHEAP_SHAPE_H_NS(slot, symbol, call)                                                       \
    ALLOC_WRAPPER(slot, symbol, call, h_ns_t, (void *h, size_t n, size_t s), (h, n, s),            \
                  times(n, s), 0)
#define RHEAP_SHAPE_H_SA(slot, symbol, call)                                                       \
    ALLOC_WRAPPER(slot, symbol, call, h_ns_t, (void *h, size_t s, size_t a), (h, s, a), s, a)
#define RHEAP_SHAPE_H_NSA(slot, symbol, call)                                                      \
    ALLOC_WRAPPER(slot, symbol, call, h_nsa_t, (void *h, size_t n, size_t s, size_t a),            \
                  (h, n, s, a), times(n, s), a)
#define RHEAP_SHAPE_H_R_PS(slot, symbol, call)                                                     \
    RESIZE_WRAPPER(slot, symbol, call, h_r_ps_t, (void *h, void *o, size_t s), (h, o, s), o, s,    \
                   o && s == 0)
#define RHEAP_SHAPE_H_R_PNS(slot, symbol, call)                                                    \
    RESIZE_WRAPPER(slot, symbol, call, h_r_pns_t, (void *h, void *o, size_t n, size_t s),          \
                   (h, o, n, s), o, times(n, s), o && times(n, s) == 0)
#define RHEAP_SHAPE_H_R_PSA(slot, symbol, call)                                                    \
    RESIZE_WRAPPER(slot, symbol, call, h_r_pns_t, (void *h, void *o, size_t s, size_t a),          \
                   (h, o, s, a), o, s, o && s == 0)

/* String functions: the block holds the string and its terminator. realpath allocates only when
 * it is given no buffer. */
#define STRING_SIZE (p ? strlen((const char *)p) + 1 : 0)
#define RHEAP_SHAPE_STR(slot, symbol, call)                                                        \
    ALLOC_WRAPPER(slot, symbol, call, str_t, (const char *c), (c), STRING_SIZE, 0)
#define RHEAP_SHAPE_STRN(slot, symbol, call)                                                       \
    ALLOC_WRAPPER(slot, symbol, call, strn_t, (const char *c, size_t n), (c, n), STRING_SIZE, 0)
#define RHEAP_SHAPE_RP(slot, symbol, call)                                                         \
    ALLOC_WRAPPER_KEPT(slot, symbol, call, rp_t, (const char *f, char *r), (f, r), STRING_SIZE, 0, \
                       r ? NULL : p)
#define RHEAP_SHAPE_H_STR(slot, symbol, call)                                                      \
    ALLOC_WRAPPER(slot, symbol, call, h_str_t, (void *h, const char *c), (h, c), STRING_SIZE, 0)
#define RHEAP_SHAPE_H_STRN(slot, symbol, call)                                                     \
    ALLOC_WRAPPER(slot, symbol, call, h_strn_t, (void *h, const char *c, size_t n), (h, c, n),     \
                  STRING_SIZE, 0)
#define RHEAP_SHAPE_H_RP(slot, symbol, call)                                                       \
    ALLOC_WRAPPER_KEPT(slot, symbol, call, h_rp_t, (void *h, const char *f, char *r), (h, f, r),   \
                       STRING_SIZE, 0, r ? NULL : p)

/* Calls that make or drop a heap's own bookkeeping (mi_heap_new, mi_heap_delete, which moves
 * the heap's blocks to the default one): nothing is recorded, and what they allocate or free
 * inside (the heap's own structure, through mi_heap_malloc and mi_free) passes through. */
#define RHEAP_SHAPE_HN(slot, symbol, call)                                                         \
    SHAPE_DECL(slot, symbol, void *, (void)) {                                                     \
        hn_t fn = (hn_t)SHAPE_REAL(slot);                                                          \
        if (RHEAP_LIKELY(passing() && fn))                                                         \
            return fn();                                                                           \
        int e = rheap__family_enter(FRAME);                                                        \
        void *p = NULL;                                                                            \
        if (fn || (fn = (hn_t)SHAPE_LATE(slot)))                                                   \
            p = fn();                                                                              \
        rheap__family_leave(e);                                                                    \
        return p;                                                                                  \
    }
#define RHEAP_SHAPE_HX(slot, symbol, call)                                                         \
    SHAPE_DECL(slot, symbol, void, (void *h)) {                                                    \
        hd_t fn = (hd_t)SHAPE_REAL(slot);                                                          \
        if (RHEAP_LIKELY(passing() && fn)) {                                                       \
            fn(h);                                                                                 \
            return;                                                                                \
        }                                                                                          \
        int e = rheap__family_enter(FRAME);                                                        \
        if (fn || (fn = (hd_t)SHAPE_LATE(slot)))                                                   \
            fn(h);                                                                                 \
        rheap__family_leave(e);                                                                    \
    }

/* mimalloc's mi_heap_destroy frees every block left in a heap made by mi_heap_new at once, with no
 * free call per block: each is recorded as freed before the real call, found with the
 * allocator's mi_heap_visit_blocks (SHAPE_VISIT(), which the including file defines: NULL when
 * the allocator has none, and then nothing is recorded). */
#define RHEAP_SHAPE_HD(slot, symbol, call)                                                         \
    SHAPE_DECL(slot, symbol, void, (void *h)) {                                                    \
        hd_t fn = (hd_t)SHAPE_REAL(slot);                                                          \
        if (RHEAP_LIKELY(passing() && fn)) {                                                       \
            fn(h);                                                                                 \
            return;                                                                                \
        }                                                                                          \
        int e = rheap__family_destroy_begin(FRAME, h, SHAPE_VISIT());                              \
        if (fn || (fn = (hd_t)SHAPE_LATE(slot)))                                                   \
            fn(h);                                                                                 \
        rheap__family_leave(e);                                                                    \
    }

#endif
