/*
 * holder.c: a service whose heap is known exactly, for the collector's tests.
 *
 *   holder COUNT SIZE STOPFILE [exec PROGRAM ARGS...]
 *
 * Allocates COUNT blocks of SIZE bytes at one line (hold_blocks), writes "ready PID" on
 * standard output, then allocates and frees one small block every 10 ms (so the recording keeps
 * growing, as a service's does) until STOPFILE exists. Then it exits without freeing the blocks,
 * or with `exec`, becomes PROGRAM (the same process, a new image). With HOLDER_STEP_MS=N in the
 * environment, it waits N ms after each block, so its heap grows for a while (the dump trigger's
 * test); with HOLDER_CHURN=N it allocates and frees N small blocks every 10 ms instead of one (a
 * long run's allocations in a short one); with HOLDER_THREADS=1 it also starts a thread every
 * 10 ms that churns 1000 times and ends (a service whose threads come and go).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char **blocks;

static void __attribute__((noinline)) hold_blocks(long count, long size, long step_ms)
{
    /* The table: one more block, count*8 bytes; by calloc, a call a checkpoint must keep. */
    blocks = calloc((size_t)count, sizeof *blocks);
    struct timespec step = {step_ms / 1000, (step_ms % 1000) * 1000 * 1000};
    for (long i = 0; i < count; i++) {
        blocks[i] = malloc((size_t)size);
        memset(blocks[i], (int)i, (size_t)size);
        if (step_ms)
            nanosleep(&step, NULL);
    }
}

static void __attribute__((noinline)) churn(void)
{
    char *volatile p = malloc(24);
    free(p);
}

static void *short_thread(void *arg)
{
    (void)arg;
    for (int i = 0; i < 1000; i++)
        churn();
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: holder COUNT SIZE STOPFILE [exec PROGRAM ARGS...]\n");
        return 2;
    }
    const char *step = getenv("HOLDER_STEP_MS");
    hold_blocks(atol(argv[1]), atol(argv[2]), step ? atol(step) : 0);
    printf("ready %ld\n", (long)getpid());
    fflush(stdout);
    const char *churns = getenv("HOLDER_CHURN");
    long per_tick = churns ? atol(churns) : 1;
    const char *threads = getenv("HOLDER_THREADS");
    struct timespec tick = {0, 10 * 1000 * 1000};
    while (access(argv[3], F_OK) != 0) {
        for (long i = 0; i < per_tick; i++)
            churn();
        pthread_t th;
        if (threads && atoi(threads) && pthread_create(&th, NULL, short_thread, NULL) == 0)
            pthread_join(th, NULL);
        nanosleep(&tick, NULL);
    }
    if (argc > 5 && !strcmp(argv[4], "exec")) {
        execv(argv[5], argv + 5);
        perror("execv");
        return 127;
    }
    return 0;
}
