/*
 * rheap_pool.h: tell librheap about the blocks of a program's own pools and arenas.
 *
 * A pool that carves blocks out of memory it got in one piece (an arena, a slab, a free list)
 * is invisible to a recorder of malloc: it sees the chunk, never the blocks. With these calls the
 * program reports them; each becomes a block of the recording like any other, under the call
 * `pool_alloc` (its free `pool_free`), with its backtrace and the pool's name.
 *
 *   rheap_pool_create(id, name)       a pool is born; `id` is any number the program picks
 *                                     (its address, usually), unique among its live pools
 *   rheap_pool_alloc(id, addr, size)  a block of `size` bytes at `addr` handed out by the pool
 *   rheap_pool_free(id, addr)         that block given back to the pool
 *   rheap_pool_destroy(id)            the pool goes, and every block of it still live with it
 *
 * Pool blocks are paired with their frees within their pool only: a block at the same address
 * as a malloc block (the chunk the pool lives in) or as another pool's is another block.
 *
 * At no cost without librheap: this header declares librheap's one entry point weak, so a
 * program built with it needs nothing at link time, and each call below is a test of that
 * address against NULL, inlined: no library, no lookup, no symbol error when librheap is not
 * there. Weak symbols were chosen over a lookup at first use (dlsym) because a lookup costs a
 * call and a lock the first time and a cached answer the program must keep somewhere; the
 * dynamic linker already gives a weak reference the address of librheap's definition when
 * librheap is preloaded (LD_PRELOAD) or linked. A recorder attached to a running process
 * (`rheap attach`) is loaded after these references were bound, so it does not see pool calls.
 * Keep the program position-independent (the default of the compilers here) so that the
 * reference goes through the dynamic linker: a program linked with -no-pie has its weak
 * reference set to NULL by the static linker, and then reports nothing even to a preloaded
 * librheap (linking it with librheap works).
 */
#ifndef RHEAP_POOL_H
#define RHEAP_POOL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { RHEAP_POOL_CREATE = 0, RHEAP_POOL_ALLOC = 1, RHEAP_POOL_FREE = 2, RHEAP_POOL_DESTROY = 3 };

/* librheap's entry point: NULL (weak, undefined) when librheap is not in the process. Call the
 * functions below rather than this. */
extern void rheap_pool_event(int op, uintptr_t pool, const void *addr, size_t size,
                             const char *name) __attribute__((weak));

/* The name is copied (up to 255 bytes); NULL is an empty name. */
static inline void rheap_pool_create(uintptr_t pool, const char *name) {
    if (rheap_pool_event)
        rheap_pool_event(RHEAP_POOL_CREATE, pool, NULL, 0, name);
}

static inline void rheap_pool_alloc(uintptr_t pool, const void *addr, size_t size) {
    if (rheap_pool_event)
        rheap_pool_event(RHEAP_POOL_ALLOC, pool, addr, size, NULL);
}

static inline void rheap_pool_free(uintptr_t pool, const void *addr) {
    if (rheap_pool_event)
        rheap_pool_event(RHEAP_POOL_FREE, pool, addr, 0, NULL);
}

static inline void rheap_pool_destroy(uintptr_t pool) {
    if (rheap_pool_event)
        rheap_pool_event(RHEAP_POOL_DESTROY, pool, NULL, 0, NULL);
}

#ifdef __cplusplus
}
#endif
#endif
