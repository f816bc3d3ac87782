/*
 * rheap_settings.h: the recorder's settings, one table and one parser, shared by librheap (which
 * reads them from its environment at start-up) and `rheap run` (which checks its options before
 * it starts the program and passes them on in that environment): the header of the small
 * library rheap_settings, not installed. Both go through the same
 * functions, so a value one of them accepts the other accepts too, and means the same.
 *
 * Everything here may run inside malloc before libc is fully up: nothing allocates, nothing
 * reads the locale, nothing touches errno. The table is plain constant data.
 */
#ifndef RHEAP_SETTINGS_H
#define RHEAP_SETTINGS_H

#include <stddef.h>
#include <stdint.h>

/* The settings, in the order librheap reads them. */
typedef enum {
    RHEAP__SET_DEPTH,       /* frames per backtrace */
    RHEAP__SET_SAMPLE_RATE, /* fraction of allocations with a backtrace, as parts per million */
    RHEAP__SET_BUFFER_KB,   /* per-thread buffer (lz4 block) in KiB, rounded up to a block size */
    RHEAP__SET_MAX_THREADS, /* threads recording at once */
    RHEAP__SET_SIGNAL,      /* toggle signal number */
    RHEAP__SET_DIR,         /* where rip-<pid>/ is made; the value is the text's length */
    RHEAP__SET_ENABLE,      /* record from the start (1) or not (0) */
    RHEAP__SET_MODE,        /* trace (0: every event) or profile (1: sampled by bytes) */
    RHEAP__SET_SAMPLE_INTERVAL, /* profile mode: mean bytes allocated between two samples */
    RHEAP__SET_SAMPLE_SEED, /* profile mode: seed of the sampling draws; 0 picks one */
    RHEAP__SET_SEGMENT_KB,  /* profile mode: a thread file's size that starts a new segment */
    RHEAP__SET_RSS_MS,      /* ms between samples of the process's resident memory; 0: none */
    RHEAP__SET_MMAP,        /* record the program's own anonymous mmap/munmap/mremap (1) or not */
    RHEAP__SET_COUNT
} rheap__setting_id_t;

/* How a setting's text is read. */
typedef enum {
    RHEAP__TYPE_UINT,   /* decimal digits only, within [min, max] */
    RHEAP__TYPE_BLOCK,  /* a UINT, then rounded up to 64, 256, 1024 or 4096 */
    RHEAP__TYPE_RATE,   /* a decimal fraction in [0, 1] ("1", "0.25", ".001"), in ppm */
    RHEAP__TYPE_SIGNAL, /* a name (USR2, SIGUSR2, RTMIN+3) or a number; "" means none */
    RHEAP__TYPE_PATH,   /* any text shorter than max bytes; "" means the default */
    RHEAP__TYPE_BOOL,   /* "1" or "0"; "" means the default */
    RHEAP__TYPE_MODE,   /* "trace" (0) or "profile" (1); "" means the default */
} rheap__setting_type_t;

/* One row per setting: everything the environment's parser, rheap_enable's checks and `rheap
 * run`'s options and help know of it. A new setting is one row here (and its enum above). */
typedef struct {
    const char *env;      /* the environment variable librheap reads */
    const char *option;   /* `rheap run`'s option for it, or NULL when run has none */
    const char *flag;     /* when the option takes no value: the text it sets; else NULL */
    const char *run_text; /* what `rheap run` sets without its option: NULL leaves the
                           * environment's value, "" removes it */
    uint8_t type;         /* rheap__setting_type_t */
    uint64_t min, max;    /* the accepted range of a number (UINT, BLOCK), or PATH's length bound */
    uint64_t def;         /* the value when unset (for PATH and ENABLE: see their users) */
    const char *unit;     /* UINT: what the number counts, for messages ("frames"), or "" */
    const char *help;     /* `rheap run --help`'s text for the option; lines after the first
                           * are indented under it */
} rheap__setting_t;

extern const rheap__setting_t rheap__settings[RHEAP__SET_COUNT];

/* Results of rheap__setting_parse. */
enum {
    RHEAP__SETTING_OK,    /* *value holds the value */
    RHEAP__SETTING_EMPTY, /* an empty text, which this setting takes as "use the default" */
    RHEAP__SETTING_BAD,   /* not an accepted value; *value is untouched */
};

/* Reads `text` as the value of setting `id`. No allocation, no locale, no errno; safe inside
 * malloc and in a signal handler. Values: UINT and BLOCK the number (BLOCK rounded up), RATE
 * parts per million, SIGNAL the signal number, PATH the text's length, BOOL 0 or 1, MODE
 * 0 (trace) or 1 (profile). */
int rheap__setting_parse(rheap__setting_id_t id, const char *text, uint64_t *value);

/* 0 when `value` lies in the range of setting `id` (a UINT's or BLOCK's [min, max], RATE's
 * [0, 1000000] ppm, BOOL's and MODE's [0, 1]), else -1: rheap_enable checks its struct with it. */
int rheap__setting_check(rheap__setting_id_t id, uint64_t value);

/* Writes into buf (always NUL-terminated, cut to len) what setting `id` accepts, as messages
 * say it after "expected ", made from its type and range. Returns buf. No allocation. */
const char *rheap__setting_expected(rheap__setting_id_t id, char *buf, size_t len);

/* Writes into buf the range and default of setting `id` as `rheap run --help` shows them after
 * its help text (", 1-1024 (default 64)"), or "" for a setting with no number. Returns buf. */
const char *rheap__setting_range(rheap__setting_id_t id, char *buf, size_t len);

/* The buffer size the writer uses for a request of `kb` KiB: the lz4 block size (64, 256, 1024
 * or 4096) at or above it, 4096 at most. */
uint64_t rheap__block_kb(uint64_t kb);

#endif
