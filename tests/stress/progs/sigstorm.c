/*
 * sigstorm: worker threads churn a shared pool of blocks (cross-thread frees, address reuse)
 * while another thread sends SIGNALS SIGUSR2 to the process, spaced by the workers' progress,
 * so that with RHEAP_ENABLE=0 RHEAP_SIGNAL=USR2 recording windows open and close while every
 * thread is inside the allocator. Workers keep allocating until the last signal was acted on
 * (they stop a fixed number of operations later), so every signal toggles.
 *
 * Usage: sigstorm [NTHREADS [SIGNALS [OPS_BETWEEN_SIGNALS]]]   (default 4 x 20 x 5000)
 */
#include "progs.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>

PROGS_SINK_DEFINITION;

#define MAX_THREADS 32
#define SLOTS 512

static struct {
    pthread_mutex_t lock;
    void *p;
} slots[SLOTS];

static int nthreads = 4, nsignals = 20, spacing = 5000;
static atomic_long progress;   /* operations done by all workers */
static atomic_int signals_done;

static void *work(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    long after_last = 0;
    while (after_last < 2000) {
        unsigned r = (unsigned)rand_r(&seed);
        unsigned s = r % SLOTS;
        pthread_mutex_lock(&slots[s].lock);
        if (slots[s].p) {
            if (r & 0x10000)
                slots[s].p = realloc(slots[s].p, 1 + (r >> 8) % 900);
            else {
                free(slots[s].p);
                slots[s].p = NULL;
            }
        } else {
            slots[s].p = malloc(1 + (r >> 8) % 900);
        }
        pthread_mutex_unlock(&slots[s].lock);
        atomic_fetch_add(&progress, 1);
        if (atomic_load(&signals_done))
            after_last++;
    }
    return NULL;
}

/* Traced, the recorder's state, so each signal is sent only once the previous one has taken
 * effect: two deliveries of a standard signal that are pending at once merge into one. */
extern int rheap_is_enabled(void) __attribute__((weak));

static void *signaler(void *arg)
{
    (void)arg;
    for (int i = 0; i < nsignals; i++) {
        long target = atomic_load(&progress) + spacing;
        while (atomic_load(&progress) < target)
            sched_yield();
        int before = rheap_is_enabled ? rheap_is_enabled() : 0;
        kill(getpid(), SIGUSR2);
        while (rheap_is_enabled && rheap_is_enabled() == before)
            sched_yield();
    }
    atomic_store(&signals_done, 1);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        nthreads = atoi(argv[1]);
    if (argc > 2)
        nsignals = atoi(argv[2]);
    if (argc > 3)
        spacing = atoi(argv[3]);
    if (nthreads < 1 || nthreads > MAX_THREADS || nsignals < 0 || spacing < 1)
        return 2;
    /* Untraced, nothing handles SIGUSR2: ignore it so the program still runs as a baseline. */
    if (!rheap_mark)
        signal(SIGUSR2, SIG_IGN);
    for (int i = 0; i < SLOTS; i++)
        pthread_mutex_init(&slots[i].lock, NULL);
    pthread_t th[MAX_THREADS], sig;
    for (int i = 0; i < nthreads; i++)
        pthread_create(&th[i], NULL, work, (void *)(uintptr_t)(1000 + i));
    pthread_create(&sig, NULL, signaler, NULL);
    pthread_join(sig, NULL);
    for (int i = 0; i < nthreads; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < SLOTS; i++)
        free(slots[i].p);
    say("sent %d signals, %ld operations\n", nsignals, atomic_load(&progress));
    return 0;
}
