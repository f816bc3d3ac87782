/*
 * busy: a program that keeps the heap busy for a while from several threads, for the test of
 * `rheap run` converting while the program runs (cli.run_live). Counts are exact whatever the
 * timing:
 *
 *   main thread   3 phases of 1500 rounds, each round 64 blocks of 100..163 bytes allocated
 *                 and freed (288,000 allocations, all freed), with a pause of 150 ms after each
 *                 phase; 7 blocks of 7777 bytes never freed.
 *   2 workers     started after the first and the second phase: 1000 rounds of 64 blocks of
 *                 200..263 bytes, allocated and freed (64,000 each); 1000 blocks of 4444 bytes
 *                 handed to the main thread, which frees them after joining the worker; 5
 *                 blocks of 5555 bytes never freed.
 */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#define HANDED 1000

static void churn(int rounds, size_t base)
{
    void *p[64];
    for (int r = 0; r < rounds; r++) {
        for (int i = 0; i < 64; i++)
            p[i] = malloc(base + (size_t)i);
        for (int i = 0; i < 64; i++)
            free(p[i]);
    }
}

static void *worker(void *arg)
{
    void **handed = arg;
    churn(1000, 200);
    for (int i = 0; i < HANDED; i++)
        handed[i] = malloc(4444);
    for (int i = 0; i < 5; i++)
        if (!malloc(5555))
            abort();
    return NULL;
}

int main(void)
{
    static void *handed[2][HANDED];
    pthread_t t[2];
    for (int phase = 0; phase < 3; phase++) {
        churn(1500, 100);
        if (phase < 2 && pthread_create(&t[phase], NULL, worker, handed[phase]) != 0)
            return 1;
        usleep(150000);
    }
    for (int k = 0; k < 2; k++) {
        pthread_join(t[k], NULL);
        for (int i = 0; i < HANDED; i++)
            free(handed[k][i]);
    }
    for (int i = 0; i < 7; i++)
        if (!malloc(7777))
            return 1;
    return 0;
}
