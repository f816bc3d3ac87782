/*
 * message.h: how the `rheap` command ends and what it says on the way: one list of exit
 * statuses (the enum and the "Exit status" text of --help come from it) and one way to print
 * a message, so every line a user sees starts the same way.
 */
#ifndef RHEAP_CLI_MESSAGE_H
#define RHEAP_CLI_MESSAGE_H

#include <stdio.h>

/* X(NAME, CODE, TEXT): every exit status of `rheap convert` and the short form, and the line
 * --help prints for it. `rheap run` also passes on the program's own status; query and report
 * use OK, USAGE and INPUT. When adding one, update the tables in cli/README.md and
 * converter/README.md. */
#define RHEAP_EXIT_LIST(X)                                                                       \
    X(OK, 0, "success")                                                                          \
    X(USAGE, 1, "usage error (bad arguments, or the output exists and --force was not given)")  \
    X(INPUT, 2, "bad input (missing path, not a recording, wrong version, corrupted data); "      \
                "nothing written")                                                               \
    X(WARNINGS, 3, "converted, with warnings (e.g. a truncated thread file: its complete part "  \
                   "was converted)")                                                             \
    X(OUTPUT, 4, "the database could not be written (disk full, permissions, out of memory)")

#define CLI__EXIT_ENUM(name, code, text) RHEAP_EXIT_##name = code,
typedef enum { RHEAP_EXIT_LIST(CLI__EXIT_ENUM) } cli__exit_t;
#undef CLI__EXIT_ENUM

/* Prints "Exit status:" and one line per status, as --help shows them. */
void cli__exit_help(FILE *f);

/* Every help text fits this many columns, a terminal's default width. */
#define CLI__HELP_WIDTH 80

/* Prints text word by word after the col columns already on the line, starting a new line
 * indented by indent spaces before a word that would pass CLI__HELP_WIDTH; ends the line. */
void cli__wrap(FILE *f, int col, int indent, const char *text);

/* Every message of the command is one line on f (stderr, or the stream a caller gave a
 * library function): "rheap: error: ..." for what stopped the command or made its status
 * non-zero, "rheap: warning: ..." for what it worked around, "rheap: ..." for plain notes.
 * The newline is added here. Errors and warnings stay one line however long, so that a script
 * finds the whole message on the line that starts it; only the notes below are wrapped. */
void cli__error(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cli__warning(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cli__note(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A note too long for one line of f's width (cli__output_width) in as many as it needs: the
 * first "rheap: ...", each further one "rheap:   ..." so that every line still says where
 * it came from. For the notes that explain, not for errors a script may match whole. */
void cli__note_wrapped(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Says what getopt_long's result c ('?' an unknown option or an unexpected value, ':' a
 * missing value; opterr off and ":" leading the option string) was about, as
 * "unknown option -x (try HELP)" or "--output needs NEEDS (try HELP)", and returns
 * RHEAP_EXIT_USAGE. longs: the table given to getopt_long. */
struct option;
int cli__option_error(int c, char *const *argv, const struct option *longs, const char *needs,
                        const char *help);

/* Options of a command that has none but -h/--help (argv[0] is the command's name): -1 when the
 * command goes on with its operands from argv[optind], else the exit status after printing
 * usage (help) or an option error naming help. */
int cli__help_only(int argc, char **argv, void (*usage)(FILE *), const char *help);

#endif
