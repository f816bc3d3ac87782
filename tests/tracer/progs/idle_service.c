/*
 * idle_service: a service that goes quiet. It allocates 100 blocks of 64 bytes, frees 40 of
 * them, says "ready", then makes no allocator call at all until SIGTERM. Run with
 * RHEAP_SIGNAL=USR2: a SIGUSR2 sent while it is idle must still end the recording window (files
 * written, `off` recorded) without waiting for an allocation that never comes.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_term(int sig) {
    (void)sig;
    stop = 1;
}

int main(void) {
    static void *blocks[100];
    signal(SIGTERM, on_term);
    for (int i = 0; i < 100; i++)
        blocks[i] = malloc(64);
    for (int i = 0; i < 40; i++)
        free(blocks[i]);
    static const char ready[] = "ready\n";
    if (write(1, ready, strlen(ready)) < 0)
        return 1;
    while (!stop)
        pause();
    return 0;
}
