/*
 * failures.c: the library's statuses and their messages, and the log a host and a server say
 * their notes and warnings through. Arrays grow with the converter's rheap_grow.
 */
#include <stdarg.h>
#include <stdio.h>

#include "collector.h"
#include "rheap_analysis.h"

#define RC__STATUS_ENTRY(name, code, text) {code, text},

/* The rules are the analysis library's (ra_status_text, ra_vfail): the collector's statuses
 * and messages only differ in their list and their buffer. */
const char *rc_status_str(int status)
{
    static const ra_status_entry_t statuses[] = {RC_STATUS_LIST(RC__STATUS_ENTRY)};
    return ra_status_text(statuses, sizeof statuses / sizeof statuses[0], status);
}

rc_status_t rc__fail(rc_err_t *err, rc_status_t status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ra_vfail(err ? err->msg : NULL, sizeof err->msg, status, fmt, ap);
    va_end(ap);
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
