/*
 * dso: a small shared library for the dlopen test. Its constructor allocates and its
 * destructor frees, so dlclose frees memory while the loader holds its lock; dso_work makes a
 * known set of allocations whose innermost frame is in this library.
 */
#include <stdlib.h>
#include <string.h>

static void *kept;

__attribute__((constructor)) static void dso_init(void)
{
    kept = malloc(4321);
}

__attribute__((destructor)) static void dso_fini(void)
{
    free(kept);
}

/* Allocates `count` blocks of 2000 + i bytes (i from 0), then frees them in reverse order.
 * Visible: the test program finds it with dlsym. */
__attribute__((visibility("default"))) int dso_work(int count)
{
    void **blocks = calloc((size_t)count, sizeof *blocks);
    if (!blocks)
        return -1;
    for (int i = 0; i < count; i++) {
        blocks[i] = malloc(2000 + (size_t)i);
        memset(blocks[i], 0, 16);
    }
    for (int i = count - 1; i >= 0; i--)
        free(blocks[i]);
    free(blocks);
    return count;
}
