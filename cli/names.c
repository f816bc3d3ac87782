/*
 * names.c: function names and locations made to fit a table on a terminal.
 *
 * Demangled C++ names carry every template argument, so one frame of std::vector::push_back
 * can take 200 columns, and a table row of a leak site wider than any terminal wraps into
 * unreadable lines. For the aligned-column output only, a `function` column has its template
 * argument lists shortened to <...> (`std::vector<...>::push_back(...)`), and when the table
 * is printed to a terminal, its `function` and `location` columns are clipped so each row fits
 * the terminal's width. CSV and JSON output, and every column of `--full-names` output, keep
 * the full text.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli.h"

static int is_ident(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '>' || c == ']' || c == '}' || c == '$';
}

/* The index of the '>' closing the '<' at s[at], or 0 when it is not closed. A '>' after '-'
 * (operator->) does not close anything. */
static size_t closing(const char *s, size_t at)
{
    int depth = 0;
    for (size_t i = at; s[i]; i++) {
        if (s[i] == '<') {
            depth++;
        } else if (s[i] == '>' && !(i > 0 && s[i - 1] == '-')) {
            if (--depth == 0)
                return i;
        }
    }
    return 0;
}

/* Whether s[i] comes right after the keyword `operator` (not after an identifier that ends
 * with it, as in `my_operator`), with an operator's characters to follow. */
static int at_operator(const char *s, size_t i)
{
    if (i < 8 || strncmp(s + i - 8, "operator", 8) != 0)
        return 0;
    char before = i > 8 ? s[i - 9] : ' ';
    if ((before >= 'a' && before <= 'z') || (before >= 'A' && before <= 'Z') ||
        (before >= '0' && before <= '9') || before == '_' || before == '$')
        return 0;
    return s[i] == '<' || s[i] == '=' || s[i] == '>' || (s[i] == '-' && s[i + 1] == '>');
}

char *rheap__name_short(const char *name)
{
    size_t n = strlen(name);
    char *out = malloc(n + 1);
    if (!out)
        return NULL;
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        /* operator<, operator<<, operator<=, operator<=> and operator-> are names, not template
         * lists: their characters are copied as they are. Every other operator (operator(),
         * operator[], operator new) and a name that only holds the word (parse_operator_list)
         * go on as any other text; each pass of this loop copies at least one character. */
        if (at_operator(name, i)) {
            while (name[i] == '<' || name[i] == '=' || name[i] == '>')
                out[o++] = name[i++];
            if (name[i] == '-' && name[i + 1] == '>') {
                out[o++] = name[i++];
                out[o++] = name[i++];
            }
            continue;
        }
        size_t end;
        /* A template argument list follows a name; a leading '<' (Rust's <T as Trait>::f) or
         * one after a blank is part of the name itself and only has its insides shortened. */
        if (name[i] == '<' && i > 0 && is_ident(name[i - 1]) && (end = closing(name, i)) != 0 &&
            end - i - 1 > 3) {
            memcpy(out + o, "<...>", 5);
            o += 5;
            i = end + 1;
            continue;
        }
        out[o++] = name[i++];
    }
    out[o] = 0;
    return out;
}

/* Display columns of a UTF-8 string: its code points. */
static size_t columns(const char *s)
{
    size_t w = 0;
    for (; *s; s++)
        w += ((unsigned char)*s & 0xC0) != 0x80;
    return w;
}

/* Keeps the first (from_end: last) `keep` columns of s, marking the cut with "...". */
static char *clip(const char *s, size_t keep, int from_end)
{
    size_t w = columns(s);
    if (w <= keep || keep < 4)
        return strdup(s);
    size_t take = keep - 3, n = strlen(s);
    char *out = malloc(n + 4);
    if (!out)
        return NULL;
    if (from_end) {
        /* Skip w - take code points from the front. */
        size_t skip = w - take, i = 0;
        for (size_t cp = 0; i < n; i++) {
            if (((unsigned char)s[i] & 0xC0) != 0x80 && cp++ == skip)
                break;
        }
        memcpy(out, "...", 3);
        strcpy(out + 3, s + i);
    } else {
        size_t i = 0;
        for (size_t cp = 0; i < n; i++) {
            if (((unsigned char)s[i] & 0xC0) != 0x80 && cp++ == take)
                break;
        }
        memcpy(out, s, i);
        strcpy(out + i, "...");
    }
    return out;
}

static size_t terminal_width(void)
{
    struct winsize ws;
    if (!isatty(STDOUT_FILENO) || ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) != 0 || ws.ws_col == 0)
        return 0;
    return ws.ws_col;
}

int rheap__names_for_display(const ra_table_t *t, size_t max_rows, size_t indent,
                             ra_table_t *out)
{
    memset(out, 0, sizeof *out);
    size_t fcol = SIZE_MAX, lcol = SIZE_MAX;
    for (size_t c = 0; c < t->ncols; c++) {
        if (!strcmp(t->names[c], "function"))
            fcol = c;
        else if (!strcmp(t->names[c], "location"))
            lcol = c;
    }
    if (fcol == SIZE_MAX && lcol == SIZE_MAX)
        return -1;
    /* Only the rows that will be printed are copied; the others stay NULL, so the count of
     * rows left out is still right. */
    size_t rows = t->nrows < max_rows ? t->nrows : max_rows;
    out->ncols = t->ncols;
    out->nrows = t->nrows;
    out->names = calloc(t->ncols ? t->ncols : 1, sizeof *out->names);
    out->cells = calloc(t->ncols * t->nrows + 1, sizeof *out->cells);
    out->types = malloc(t->ncols * t->nrows + 1);
    if (!out->names || !out->cells || !out->types)
        goto fail;
    if (t->nrows)
        memcpy(out->types, t->types, t->ncols * t->nrows);
    for (size_t c = 0; c < t->ncols; c++)
        if (!(out->names[c] = strdup(t->names[c])))
            goto fail;
    for (size_t i = 0; i < t->ncols * rows; i++) {
        const char *v = t->cells[i];
        if (!v)
            continue;
        out->cells[i] = i % t->ncols == fcol ? rheap__name_short(v) : strdup(v);
        if (!out->cells[i])
            goto fail;
    }

    /* On a terminal, the function and location columns give up what the row lacks: each is
     * cut to its share of the room left by the other columns, but never below 8 columns.
     * The location keeps its end (file:line), the function its start. */
    size_t tw = terminal_width();
    if (!tw)
        return 0;
    size_t *w = calloc(t->ncols, sizeof *w);
    if (!w)
        goto fail;
    size_t total = indent;
    for (size_t c = 0; c < t->ncols; c++) {
        w[c] = columns(out->names[c]);
        for (size_t r = 0; r < rows; r++) {
            const char *v = out->cells[r * t->ncols + c];
            if (v && columns(v) > w[c])
                w[c] = columns(v);
        }
        total += w[c] + (c ? 2 : 0);
    }
    if (total > tw) {
        size_t flex = (fcol != SIZE_MAX ? w[fcol] : 0) + (lcol != SIZE_MAX ? w[lcol] : 0);
        size_t fixed = total - flex, room = tw > fixed ? tw - fixed : 0;
        for (int k = 0; k < 2; k++) {
            size_t c = k == 0 ? fcol : lcol;
            if (c == SIZE_MAX)
                continue;
            size_t keep = flex ? room * w[c] / flex : 0;
            if (keep < 8)
                keep = 8;
            for (size_t r = 0; r < rows; r++) {
                char **cell = &out->cells[r * t->ncols + c];
                if (!*cell || columns(*cell) <= keep)
                    continue;
                char *cut = clip(*cell, keep, c == lcol);
                if (!cut) {
                    free(w);
                    goto fail;
                }
                free(*cell);
                *cell = cut;
            }
        }
    }
    free(w);
    return 0;
fail:
    ra_table_free(out);
    return -1;
}
