/*
 * signals: what a program finds of its signals, and whether a SIGHUP reached it.
 *
 *   signals show        prints the disposition of HUP, INT, QUIT, TERM, PIPE, USR1, USR2 and
 *                       CHLD (default, ignored, handled) and the blocked ones, one per line
 *   signals serve DIR   prints the same, installs a SIGHUP handler (as a daemon reloading its
 *                       configuration would), writes DIR/pid, waits up to 60 s for DIR/stop and
 *                       prints "hups N": the SIGHUPs it received; DIR/hups holds the number
 *                       received so far, written when it changes (so a test waits on it)
 *
 * It allocates on the way, so it is recorded.
 */
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t hups;

static void on_hup(int sig)
{
    (void)sig;
    hups++;
}

static void show(void)
{
    static const struct {
        int sig;
        const char *name;
    } sigs[] = {{SIGHUP, "HUP"},   {SIGINT, "INT"},   {SIGQUIT, "QUIT"}, {SIGTERM, "TERM"},
                {SIGPIPE, "PIPE"}, {SIGUSR1, "USR1"}, {SIGUSR2, "USR2"}, {SIGCHLD, "CHLD"}};
    sigset_t mask;
    sigprocmask(SIG_BLOCK, NULL, &mask);
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
        struct sigaction sa;
        sigaction(sigs[i].sig, NULL, &sa);
        char *line = malloc(64);
        snprintf(line, 64, "%s %s%s", sigs[i].name,
                 sa.sa_handler == SIG_IGN   ? "ignored"
                 : sa.sa_handler == SIG_DFL ? "default"
                                            : "handled",
                 sigismember(&mask, sigs[i].sig) ? " blocked" : "");
        puts(line);
        free(line);
    }
}

int main(int argc, char **argv)
{
    show();
    if (argc < 3 || strcmp(argv[1], "serve"))
        return 0;
    struct sigaction sa = {0};
    sa.sa_handler = on_hup;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGHUP, &sa, NULL);
    size_t n = strlen(argv[2]) + 8;
    char *pid = malloc(n), *stop = malloc(n);
    snprintf(pid, n, "%s/pid", argv[2]);
    snprintf(stop, n, "%s/stop", argv[2]);
    FILE *f = fopen(pid, "w");
    if (!f)
        return 2;
    fprintf(f, "%d\n", (int)getpid());
    fclose(f);
    char *told = malloc(n);
    snprintf(told, n, "%s/hups", argv[2]);
    int seen = 0;
    for (int i = 0; i < 6000 && access(stop, F_OK) != 0; i++) {
        if (hups != seen) {
            seen = hups;
            /* Written whole under another name, then renamed: a reader never sees it half. */
            char tmp[PATH_MAX];
            snprintf(tmp, sizeof tmp, "%s.new", told);
            FILE *h = fopen(tmp, "w");
            if (!h)
                return 2;
            fprintf(h, "%d\n", seen);
            fclose(h);
            rename(tmp, told);
        }
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    printf("hups %d\n", (int)hups);
    free(pid);
    free(stop);
    free(told);
    return 0;
}
