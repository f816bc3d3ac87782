/*
 * rheap_convert.h: the converter library. Recordings (rip-<pid>[-N]/ directories written by
 * librheap, format in rip-format/FORMAT.md) in, one SQLite database (schema.sql) out.
 *
 * The library prints nothing. What a user should hear about (warnings, the error that stopped
 * a conversion) and how far it has come reach the caller through the callbacks of
 * rheap_convert_opts_t; the `rheap` command turns them into its lines and progress bar.
 */
#ifndef RHEAP_CONVERT_H
#define RHEAP_CONVERT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* X(NAME, CODE, TEXT): the results of a conversion. The codes are the exit statuses of
 * `rheap convert`, which passes them on unchanged; keep them stable. */
#define RHEAP_CONVERT_STATUS_LIST(X)                                                           \
    X(RHEAP_CONVERT_OK, 0, "converted")                                                        \
    X(RHEAP_CONVERT_E_REFUSED, 1, "refused: the output exists and force was not set, or an "   \
                                  "input was given twice; nothing written")                    \
    X(RHEAP_CONVERT_E_INPUT, 2, "bad input; nothing written")                                  \
    X(RHEAP_CONVERT_WARNINGS, 3, "converted, with warnings")                                   \
    X(RHEAP_CONVERT_E_OUTPUT, 4, "the database could not be written")

#define RHEAP_CONVERT__ENUM(name, code, text) name = code,
typedef enum { RHEAP_CONVERT_STATUS_LIST(RHEAP_CONVERT__ENUM) } rheap_convert_status_t;
#undef RHEAP_CONVERT__ENUM

/* The TEXT of a status; "unknown status" for any other value. */
const char *rheap_convert_status_str(int status);

typedef enum { RHEAP_CONVERT_WARNING, RHEAP_CONVERT_ERROR } rheap_convert_level_t;

/* One diagnostic. `message` is the whole sentence, in the form "FILE: offset N: what" when it
 * concerns a place in a file; `file` and `offset` repeat that place for a caller that wants it
 * apart (file NULL and offset UINT64_MAX when the message is about no file or no offset). All
 * pointers are valid during the callback only. Warnings may come at any time; an error
 * ends the conversion (the first one decides the status rheap_convert returns). */
typedef struct {
    rheap_convert_level_t level;
    const char *message;
    const char *file;
    uint64_t offset;
} rheap_convert_diag_t;

/* How far the conversion is: bytes of thread files read out of the total, and events merged.
 * `final` is 1 on the last call, when everything has been read and the database is about to be
 * committed. */
typedef struct {
    uint64_t bytes_done, bytes_total;
    uint64_t events;
    int final;
} rheap_convert_progress_t;

struct sqlite3;

typedef struct {
    const char *const *inputs; /* recording directories, converted in this order */
    size_t ninputs;
    const char *output;        /* the database; built as OUTPUT.tmp-<pid> and renamed */
    int force;                 /* replace an existing output */
    /* Called for each warning and for the error that ends a conversion; NULL: not told. */
    void (*diag)(void *user, const rheap_convert_diag_t *d);
    /* Called every 65536 events and once more at the end; NULL: not told (and not counted). */
    void (*progress)(void *user, const rheap_convert_progress_t *p);
    /* Called once when every table but `allocations` is complete and committed (the summary
     * tables, stacks, processes, meta) while the rows of `allocations` are still being put into
     * the file (they read as none): `db` is the database being built, to be read on this thread
     * during the call and not changed (temp objects must be dropped before returning). This is
     * how `rheap run` prints its summary without waiting for every row. NULL: not called. */
    void (*summary)(void *user, struct sqlite3 *db);
    void *user;                /* passed to the callbacks */
    /* Live conversion, as `rheap run` does while the program runs. When next_input is set, the
     * inputs come from it instead of inputs/ninputs: each call returns the next recording
     * directory to convert (valid until the next call), waiting as long as it takes, and NULL
     * once there are no more. A recording may still be being written: the converter reads what
     * is written, merges the threads' events as far as no thread can still write an earlier
     * one, and calls growing(live_user, dir, wait) when it can go no further: it returns 1 while
     * dir may still grow, after waiting a moment first when `wait` is set (it should return at
     * once when the recording stops growing). Once it returns 0 the rest is read as from a
     * finished recording. The database is the one a conversion of the finished recordings
     * would write (ids and row order may differ). Progress is not reported. A live conversion
     * has two workers, the calling thread and one of the converter's, each converting a
     * recording: next_input is called from either, one call at a time; growing from both at
     * once (each about its own recording); diag from either, one call at a time. */
    const char *(*next_input)(void *live_user);
    int (*growing)(void *live_user, const char *dir, int wait);
    void *live_user;
    /* The memory budget of the store of live blocks, in bytes: over it, the oldest live blocks
     * go to a temporary file beside the output (removed however the conversion ends), and come
     * back at the end in the order they would have had (the database is the same). 0: the
     * environment's RHEAP_CONVERT_MEMORY (rheap_convert_parse_memory's text) if set, else a
     * quarter of the memory available when the conversion starts; RHEAP_CONVERT_MEMORY_NONE:
     * never spill. */
    uint64_t memory;
} rheap_convert_opts_t;

#define RHEAP_CONVERT_OPTS_INIT {NULL, 0, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0}
#define RHEAP_CONVERT_MEMORY_NONE UINT64_MAX

/* Reads a memory budget as `--memory` and RHEAP_CONVERT_MEMORY give it: a number of bytes with
 * an optional K, M, G or T (KiB, MiB, GiB, TiB: powers of 1024), or "0" or "none" for no budget
 * (RHEAP_CONVERT_MEMORY_NONE). 0 and *bytes set, or -1 when text is not one of those. */
int rheap_convert_parse_memory(const char *text, uint64_t *bytes);

/* What a successful conversion wrote. */
typedef struct {
    uint64_t events;           /* allocation and free events read */
    uint64_t allocations;      /* rows of the allocations table */
    uint64_t never_freed;      /* of them, blocks still live at the end of their recording */
    uint64_t stacks;           /* distinct backtraces */
    uint64_t live_events;      /* of the events, those merged while their recording was still
                                * being written (live conversion) */
    uint64_t warnings;
    double seconds;            /* from opening the database to committing it */
    uint64_t spilled;          /* live blocks written to the spill file (the memory budget) */
    uint64_t spill_bytes;      /* the spill file's bytes, all recordings (0: none spilled) */
    uint64_t overlapped;       /* recordings whose conversion began while another's was under
                                * way (a live conversion has two workers; meta's
                                * overlapped_recordings) */
    uint64_t turn_rows;        /* rows a worker moved to a temporary file while its recording
                                * waited for its turn, so as to convert on (two workers) */
} rheap_convert_result_t;

/* Converts o->inputs into the database o->output. Every input is checked before the output is
 * touched; on any failure the temporary file is removed and the output left as it was. Returns
 * RHEAP_CONVERT_OK or RHEAP_CONVERT_WARNINGS with *result filled (result may be NULL), or an
 * error status after an ERROR diagnostic saying why. Not thread-safe: one conversion at a time per
 * process (SQLite is configured single-threaded for speed). */
rheap_convert_status_t rheap_convert(const rheap_convert_opts_t *o, rheap_convert_result_t *result);

/* Removes the temporary file of the conversion in progress, from another thread or a signal
 * handler (one unlink; async-signal-safe): the conversion can no longer put its database in
 * place, and fails if it goes on. For a caller that ends the process during a conversion (an
 * interrupt). Does nothing when no conversion is in progress. */
void rheap_convert_discard(void);

/* The schema version written to meta.schema_version. */
int rheap_convert_schema_version(void);

/* What rheap_resymbolize changed. */
typedef struct {
    uint64_t frames_before;    /* frames with a source file before */
    uint64_t frames_after;     /* and after */
    uint64_t warnings;
} rheap_resymbolize_result_t;

/* Symbolizes every frame of a finished database again, from the module paths, build-ids and
 * offsets it stores, with the symbolizer of a conversion (debug files are looked for as
 * RHEAP_DEBUG_DIR says at the time of the call): after installing debug information, frames
 * get names and file:line. A module whose file is gone or whose build-id differs from the
 * recorded one keeps its frames, with a WARNING diagnostic. db is open read-write (the caller
 * checked that it is a rheap database of this schema version); name is how messages call it.
 * Everything happens in one transaction. Returns RHEAP_CONVERT_OK or RHEAP_CONVERT_WARNINGS with
 * *result filled (result may be NULL), or RHEAP_CONVERT_E_OUTPUT after an ERROR diagnostic,
 * the database unchanged. diag may be NULL. Not thread-safe, as rheap_convert. */
rheap_convert_status_t rheap_resymbolize(struct sqlite3 *db, const char *name,
                                         void (*diag)(void *user, const rheap_convert_diag_t *d),
                                         void *user, rheap_resymbolize_result_t *result);


/* ---- Symbolizing addresses outside a conversion ----
 * The symbolizer of a conversion, for a reader that follows recordings itself (`rheap serve`
 * keeps the live heap of running processes without writing a database). */

typedef struct rheap_symbols rheap_symbols_t;

/* One source-level frame of a resolved address. Strings NULL when unknown, line 0. */
typedef struct {
    const char *function;      /* demangled */
    const char *file;
    uint32_t line;
} rheap_symbol_line_t;

/* A symbolizer that looks debug files up as a conversion does (RHEAP_DEBUG_DIR, /usr/lib/debug).
 * NULL when out of memory. destroy(NULL) is a no-op. Not thread-safe: one thread per symbolizer
 * (libdw is not). */
rheap_symbols_t *rheap_symbols_create(void);
void rheap_symbols_destroy(rheap_symbols_t *s);
/* The id (>= 0) of a module file, by path and build id as a recording's module record gives
 * them (the file is opened on the first lookup); -1 when out of memory. */
int rheap_symbols_module(rheap_symbols_t *s, const char *path, size_t path_len,
                         const uint8_t *build_id, size_t build_id_len);
/* The module's path, for a valid id. */
const char *rheap_symbols_module_path(const rheap_symbols_t *s, int module);
/* Resolves the return address `offset` (relative to the module's load bias; module -1: an
 * absolute address in no module) into *lines, innermost (inlined) function first and the
 * function they were inlined into last. Each address is resolved once; the lines live as long as
 * the symbolizer. Returns how many lines (>= 1), 0 when out of memory. */
size_t rheap_symbols_resolve(rheap_symbols_t *s, int module, uint64_t offset,
                             const rheap_symbol_line_t **lines);

/* The number of blocks a sampled block of `size` bytes stands for in a profile-mode recording
 * drawn with this mean interval (rip-format/FORMAT.md section 3a): 1 / (1 - exp(-size/interval)),
 * and 1 in trace mode (interval 0). Its bytes stand for size times as many. */
double rheap_profile_weight(uint64_t size, uint64_t interval);

/* ---- Growing an array (array.c) ----
 * The one array growth of every library and the command, so that none keeps a copy. */

/* Makes room for element n of the array *arrayp (a pointer to any element type) holding *cap
 * elements of `elem` bytes: doubles it, or allocates `first` elements when empty. 0, or -1 when
 * out of memory (the array is left as it was). */
int rheap_grow(void *arrayp, size_t *cap, size_t n, size_t elem, size_t first);

#ifdef __cplusplus
}
#endif

#endif
