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
 * free of nothing; one line says so. C++'s operators are the exception: a C++ library loaded
 * with RTLD_LOCAL is out of dlsym(RTLD_NEXT)'s sight, so they fall back to malloc and free.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "entries.h"
#include "internal.h"

static _Atomic(void *) reals[RHEAP_E_COUNT];

static const char *const names[RHEAP_E_COUNT] = {
#define NAME(slot, symbol, shape, call) [RHEAP_E_##slot] = symbol,
    RHEAP_FAMILY_ENTRIES(NAME)
#undef NAME
};

/* mimalloc's block visitor, for mi_heap_destroy's wrapper: not an entry point, only read. */
static _Atomic(rheap__visit_t) visit_blocks;

int rheap__families_resolve(void) {
    for (int i = 0; i < RHEAP_E_COUNT; i++)
        atomic_store_explicit(&reals[i], dlsym(RTLD_NEXT, names[i]), memory_order_relaxed);
    atomic_store_explicit(&visit_blocks, (rheap__visit_t)dlsym(RTLD_NEXT, "mi_heap_visit_blocks"),
                          memory_order_relaxed);
#define MARK(slot) || atomic_load_explicit(&reals[RHEAP_E_##slot], memory_order_relaxed)
    return 0 RHEAP_REPLACING_MARKS(MARK);
#undef MARK
}

void *rheap__families_real(const char *symbol) {
    for (int i = 0; i < RHEAP_E_COUNT; i++)
        if (strcmp(names[i], symbol) == 0)
            return atomic_load_explicit(&reals[i], memory_order_acquire);
    return NULL;
}

/* C++'s operators where librheap cannot see their library: a C++ library that a program loaded
 * with dlopen's default RTLD_LOCAL (binutils' ar and ld load the LLVM gold plugin so, which
 * brings libstdc++ along) resolves its own operator new to librheap's, which comes first in the
 * global scope, while dlsym(RTLD_NEXT) searches the global scope alone and finds nothing. Those
 * calls are served as libstdc++ serves them, by malloc and free (the exported ones: librheap's
 * wrappers, through which the inner call passes as it would from libstdc++), instead of failing
 * the call and crashing the program. */
static void *new_plain(size_t s) { return malloc(s ? s : 1); }
static void *new_nothrow(size_t s, const void *nt) { (void)nt; return malloc(s ? s : 1); }
static void *new_aligned(size_t s, size_t a) {
    void *p = NULL;
    return posix_memalign(&p, a < sizeof(void *) ? sizeof(void *) : a, s ? s : 1) == 0 ? p : NULL;
}
static void *new_aligned_nothrow(size_t s, size_t a, const void *nt) {
    (void)nt;
    return new_aligned(s, a);
}
static void delete_plain(void *p) { free(p); }
static void delete_sized(void *p, size_t s) { (void)s; free(p); }
static void delete_nothrow(void *p, const void *nt) { (void)nt; free(p); }
static void delete_sized_aligned(void *p, size_t s, size_t a) { (void)s; (void)a; free(p); }
static void delete_aligned_nothrow(void *p, size_t a, const void *nt) { (void)a; (void)nt; free(p); }

static void *fallback(int slot) {
    switch (slot) {
    case RHEAP_E_NEW: case RHEAP_E_NEWA: return (void *)new_plain;
    case RHEAP_E_NEW_NT: case RHEAP_E_NEWA_NT: return (void *)new_nothrow;
    case RHEAP_E_NEW_AL: case RHEAP_E_NEWA_AL: return (void *)new_aligned;
    case RHEAP_E_NEW_AL_NT: case RHEAP_E_NEWA_AL_NT: return (void *)new_aligned_nothrow;
    case RHEAP_E_DL: case RHEAP_E_DA: return (void *)delete_plain;
    case RHEAP_E_DL_SZ: case RHEAP_E_DA_SZ: case RHEAP_E_DL_AL: case RHEAP_E_DA_AL:
        return (void *)delete_sized;
    case RHEAP_E_DL_NT: case RHEAP_E_DA_NT: return (void *)delete_nothrow;
    case RHEAP_E_DL_SZ_AL: case RHEAP_E_DA_SZ_AL: return (void *)delete_sized_aligned;
    case RHEAP_E_DL_AL_NT: case RHEAP_E_DA_AL_NT: return (void *)delete_aligned_nothrow;
    default: return NULL;
    }
}

/* A symbol not found at start-up: looked up again (a library loaded since), once per call until
 * found; C++'s operators, when still not found, are served by malloc and free from then on
 * (above). dlsym may allocate: as tracer code (guard without frame) unless the wrapper holds the
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
    if (!f)
        f = fallback(slot);
    if (f)
        atomic_store_explicit(&reals[slot], f, memory_order_release);
    else if (!atomic_exchange(&said, 1))
        rheap__log("the program called ", names[slot], ", which no loaded library defines: "
                   "the call fails", NULL);
    errno = saved;
    return f;
}

#define SHAPE_DECL(slot, symbol, ret, params)                                                      \
    RHEAP_EXPORT ret w_##slot params __asm__(symbol);                                              \
    RHEAP_EXPORT ret w_##slot params
#define SHAPE_REAL(slot) atomic_load_explicit(&reals[RHEAP_E_##slot], memory_order_relaxed)
#define SHAPE_LATE(slot) late(RHEAP_E_##slot)
#define SHAPE_VISIT() atomic_load_explicit(&visit_blocks, memory_order_relaxed)
#include "shapes.h"

#define GENERATE(slot, symbol, shape, call) RHEAP_SHAPE_##shape(slot, symbol, call)
RHEAP_FAMILY_ENTRIES(GENERATE)
#undef GENERATE
