/*
 * maps.c: mmap, munmap and mremap, for the anonymous memory a program maps itself.
 *
 * A program's memory is not all heap: a buffer pool, a JIT, a memory-mapped arena or a big
 * array may come straight from mmap and never pass through malloc. These wrappers record such
 * mappings as `map` records (rip-format/FORMAT.md, **Mappings**), which the converter turns
 * into blocks under the call `mmap`, paired with the unmaps that give them back.
 *
 * What is the program's, and what is left out:
 *   - anonymous mappings only (MAP_ANONYMOUS, private or shared): a mapped file is not memory
 *     the program allocated. Every munmap and mremap is recorded, since only the converter,
 *     which keeps the mappings, knows whether a range was one of them;
 *   - not the allocator's own mappings, which are its heap, already counted block by block:
 *     glibc's malloc maps through internal calls that never reach a wrapper; jemalloc, tcmalloc
 *     and mimalloc call mmap through their PLT, from inside our allocation wrappers, where the
 *     guard is set (rheap__map_enter), or from code of their own outside any call (a
 *     constructor, a background thread): the caller's module is then the allocator's, found
 *     with _dl_find_object (lock-free), and the call is left out too;
 *   - not librheap's own mappings (its files' staging areas, its tables), for the same reasons;
 *   - not a signal handler's call made while the thread was inside a wrapper (the guard is set).
 * What is left: mappings by any other module, including a library that manages memory of its
 * own (a JIT's code buffers, a GC's arenas), which is what a user asks about; and the mappings of
 * an allocator that librheap does not know as the process's malloc (a second allocator in a
 * library, a statically linked one outside its hooked calls).
 *
 * The real functions are the next definitions (dlsym RTLD_NEXT, looked up with malloc's in
 * rheap__resolve): glibc's, or those of a library preloaded after librheap that wraps them (a
 * sanitizer's runtime keeps its shadow memory right through its own). A call made before they
 * are resolved (a library's constructor, dlsym itself) goes to the kernel directly: syscall(2)
 * sets errno and returns -1 as glibc's functions do. Such a call is never recorded, and never
 * resolves anything: mmap must work while malloc is not ready yet.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

static void *real_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off) {
    if (RHEAP_LIKELY(rheap__resolved() && rheap__real.mmap))
        return rheap__real.mmap(addr, len, prot, flags, fd, off);
    return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

static int real_munmap(void *addr, size_t len) {
    if (RHEAP_LIKELY(rheap__resolved() && rheap__real.munmap))
        return rheap__real.munmap(addr, len);
    return (int)syscall(SYS_munmap, addr, len);
}

/* glibc passes mremap's fifth argument only with MREMAP_FIXED; so does this. */
static void *real_mremap(void *old, size_t old_len, size_t len, int flags, void *addr) {
    if (RHEAP_LIKELY(rheap__resolved() && rheap__real.mremap))
        return flags & MREMAP_FIXED ? rheap__real.mremap(old, old_len, len, flags, addr)
                                    : rheap__real.mremap(old, old_len, len, flags);
    return (void *)syscall(SYS_mremap, old, old_len, len, flags, addr);
}

/* The modules whose calls are not the program's: the allocator's (where the real malloc lives)
 * and librheap's own. Found at the first recorded call; 0 until then. */
static _Atomic(void *) alloc_map, self_map;

static void *module_of(const void *p) {
    struct dl_find_object o;
    return _dl_find_object((void *)p, &o) == 0 ? o.dlfo_link_map : NULL;
}

/* Whether the call that returns to `ret` comes from the allocator or from librheap. */
static int not_the_programs(const void *ret) {
    void *a = atomic_load_explicit(&alloc_map, memory_order_relaxed);
    if (RHEAP_UNLIKELY(!a)) {
        a = module_of((const void *)rheap__real.malloc);
        atomic_store_explicit(&self_map, module_of((const void *)&module_of),
                              memory_order_relaxed);
        atomic_store_explicit(&alloc_map, a, memory_order_relaxed);
    }
    void *m = module_of(ret);
    return m && (m == a || m == atomic_load_explicit(&self_map, memory_order_relaxed));
}

static uint64_t pages(uint64_t len) {
    static _Atomic uint64_t page;
    uint64_t p = atomic_load_explicit(&page, memory_order_relaxed);
    if (RHEAP_UNLIKELY(!p)) {
        p = getauxval(AT_PAGESZ);
        if (!p)
            p = 4096;
        atomic_store_explicit(&page, p, memory_order_relaxed);
    }
    return (len + p - 1) & ~(p - 1);
}

/* Whether this call is recorded: then the guard is held (end with rheap__map_leave). The
 * setting is read first, without the guard: while no recording is on it may be a past
 * recording's, and rheap__map_enter passes anyway. */
static inline int recorded(uintptr_t frame, const void *ret) {
    if (!rheap__rec.cfg.maps || !rheap__map_enter(frame))
        return 0;
    if (rheap__rec.cfg.maps && !not_the_programs(ret))
        return 1;
    rheap__map_leave();
    return 0;
}

/* An anonymous mapping of the program's, between recorded()'s enter and the leave here; caller
 * is the exported wrapper's frame (taken there: the frame must be the wrapper's). */
static void *map_recorded(void *addr, size_t len, int prot, int flags, int fd, off_t off,
                          const rheap__frame_t *caller) {
    void *p = real_mmap(addr, len, prot, flags, fd, off);
    if (p != MAP_FAILED) {
        int saved = errno;
        rheap__record_map(RIP_MAP_MAP, (uintptr_t)p, pages(len), 0, 0, rheap__now_abs(), caller);
        errno = saved;
    }
    rheap__map_leave();
    return p;
}

RHEAP_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off) {
    if (RHEAP_LIKELY(!(flags & MAP_ANONYMOUS)) ||
        !recorded((uintptr_t)__builtin_frame_address(0), __builtin_return_address(0)))
        return real_mmap(addr, len, prot, flags, fd, off);
    return map_recorded(addr, len, prot, flags, fd, off, RHEAP__CALLER());
}

/* glibc's other name for it (the same function on 64-bit systems). */
RHEAP_EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off) {
    if (RHEAP_LIKELY(!(flags & MAP_ANONYMOUS)) ||
        !recorded((uintptr_t)__builtin_frame_address(0), __builtin_return_address(0)))
        return real_mmap(addr, len, prot, flags, fd, off);
    return map_recorded(addr, len, prot, flags, fd, off, RHEAP__CALLER());
}

/* Stamped before the real call, as a free is: once the range is given back, another thread's
 * mapping may get it, and must sort after this unmap. Recorded even if the call fails (a range
 * the kernel refuses is one the converter does not hold either). */
RHEAP_EXPORT int munmap(void *addr, size_t len) {
    if (!recorded((uintptr_t)__builtin_frame_address(0), __builtin_return_address(0)))
        return real_munmap(addr, len);
    int saved = errno;
    rheap__record_map(RIP_MAP_UNMAP, (uintptr_t)addr, pages(len), 0, 0, rheap__now_abs(), NULL);
    errno = saved;
    int r = real_munmap(addr, len);
    rheap__map_leave();
    return r;
}

/* A remap is a realloc of pages: the range old, old_len is released and addr, len exists from
 * the call's return, stamped then (the release's time is the same: the kernel does both in one
 * call, and no other thread can be given the old range before the call returns). */
RHEAP_EXPORT void *mremap(void *old, size_t old_len, size_t len, int flags, ...) {
    void *want = NULL;
    if (flags & MREMAP_FIXED) {
        va_list ap;
        va_start(ap, flags);
        want = va_arg(ap, void *);
        va_end(ap);
    }
    if (!recorded((uintptr_t)__builtin_frame_address(0), __builtin_return_address(0)))
        return real_mremap(old, old_len, len, flags, want);
    void *p = real_mremap(old, old_len, len, flags, want);
    if (p != MAP_FAILED) {
        int saved = errno;
        rheap__record_map(RIP_MAP_REMAP, (uintptr_t)p, pages(len), (uintptr_t)old,
                          pages(old_len), rheap__now_abs(), RHEAP__CALLER());
        errno = saved;
    }
    rheap__map_leave();
    return p;
}
