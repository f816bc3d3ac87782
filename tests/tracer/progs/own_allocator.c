/*
 * own_allocator: a program with an allocator of its own, named as a prefixed jemalloc names its
 * entry points (_rjem_mallocx, as Rust's tikv-jemallocator builds it) but which librheap cannot
 * hook (its free is too short): librheap does not see its calls, and must say so rather than
 * record a near-empty heap. It makes 100 blocks with it and one with malloc, which is recorded.
 */
#include "progs.h"

PROGS_SINK_DEFINITION;

static _Alignas(16) unsigned char arena[1 << 16];
static size_t used;

__attribute__((noinline, used)) void *_rjem_mallocx(size_t size, int flags)
{
    (void)flags;
    size = (size + 15) & ~(size_t)15;
    if (size > sizeof arena - used)
        return NULL;
    void *p = arena + used;
    used += size;
    return p;
}

/* Its free does nothing, in one instruction: shorter than the jump librheap writes at an entry
 * point it hooks, so this allocator cannot be hooked (all its entries or none), and librheap
 * must say why and warn. Written in assembly so that no compiler option makes it longer. */
__asm__(".text\n"
        ".globl _rjem_sdallocx\n"
        ".type _rjem_sdallocx, @function\n"
        "_rjem_sdallocx:\n"
        "\tret\n"
        ".size _rjem_sdallocx, . - _rjem_sdallocx\n");

int main(void)
{
    for (int i = 0; i < 100; i++)
        SINK(_rjem_mallocx(32, 0));
    void *p = malloc(48);
    SINK(p);
    free(p);
    return 0;
}
