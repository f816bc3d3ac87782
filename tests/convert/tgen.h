/*
 * tgen.h: helpers for the converter tests. They write recordings with the real rip writer,
 * using return addresses and module maps of the test program itself, so that symbolization can
 * be checked against file:line values the compiler knows (__LINE__), and they run the real
 * `rheap` binary and query its database with SQLite.
 */
#ifndef TGEN_H
#define TGEN_H

#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>

#include <rip.h>

#include "check.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TGEN_MAX_DEPTH 64

/* A captured call stack: ips[0] is the return address into the function that called
 * tgen_capture, as the tracer records for the function that called malloc. */
typedef struct {
    uint64_t ips[TGEN_MAX_DEPTH];
    uint32_t depth;
} tgen_stack_t;

void tgen_capture(tgen_stack_t *st);
/* Distinct stacks: tgen_capture called from the same site at recursion depth 1, 2, ... */
void tgen_capture_at(int depth, tgen_stack_t *st);

/* One open .rip file. */
typedef struct {
    int fd;
    void *mem;
    rip_writer_t *w;
    void *stage;        /* tgen_open_staged: the staging area's mapping */
    size_t stage_size;
} tgen_file_t;

/* Creates DIR/NAME and starts a file with that header (block size 64 KiB). Exits on failure. */
void tgen_open(tgen_file_t *f, const char *dir, const char *name, const rip_header_t *h);
/* The same with a staging area, as librheap writes thread files: every record is in the file
 * as soon as it is written; the first block (the header) is written at once. */
void tgen_open_staged(tgen_file_t *f, const char *dir, const char *name, const rip_header_t *h);
/* Writes the module list of this process (dl_iterate_phdr) into f at time t. */
void tgen_modules(tgen_file_t *f, uint64_t t);
void tgen_flush(tgen_file_t *f);
void tgen_close(tgen_file_t *f);

/* Writes DIR/process.rip: process, config, on at 0 and (if off_t) off at off_t. */
void tgen_process(const char *dir, uint32_t pid, uint32_t recording, uint64_t start_ns,
                  uint32_t ppid, uint64_t off_t);

/* Header of a thread file of the test recording. */
rip_header_t tgen_thread_header(uint32_t pid, uint32_t tid, uint32_t serial, uint64_t start_ns);

/* Makes an empty directory (removing an old one). */
void tgen_fresh_dir(const char *dir);

/* Runs argv (NULL-terminated) with stdout discarded and stderr captured into `errbuf`; returns the exit status. */
int tgen_run(char *const argv[], char *errbuf, size_t errlen);

/* Steps the statement to its end, printing each row to `out` as its values (NULL for null)
 * each followed by '|', one line a row. */
void tgen_print_rows(FILE *out, sqlite3_stmt *st);

/* Every row of every table of the database at path, table by table in name order and each in
 * rowid order, one line a row, the meta row of the conversion's time left out (it is when, not
 * what): two conversions compared whole (malloc'd; exits on an error). */
char *tgen_dump_tables(const char *path);

/* Every row the SQL script at sql_path selects from the database, as one string (malloc'd;
 * exits on an error in the script). */
char *tgen_script_rows(const char *db_path, const char *sql_path);

/* Prints to stderr, under `what`, the first line where texts a and b differ. */
void tgen_first_difference(const char *what, const char *a, const char *b);

/* Query helpers: the first column of the first row (exits if there is no row when `must`). */
sqlite3 *tgen_db_open(const char *path);
int64_t tgen_int(sqlite3 *db, const char *fmt, ...);
/* Returns a static buffer; "(null)" for NULL, "(no row)" when there is none. */
const char *tgen_text(sqlite3 *db, const char *fmt, ...);

#ifdef __cplusplus
}
#endif
#endif
