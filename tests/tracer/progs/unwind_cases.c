/*
 * unwind_cases: allocations from every kind of frame the recorder's unwinder must handle, for
 * the RHEAP_CHECK_UNWIND test, which compares each backtrace with libunwind's.
 *
 * Walked by the cached rules: plain calls, deep recursion (deeper than the recorded depth), a
 * main-thread stack grown far beyond its size at start (the bounds are read again),
 * a frame that realigns the stack (its CFA is found through rbp), threads, a dlopen'd library
 * and one loaded again after dlclose. Handed to libunwind: a signal handler (its caller is the
 * kernel's signal frame), a handler on an alternate signal stack and a ucontext coroutine (both
 * off the thread's stack). The program prints how many allocations it made in the last three:
 * "expect slow N".
 */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>

#include "progs.h"

static int slow_allocs;

__attribute__((noinline)) static void alloc_some(int n) {
    for (int i = 0; i < n; i++) {
        void *volatile p = malloc(100 + (size_t)i);
        free(p);
    }
}

__attribute__((noinline)) static int recurse(int depth) {
    if (depth == 0) {
        alloc_some(3);
        return 0;
    }
    return recurse(depth - 1) + 1;
}

/* A 64-byte-aligned local next to a variable-length one makes gcc realign the stack through a
 * register (built without frame pointers): the frame's CFI says CFA = *(rbp - 8). */
__attribute__((noinline)) static void realigned(int n) {
    _Alignas(64) volatile char buf[64];
    volatile char *v = __builtin_alloca((size_t)n);
    buf[0] = 1;
    v[0] = 2;
    void *volatile p = malloc(77 + (size_t)buf[0] + (size_t)v[0]);
    free(p);
}

/* 4 MiB of stack: the main thread's [stack] mapping grows below what it was at registration. */
__attribute__((noinline)) static void big_frame(void) {
    volatile char *b = __builtin_alloca(4u << 20);
    b[0] = 1;
    alloc_some(2);
    b[1] = 2;
}

static void on_signal(int sig) {
    (void)sig;
    alloc_some(2);
    slow_allocs += 2;
}

static ucontext_t main_ctx, co_ctx;

static void coroutine(void) {
    alloc_some(4);
    slow_allocs += 4;
    swapcontext(&co_ctx, &main_ctx);
}

static void *thread_main(void *arg) {
    (void)arg;
    alloc_some(50);
    recurse(20);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        say("usage: unwind_cases DSO\n");
        return 2;
    }
    alloc_some(10);
    recurse(5);
    recurse(200);
    realigned(argc * 16);
    big_frame();

    pthread_t th[3];
    for (int i = 0; i < 3; i++)
        pthread_create(&th[i], NULL, thread_main, NULL);
    for (int i = 0; i < 3; i++)
        pthread_join(th[i], NULL);

    for (int round = 0; round < 2; round++) {
        void *h = dlopen(argv[1], RTLD_NOW);
        if (!h) {
            say("dlopen failed\n");
            return 1;
        }
        int (*work)(int) = (int (*)(int))dlsym(h, "dso_work");
        work(5);
        dlclose(h);
    }

    signal(SIGUSR1, on_signal);
    raise(SIGUSR1);

    size_t alt_size = 256 * 1024;
    stack_t alt = {.ss_sp = mmap(NULL, alt_size, PROT_READ | PROT_WRITE,
                                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
                   .ss_size = alt_size};
    sigaltstack(&alt, NULL);
    struct sigaction sa = {.sa_handler = on_signal, .sa_flags = SA_ONSTACK};
    sigaction(SIGUSR2, &sa, NULL);
    raise(SIGUSR2);

    size_t co_size = 256 * 1024;
    getcontext(&co_ctx);
    co_ctx.uc_stack.ss_sp =
        mmap(NULL, co_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    co_ctx.uc_stack.ss_size = co_size;
    co_ctx.uc_link = &main_ctx;
    makecontext(&co_ctx, coroutine, 0);
    swapcontext(&main_ctx, &co_ctx);

    say("expect slow %d\n", slow_allocs);
    return 0;
}
