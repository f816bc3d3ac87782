/*
 * stress_dso: the library dlchurn loads and unloads hundreds of times. Its constructor
 * allocates a block of 6543 bytes and its destructor frees it (under the loader lock, during
 * dlclose); stress_dso_work allocates blocks of 7001, 7002 and 7003 bytes and frees them.
 */
#include <stdlib.h>
#include <string.h>

static void *kept;

__attribute__((constructor)) static void stress_dso_init(void)
{
    kept = malloc(6543);
}

__attribute__((destructor)) static void stress_dso_fini(void)
{
    free(kept);
}

/* Returns the number of blocks it allocated, or -1. */
__attribute__((visibility("default"), noinline)) int stress_dso_work(void)
{
    void *b[3];
    for (int i = 0; i < 3; i++) {
        b[i] = malloc(7001 + (size_t)i);
        if (!b[i])
            return -1;
        memset(b[i], i, 32);
    }
    for (int i = 0; i < 3; i++)
        free(b[i]);
    return 3;
}
