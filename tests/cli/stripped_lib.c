/*
 * stripped_lib.c: a shared library the build strips of everything but its dynamic symbols, as
 * Debian ships its libraries. stripped_make, exported, calls an internal function that
 * allocates: the frame that asks for memory has no name, its caller has one.
 */
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) static char *fill(size_t n, int c)
{
    char *p = malloc(n);
    if (p)
        memset(p, c, n);
    return p;
}

char *stripped_make(size_t n)
{
    return fill(n, 'x');
}
