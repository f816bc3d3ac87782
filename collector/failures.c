/*
 * failures.c: the library's statuses and their messages, and the log a host and a server say
 * their notes and warnings through. Arrays grow with the converter's rheap_grow.
 */
#include <stdarg.h>
#include <stdio.h>

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
