/*
 * errors.c: the converter's one way of saying what went wrong. A part that fails fills a
 * cv__err_t (a status of RHEAP_CONVERT_STATUS_LIST and one sentence naming the file, the offset
 * and what was expected there) and returns the status; the file that runs the whole job
 * (conversion.c, resym.c) hands it to the caller's diag callback with cv__err_report. The
 * library itself prints nothing.
 */
#include <stdarg.h>
#include <stdio.h>

#include "converter.h"

static rheap_convert_status_t vset(cv__err_t *err, rheap_convert_status_t status,
                                   const char *file, uint64_t offset, const char *fmt, va_list ap)
{
    if (!err)
        return status;
    err->status = status;
    err->offset = offset;
    snprintf(err->file, sizeof err->file, "%s", file ? file : "");
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    return status;
}

rheap_convert_status_t cv__fail(cv__err_t *err, rheap_convert_status_t status, const char *file,
                                uint64_t offset, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vset(err, status, file, offset, fmt, ap);
    va_end(ap);
    return status;
}

void cv__err_report(const cv__err_t *err, void (*diag)(void *user, const rheap_convert_diag_t *d),
                    void *user)
{
    if (!diag || !err)
        return;
    rheap_convert_diag_t d = {
        err->status == RHEAP_CONVERT_WARNINGS ? RHEAP_CONVERT_WARNING : RHEAP_CONVERT_ERROR,
        err->message, err->file[0] ? err->file : NULL, err->offset};
    diag(user, &d);
}
