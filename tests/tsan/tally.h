/*
 * tally.h: reads a recording back with the rip reader and counts what it holds, per thread
 * file, for the TSan tests' exact checks. Any file that does not read to its end cleanly fails
 * the test with the reader's message.
 */
#ifndef RHEAP_TSAN_TALLY_H
#define RHEAP_TSAN_TALLY_H

#include <limits.h>
#include <stdint.h>

#include "rip.h"

/* One thread file. The address checks follow one thread inside one window: a free (or the
 * block a realloc replaced) with no allocation before it in the file is `unmatched`, an address
 * allocated again while still live is `double_live`, and `live_end` blocks are left at the end. */
typedef struct {
    uint32_t tid;
    char name[17];                      /* the last thread-name record */
    uint64_t calls[RIP_CALL_PVALLOC + 1]; /* allocations by call */
    uint64_t allocs, frees, marks, stacks;
    uint64_t stackless;                 /* allocations without a backtrace */
    uint64_t unmatched, double_live, live_end;
    uint64_t last_t;                    /* the latest event time (ns since the start) */
    int has_totals;                     /* profile mode: the last totals record */
    uint64_t totals_allocs, totals_bytes, totals_frees;
} rheap_tsan_file_t;

#define RHEAP_TSAN_MAX_FILES 256

typedef struct {
    char dir[PATH_MAX];
    uint32_t pid, ppid;
    unsigned ons, offs;                 /* on and off records in process.rip */
    char on_how[32], off_how[32];       /* the last of each */
    uint64_t off_t;                     /* time of the last off record */
    uint64_t lost;                      /* sum of the lost records */
    unsigned nfiles;
    rheap_tsan_file_t files[RHEAP_TSAN_MAX_FILES];
} rheap_tsan_rec_t;

/* Reads the recording in `dir` into *out (which must be zeroed by the caller); any reading
 * error fails the test. */
void rheap_tsan_read(const char *dir, rheap_tsan_rec_t *out);

/* The file of the thread with this name, or NULL. */
const rheap_tsan_file_t *rheap_tsan_by_name(const rheap_tsan_rec_t *rec, const char *name);

/* Prints "tsan_threads: <message>" and the kept directory, and exits with status 1. */
void rheap_tsan_fail(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

#endif
