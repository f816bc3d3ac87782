/*
 * grow.c: growing an array, the one way the command's files do it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int cli__grow(void *arrayp, size_t *cap, size_t n, size_t elem, size_t first)
{
    if (n < *cap)
        return 0;
    size_t nc = *cap ? *cap * 2 : first;
    if (nc <= n)
        nc = n + 1;
    if (nc > SIZE_MAX / elem)
        return -1;
    /* Through memcpy: arrayp points to a pointer of the caller's element type, not a void *. */
    void *old, *grown;
    memcpy(&old, arrayp, sizeof old);
    grown = realloc(old, nc * elem);
    if (!grown)
        return -1;
    memcpy(arrayp, &grown, sizeof grown);
    *cap = nc;
    return 0;
}
