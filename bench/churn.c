/*
 * churn.c: allocation churn, the worst case for a heap tracer. Each thread keeps a window of
 * live blocks and replaces a random one per step (random sizes, 1 in 8 by calloc, 1 in 8 grown
 * by realloc), from a call stack `depth` frames deep.
 *
 *   churn [ops per thread] [threads] [depth]     defaults: 2000000 1 8
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW 1024

static long ops = 2000000;
static int depth = 8;

static uint64_t next_rand(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static __attribute__((noinline)) void *churn_step(void **win, uint64_t *rng) {
    uint64_t r = next_rand(rng);
    size_t i = r % WINDOW, size = 16 + (r >> 16) % 512;
    switch ((r >> 32) & 7) {
    case 0:
        free(win[i]);
        win[i] = calloc(1, size);
        break;
    case 1:
        win[i] = realloc(win[i], size * 2);
        break;
    default:
        free(win[i]);
        win[i] = malloc(size);
    }
    return win[i];
}

/* Recurse to the requested depth, then churn; the volatile keeps the frames real. */
static __attribute__((noinline)) long deep(int level, void **win, uint64_t *rng, long n) {
    if (level > 0) {
        volatile long r = deep(level - 1, win, rng, n);
        return r;
    }
    long sum = 0;
    for (long k = 0; k < n; k++)
        sum += (long)(uintptr_t)churn_step(win, rng) & 1;
    return sum;
}

static void *worker(void *arg) {
    uint64_t rng = 0x9E3779B97F4A7C15ull + (uintptr_t)arg;
    void **win = calloc(WINDOW, sizeof *win);
    long chunk = 1000;
    for (long done = 0; done < ops; done += chunk)
        deep(depth, win, &rng, chunk);
    for (int i = 0; i < WINDOW; i++)
        free(win[i]);
    free(win);
    return NULL;
}

int main(int argc, char **argv) {
    int threads = 1;
    if (argc > 1)
        ops = atol(argv[1]);
    if (argc > 2)
        threads = atoi(argv[2]);
    if (argc > 3)
        depth = atoi(argv[3]);
    pthread_t t[64];
    for (int i = 0; i < threads && i < 64; i++)
        pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)i);
    for (int i = 0; i < threads && i < 64; i++)
        pthread_join(t[i], NULL);
    printf("churn: %ld ops x %d threads, depth %d\n", ops, threads, depth);
    return 0;
}
