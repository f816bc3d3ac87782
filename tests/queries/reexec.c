/*
 * reexec.c: a program that execs itself once, for testing that the canned queries keep the two
 * recordings of one pid apart.
 *
 * Run with librheap preloaded, the process records twice under the same pid: rip-<pid>/ for
 * the first image and rip-<pid>-2/ for the second, each with its own time base. What each
 * image does, and what the queries must see:
 *
 *   first image   3 x malloc(333), never freed; then execs itself with the argument "second"
 *   second image  names its thread "second", then 5 x malloc(555), never freed
 *
 * Neither image prints (the exit status says whether the exec worked), so stdio allocates
 * nothing: the tagged lines are all the allocations the queries see.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

/* Kept so the compiler cannot drop the allocations; free is never called on them. */
static void *volatile keep[8];

NOINLINE static void first_image(void)
{
    for (int i = 0; i < 3; i++)
        keep[i] = malloc(333); /* @first_leak */
}

NOINLINE static void second_image(void)
{
    for (int i = 0; i < 5; i++)
        keep[i] = malloc(555); /* @second_leak */
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "second")) {
        pthread_setname_np(pthread_self(), "second");
        second_image();
        return 0;
    }
    first_image();
    execl("/proc/self/exe", argv[0], "second", (char *)NULL);
    return 1;
}
