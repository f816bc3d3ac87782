/*
 * fork_threads: 3 threads allocate and free without pause while the main thread forks 20
 * children. Each child allocates a known set between "begin" and "end" and exits. A child
 * holds only the thread that forked, so its recording must have exactly one thread file with
 * exactly its own events: nothing the other threads had buffered in the parent. Neither side
 * may deadlock (the allocator's and the recorder's locks across fork).
 */
#include "progs.h"

#include <pthread.h>
#include <stdatomic.h>
#include <sys/wait.h>

PROGS_SINK_DEFINITION;

#define NTHREADS 3
#define NCHILDREN 20

static atomic_int stop;

static void *spin(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    void *keep[64] = {0};
    while (!atomic_load(&stop)) {
        unsigned r = (unsigned)rand_r(&seed);
        free(keep[r % 64]);
        keep[r % 64] = malloc(1 + (r >> 8) % 300);
    }
    for (int i = 0; i < 64; i++)
        free(keep[i]);
    return NULL;
}

int main(void)
{
    pthread_t th[NTHREADS];
    for (int i = 0; i < NTHREADS; i++)
        pthread_create(&th[i], NULL, spin, (void *)(uintptr_t)(i + 1));
    for (int c = 0; c < NCHILDREN; c++) {
        pid_t pid = fork();
        if (pid < 0)
            return 1;
        if (pid == 0) {
            tally_t t = {0};
            void *p[10];
            progs_mark("begin");
            for (int i = 0; i < 10; i++) {
                p[i] = malloc(4000 + (size_t)c);
                tally_alloc(&t, T_MALLOC, 4000 + (unsigned long)c);
            }
            for (int i = 0; i < 10; i++) {
                free(p[i]);
                tally_free(&t);
            }
            progs_mark("end");
            tally_print(&t, getpid());
            exit(0);
        }
        int status;
        if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
            return 1;
    }
    atomic_store(&stop, 1);
    for (int i = 0; i < NTHREADS; i++)
        pthread_join(th[i], NULL);
    say("forked %d\n", NCHILDREN);
    return 0;
}
