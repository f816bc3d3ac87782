/*
 * failures.c: the library's statuses and their messages, the log a host and a server say their
 * notes and warnings through, and the array growth every table of the collector uses.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector.h"

#define RC__STATUS_TEXT(name, code, text) \
    case name: return text;

const char *rc_status_str(int status)
{
    switch (status) {
    RC_STATUS_LIST(RC__STATUS_TEXT)
    }
    return "unknown status";
}

rc_status_t rc__fail(rc_err_t *err, rc_status_t status, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return status;
}

void rc__log(const rc_log_t *log, rc_level_t level, const char *fmt, ...)
{
    if (!log || !log->fn)
        return;
    /* A sentence names a path or two at most: a fixed buffer, so that a host short of memory
     * can still say so. */
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    log->fn(log->user, level, msg);
}

int rc__grow(void *arrayp, size_t *cap, size_t n, size_t elem, size_t first)
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
