/*
 * rheap.h: control API of librheap, the heap recorder.
 *
 * librheap wraps malloc, free, calloc, realloc, reallocarray, posix_memalign, aligned_alloc,
 * memalign, valloc and pvalloc, every form of C++'s operator new and delete, and the functions
 * of their own that jemalloc, tcmalloc and mimalloc export (mallocx, tc_malloc, mi_malloc, ...).
 * While recording is on, every call is written, with its time,
 * thread, size, address and backtrace, into a recording directory `rip-<pid>/` that
 * `rheap convert` turns into a SQLite database.
 *
 * Preloaded (LD_PRELOAD=librheap.so) it records from the start unless RHEAP_ENABLE=0; linked
 * into a program, it records only between rheap_enable() and rheap_disable() (or from the start
 * with RHEAP_ENABLE=1). All functions are thread-safe and may be called from any thread.
 */
#ifndef RHEAP_H
#define RHEAP_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "rheap_version.h" /* RHEAP_VERSION_STRING, generated from the build's version */

typedef struct {
    /* Most frames kept per backtrace (1-1024). The ranges here are those of the settings table
     * (RHEAP_DEPTH and the others), which checks the environment and this struct alike. */
    unsigned max_stack_depth;
    /* Most threads recording at the same time; a thread beyond it is not recorded and the
     * recording says how many events were lost. */
    unsigned max_threads;
    /* Per-thread buffer of encoded events in KiB, 1-4096, rounded up to one lz4 block (64, 256,
     * 1024 or 4096). */
    unsigned buffer_kb;
    /* Fraction of allocations that get a backtrace, 0.0-1.0. The others are still recorded,
     * with no backtrace, so byte counts stay exact. */
    double sample_rate;
    /* Where rip-<pid>/ is created; NULL or "" means the current directory. rheap_enable
     * creates it and its missing parents, as mkdir -p does. */
    const char *output_dir;
    /* RHEAP_MODE_TRACE records every call; RHEAP_MODE_PROFILE records a sample of allocations,
     * about one per sample_interval bytes allocated, each with its backtrace and its free, and
     * counts the calls and bytes of all of them (sample_rate is then unused). */
    int mode;
    /* Profile mode: mean bytes allocated between two samples (1-999999999). */
    unsigned long sample_interval;
} rheap_config;

enum { RHEAP_MODE_TRACE = 0, RHEAP_MODE_PROFILE = 1 };

/* The defaults, shared by RHEAP_CONFIG_INIT and the environment's settings. */
#define RHEAP_DEFAULT_DEPTH 64
#define RHEAP_DEFAULT_MAX_THREADS 4096
#define RHEAP_DEFAULT_BUFFER_KB 64
#define RHEAP_DEFAULT_SAMPLE_PPM 1000000 /* sample_rate 1.0, in parts per million */
#define RHEAP_DEFAULT_SAMPLE_INTERVAL 524288 /* 512 KiB, jemalloc's lg_prof_sample 19 */
#define RHEAP_DEFAULT_SEGMENT_KB 4096 /* profile mode: 4 MiB thread files, then a new segment */
#define RHEAP_DEFAULT_RSS_MS 10  /* a sample of resident memory at most every 10 ms */
#define RHEAP_DEFAULT_MMAP 1     /* the program's own mappings are recorded */

#define RHEAP_CONFIG_INIT                                                                      \
    { RHEAP_DEFAULT_DEPTH, RHEAP_DEFAULT_MAX_THREADS, RHEAP_DEFAULT_BUFFER_KB,                  \
      RHEAP_DEFAULT_SAMPLE_PPM / 1e6, NULL, RHEAP_MODE_TRACE, RHEAP_DEFAULT_SAMPLE_INTERVAL }

/* Starts a new recording in a new directory: rip-<pid>/ the first time in a process, then
 * rip-<pid>-2/, rip-<pid>-3/, ... (an existing directory is never reused). `config` NULL means
 * RHEAP_CONFIG_INIT. Returns 0, or -1 with errno set (EALREADY: already recording; EINVAL: bad
 * config, a field outside its range; otherwise why the directory could not be created). When the recording under way was
 * not started by rheap_enable (RHEAP_ENABLE=1, the toggle signal), the call's settings are not
 * applied, so it also writes one line on stderr naming the directory in use. A directory is
 * never silently other than the one expected: when the name rip-<pid>[-N] was taken by a
 * directory the recorder did not make, one stderr line names the directory used instead. */
int rheap_enable(const rheap_config *config);

/* Stops recording: every thread's buffered events are written and the files completed. Returns
 * 0, or -1 with errno EALREADY when not recording. */
int rheap_disable(void);

/* Writes every thread's buffered events to disk now, leaving recording on. 0 or -1 (not
 * recording: errno EALREADY). */
int rheap_flush(void);

/* Records a marker with this label (truncated to 255 bytes) at the current time, in the calling
 * thread. Markers name moments to compare in queries. 0, or -1 when not recording. */
int rheap_mark(const char *label);

/* 1 while recording, else 0. */
int rheap_is_enabled(void);

/* The directory of the current (or last) recording, or NULL if none was made. The pointer stays
 * valid until the next rheap_enable. */
const char *rheap_output_path(void);

#ifdef __cplusplus
}
#endif
#endif
