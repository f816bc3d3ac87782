/*
 * cli.h: the `rheap` command's cross-file functions, grouped by the file that defines them.
 * The conversion itself lives in the converter library (rheap_convert.h), the reading of
 * finished databases in the analysis library (rheap_analysis.h); this folder parses command
 * lines and prints.
 */
#ifndef RHEAP_CLI_H
#define RHEAP_CLI_H

#include <getopt.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "message.h"
#include "rheap_analysis.h"
#include "rheap_collect.h"
#include "rheap_convert.h"
#include "rheap_version.h"
#include "rheap_settings.h"

/* ---- convert.c: the conversion as the user sees it ---- */

/* Converts the recordings into output through the converter library, printing its warnings
 * and errors, a progress bar (progress: 1 always, 0 never, -1 when stderr is a terminal) and,
 * unless quiet, the summary line; with `brief`, `rheap run`'s summary (cli__report_brief) as
 * soon as the summary tables are written, while the allocation rows are still being written.
 * With `live` (NULL otherwise), the inputs come from its next_input, growing and live_user
 * (rheap_convert_opts_t) instead of inputs/ninputs. Returns the exit status (an RHEAP_EXIT_*). */
int cli__convert_cmd(const char *const *inputs, size_t ninputs, const rheap_convert_opts_t *live,
                       const char *output, int force, int progress, int quiet, int brief,
                       uint64_t memory);
/* `--memory SIZE` of convert and run: the converter's budget for its live blocks
 * (rheap_convert_opts_t.memory). 0 and *memory set, or -1 after saying what was expected. */
int cli__memory_option(const char *cmd, const char *text, uint64_t *memory);
#define CLI_MEMORY_HELP                                                                        \
    "  --memory SIZE       memory for the blocks live at a moment of the conversion\n"          \
    "                      (K, M, G: KiB, MiB, GiB); past it the oldest go to an\n"             \
    "                      unnamed temporary file beside the output (default:\n"               \
    "                      $RHEAP_CONVERT_MEMORY, else a quarter of the available\n"            \
    "                      memory; 0 or none: never)\n"

struct sqlite3;

/* An analysis library call's result as the command ends with it: RHEAP_EXIT_OK, or the
 * library's message as an error line on err and its status, which is the exit status for it. */
static inline int cli__said(ra_status_t rc, const ra_err_t *why, FILE *err)
{
    if (rc != RA_OK)
        cli__error(err, "%s", why->msg);
    return (int)rc;
}

/* ---- paths.c: where the installed pieces are ---- */

/* The directory of the running binary (PREFIX/bin when installed). 0 or -1. */
int cli__exe_dir(char *buf, size_t len);
/* PREFIX/installdir/rest, where PREFIX is the parent of the binary's directory (installdir
 * absolute: used as is). 0 or -1 (too long). */
int cli__install_path(const char *installdir, const char *rest, char *buf, size_t len);
/* The queries directory: $RHEAP_QUERIES, the installed share dir, or the source tree's.
 * NULL when none exists. */
const char *cli__queries_dir(char *buf, size_t len);

/* ---- query.c: `rheap query` ---- */

/* Loads the canned query NAME from the queries directory; a name that is not there gets the
 * closest one suggested. Messages to err. Returns an RHEAP_EXIT_*. */
int cli__query_load(const char *name, ra_query_t *q, FILE *err);
/* `rheap query ARGS...` (arguments after the command name). Returns the exit status. */
int cli__cmd_query(int argc, char **argv);

/* ---- rows.c: a query's first rows ---- */

/* As ra_query_run_rows: the first `rows` rows of q's answer in t and the count of the others
 * in t->more, found without ordering every row when q's text allows (rows.c says when). */
ra_status_t cli__query_rows(struct sqlite3 *db, const ra_query_t *q, const ra_kv_t *kv, size_t nkv,
                            size_t rows, ra_table_t *t, ra_err_t *err);

/* ---- output.c: the file a command writes ---- */
/* RHEAP_EXIT_OK when path may be written: it does not exist, is not a regular file (a device,
 * a pipe), or force is set; else says why ("is a directory; give the WHAT to write", "exists;
 * use --force to replace it") and returns RHEAP_EXIT_USAGE. */
int cli__output_check(const char *path, int force, const char *what);

/* ---- table.c: printing a fetched table ---- */

typedef enum { RHEAP_FMT_COLUMN, RHEAP_FMT_CSV, RHEAP_FMT_JSON } cli__fmt_t;

/* The whole table in fmt; full_names (--full-names) keeps the columns' names whole. */
void cli__table_print(const ra_table_t *t, cli__fmt_t fmt, int full_names, FILE *out);
/* Aligned columns, at most max_rows rows, each line prefixed with indent. */
void cli__table_print_columns(const ra_table_t *t, size_t max_rows, const char *indent,
                                int full_names, FILE *out);
/* The same, calling after_row(row, arg) after each row is printed (to print lines under it). */
void cli__table_print_rows(const ra_table_t *t, size_t max_rows, const char *indent,
                             int full_names, FILE *out, void (*after_row)(size_t row, void *arg),
                             void *arg);

/* ---- names.c: tables made to fit the width ---- */
/* Columns a continuation line of a row (a band after the first) is indented by, beyond the
 * row's own indent. */
#define CLI_BAND_INDENT 4
/* A location is not cut below this many columns to keep a row on one line. */
#define CLI_MIN_LOCATION 16
/* The width tables printed to stream must fit: $COLUMNS when set to a number, else the
 * terminal's width when stream is one, else 80. */
size_t cli__output_width(FILE *stream);
/* Fills out with t as the column printer should show it on stream: `function` cells shortened
 * (template arguments), and when the rows of the first max_rows are wider than
 * cli__output_width (indent: columns taken before each row), made to fit: columns that carry
 * nothing left out (a constant recording, pid or images; numbers all 0), locations without
 * directories, functions without parameters, a location cut from the left; then the function
 * and location on a line of their own under the row and the other columns in bands of lines
 * that fit. *bands gets each column of out its line (0: the row's own; malloc'ed). Returns 0,
 * or -1 when t is to be printed as it is (no memory); out can be passed to ra_table_free and
 * *bands to free either way. */
int cli__names_for_display(const ra_table_t *t, size_t max_rows, size_t indent, FILE *stream,
                           ra_table_t *out, unsigned char **bands);

/* ---- json.c: JSON strings ---- */
/* Writes s as a JSON string (null when s is NULL) that is valid UTF-8 whatever s holds: each
 * byte outside a well-formed UTF-8 sequence becomes \ufffd, control characters (and DEL) are
 * escaped; with html, '<', '>' and '&' too, so the text cannot end a <script> early. */
void cli__json_string(FILE *f, const char *s, int html);

/* ---- suggest.c: "did you mean" ---- */
/* The name of names[0..n) closest to word by edit distance (letters inserted, deleted, changed
 * or two neighbours swapped), when at most a third of word's letters (1 or 2) differ; else
 * NULL. The first of equally close names wins. */
const char *cli__suggest(const char *word, const char *const *names, size_t n);

/* ---- report.c: `rheap report`, and the summary `rheap run` prints ---- */
int cli__cmd_report(int argc, char **argv);
/* Prints the short summary of a fresh database (written to path) to out, each line prefixed
 * "rheap: ". */
void cli__report_brief(struct sqlite3 *db, const char *path, FILE *out);

/* ---- units.c: sizes and times for people ---- */
/* "40.0 KiB" (exact below 10 KiB); "349.2 us", "1.53 s". */
void cli__human_bytes(long long b, char *buf, size_t len);
void cli__human_ns(long long ns, char *buf, size_t len);
/* Rewrites the byte columns (bytes, size, *_bytes, *_size) and time columns (*_ns) of t into
 * those units, in place; the cells stay numbers for alignment. */
void cli__table_humanize(ra_table_t *t);

/* ---- stack.c: `rheap stack`, and call chains under site rows ---- */
/* Prints the frames of stack id, innermost first, one a line prefixed with indent; from the
 * allocation site outwards when from_site (the chain under a site row), else every frame with
 * the site marked. With a width (0: whole), a frame's file loses its directories, then its
 * start, to fit; its function is never cut. Returns the number of frames printed, -1 on a
 * database error. */
int cli__stack_print(struct sqlite3 *db, long long id, int from_site, const char *indent,
                     size_t width, FILE *out);
/* Aligned columns as cli__table_print_columns, with the call chain of each row's `stack`
 * column (from the allocation site outwards) printed under the row. */
void cli__table_print_chains(struct sqlite3 *db, const ra_table_t *t, size_t max_rows,
                               const char *indent, int full_names, FILE *out);
int cli__cmd_stack(int argc, char **argv);

/* ---- resymbolize.c: `rheap resymbolize DB` ---- */
int cli__cmd_resymbolize(int argc, char **argv);

/* ---- exe.c: the program rheap run starts ---- */
/* The file execvp(name) would run (name when it has a '/', else the first executable regular
 * file in PATH) into buf. 0, or -1 when there is none. */
int cli__exe_find(const char *name, char *buf, size_t len);

/* ---- recorder.c: what rheap run and rheap attach share ---- */
/* Checks an option's value with librheap's own parser (libtrace/src/settings.c): what passes
 * here is what librheap then takes, and a bad value is refused (one error line naming the
 * option) before anything is recorded rather than ignored with a warning later. An empty value
 * that the setting takes as its default (--signal '') becomes NULL. 0 or -1. */
int cli__check_setting(rheap__setting_id_t id, const char **value);
/* Reads argv[*i] when it is one of the settings table's options (--depth N, --depth=N, or a
 * flag such as --profile) into values[id], the text librheap is to be given, and moves *i past
 * a separate value. 1 when taken, 0 when argv[*i] is no setting's option, -1 (message printed,
 * naming `rheap cmd`) when its value is missing. */
int cli__setting_option(const char *cmd, int argc, char **argv, int *i,
                        const char *values[RHEAP__SET_COUNT]);
/* The help lines of the settings table's options, each with its range and default. */
void cli__setting_usage(FILE *f);
/* Finds librheap.so: $RHEAP_LIBRARY, PREFIX/LIBDIR, PREFIX/lib, then the build tree (the binary
 * is build/cli/rheap, the library build/libtrace/librheap.so); its real path into buf. 0, or -1
 * with the message printed. */
int cli__find_library(char *buf, size_t len);
/* Makes the private directory the recordings go to, DIR/PREFIX-XXXXXX (DIR: dir when given,
 * else the output's directory), absolute, so that a program that changes its working directory
 * still records there. 0, or -1 with the message printed. */
int cli__make_private_dir(const char *dir, const char *output, const char *prefix, char *buf,
                          size_t len);
/* Removes a directory tree; a warning when it cannot. */
void cli__remove_tree(const char *dir);
/* Removes it in the background, by a process that outlives the caller, nothing said. */
void cli__remove_tree_detached(const char *dir);
/* The calling process's nice value raised by steps, relative to its own as `nice -n` does (the
 * kernel stops at 19); nothing when it cannot be read. */
void cli__lower_priority(int steps);
/* A recording directory found by cli__collect_recordings. */
typedef struct {
    char *path;
    unsigned long pid, n;
} cli__rec_t;
/* The rip-<pid>[-N] directories in recdir that have a process file, ordered by pid then N; a
 * note for each left out unless quiet. NULL with *n = 0 when there is none. */
cli__rec_t *cli__collect_recordings(const char *recdir, size_t *n, int quiet);
/* The same, without looking again for the process file of a recording for which seen(user,
 * path) says it was found before (rheap run looks at its directory every few milliseconds, and
 * a build leaves thousands of recordings there). */
cli__rec_t *cli__collect_recordings_seen(const char *recdir, size_t *n, int quiet,
                                         int (*seen)(void *user, const char *path), void *user);
void cli__free_recordings(cli__rec_t *recs, size_t n);

/* ---- run.c: `rheap run` ---- */
int cli__cmd_run(int argc, char **argv);

/* ---- suppress_opts.c: leak suppressions as the commands offer them ---- */

/* What the command line asked for: --suppress FILE (up to 16) and --no-default-suppressions. */
typedef struct {
    const char *files[16];
    size_t nfiles;
    int no_defaults;
} cli__supp_opts_t;

/* getopt_long values of the two options, for each command's table. */
enum { RHEAP_SUPP_OPT_FILE = 0x1001, RHEAP_SUPP_OPT_NO_DEFAULTS = 0x1002 };
#define RHEAP_SUPP_LONGS                                                                         \
    {"suppress", required_argument, NULL, RHEAP_SUPP_OPT_FILE},                                  \
        {"no-default-suppressions", no_argument, NULL, RHEAP_SUPP_OPT_NO_DEFAULTS}
/* --skip GLOB as report, report --html and export describe it (query's is a parameter). */
#define RHEAP_SKIP_HELP                                                                          \
    "  --skip GLOB         charge the blocks of wrapper functions whose name matches\n"          \
    "                      the shell pattern GLOB (xmalloc, 'g_*', 'Perl_safesys*')\n"          \
    "                      to their callers, as the queries' skip parameter\n"
/* --at and --from/--to as report, report --html and export describe them (analysis's
 * ra_moment_t). */
#define RHEAP_MOMENT_HELP                                                                        \
    "  --at TIME|MARKER    what was live at a moment instead of at the peak: a time\n"          \
    "                      since the recording started (1.8s, 250ms, 1200us, 40ns,\n"          \
    "                      plain ns) or a marker label (its first time in each\n"              \
    "                      recording; a recording without it shows nothing)\n"                 \
    "  --from A --to B     what was live at the highest point inside [A, B] (times\n"         \
    "                      or marker labels, as --at)\n"
#define RHEAP_SUPP_HELP                                                                          \
    "  --suppress FILE     leave out leaks whose stack matches a line of FILE, in\n"             \
    "                      LeakSanitizer's format: leak:PATTERN, # comments; PATTERN\n"          \
    "                      matches a function, source file or module of any frame,\n"           \
    "                      * any characters, ^ and $ anchor it (repeatable)\n"                   \
    "  --no-default-suppressions\n"                                                              \
    "                      keep the never-freed runtime pools that the built-in list\n"         \
    "                      leaves out (stdio buffers, libstdc++'s exception pool)\n"

/* ---- moment.c: --at and --from/--to, and the report's section at the moment ---- */

/* getopt_long values of the three options, for each command's table. */
enum { RHEAP_MOMENT_OPT_AT = 0x1101, RHEAP_MOMENT_OPT_FROM = 0x1102, RHEAP_MOMENT_OPT_TO = 0x1103 };
#define RHEAP_MOMENT_LONGS                                                                       \
    {"at", required_argument, NULL, RHEAP_MOMENT_OPT_AT},                                        \
        {"from", required_argument, NULL, RHEAP_MOMENT_OPT_FROM},                                \
        {"to", required_argument, NULL, RHEAP_MOMENT_OPT_TO}
/* Takes getopt_long's result c: 1 when it was one of the three options (recorded in mo), 0
 * when not. */
int cli__moment_option(ra_moment_t *mo, int c, const char *arg);
/* 1 when mo asks for a moment or a range. */
int cli__moment_given(const ra_moment_t *mo);
/* The report's section "Live at ..." (or "Highest point of A .. B"): per recording of process
 * pid (NULL: all) the heap then, and the sites that held most of it, from the model at the
 * moment (ra_model_moment). An RHEAP_EXIT_* status; a failure is said on stderr. */
int cli__moment_report(struct sqlite3 *db, const char *path, const char *pid, const char *skip,
                       const ra_moment_t *mo, int raw, FILE *out);

/* Takes getopt_long's result c: 1 when it was one of the two options (recorded in o), 0 when
 * not, -1 when too many files were given (said on stderr; a usage error). */
int cli__supp_option(cli__supp_opts_t *o, int c, const char *arg);
/* The rules the options ask for (the built-in list unless no_defaults, then each file), with
 * the stacks of db they suppress decided. An RHEAP_EXIT_* with a message on err; *out set on
 * success. */
int cli__supp_open(const cli__supp_opts_t *o, struct sqlite3 *db, ra_supp_t **out,
                     FILE *err);
/* "PREFIXsuppressed: N blocks, B bytes (default list: stdio buffers; FILE: pattern)" and a
 * newline, naming the rules that took something; nothing when there are no rules. The text is
 * wrapped to width columns (0: one line), each further line starting with cont; it breaks
 * between words of the totals and before a source or a rule, never inside a rule's name. */
void cli__supp_print(const ra_supp_t *s, const int64_t *blocks, const int64_t *bytes,
                     const char *prefix, const char *cont, size_t width, FILE *out);

/* ---- export.c: `rheap export` ---- */

int cli__cmd_export(int argc, char **argv);

/* ---- diff.c: `rheap diff BASE.db NEW.db` ---- */
int cli__cmd_diff(int argc, char **argv);

/* ---- html.c: the self-contained HTML report ---- */

/* `rheap report --html -o FILE DB` (arguments after the command name). */
int cli__cmd_report_html(int argc, char **argv);

/* ---- attach.c: `rheap attach` (the joining is ../inject/) ---- */
int cli__cmd_attach(int argc, char **argv);

/* ---- serve.c, snapshot.c: the host collector's commands (the collector library) ---- */

int cli__cmd_serve(int argc, char **argv);
int cli__cmd_snapshot(int argc, char **argv);
/* The collector's notes and warnings printed as the command's note and warning lines. */
extern const rc_log_t cli__collect_log;
/* Converts the recordings of pid that h follows, as far as they are written now, into the
 * database output (the converter's live inputs, told nothing grows any more; a recording
 * without its end gets a warning). Messages on stderr. Returns an RHEAP_EXIT_*. */
int cli__convert_pid(const rc_host_t *h, uint32_t pid, const char *output, int force);

#endif
