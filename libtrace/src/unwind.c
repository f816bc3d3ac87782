/*
 * unwind.c: backtraces with libunwind's unw_backtrace, the fast path that walks the stack from
 * cached unwind tables (about 8 ns per frame once warm, against about 300 ns per frame for an
 * unw_step loop). Frame pointers are no option: Debian's libraries are built without them.
 */
#define _GNU_SOURCE
#include <link.h>
#include <stdatomic.h>
#include <stdint.h>

#include <libunwind.h>

#include "internal.h"

/* librheap's own code: leading frames in this range are the tracer's and are dropped. */
static uintptr_t self_lo, self_hi;

static int find_self(struct dl_phdr_info *info, size_t size, void *arg) {
    (void)size;
    uintptr_t probe = (uintptr_t)arg;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    int mine = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        uintptr_t start = info->dlpi_addr + ph->p_vaddr, end = start + ph->p_memsz;
        if (start < lo)
            lo = start;
        if (end > hi)
            hi = end;
        if (probe >= start && probe < end)
            mine = 1;
    }
    if (!mine)
        return 0;
    self_lo = lo;
    self_hi = hi;
    return 1;
}

void rheap__unwind_init(void) {
    static _Atomic int done;
    if (atomic_load(&done))
        return;
    dl_iterate_phdr(find_self, (void *)(uintptr_t)&rheap__unwind_init);
    atomic_store(&done, 1);
}

unsigned rheap__unwind(uint64_t *ips, unsigned max) {
    /* A few extra slots for the tracer's own frames (wrapper, recorder, this function). */
    enum { OWN = 8 };
    void *buf[max + OWN];
    int n = unw_backtrace(buf, (int)(max + OWN));
    if (n <= 0)
        return 0;
    int skip = 0;
    while (skip < n && (uintptr_t)buf[skip] >= self_lo && (uintptr_t)buf[skip] < self_hi)
        skip++;
    unsigned out = 0;
    for (int i = skip; i < n && out < max; i++)
        ips[out++] = (uint64_t)(uintptr_t)buf[i];
    return out;
}
