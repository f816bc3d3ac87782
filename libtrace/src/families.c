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
