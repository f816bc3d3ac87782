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
#include "shorten.h"

static int full_names;

void rheap__names_full(int on)
{
    full_names = on;
}

static size_t terminal_width(void)
{
    struct winsize ws;
    if (!isatty(STDOUT_FILENO) || ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) != 0 || ws.ws_col == 0)
        return 0;
    return ws.ws_col;
}

int rheap__names_for_display(const rheap__table_t *t, size_t max_rows, size_t indent,
                             rheap__table_t *out)
{
    memset(out, 0, sizeof *out);
    if (full_names)
        return -1;
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
        w[c] = rheap__text_columns(out->names[c]);
        for (size_t r = 0; r < rows; r++) {
            const char *v = out->cells[r * t->ncols + c];
            if (v && rheap__text_columns(v) > w[c])
                w[c] = rheap__text_columns(v);
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
                if (!*cell || rheap__text_columns(*cell) <= keep)
                    continue;
                char *cut = rheap__text_clip(*cell, keep, c == lcol);
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
    rheap__table_free(out);
    return -1;
}
