/*
 * maps.c: a program that maps memory itself: `maps [N] [PAGES]` maps PAGES anonymous pages N
 * times, touches the first, and unmaps them; every 8th mapping is grown with mremap first. What
 * each mmap, munmap and mremap costs under the recorder's wrappers (bench/maps-rss.sh).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 100000, pages = argc > 2 ? atol(argv[2]) : 16;
    size_t len = (size_t)pages * (size_t)sysconf(_SC_PAGESIZE);
    unsigned long sum = 0;
    for (long i = 0; i < n; i++) {
        char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            return 1;
        p[0] = (char)i;
        sum += (unsigned char)p[0];
        if (i % 8 == 0) {
            char *q = mremap(p, len, 2 * len, MREMAP_MAYMOVE);
            if (q == MAP_FAILED)
                return 1;
            p = q;
        }
        if (munmap(p, i % 8 == 0 ? 2 * len : len) != 0)
            return 1;
    }
    printf("%lu\n", sum);
    return 0;
}
