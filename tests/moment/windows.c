/*
 * windows.c: a program recorded in two windows of rheap_enable() .. rheap_disable(), with a
 * stretch between them that is not recorded, for `--at` outside a window.
 *
 *   window 1 (rip-<pid>/)     10 x 1000 bytes held at hold_one, marker "one"; off about
 *                             5 ms after the marker
 *   not recorded              hold_one's blocks freed, 7 x 500 bytes allocated and kept
 *   window 2 (rip-<pid>-2/)   5 x 2000 bytes held at hold_two, marker "two"; off about
 *                             100 ms after the marker
 *
 * Window 1 is the shorter, so a time after its end and before window 2's (each counted from
 * its recording's start) falls inside window 2 only. The recordings go into the directory
 * given as the first argument.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rheap.h"

#define NOINLINE __attribute__((noinline))

static void *volatile one[10], *volatile unseen[7], *volatile two[5];

static void pause_ms(long ms)
{
    struct timespec ts = {0, ms * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

NOINLINE static void hold_one(void)
{
    for (int i = 0; i < 10; i++)
        one[i] = malloc(1000);
}

NOINLINE static void hold_two(void)
{
    for (int i = 0; i < 5; i++)
        two[i] = malloc(2000);
}

static int enable(const char *dir)
{
    rheap_config config = RHEAP_CONFIG_INIT;
    config.output_dir = dir;
    if (rheap_enable(&config) != 0) {
        fprintf(stderr, "windows: rheap_enable: %s\n", strerror(errno));
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: windows DIR\n");
        return 2;
    }
    if (enable(argv[1]) != 0)
        return 1;
    hold_one();
    rheap_mark("one");
    pause_ms(5);
    rheap_disable();

    for (int i = 0; i < 10; i++)
        free(one[i]);
    for (int i = 0; i < 7; i++)
        unseen[i] = malloc(500);
    pause_ms(5);

    if (enable(argv[1]) != 0)
        return 1;
    hold_two();
    rheap_mark("two");
    pause_ms(100);
    rheap_disable();
    return 0;
}
