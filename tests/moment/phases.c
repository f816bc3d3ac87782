/*
 * phases.c: a program whose heap is known at every moment, for `--at` and `--from/--to`.
 *
 * Each phase ends with a marker; between phases the program sleeps, so each marker falls in
 * a quiet stretch and its time separates the phases:
 *
 *   start     nothing yet
 *   a_done    100 x 1000 bytes held at hold_a
 *   b_done    50 x 2000 bytes held at hold_b; the even half of hold_a's blocks freed
 *   c_done    a spike of 1 MiB at spike (freed again: the highest point between b_done and
 *             c_done), and 2000 short-lived 48-byte blocks at churn, each freed before the next
 *   end       hold_b's blocks freed; 10 x 300 bytes leaked at leak
 *
 * It runs with or without librheap: rheap_mark is a weak reference.
 */
#include <stdlib.h>
#include <time.h>

extern int rheap_mark(const char *label) __attribute__((weak));

#define NOINLINE __attribute__((noinline))

static void *volatile a[100], *volatile b[50], *volatile leaks[10];

static void mark(const char *label)
{
    if (rheap_mark)
        rheap_mark(label);
}

static void pause_ms(long ms)
{
    struct timespec ts = {0, ms * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

NOINLINE static void hold_a(void)
{
    for (int i = 0; i < 100; i++) {
        a[i] = malloc(1000);
        pause_ms(0); /* spread the blocks over time, across the converter's checkpoints */
    }
}

NOINLINE static void hold_b(void)
{
    for (int i = 0; i < 50; i++) {
        b[i] = malloc(2000);
        if (i % 10 == 0)
            pause_ms(1);
    }
    for (int i = 0; i < 100; i += 2)
        free(a[i]);
}

NOINLINE static void spike(void)
{
    void *volatile p = malloc(1 << 20);
    pause_ms(1);
    free(p);
}

NOINLINE static void churn(void)
{
    for (int i = 0; i < 2000; i++) {
        void *volatile p = malloc(48);
        free(p);
    }
}

NOINLINE static void leak(void)
{
    for (int i = 0; i < 10; i++)
        leaks[i] = malloc(300);
}

int main(void)
{
    mark("start");
    pause_ms(2);
    hold_a();
    pause_ms(2);
    mark("a_done");
    pause_ms(2);
    hold_b();
    pause_ms(2);
    mark("b_done");
    pause_ms(2);
    churn();
    spike();
    churn();
    pause_ms(2);
    mark("c_done");
    pause_ms(2);
    for (int i = 0; i < 50; i++)
        free(b[i]);
    leak();
    pause_ms(2);
    mark("end");
    return 0;
}
