/*
 * procs: processes made every way while recording.
 *
 *   procs chain N      allocates 3 blocks of 500 + N bytes between markers, frees 2, prints
 *                      "chain N expect thread tid=PID ...", then execs itself as `procs chain
 *                      N-1` until N is 0: one process, N + 1 images, N + 1 recordings.
 *   procs spawn COUNT  keeps two threads churning the heap, and meanwhile COUNT times: forks a
 *                      child that allocates between markers and prints "child expect thread
 *                      ...", starts `procs chain 0` with vfork + execv, and again with
 *                      posix_spawn. Each child must exit with status 0.
 */
#include "progs.h"

#include <pthread.h>
#include <spawn.h>
#include <stdatomic.h>
#include <sys/wait.h>

PROGS_SINK_DEFINITION;

extern char **environ;

static const char *self;

static int chain(int n)
{
    tally_t t = {0};
    void *b[3];
    progs_mark("begin");
    for (int i = 0; i < 3; i++) {
        b[i] = malloc(500 + (size_t)n);
        SINK(b[i]);
        tally_alloc(&t, T_MALLOC, 500 + (size_t)n);
    }
    free(b[1]);
    free(b[2]);
    t.frees = 2;
    progs_mark("end");
    say("chain %d expect thread tid=%ld allocs=%lu frees=%lu bytes=%lu calls=malloc:3\n", n,
        (long)getpid(), t.allocs, t.frees, t.bytes);
    if (n == 0)
        return 0;
    char arg[16];
    snprintf(arg, sizeof arg, "%d", n - 1);
    execl(self, self, "chain", arg, (char *)NULL);
    say("exec failed: %s\n", strerror(errno));
    return 1;
}

static atomic_int stop;

static void *churn(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    void *slot[64] = {0};
    while (!atomic_load(&stop)) {
        unsigned r = (unsigned)rand_r(&seed);
        void **s = &slot[r % 64];
        if (*s) {
            free(*s);
            *s = NULL;
        } else {
            *s = malloc(1 + r % 3000);
        }
    }
    for (int i = 0; i < 64; i++)
        free(slot[i]);
    return NULL;
}

static int wait_ok(pid_t pid, const char *what)
{
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        say("%s child failed\n", what);
        return 0;
    }
    return 1;
}

static void forked_child(int k)
{
    tally_t t = {0};
    progs_mark("begin");
    void *p = calloc(1, 300 + (size_t)k);
    tally_alloc(&t, T_CALLOC, 300 + (size_t)k);
    void *q = malloc(40);
    tally_alloc(&t, T_MALLOC, 40);
    SINK(p);
    free(q);
    tally_free(&t);
    progs_mark("end");
    say("child expect thread tid=%ld allocs=%lu frees=%lu bytes=%lu calls=malloc:1,calloc:1\n",
        (long)getpid(), t.allocs, t.frees, t.bytes);
    exit(0);
}

static int spawn(int count)
{
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&th[i], NULL, churn, (void *)(uintptr_t)(5 + i));
    int ok = 1;
    char *const chain_argv[] = {(char *)self, "chain", "0", NULL};
    for (int k = 0; k < count && ok; k++) {
        pid_t pid = fork();
        if (pid == 0)
            forked_child(k);
        ok &= wait_ok(pid, "forked");
        pid = vfork();
        if (pid == 0) {
            execv(self, chain_argv);
            _exit(127);
        }
        ok &= wait_ok(pid, "vfork");
        if (posix_spawn(&pid, self, NULL, NULL, chain_argv, environ) != 0)
            pid = -1;
        ok &= wait_ok(pid, "posix_spawn");
    }
    atomic_store(&stop, 1);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    say("spawned %d rounds%s\n", count, ok ? "" : " with failures");
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    self = "/proc/self/exe";
    static char path[4096];
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    if (n > 0) {
        path[n] = 0;
        self = path;
    }
    if (argc == 3 && strcmp(argv[1], "chain") == 0)
        return chain(atoi(argv[2]));
    if (argc == 3 && strcmp(argv[1], "spawn") == 0)
        return spawn(atoi(argv[2]));
    say("usage: procs chain N | procs spawn COUNT\n");
    return 2;
}
