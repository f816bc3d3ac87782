/*
 * errors.c: the library's statuses and their messages. Arrays grow with the converter's
 * rheap_grow.
 */
#include <stdarg.h>
#include <stdio.h>

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
