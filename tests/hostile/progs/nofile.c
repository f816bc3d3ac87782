/*
 * nofile: a program that runs at its descriptor limit while its threads allocate.
 *
 *   nofile THREADS PAIRS OPENS
 *
 * THREADS threads each make their first allocation and wait; the main thread then opens
 * /dev/null until EMFILE, closes one (one descriptor left free), lets the threads go (PAIRS
 * malloc/free pairs each, enough for many block writes of the recorder) and meanwhile opens and
 * closes /dev/null OPENS times. It prints "failed N": the opens that failed. Untraced, N is 0:
 * nothing else in the process opens a file. Run it under a low limit (`ulimit -n 16`).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static pthread_barrier_t started, go;
static long pairs;

static void *worker(void *arg)
{
    (void)arg;
    void *volatile first = malloc(1000);
    pthread_barrier_wait(&started);
    pthread_barrier_wait(&go);
    for (long i = 0; i < pairs; i++) {
        void *volatile p = malloc((size_t)(i % 300) + 1);
        free(p);
    }
    free(first);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 4)
        return 2;
    int threads = atoi(argv[1]);
    pairs = atol(argv[2]);
    long opens = atol(argv[3]);
    pthread_t t[64];
    if (threads < 1 || threads > 64)
        return 2;
    pthread_barrier_init(&started, NULL, (unsigned)threads + 1);
    pthread_barrier_init(&go, NULL, (unsigned)threads + 1);
    for (int i = 0; i < threads; i++)
        if (pthread_create(&t[i], NULL, worker, NULL) != 0)
            return 3;
    pthread_barrier_wait(&started);
    int last = -1, held = 0;
    for (;;) {
        int fd = open("/dev/null", O_RDONLY);
        if (fd < 0)
            break;
        last = fd;
        held++;
    }
    if (errno != EMFILE || last < 0)
        return 4;
    close(last);
    pthread_barrier_wait(&go);
    long failed = 0;
    for (long i = 0; i < opens; i++) {
        int fd = open("/dev/null", O_RDONLY);
        if (fd < 0)
            failed++;
        else
            close(fd);
    }
    for (int i = 0; i < threads; i++)
        pthread_join(t[i], NULL);
    printf("failed %ld\n", failed);
    return 0;
}
