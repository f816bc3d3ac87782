/*
 * errors.c: the library's statuses and their messages, and the array growth every reader uses.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"

#define RA__STATUS_TEXT(name, code, text) \
    case name: return text;

const char *ra_status_str(int status)
{
    switch (status) {
    RA_STATUS_LIST(RA__STATUS_TEXT)
    }
    return "unknown status";
}

ra_status_t ra__fail(ra_err_t *err, ra_status_t status, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return status;
}

int ra__grow(void *arrayp, size_t *cap, size_t n, size_t elem, size_t first)
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
