/*
 * bump: a tiny allocator that a signal handler may interrupt anywhere, even to jump out of it:
 * every allocation is one compare-and-swap on a bump pointer, and a free of the latest block
 * moves the pointer back (another compare-and-swap); other frees keep their memory. Preloaded
 * after librheap (LD_PRELOAD="librheap.so libstress_bump.so"), it is the "real" allocator the
 * recorder calls, so the handler tests exercise the recorder's reentrancy rather than glibc's
 * malloc, which is not async-signal-safe. Each block is preceded by 16 bytes holding its size.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#define ARENA (1ull << 32)

static char *base;
static _Atomic uintptr_t top;

static int setup(void)
{
    static atomic_int state; /* 0 none, 1 mapping, 2 ready */
    int expect = 0;
    if (atomic_load(&state) == 2)
        return 0;
    if (atomic_compare_exchange_strong(&state, &expect, 1)) {
        void *m = mmap(NULL, ARENA, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                       -1, 0);
        if (m == MAP_FAILED)
            return -1;
        base = m;
        atomic_store(&top, (uintptr_t)m);
        atomic_store(&state, 2);
        return 0;
    }
    while (atomic_load(&state) != 2)
        ;
    return 0;
}

static void *take(size_t size, size_t align)
{
    if (setup() != 0 || size > ARENA / 2)
        return NULL;
    if (align < 16)
        align = 16;
    size = (size + 15) & ~(size_t)15;
    uintptr_t old = atomic_load(&top), start, end;
    do {
        start = (old + 16 + align - 1) & ~(uintptr_t)(align - 1);
        end = start + size;
        if (end > (uintptr_t)base + ARENA)
            return NULL;
    } while (!atomic_compare_exchange_weak(&top, &old, end));
    memcpy((char *)start - 16, &size, sizeof size);
    return (void *)start;
}

static size_t size_of(const void *p)
{
    size_t size;
    memcpy(&size, (const char *)p - 16, sizeof size);
    return size;
}

void *malloc(size_t size) { return take(size, 16); }

void free(void *p)
{
    if (!p)
        return;
    uintptr_t end = (uintptr_t)p + size_of(p);
    atomic_compare_exchange_strong(&top, &end, (uintptr_t)p - 16);
}

void *calloc(size_t n, size_t size)
{
    size_t total;
    if (__builtin_mul_overflow(n, size, &total))
        return NULL;
    void *p = take(total, 16);
    if (p)
        memset(p, 0, total); /* the memory of a block freed last may be handed out again */
    return p;
}

void *realloc(void *old, size_t size)
{
    if (!old)
        return malloc(size);
    if (size == 0) {
        free(old);
        return NULL;
    }
    void *p = malloc(size);
    if (p) {
        size_t n = size_of(old);
        memcpy(p, old, n < size ? n : size);
        free(old);
    }
    return p;
}

int posix_memalign(void **out, size_t align, size_t size)
{
    void *p = take(size, align);
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}

void *aligned_alloc(size_t align, size_t size) { return take(size, align); }
void *memalign(size_t align, size_t size) { return take(size, align); }
void *valloc(size_t size) { return take(size, 4096); }
void *pvalloc(size_t size) { return take((size + 4095) & ~(size_t)4095, 4096); }
size_t malloc_usable_size(void *p) { return p ? size_of(p) : 0; }
