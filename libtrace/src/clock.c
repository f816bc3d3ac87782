/*
 * clock.c: timestamps. CLOCK_MONOTONIC through the vDSO costs 25-30 ns here; it is shared by
 * every thread and process, so events of different threads and of a process tree order
 * correctly against each other.
 */
#include <time.h>

#include "internal.h"

uint64_t rheap__now_abs(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
