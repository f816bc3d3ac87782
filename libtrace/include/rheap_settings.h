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

typedef struct {
    const char *env;      /* the environment variable librheap reads */
    const char *option;   /* `rheap run`'s option for it, or NULL when run has none */
    uint8_t type;         /* rheap__setting_type_t */
    uint64_t min, max;    /* the accepted range of a number (UINT, BLOCK), or PATH's length bound */
    uint64_t def;         /* the value when unset (for PATH and ENABLE: see their users) */
    const char *expected; /* what is accepted, for messages: "expected <this>" */
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

/* The buffer size the writer uses for a request of `kb` KiB: the lz4 block size (64, 256, 1024
 * or 4096) at or above it, 4096 at most. */
uint64_t rheap__block_kb(uint64_t kb);

#endif
