/*
 * grow.c: a program whose leak grows with its argument, for comparing two runs (rheap diff).
 *
 *   grow N   cache_entry: N x malloc(48), never freed          (grows with N)
 *            fixed:       2 x malloc(1000) in new_block, inlined into fixed, never freed
 *                         (the same in every run)
 *            scratch:     malloc(N * 100) after those, freed   (the peak: all of the above live)
 *
 * Nothing is printed, so stdio allocates nothing.
 */
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

static void *volatile keep[1024];
static int nkeep;

NOINLINE static void cache_entry(void)
{
    keep[nkeep++] = malloc(48); /* @cache_entry */
}

/* Always inlined, even at -O0: the stack has it as a frame of its own, inside fixed(). */
static inline __attribute__((always_inline)) void *new_block(size_t n)
{
    return malloc(n); /* @new_block */
}

NOINLINE static void fixed(void)
{
    keep[nkeep++] = new_block(1000); /* @fixed */
}

NOINLINE static void scratch(int n)
{
    char *p = malloc((size_t)n * 100); /* @scratch */
    p[0] = 1;
    free(p);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 10;
    if (n < 1 || n > 1000)
        return 2;
    for (int i = 0; i < n; i++)
        cache_entry();
    fixed();
    fixed();
    scratch(n);
    return 0;
}
