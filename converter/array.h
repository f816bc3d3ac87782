/*
 * array.h: growing an array, the one way the converter (and the `rheap` command) does it.
 */
#ifndef RHEAP_ARRAY_H
#define RHEAP_ARRAY_H

#include <stddef.h>

/* Makes room for element n of the array *arrayp (a pointer to any element type) holding *cap
 * elements of `elem` bytes: doubles it, or allocates `first` elements when empty. 0, or -1 when
 * out of memory (the array is left as it was). */
int cv__grow(void *arrayp, size_t *cap, size_t n, size_t elem, size_t first);

#endif
