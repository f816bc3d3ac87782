/*
 * clock.c: what one read of each clock a tracer could stamp events with costs on this machine,
 * in a loop of 20 million reads: RDTSC (unordered), RDTSCP and LFENCE + RDTSC (both wait for the
 * instructions before them, which cross-thread event order needs; librheap uses RDTSCP), and
 * clock_gettime(CLOCK_MONOTONIC) through the vDSO.
 *
 * Not part of rheap: a measuring stick for bench/floor/run.sh.
 */
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <x86intrin.h>

#define N 20000000

static double seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(void) {
    volatile uint64_t sink = 0;
    unsigned aux;
    double t = seconds();
    for (int i = 0; i < N; i++)
        sink += __rdtsc();
    printf("| RDTSC | %.1f |\n", (seconds() - t) / N * 1e9);
    t = seconds();
    for (int i = 0; i < N; i++)
        sink += __rdtscp(&aux);
    printf("| RDTSCP | %.1f |\n", (seconds() - t) / N * 1e9);
    t = seconds();
    for (int i = 0; i < N; i++) {
        _mm_lfence();
        sink += __rdtsc();
    }
    printf("| LFENCE + RDTSC | %.1f |\n", (seconds() - t) / N * 1e9);
    t = seconds();
    for (int i = 0; i < N; i++) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        sink += (uint64_t)ts.tv_nsec;
    }
    printf("| clock_gettime(CLOCK_MONOTONIC) | %.1f |\n", (seconds() - t) / N * 1e9);
    return 0;
}
