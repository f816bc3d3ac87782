/*
 * stopped: a program whose recording the recorder has to stop halfway.
 *
 * It allocates one 4321-byte block, lowers its file size limit to 64 KiB (below the size of a
 * thread file's staging area), starts a thread that allocates (its file cannot be made: the
 * recorder stops with one line, "error: ..." as the recording's end), then frees the block
 * and exits 0. The free comes after the stop, so the recording shows the block live.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

static void *worker(void *arg)
{
    (void)arg;
    void *volatile p = malloc(100);
    free(p);
    return NULL;
}

int main(void)
{
    void *volatile block = malloc(4321);
    struct rlimit rl;
    if (getrlimit(RLIMIT_FSIZE, &rl) != 0)
        return 2;
    rl.rlim_cur = 64 * 1024;
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
        return 2;
    pthread_t t;
    if (pthread_create(&t, NULL, worker, NULL) != 0 || pthread_join(t, NULL) != 0)
        return 3;
    free(block);
    puts("freed");
    return 0;
}
