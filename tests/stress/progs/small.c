/*
 * small: one thread, no other threads, only small allocations: 20000 rounds of malloc, write,
 * free, with a few blocks kept. Prints a checksum of the data it wrote and its counts, the
 * same every run, so a test can compare the output with and without the recorder under limits
 * (address space, descriptors) the recorder may not survive.
 *
 * Usage: small [ROUNDS]
 */
#include "progs.h"

PROGS_SINK_DEFINITION;

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 20000;
    unsigned long sum = 0, allocs = 0, frees = 0;
    void *kept[16] = {0};
    for (int i = 0; i < rounds; i++) {
        size_t size = 8 + (size_t)(i % 120);
        unsigned char *p = malloc(size);
        if (!p) {
            say("malloc failed at round %d\n", i);
            return 1;
        }
        allocs++;
        memset(p, i & 0xff, size);
        sum += p[size - 1] + size;
        if (i % 1000 == 0) {
            free(kept[i / 1000 % 16]);
            frees += kept[i / 1000 % 16] != NULL;
            kept[i / 1000 % 16] = p;
        } else {
            free(p);
            frees++;
        }
    }
    for (int i = 0; i < 16; i++) {
        frees += kept[i] != NULL;
        free(kept[i]);
    }
    say("small rounds=%d allocs=%lu frees=%lu sum=%lu\n", rounds, allocs, frees, sum);
    return 0;
}
