/*
 * array.c: the one way the converter, the other libraries and the command grow their arrays
 * (rheap_grow, in the public header).
 */
#include <stdlib.h>
#include <string.h>

#include "rheap_convert.h"

int rheap_grow(void *arrayp, size_t *cap, size_t n, size_t elem, size_t first)
{
    if (n < *cap)
        return 0;
    size_t nc = *cap ? *cap * 2 : first;
    void *old, *p;
    memcpy(&old, arrayp, sizeof old);
    p = realloc(old, nc * elem);
    if (!p)
        return -1;
    memcpy(arrayp, &p, sizeof p);
    *cap = nc;
    return 0;
}
