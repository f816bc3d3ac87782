/*
 * service: a multi-threaded service to record live, without a restart.
 *
 * N worker threads (default 4) handle made-up requests in a loop: each request allocates a
 * request object, a copy of its key and a response that grows by realloc, and every worker
 * keeps a small cache of recent responses, evicting the oldest. It runs for the given number
 * of seconds (default 30) or until SIGTERM or SIGINT, then frees everything and prints how
 * many requests it served.
 *
 * Start it with librheap preloaded and recording off, then flip recording with a signal; each
 * on/off window becomes its own recording directory (rip-<pid>/, rip-<pid>-2/, ...):
 *
 *     RHEAP_ENABLE=0 RHEAP_SIGNAL=USR2 LD_PRELOAD=librheap.so ./service 4 60 &
 *     kill -USR2 $!     # recording on
 *     kill -USR2 $!     # recording off
 *     kill -TERM $!
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_WORKERS 64
#define CACHE_SLOTS 32

static atomic_int stopping;
static atomic_long served;

struct request {
    unsigned id;
    char *key;
};

struct worker {
    pthread_t thread;
    unsigned seed;
    char *cache[CACHE_SLOTS];
    unsigned next_slot;
};

static void on_stop(int sig)
{
    (void)sig;
    atomic_store(&stopping, 1);
}

static char *build_response(const struct request *req)
{
    size_t cap = 32, len = 0;
    char *out = malloc(cap);
    unsigned lines = 1 + req->id % 13;
    for (unsigned i = 0; i < lines; i++) {
        char line[80];
        int n = snprintf(line, sizeof line, "%s: item %u of %u\n", req->key, i, lines);
        while (len + (size_t)n + 1 > cap) {
            cap *= 2;
            out = realloc(out, cap);
        }
        memcpy(out + len, line, (size_t)n + 1);
        len += (size_t)n;
    }
    return out;
}

static void handle(struct worker *w)
{
    struct request *req = malloc(sizeof *req);
    req->id = (unsigned)rand_r(&w->seed);
    char key[32];
    snprintf(key, sizeof key, "key-%u", req->id % 1000);
    req->key = strdup(key);
    char *response = build_response(req);
    /* The cache keeps the last responses: a steady set of live blocks. */
    free(w->cache[w->next_slot]);
    w->cache[w->next_slot] = response;
    w->next_slot = (w->next_slot + 1) % CACHE_SLOTS;
    free(req->key);
    free(req);
    atomic_fetch_add(&served, 1);
}

static void *work(void *arg)
{
    struct worker *w = arg;
    const struct timespec pause = {0, 200000}; /* 0.2 ms between requests */
    while (!atomic_load(&stopping)) {
        handle(w);
        nanosleep(&pause, NULL);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int nworkers = argc > 1 ? atoi(argv[1]) : 4;
    int seconds = argc > 2 ? atoi(argv[2]) : 30;
    if (nworkers < 1 || nworkers > MAX_WORKERS || seconds < 1) {
        fprintf(stderr, "usage: service [WORKERS (1-%d) [SECONDS]]\n", MAX_WORKERS);
        return 2;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);

    struct worker *workers = calloc((size_t)nworkers, sizeof *workers);
    for (int i = 0; i < nworkers; i++) {
        workers[i].seed = (unsigned)i + 1;
        pthread_create(&workers[i].thread, NULL, work, &workers[i]);
    }
    printf("service pid %d ready with %d workers\n", (int)getpid(), nworkers);
    fflush(stdout);

    /* sleep() returns early when a signal arrives, so SIGTERM is seen at once. */
    time_t deadline = time(NULL) + seconds;
    while (!atomic_load(&stopping) && time(NULL) < deadline)
        sleep(1);
    atomic_store(&stopping, 1);

    for (int i = 0; i < nworkers; i++) {
        pthread_join(workers[i].thread, NULL);
        for (int s = 0; s < CACHE_SLOTS; s++)
            free(workers[i].cache[s]);
    }
    free(workers);
    printf("served %ld requests\n", atomic_load(&served));
    return 0;
}
