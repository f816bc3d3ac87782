/*
 * message.c: the exit status texts and the one message printer of the `rheap` command.
 */
#define _GNU_SOURCE /* vasprintf */
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Word by word: a word that would pass column width starts a new line of cont and indent
 * spaces. A newline in text counts as a space, so a table's texts need not know the width. */
static void wrap_to(FILE *f, int col, const char *cont, int indent, int width, const char *text)
{
    int first = 1;
    while (*text) {
        text += strspn(text, " \n");
        int len = (int)strcspn(text, " \n");
        if (!len)
            break;
        if (!first && col + 1 + len > width) {
            fprintf(f, "\n%s%*s", cont, indent, "");
            col = (int)strlen(cont) + indent;
        } else if (!first) {
            fputc(' ', f);
            col++;
        }
        fprintf(f, "%.*s", len, text);
        col += len;
        text += len;
        first = 0;
    }
    fputc('\n', f);
}

void cli__wrap(FILE *f, int col, int indent, const char *text)
{
    wrap_to(f, col, "", indent, CLI__HELP_WIDTH, text);
}

void cli__exit_help(FILE *f)
{
    fputs("Exit status:\n", f);
#define CLI__EXIT_LINE(name, code, text) fprintf(f, "  %d  ", code), cli__wrap(f, 5, 5, text);
    RHEAP_EXIT_LIST(CLI__EXIT_LINE)
#undef CLI__EXIT_LINE
}

static void vsay(FILE *f, const char *prefix, const char *fmt, va_list ap)
{
    fputs(prefix, f);
    vfprintf(f, fmt, ap);
    fputc('\n', f);
}

void cli__note_wrapped(FILE *f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *text = NULL;
    if (vasprintf(&text, fmt, ap) < 0)
        text = NULL;
    va_end(ap);
    if (!text) {
        /* No memory for the text: the note on one line still says it all. */
        va_start(ap, fmt);
        vsay(f, "rheap: ", fmt, ap);
        va_end(ap);
        return;
    }
    fputs("rheap: ", f);
    wrap_to(f, (int)strlen("rheap: "), "rheap:", 3, (int)cli__output_width(f), text);
    free(text);
}

void cli__error(FILE *f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsay(f, "rheap: error: ", fmt, ap);
    va_end(ap);
}

void cli__warning(FILE *f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsay(f, "rheap: warning: ", fmt, ap);
    va_end(ap);
}

void cli__note(FILE *f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsay(f, "rheap: ", fmt, ap);
    va_end(ap);
}

/* The long option of the argument getopt_long just gave up on, when it is one: "--output=x"
 * for an 'o' option that takes no value, "--output" for one missing its value. Its length
 * without any "=value" goes to *len. NULL when the error was about a short option. */
static const char *failed_long(char *const *argv, const struct option *longs, size_t *len)
{
    const char *a = optind > 0 ? argv[optind - 1] : NULL;
    if (!a || strncmp(a, "--", 2) != 0 || !a[2])
        return NULL;
    *len = strcspn(a, "=");
    for (const struct option *o = longs; o->name; o++)
        if (o->val == optopt && !strncmp(a + 2, o->name, *len - 2))
            return a;
    return NULL;
}

int cli__option_error(int c, char *const *argv, const struct option *longs, const char *needs,
                        const char *help)
{
    size_t len = 0;
    const char *lng = optopt ? failed_long(argv, longs, &len) : NULL;
    if (optopt == 0)
        /* An unknown long option: getopt_long has stepped past it. */
        cli__error(stderr, "unknown option %s (try %s)", argv[optind - 1], help);
    else if (c == ':' && lng)
        cli__error(stderr, "%.*s needs %s (try %s)", (int)len, lng, needs, help);
    else if (c == ':')
        cli__error(stderr, "-%c needs %s (try %s)", optopt, needs, help);
    else if (lng)
        cli__error(stderr, "%.*s takes no value (try %s)", (int)len, lng, help);
    else
        cli__error(stderr, "unknown option -%c (try %s)", optopt, help);
    return RHEAP_EXIT_USAGE;
}

int cli__help_only(int argc, char **argv, void (*usage)(FILE *), const char *help)
{
    static const struct option longs[] = {
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", longs, NULL)) != -1) {
        if (c != 'h')
            return cli__option_error(c, argv, longs, "a value", help);
        usage(stdout);
        return RHEAP_EXIT_OK;
    }
    return -1;
}
