/*
 * analysis.h: what the analysis library's files share and nothing outside it sees, grouped by
 * the file that defines them. The API is include/rheap_analysis.h.
 */
#ifndef RHEAP_ANALYSIS_PRIVATE_H
#define RHEAP_ANALYSIS_PRIVATE_H

#include <stddef.h>
#include <stdint.h>

#include "rheap_analysis.h"
#include "rheap_convert.h" /* rheap_grow */

/* ---- errors.c: the one way a failure is reported ---- */

/* Writes the message (printf-style) into err and returns status, so a failing path reads
 * `return ra__fail(err, RA_E_INPUT, "%s: ...", path);`. err may be NULL (the message is lost). */
ra_status_t ra__fail(ra_err_t *err, ra_status_t status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- pprof.c: the model as a profile ---- */

/* buf gzipped (as pprof reads profiles) into *out, malloc'ed, *outlen bytes. 0, or -1 out of
 * memory. Also pbuild.c's. */
int ra__gzip(const uint8_t *buf, size_t len, uint8_t **out, size_t *outlen);

/* ---- params.c: the values parameters take ---- */

/* The value a query binds for parameter `name`: a time parameter (max_ns; a and b when no
 * marker has that label) given with a unit ("1.8s") becomes whole ns, written into buf (len
 * bytes); any other value is returned as it is. */
const char *ra__param_value(struct sqlite3 *db, const char *name, const char *v, char *buf,
                            size_t len);

#endif
