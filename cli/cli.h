/*
 * cli.h: the `rheap` command's cross-file functions, grouped by the file that defines them.
 * The conversion itself lives in the converter library (converter/include/rheap_convert.h);
 * this folder parses command lines, prints, and reads finished databases.
 */
#ifndef RHEAP_CLI_H
#define RHEAP_CLI_H

#include <stddef.h>
#include <stdio.h>

#include "array.h"
#include "message.h"
#include "rheap_convert.h"
#include "rheap_version.h"

/* ---- convert.c: the conversion as the user sees it ---- */

/* Converts the recordings into output through the converter library, printing its warnings
 * and errors, a progress bar (progress: 1 always, 0 never, -1 when stderr is a terminal) and,
 * unless quiet, the summary line; with `brief`, `rheap run`'s summary (rheap__report_brief) as
 * soon as the summary tables are written, while the allocation rows are still being written.
 * With `live` (NULL otherwise), the inputs come from its next_input, growing and live_user
 * (rheap_convert_opts_t) instead of inputs/ninputs. Returns the exit status (an RHEAP_EXIT_*). */
int rheap__convert_cmd(const char *const *inputs, size_t ninputs, const rheap_convert_opts_t *live,
                       const char *output, int force, int progress, int quiet, int brief);

/* ---- query.c: canned queries, reading a database, printing results ---- */
struct sqlite3;

/* A query parameter declared in a query file's header:
 * `-- param: NAME = DEFAULT  (description)`. */
typedef struct {
    char *name, *def, *desc;
} rheap__qparam_t;

/* A loaded query file queries/NAME.sql. */
typedef struct {
    char *name, *path;
    char *title;               /* first line of the header comment, without "NAME:" */
    char *sql;                 /* the whole file */
    rheap__qparam_t *params;
    size_t nparams;
} rheap__query_t;

/* A parameter value given by the user, bound to :key. */
typedef struct {
    const char *key, *value;
} rheap__kv_t;

/* A fetched result: cells[row * ncols + col] is the text of a value, NULL for SQL NULL;
 * types[] holds the SQLite type of each cell. */
typedef struct {
    size_t ncols, nrows;
    char **names;
    char **cells;
    unsigned char *types;
} rheap__table_t;

typedef enum { RHEAP_FMT_COLUMN, RHEAP_FMT_CSV, RHEAP_FMT_JSON } rheap__fmt_t;

/* The directory of the running binary (PREFIX/bin when installed). 0 or -1. */
int rheap__exe_dir(char *buf, size_t len);
/* PREFIX/installdir/rest, where PREFIX is the parent of the binary's directory (installdir
 * absolute: used as is). 0 or -1 (too long). */
int rheap__install_path(const char *installdir, const char *rest, char *buf, size_t len);
/* The queries directory: $RHEAP_QUERIES, the installed share dir, or the source tree's.
 * NULL when none exists. */
const char *rheap__queries_dir(char *buf, size_t len);
/* Sorted names (without .sql) of the queries in dir; free each and the array. */
char **rheap__query_names(const char *dir, size_t *n);
/* Loads queries/NAME.sql; messages to err. Returns an RHEAP_EXIT_*. */
int rheap__query_load(const char *name, rheap__query_t *q, FILE *err);
void rheap__query_free(rheap__query_t *q);
/* Runs SQL (one or more statements) binding :key for each kv; the table holds the result of
 * the last statement that returns columns. 0, or -1 with a message in errbuf. */
int rheap__sql_fetch(struct sqlite3 *db, const char *sql, const rheap__kv_t *kv, size_t nkv,
                     rheap__table_t *t, char *errbuf, size_t errlen);
/* Runs a loaded query; a key that is not one of its parameters is a usage error listing the
 * valid ones. Returns an RHEAP_EXIT_*. */
int rheap__query_run(struct sqlite3 *db, const rheap__query_t *q, const rheap__kv_t *kv,
                     size_t nkv, rheap__table_t *t, FILE *err);
/* The value of column col in row, or NULL (no such row or column, or SQL NULL). */
const char *rheap__table_cell(const rheap__table_t *t, size_t row, const char *col);
void rheap__table_free(rheap__table_t *t);
void rheap__table_print(const rheap__table_t *t, rheap__fmt_t fmt, FILE *out);
/* Aligned columns, at most max_rows rows, each line prefixed with indent. */
void rheap__table_print_columns(const rheap__table_t *t, size_t max_rows, const char *indent,
                                FILE *out);
/* The same, calling after_row(row, arg) after each row is printed (to print lines under it). */
void rheap__table_print_rows(const rheap__table_t *t, size_t max_rows, const char *indent,
                             FILE *out, void (*after_row)(size_t row, void *arg), void *arg);
/* `rheap query ARGS...` (arguments after the command name). Returns the exit status. */
int rheap__cmd_query(int argc, char **argv);

/* ---- names.c: names made to fit a table ---- */
/* Turns the shortening and clipping off (--full-names). */
void rheap__names_full(int on);
/* Fills out with t as the column printer should show it: `function` cells shortened, and on a
 * terminal `function` and `location` cells clipped so rows of the first max_rows fit its width
 * (indent: columns taken before each row). Returns 0, or -1 when t is to be printed as it is
 * (--full-names, no such column, no memory); out can be passed to rheap__table_free either way. */
int rheap__names_for_display(const rheap__table_t *t, size_t max_rows, size_t indent,
                             rheap__table_t *out);

/* ---- dbopen.c: opening a database, never creating one ---- */
/* Opens the rheap database at path read-only (read) or to change its rows (write), with a busy
 * timeout of a few seconds, after checking that it is a regular, non-empty file, an SQLite
 * database with the tables meta and allocations, and of the schema version this rheap reads.
 * Returns an RHEAP_EXIT_* (INPUT with one line on err when any check fails); *db is NULL
 * unless OK. */
int rheap__db_open_read(const char *path, struct sqlite3 **db, FILE *err);
int rheap__db_open_write(const char *path, struct sqlite3 **db, FILE *err);
/* The largest sampling interval of the recordings of process pid (NULL: of every process) made
 * in profile mode, whose figures but allocations and bytes allocated are estimates; 0 when all
 * were made in trace mode. */
long long rheap__db_sample_interval(struct sqlite3 *db, const char *pid);

/* ---- json.c: JSON strings ---- */
/* Writes s as a JSON string (null when s is NULL) that is valid UTF-8 whatever s holds: each
 * byte outside a well-formed UTF-8 sequence becomes \ufffd, control characters (and DEL) are
 * escaped; with html, '<', '>' and '&' too, so the text cannot end a <script> early. */
void rheap__json_string(FILE *f, const char *s, int html);

/* ---- params.c: the values query parameters take ---- */
/* Checks value against what the documented parameter name takes (a pid of the database, a
 * whole number, one of a few words, a marker label of the database, ...); names it does not
 * know pass. RHEAP_EXIT_OK, or RHEAP_EXIT_USAGE with one line on err naming the allowed
 * values and the option the value came from (opt, or "--param NAME" when NULL). */
int rheap__param_check(struct sqlite3 *db, const char *name, const char *value, const char *opt,
                       FILE *err);
/* rheap__param_check for each kv whose key is a declared parameter of q. */
int rheap__params_check(struct sqlite3 *db, const rheap__query_t *q, const rheap__kv_t *kv,
                        size_t nkv, FILE *err);

/* ---- suggest.c: "did you mean" ---- */
/* The name of names[0..n) closest to word by edit distance (letters inserted, deleted, changed
 * or two neighbours swapped), when at most a third of word's letters (1 or 2) differ; else
 * NULL. The first of equally close names wins. */
const char *rheap__suggest(const char *word, const char *const *names, size_t n);

/* ---- report.c: `rheap report`, and the summary `rheap run` prints ---- */
int rheap__cmd_report(int argc, char **argv);
/* Prints the short summary of a fresh database to out, each line prefixed "rheap: ". */
void rheap__report_brief(struct sqlite3 *db, FILE *out);

/* ---- units.c: sizes and times for people ---- */
/* "40.0 KiB" (exact below 10 KiB); "349.2 us", "1.53 s". */
void rheap__human_bytes(long long b, char *buf, size_t len);
void rheap__human_ns(long long ns, char *buf, size_t len);
/* Rewrites the byte columns (bytes, size, *_bytes, *_size) and time columns (*_ns) of t into
 * those units, in place; the cells stay numbers for alignment. */
void rheap__table_humanize(rheap__table_t *t);

/* ---- stack.c: `rheap stack`, and call chains under site rows ---- */
/* Prints the frames of stack id, innermost first, one a line prefixed with indent; from the
 * allocation site outwards when from_site (the chain under a site row), else every frame with
 * the site marked. Returns the number of frames printed, -1 on a database error. */
int rheap__stack_print(struct sqlite3 *db, long long id, int from_site, const char *indent, FILE *out);
/* Aligned columns as rheap__table_print_columns, with the call chain of each row's `stack`
 * column (from the allocation site outwards) printed under the row. */
void rheap__table_print_chains(struct sqlite3 *db, const rheap__table_t *t, size_t max_rows,
                               const char *indent, FILE *out);
int rheap__cmd_stack(int argc, char **argv);

/* ---- resymbolize.c: `rheap resymbolize DB` ---- */
int rheap__cmd_resymbolize(int argc, char **argv);

/* ---- elf.c: the program rheap run starts ---- */
/* The file execvp(name) would run (name when it has a '/', else the first executable regular
 * file in PATH) into buf. 0, or -1 when there is none. */
int rheap__exe_find(const char *name, char *buf, size_t len);
/* 1 when path is an ELF executable without a PT_INTERP header (statically linked: the dynamic
 * loader, which reads LD_PRELOAD, never runs); 0 when it has one or is not ELF (a script); -1
 * when it cannot be read or its headers are cut short. */
int rheap__exe_is_static(const char *path);

/* ---- run.c: `rheap run` ---- */
int rheap__cmd_run(int argc, char **argv);

#endif
