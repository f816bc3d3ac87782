/*
 * stripped_prog.c: a program stripped after the build, as distributions ship theirs (cmake,
 * grep, ls): its own functions have no names, so each allocation's site is the program's own
 * code, named by module and offset, never the C library's start-up code that called main.
 */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static void *keep_record(size_t n)
{
    return malloc(n);
}

__attribute__((noinline)) static void *keep_index(size_t n)
{
    return calloc(1, n);
}

int main(void)
{
    static void *kept[9];
    for (int i = 0; i < 5; i++)
        kept[i] = keep_record(321);
    for (int i = 5; i < 9; i++)
        kept[i] = keep_index(654);
    printf("stripped_prog: %p\n", kept[8]);
    return 0;
}
