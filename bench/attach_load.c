/*
 * attach_load.c: a service for bench/attach.py: threads churn the heap (a window of 1024 live
 * blocks per thread, one replaced per step, random sizes, a call stack 8 frames deep) and count
 * their steps in a shared file, so the bench reads the throughput from outside at any moment,
 * before, during and after an attach.
 *
 *   attach_load FILE THREADS SECONDS    SECONDS 0: until FILE's stop word is set
 *   attach_load stop FILE
 * Prints "steps_per_second N" at the end (steps over its own run time).
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define WINDOW 1024
#define MAX_THREADS 64

typedef struct {
    volatile uint64_t steps[MAX_THREADS];
    volatile uint64_t stop;
} shared_t;

static shared_t *sh;
static double seconds;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t next_rand(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static __attribute__((noinline)) void step(void **win, uint64_t *rng) {
    uint64_t r = next_rand(rng);
    size_t i = r % WINDOW, size = 16 + (r >> 16) % 512;
    free(win[i]);
    win[i] = malloc(size);
}

static __attribute__((noinline)) void deeper(void **win, uint64_t *rng, int depth) {
    if (depth > 0)
        deeper(win, rng, depth - 1);
    else
        step(win, rng);
    __asm__ volatile("" ::: "memory"); /* not a tail call: the frames stay */
}

static void *worker(void *arg) {
    int t = (int)(intptr_t)arg;
    void **win = calloc(WINDOW, sizeof *win);
    uint64_t rng = 0x9e3779b97f4a7c15ull * (uint64_t)(t + 1);
    double end = seconds > 0 ? now() + seconds : 0;
    for (uint64_t n = 0; !sh->stop; n++) {
        deeper(win, &rng, 8);
        sh->steps[t]++;
        if (end && (n & 1023) == 0 && now() >= end)
            break;
    }
    for (size_t i = 0; i < WINDOW; i++)
        free(win[i]);
    free(win);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc == 3 && !strcmp(argv[1], "stop")) {
        int fd = open(argv[2], O_RDWR);
        shared_t *s =
            fd < 0 ? MAP_FAILED : mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (s == MAP_FAILED)
            return 2;
        s->stop = 1;
        return 0;
    }
    if (argc != 4) {
        fprintf(stderr, "usage: attach_load FILE THREADS SECONDS | attach_load stop FILE\n");
        return 2;
    }
    int threads = atoi(argv[2]);
    seconds = atof(argv[3]);
    if (threads < 1 || threads > MAX_THREADS)
        return 2;
    int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || ftruncate(fd, sizeof(shared_t)) != 0)
        return 2;
    sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (sh == MAP_FAILED)
        return 2;
    pthread_t th[MAX_THREADS];
    double t0 = now();
    for (int i = 1; i < threads; i++)
        pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i);
    worker((void *)0);
    for (int i = 1; i < threads; i++)
        pthread_join(th[i], NULL);
    uint64_t total = 0;
    for (int i = 0; i < threads; i++)
        total += sh->steps[i];
    printf("steps_per_second %.0f\n", (double)total / (now() - t0));
    return 0;
}
