/*
 * clock_order: the tracer's clock (libtrace/src/clock.c, compiled in) must order events across
 * threads. Two threads on different CPUs each publish, over and over, a time read just before
 * the store, and each checks that a time it reads right after loading the other's value is not
 * earlier than that value. A free stamped in one thread and the allocation that reuses its block
 * in another are the same pattern: if the second time could be earlier, the converter would see
 * the block allocated while still live.
 *
 * It must also agree with CLOCK_MONOTONIC once it has switched to the TSC: a ratio measured
 * badly (a clock_gettime slowed by a page fault at the start of the interval) made it run
 * hundreds of ppm slow, and threads still stamping with clock_gettime at the switch then sorted
 * after later events stamped from the TSC.
 *
 * Prints "clock SOURCE" (the kernel's clocksource, whose TSC the tracer reads when it is "tsc"),
 * "offset at 50 ms A ns, at 300 ms B ns" (tracer clock minus CLOCK_MONOTONIC), then
 * "reads N backwards B worst W ns". Exits 77 without CPUs 0 and 1.
 *
 * Usage: clock_order [READS_PER_THREAD]   (default 5000000)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"

/* Each thread's latest published time, on its own cache line. */
static struct {
    _Alignas(64) _Atomic uint64_t t;
} box[2];
static long reads = 5000000;
static long backwards[2];
static uint64_t worst[2];

static uint64_t mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The tracer's clock minus CLOCK_MONOTONIC: read between two clock_gettime calls, the closest
 * of 20 tries, against their midpoint. */
static long offset(void)
{
    uint64_t best = UINT64_MAX;
    long off = 0;
    for (int i = 0; i < 20; i++) {
        uint64_t a = mono(), r = rheap__now_abs(), b = mono();
        if (b - a < best) {
            best = b - a;
            off = (long)(r - (a + (b - a) / 2));
        }
    }
    return off;
}

static void *player(void *arg)
{
    int me = (int)(intptr_t)arg;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(me, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
    for (long i = 0; i < reads; i++) {
        uint64_t seen = atomic_load(&box[!me].t);
        uint64_t now = rheap__now_abs();
        if (now < seen) {
            backwards[me]++;
            if (seen - now > worst[me])
                worst[me] = seen - now;
        }
        atomic_store(&box[me].t, rheap__now_abs());
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        reads = atol(argv[1]);
    cpu_set_t cpus;
    if (sched_getaffinity(0, sizeof cpus, &cpus) != 0 || !CPU_ISSET(0, &cpus) ||
        !CPU_ISSET(1, &cpus)) {
        printf("needs CPUs 0 and 1\n");
        return 77;
    }
    /* Past the calibration (20 ms), so the fast path is what runs below. The tracer's clock is
     * read first, as in a traced process: its first clock_gettime is the process's first. */
    rheap__now_abs();
    uint64_t t0 = mono();
    while (mono() - t0 < 50000000u)
        rheap__now_abs();
    long off50 = offset();
    while (mono() - t0 < 300000000u)
        ;
    long off300 = offset();
    char source[64] = "unknown";
    FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
    if (f) {
        if (fgets(source, sizeof source, f))
            source[strcspn(source, "\n")] = 0;
        fclose(f);
    }
    printf("clock %s\n", source);
    printf("offset at 50 ms %ld ns, at 300 ms %ld ns\n", off50, off300);
    pthread_t th[2];
    for (intptr_t i = 0; i < 2; i++)
        pthread_create(&th[i], NULL, player, (void *)i);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    printf("reads %ld backwards %ld worst %llu ns\n", 2 * reads, backwards[0] + backwards[1],
           (unsigned long long)(worst[0] > worst[1] ? worst[0] : worst[1]));
    return 0;
}
