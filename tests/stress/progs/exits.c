/*
 * exits: three worker threads each make 1000 allocations and 500 frees between markers; then
 * the process ends one way, chosen by MODE, while the workers are still alive (their events may
 * still sit in the tracer's buffers):
 *   return   main releases the workers, joins them and returns from main;
 *   exit     worker 0 calls exit(0) while the others are blocked and a fourth thread keeps
 *            allocating (not counted);
 *   _exit    main calls _exit(0);
 *   abort    main calls abort();
 *   segv     main stores through a null pointer (SIGSEGV, default action);
 *   exit_group  main makes the raw exit_group system call, as Go programs end: no atexit
 *            handler, no destructor runs;
 *   idle     main prints "idle" and waits, allocating nothing, for a signal from outside (a
 *            service stopped by kill -TERM: the signal's default action ends it).
 * Before ending, main prints every worker's ground truth ("expect thread ..."), its pid ("pid
 * N") and the number of 7777-byte blocks the late library's destructor allocates and frees
 * after the tracer's exit flush ("late N", 0 but in mode return; late.c).
 *
 * Usage: exits MODE
 */
#include "progs.h"

#include <pthread.h>
#include <stdatomic.h>
#include <sys/syscall.h>

int stress_late_arm(void);

PROGS_SINK_DEFINITION;

#define NWORKERS 3
#define NALLOCS 1000

typedef struct {
    int index;
    long tid;
    tally_t tally;
    void *blocks[NALLOCS];
} worker_t;

static worker_t workers[NWORKERS];
static pthread_barrier_t done, release;
static const char *mode;
static atomic_int printed;

static void *work(void *arg)
{
    worker_t *w = arg;
    w->tid = gettid();
    progs_mark("begin");
    for (int i = 0; i < NALLOCS; i++) {
        size_t size = 8 + (size_t)((i * 31 + w->index * 7) % 500);
        w->blocks[i] = malloc(size);
        tally_alloc(&w->tally, T_MALLOC, size);
    }
    for (int i = 0; i < NALLOCS; i += 2) {
        free(w->blocks[i]);
        tally_free(&w->tally);
    }
    progs_mark("end");
    pthread_barrier_wait(&done);
    if (w->index == 0 && strcmp(mode, "exit") == 0) {
        while (!atomic_load(&printed))
            sched_yield();
        exit(0);
    }
    pthread_barrier_wait(&release);
    return NULL;
}

static void *spinner(void *arg)
{
    (void)arg;
    for (unsigned i = 0;; i++)
        free(malloc(64 + i % 64));
    return NULL;
}

int main(int argc, char **argv)
{
    mode = argc > 1 ? argv[1] : "";
    static const char *const modes[] = {"return", "exit", "_exit", "abort", "segv", "exit_group",
                                        "idle"};
    int known = 0;
    for (size_t i = 0; i < sizeof modes / sizeof *modes; i++)
        known |= strcmp(mode, modes[i]) == 0;
    if (!known) {
        say("usage: exits return|exit|_exit|abort|segv|exit_group|idle\n");
        return 2;
    }
    pthread_barrier_init(&done, NULL, NWORKERS + 1);
    pthread_barrier_init(&release, NULL, NWORKERS + 1);
    pthread_t th[NWORKERS], spin;
    for (int i = 0; i < NWORKERS; i++) {
        workers[i].index = i;
        pthread_create(&th[i], NULL, work, &workers[i]);
    }
    pthread_barrier_wait(&done);
    for (int i = 0; i < NWORKERS; i++)
        tally_print(&workers[i].tally, workers[i].tid);
    /* Return only: the other ends run no destructor, or (exit) end while a thread allocates. */
    int late = strcmp(mode, "return") == 0 ? stress_late_arm() : 0;
    say("pid %d\nlate %d\n", (int)getpid(), late);
    if (strcmp(mode, "exit") == 0) {
        pthread_create(&spin, NULL, spinner, NULL);
        atomic_store(&printed, 1);
        for (;;)
            pause();
    }
    if (strcmp(mode, "_exit") == 0)
        _exit(0);
    if (strcmp(mode, "abort") == 0)
        abort();
    if (strcmp(mode, "segv") == 0) {
        int *volatile null = NULL; /* read back at run time: the compiler cannot drop the store */
        *null = 1;
    }
    if (strcmp(mode, "exit_group") == 0)
        syscall(SYS_exit_group, 0);
    if (strcmp(mode, "idle") == 0) {
        say("idle\n");
        for (;;)
            pause();
    }
    pthread_barrier_wait(&release);
    for (int i = 0; i < NWORKERS; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < NWORKERS; i++)
        for (int j = 1; j < NALLOCS; j += 2)
            free(workers[i].blocks[j]);
    return 0;
}
