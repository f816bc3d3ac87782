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

static size_t terminal_width(void)
{
    struct winsize ws;
    if (!isatty(STDOUT_FILENO) || ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) != 0 || ws.ws_col == 0)
        return 0;
    return ws.ws_col;
}

/* Whether every row of column c holds the same value (or none): a column a narrow table can
 * leave out without losing what tells its rows apart. */
static int constant_column(const ra_table_t *t, size_t c)
{
    const char *first = t->nrows ? t->cells[c] : NULL;
    for (size_t r = 1; r < t->nrows; r++) {
        const char *v = t->cells[r * t->ncols + c];
        if ((v == NULL) != (first == NULL) || (v && strcmp(v, first) != 0))
            return 0;
    }
    return 1;
}

/* Display width of column c over the first rows rows, its name included. */
static size_t column_width(const ra_table_t *t, size_t c, size_t rows)
{
    size_t w = ra_text_columns(t->names[c]);
    for (size_t r = 0; r < rows; r++) {
        const char *v = t->cells[r * t->ncols + c];
        if (v && ra_text_columns(v) > w)
            w = ra_text_columns(v);
    }
    return w;
}

/* Replaces each cell of column c (rows 0..rows-1) with fn(cell, arg); -1 on no memory. */
static int map_column(ra_table_t *t, size_t c, size_t rows, char *(*fn)(const char *, size_t),
                      size_t arg)
{
    for (size_t r = 0; r < rows; r++) {
        char **cell = &t->cells[r * t->ncols + c];
        if (!*cell)
            continue;
        char *v = fn(*cell, arg);
        if (!v)
            return -1;
        free(*cell);
        *cell = v;
    }
    return 0;
}

/* A location without its directories: "src/net/conn.c:51" reads "conn.c:51". */
static char *base_location(const char *loc, size_t unused)
{
    (void)unused;
    const char *slash = strrchr(loc, '/');
    return strdup(slash ? slash + 1 : loc);
}

static char *without_params(const char *name, size_t unused)
{
    (void)unused;
    return ra_name_without_params(name);
}

/* A qualified name keeps its end, the function itself (`...Map_base<...>::operator[]`); a
 * plain one its start. */
static char *clip_function(const char *s, size_t keep)
{
    return ra_text_clip(s, keep, strstr(s, "::") != NULL);
}

static char *clip_end(const char *s, size_t keep)
{
    return ra_text_clip(s, keep, 1);
}

int cli__names_for_display(const ra_table_t *t, size_t max_rows, size_t indent,
                             ra_table_t *out)
{
    memset(out, 0, sizeof *out);
    size_t tw = terminal_width();
    size_t rows = t->nrows < max_rows ? t->nrows : max_rows;
    /* On a terminal too narrow for the table, the columns `recording` and `pid` are left out
     * when they hold one value in every row (one process, recorded once): they tell no row
     * apart, and their room is worth more to the function's name. */
    char *drop = calloc(t->ncols + 1, 1);
    if (!drop)
        return -1;
    size_t fcol = SIZE_MAX, lcol = SIZE_MAX, total = indent;
    for (size_t c = 0; c < t->ncols; c++) {
        if (!strcmp(t->names[c], "function"))
            fcol = c;
        else if (!strcmp(t->names[c], "location"))
            lcol = c;
        total += column_width(t, c, rows) + (c ? 2 : 0);
    }
    if (fcol == SIZE_MAX && lcol == SIZE_MAX) {
        free(drop);
        return -1;
    }
    for (size_t c = 0; tw && total > tw && c < t->ncols; c++) {
        if ((!strcmp(t->names[c], "recording") || !strcmp(t->names[c], "pid")) &&
            constant_column(t, c)) {
            drop[c] = 1;
            total -= column_width(t, c, rows) + 2;
        }
    }

    /* Only the rows that will be printed are copied; the others stay NULL, so the count of
     * rows left out is still right. */
    size_t ncols = 0;
    for (size_t c = 0; c < t->ncols; c++)
        ncols += !drop[c];
    out->ncols = ncols;
    out->nrows = t->nrows;
    out->names = calloc(ncols ? ncols : 1, sizeof *out->names);
    out->cells = calloc(ncols * t->nrows + 1, sizeof *out->cells);
    out->types = malloc(ncols * t->nrows + 1);
    if (!out->names || !out->cells || !out->types)
        goto fail;
    size_t oc = 0, ofcol = SIZE_MAX, olcol = SIZE_MAX;
    for (size_t c = 0; c < t->ncols; c++) {
        if (drop[c])
            continue;
        if (c == fcol)
            ofcol = oc;
        if (c == lcol)
            olcol = oc;
        if (!(out->names[oc] = strdup(t->names[c])))
            goto fail;
        for (size_t r = 0; r < t->nrows; r++) {
            out->types[r * ncols + oc] = t->types[r * t->ncols + c];
            const char *v = t->cells[r * t->ncols + c];
            if (r >= rows || !v)
                continue;
            out->cells[r * ncols + oc] = c == fcol ? ra_name_short(v) : strdup(v);
            if (!out->cells[r * ncols + oc])
                goto fail;
        }
        oc++;
    }
    free(drop);
    drop = NULL;
    if (!tw)
        return 0;

    /* Still too wide: locations lose their directories first (file:line is what a reader
     * looks for), function names their parameter lists, then the function and location columns are cut to the room the others
     * leave, the location's end kept and the function's end when it is qualified (its start
     * otherwise). The location gets at most half
     * the room (more when the function needs less), the function the rest; neither goes below
     * 8 columns. */
    total = indent;
    for (size_t c = 0; c < ncols; c++)
        total += column_width(out, c, rows) + (c ? 2 : 0);
    if (total > tw && olcol != SIZE_MAX) {
        size_t before = column_width(out, olcol, rows);
        if (map_column(out, olcol, rows, base_location, 0) != 0)
            goto fail;
        total -= before - column_width(out, olcol, rows);
    }
    if (total > tw && ofcol != SIZE_MAX) {
        size_t before = column_width(out, ofcol, rows);
        if (map_column(out, ofcol, rows, without_params, 0) != 0)
            goto fail;
        total -= before - column_width(out, ofcol, rows);
    }
    if (total > tw) {
        size_t fw = ofcol != SIZE_MAX ? column_width(out, ofcol, rows) : 0;
        size_t lw = olcol != SIZE_MAX ? column_width(out, olcol, rows) : 0;
        size_t fixed = total - fw - lw, room = tw > fixed ? tw - fixed : 0;
        size_t lkeep = lw, fkeep = fw;
        if (ofcol == SIZE_MAX) {
            lkeep = room;
        } else if (olcol == SIZE_MAX) {
            fkeep = room;
        } else {
            size_t half = room / 2, need = room > fw ? room - fw : 0;
            if (lkeep > half && lkeep > need)
                lkeep = half > need ? half : need;
            fkeep = room > lkeep ? room - lkeep : 0;
        }
        if ((ofcol != SIZE_MAX && map_column(out, ofcol, rows, clip_function, fkeep < 8 ? 8 : fkeep) != 0) ||
            (olcol != SIZE_MAX && map_column(out, olcol, rows, clip_end, lkeep < 8 ? 8 : lkeep) != 0))
            goto fail;
    }
    return 0;
fail:
    free(drop);
    ra_table_free(out);
    return -1;
}
