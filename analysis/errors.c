/*
 * errors.c: the library's statuses and their messages, and the two rules every library of
 * rheap on this one says its own through (the collector's failures.c too): a status's text
 * looked up in its list, a failure's message written into the caller's buffer. Arrays grow
 * with the converter's rheap_grow.
 */
#include <stdarg.h>
#include <stdio.h>

#include "analysis.h"

const char *ra_status_text(const ra_status_entry_t *table, size_t n, int status)
{
    for (size_t i = 0; i < n; i++)
        if (table[i].code == status)
            return table[i].text;
    return "unknown status";
}

int ra_vfail(char *msg, size_t cap, int status, const char *fmt, va_list ap)
{
    if (msg && cap)
        vsnprintf(msg, cap, fmt, ap);
    return status;
}

#define RA__STATUS_ENTRY(name, code, text) {code, text},

const char *ra_status_str(int status)
{
    static const ra_status_entry_t statuses[] = {RA_STATUS_LIST(RA__STATUS_ENTRY)};
    return ra_status_text(statuses, sizeof statuses / sizeof statuses[0], status);
}

ra_status_t ra__fail(ra_err_t *err, ra_status_t status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ra_vfail(err ? err->msg : NULL, sizeof err->msg, status, fmt, ap);
    va_end(ap);
    return status;
}
