/*
 * toggle_service MODE DIR: a service and the toggle signal (SIGUSR2 here).
 *
 *   blocked   blocks every signal in every thread (as a service that waits for its signals
 *             with sigwait), starts a worker, sends itself SIGUSR2, waits until its recording's
 *             process file DIR/rip-<pid>/process.rip exists (5 s at most) and 0.2 s more, then
 *             the worker makes 1,000 malloc(4444)/free pairs; exits 0
 *   handler   installs a SIGUSR2 handler of its own, sends itself SIGUSR2, sleeps 1.5 s and
 *             prints "usr2 N": the deliveries its handler saw; exits 0
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t usr2;
static pthread_barrier_t go;

static void on_usr2(int sig)
{
    (void)sig;
    usr2++;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void *worker(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&go);
    for (int i = 0; i < 1000; i++) {
        void *volatile p = malloc(4444);
        free(p);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    if (!strcmp(argv[1], "handler")) {
        struct sigaction sa = {0};
        sa.sa_handler = on_usr2;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGUSR2, &sa, NULL);
        kill(getpid(), SIGUSR2);
        sleep_ms(1500);
        printf("usr2 %d\n", (int)usr2);
        return 0;
    }
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    pthread_barrier_init(&go, NULL, 2);
    pthread_t t;
    if (pthread_create(&t, NULL, worker, NULL) != 0)
        return 3;
    kill(getpid(), SIGUSR2);
    char path[4096];
    snprintf(path, sizeof path, "%s/rip-%d/process.rip", argv[2], (int)getpid());
    struct stat sb;
    for (int i = 0; i < 500 && stat(path, &sb) != 0; i++)
        sleep_ms(10);
    sleep_ms(200);
    pthread_barrier_wait(&go);
    pthread_join(t, NULL);
    puts("done");
    return 0;
}
