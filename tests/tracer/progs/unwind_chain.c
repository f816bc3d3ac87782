/*
 * unwind_chain: stacks that change in every way that must stop the unwinder from reusing the
 * previous walk's chain of frames (libtrace/src/unwind.c): the same depth with another caller
 * deep down, recursion of varying depth, a longjmp out of a deep stack, a signal handler that
 * allocates, and calls of the same path that must reuse it. Built twice: with frame pointers
 * (every CFA found through rbp, saved rbp slots read by the rules) and without.
 *
 * Each allocation has a size of its own, and the program prints the functions its backtrace
 * must hold, innermost first, up to main: "want SIZE leaf ... main"; for an allocation in a
 * signal handler, the first two: "want2 SIZE leaf on_signal".
 */
#include <setjmp.h>
#include <signal.h>

#include "progs.h"

static volatile int sink; /* a store after each call: no call is a tail call */
static jmp_buf env;

static __attribute__((noinline)) void leaf(size_t size) {
    void *volatile p = malloc(size);
    free(p);
    sink++;
}

static __attribute__((noinline)) void mid3(size_t s) {
    leaf(s);
    sink++;
}

static __attribute__((noinline)) void mid2(size_t s) {
    mid3(s);
    sink++;
}

static __attribute__((noinline)) void mid1(size_t s) {
    mid2(s);
    sink++;
}

static __attribute__((noinline)) void top_a(size_t s) {
    mid1(s);
    sink++;
}

static __attribute__((noinline)) void top_b(size_t s) {
    sink += 2;
    mid1(s);
    sink++;
}

static __attribute__((noinline)) void rec(int k, size_t s) {
    if (k == 0)
        leaf(s);
    else
        rec(k - 1, s);
    sink++;
}

static __attribute__((noinline)) void jump_deep(int k, size_t s) {
    if (k > 0)
        jump_deep(k - 1, s);
    else
        leaf(s);
    if (k == 0)
        longjmp(env, 1);
    sink++;
}

static void on_signal(int sig) {
    (void)sig;
    leaf(4002);
}

static __attribute__((noinline)) void raiser(size_t s) {
    leaf(s);
    raise(SIGUSR1);
    leaf(s + 2);
    sink++;
}

static void want_rec(int k, size_t s) {
    char line[1024];
    int n = snprintf(line, sizeof line, "want %zu leaf", s);
    for (int i = 0; i <= k; i++)
        n += snprintf(line + n, sizeof line - (size_t)n, " rec");
    say("%s main\n", line);
}

int main(void) {
    /* The same depth, the caller five frames out alternating; then the same path again. */
    for (size_t i = 0; i < 6; i++) {
        if (i % 3 == 1) {
            top_b(1000 + i);
            say("want %zu leaf mid3 mid2 mid1 top_b main\n", 1000 + i);
        } else {
            top_a(1000 + i);
            say("want %zu leaf mid3 mid2 mid1 top_a main\n", 1000 + i);
        }
    }
    /* Recursion of varying depth, through the same innermost frames. */
    static const int depths[] = {3, 7, 3, 12, 0, 7, 7, 30, 29};
    for (size_t i = 0; i < sizeof depths / sizeof *depths; i++) {
        rec(depths[i], 2000 + i);
        want_rec(depths[i], 2000 + i);
    }
    /* A longjmp out of 20 frames: their slots stay behind on the stack, below what follows. */
    if (!setjmp(env))
        jump_deep(20, 3000);
    {
        char line[1024];
        int n = snprintf(line, sizeof line, "want 3000 leaf");
        for (int i = 0; i <= 20; i++)
            n += snprintf(line + n, sizeof line - (size_t)n, " jump_deep");
        say("%s main\n", line);
    }
    rec(1, 3001);
    want_rec(1, 3001);
    top_a(3002);
    say("want 3002 leaf mid3 mid2 mid1 top_a main\n");
    rec(22, 3003);
    want_rec(22, 3003);
    /* A signal handler that allocates, between two allocations of the same frame. */
    signal(SIGUSR1, on_signal);
    raiser(4001);
    say("want 4001 leaf raiser main\n");
    say("want2 4002 leaf on_signal\n");
    say("want 4003 leaf raiser main\n");
    top_b(4004);
    say("want 4004 leaf mid3 mid2 mid1 top_b main\n");
    return 0;
}
