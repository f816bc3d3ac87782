/*
 * bigheap.c: a program with a big heap of small objects, as a cache or an index holds them.
 * Usage: bigheap N   allocates N blocks of 16 to 127 bytes and keeps every one to the end; each
 * fourth allocation is followed by a short-lived block of 32 bytes, so frees are paired too.
 * bench/bigheap.sh records it and measures what converting it costs.
 */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    void **keep = malloc((size_t)n * sizeof *keep);
    if (!keep)
        return 1;
    for (long i = 0; i < n; i++) {
        keep[i] = malloc(16 + (size_t)(i * 7) % 112);
        if (i % 4 == 0) {
            void *volatile tmp = malloc(32);
            free(tmp);
        }
    }
    printf("bigheap: %ld blocks kept, last at %p\n", n, keep[n - 1]);
    return 0;
}
