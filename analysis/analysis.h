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

/* ---- arena.c: small arrays cut from large chunks, freed together ---- */

typedef struct {
    char **chunks;
    size_t n, cap;
    char *free_at; /* the unused end of the last chunk */
    size_t left;   /* its bytes */
} ra__arena_t;

/* n bytes aligned for a pointer, valid until ra__arena_free; NULL when out of memory. A zeroed
 * ra__arena_t is an empty arena. */
void *ra__arena_alloc(ra__arena_t *a, size_t n);
/* Gives back every piece; the arena is empty and usable again. */
void ra__arena_free(ra__arena_t *a);

/* ---- pbuild.c: the one profile.proto encoder (ra_pb_* and ra_pprof_encode) ---- */

/* A profile with only its string 0 (""); NULL when out of memory. Out of memory later on is
 * remembered by the profile, and ra_pb_finish then fails. */
ra_pb_t *ra__pb_new(void);
/* The string table index of s (NULL: ""), interned the first time. */
int64_t ra__pb_str(ra_pb_t *b, const char *s);
/* Appends a sample type (its values come in this order in every sample). */
void ra__pb_type(ra_pb_t *b, const char *type, const char *unit);
/* The type shown first, the period (type space, unit bytes) and the time and duration in ns. */
void ra__pb_period(ra_pb_t *b, const char *default_type, int64_t period, int64_t time_nanos,
                   int64_t duration_nanos);
/* The id of the mapping the caller keys `key`: a module at `path` with build_id (NULL: none).
 * 0 when out of memory. */
uint64_t ra__pb_mapping(ra_pb_t *b, const char *key, const char *path, const char *build_id);
/* The id of the location the caller keys `key`: offset in mapping map (0: none, offset is the
 * address), its lines innermost first, taken the first time the key is met, their functions
 * told apart by module (NULL: by name and file only). 0 when out of memory. */
uint64_t ra__pb_location(ra_pb_t *b, const char *key, uint64_t map, uint64_t offset,
                         const char *module, const ra_pb_line_t *lines, size_t nlines);
/* A label: key (a string index) and a number or a string index, the other 0. */
typedef struct {
    int64_t key, num, str;
} ra__pb_label_t;
/* A sample: locations leaf first, one value per sample type, its labels. Returns the sample's
 * copy of the locations, valid as long as the profile (NULL when out of memory). */
const uint64_t *ra__pb_sample(ra_pb_t *b, const uint64_t *locs, size_t nlocs,
                              const int64_t *values, size_t nvalues,
                              const ra__pb_label_t *labels, size_t nlabels);

/* ---- params.c: the values parameters take ---- */

/* The value a query binds for parameter `name`: a time parameter (max_ns; a and b when no
 * marker has that label) given with a unit ("1.8s") becomes whole ns, written into buf (len
 * bytes); any other value is returned as it is. */
const char *ra__param_value(struct sqlite3 *db, const char *name, const char *v, char *buf,
                            size_t len);

/* Whether the database has the table or view `name` (one of an older schema may lack it): 1 or
 * 0, -1 on an SQLite error. */
int ra__has_table(struct sqlite3 *db, const char *name);

#endif
