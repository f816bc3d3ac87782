/*
 * names.c: tables made to fit the width a person reads them at.
 *
 * Demangled C++ names carry every template argument, so one frame of std::vector::push_back
 * can take 200 columns, and a table row of a leak site wider than any terminal wraps into
 * unreadable lines. For the aligned-column output only, a `function` column has its template
 * argument lists shortened to <...> (`std::vector<...>::push_back(...)`), and a table wider
 * than the output (COLUMNS, the terminal, or 80 when piped) is fitted: columns that carry
 * nothing go, paths lose their directories, and then the names move to a line of their own
 * under each row, so a function's name is the last thing ever cut. CSV and JSON output, and
 * `--wide` output, keep every column and the full text.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli.h"

size_t cli__output_width(FILE *stream)
{
    /* COLUMNS first: a user (or a test) can ask for a width whatever the output is. */
    const char *env = getenv("COLUMNS");
    if (env && *env) {
        char *end;
        long v = strtol(env, &end, 10);
        if (!*end && v > 0 && v < 100000)
            return (size_t)v;
    }
    struct winsize ws;
    int fd = fileno(stream);
    if (fd >= 0 && isatty(fd) && ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        return ws.ws_col;
    return 80;
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

/* Whether column c of the first rows rows carries nothing: every cell empty or 0. */
static int empty_column(const ra_table_t *t, size_t c, size_t rows)
{
    for (size_t r = 0; r < rows; r++) {
        const char *v = t->cells[r * t->ncols + c];
        if (v && *v && strcmp(v, "0") != 0)
            return 0;
    }
    return 1;
}

/* Width of the line of band b (columns whose band is b), after its indent. */
static size_t band_width(const ra_table_t *t, const unsigned char *band, unsigned b, size_t rows)
{
    size_t w = 0, n = 0;
    for (size_t c = 0; c < t->ncols; c++)
        if (band[c] == b) {
            w += column_width(t, c, rows) + (n ? 2 : 0);
            n++;
        }
    return w;
}

/* The width of a row of t on one line, indent included. */
static size_t table_width(const ra_table_t *t, size_t rows, size_t indent)
{
    size_t total = indent;
    for (size_t c = 0; c < t->ncols; c++)
        total += column_width(t, c, rows) + (c ? 2 : 0);
    return total;
}

int cli__names_for_display(const ra_table_t *t, size_t max_rows, size_t indent, FILE *stream,
                           ra_table_t *out, unsigned char **bands)
{
    memset(out, 0, sizeof *out);
    *bands = NULL;
    size_t tw = cli__output_width(stream);
    size_t rows = t->nrows < max_rows ? t->nrows : max_rows;
    /* Too wide for the width: first the columns that carry nothing are left out. `recording`
     * and `pid` (and the processes' `images`) holding one value in every row tell no row apart;
     * a column of numbers that are all 0 says nothing. Their room is worth more to names. */
    char *drop = calloc(t->ncols + 1, 1);
    if (!drop)
        return -1;
    size_t fcol = SIZE_MAX, lcol = SIZE_MAX, total = table_width(t, rows, indent);
    for (size_t c = 0; c < t->ncols; c++) {
        if (!strcmp(t->names[c], "function"))
            fcol = c;
        else if (!strcmp(t->names[c], "location"))
            lcol = c;
    }
    size_t kept = t->ncols;
    for (int pass = 0; pass < 2; pass++)
        for (size_t c = 0; total > tw && kept > 1 && c < t->ncols; c++) {
            if (drop[c] || c == fcol || c == lcol)
                continue;
            int nothing = pass == 0 ? (!strcmp(t->names[c], "recording") || !strcmp(t->names[c], "pid") ||
                                       !strcmp(t->names[c], "images")) &&
                                          constant_column(t, c)
                                    : rows > 0 && empty_column(t, c, rows);
            if (nothing) {
                drop[c] = 1;
                kept--;
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
    unsigned char *band = calloc(ncols + 1, 1);
    if (!out->names || !out->cells || !out->types || !band)
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
    *bands = band;

    /* Still too wide: locations lose their directories first (file:line is what a reader
     * looks for), function names their parameter lists. */
    total = table_width(out, rows, indent);
    if (total > tw && olcol != SIZE_MAX) {
        if (map_column(out, olcol, rows, base_location, 0) != 0)
            goto fail;
        total = table_width(out, rows, indent);
    }
    if (total > tw && ofcol != SIZE_MAX) {
        if (map_column(out, ofcol, rows, without_params, 0) != 0)
            goto fail;
        total = table_width(out, rows, indent);
    }
    if (total <= tw)
        return 0;
    /* A location longer than the excess keeps its end (file:line) and the row its one line. */
    if (olcol != SIZE_MAX) {
        size_t lw = column_width(out, olcol, rows);
        if (lw >= total - tw + CLI_MIN_LOCATION) {
            if (map_column(out, olcol, rows, clip_end, lw - (total - tw)) != 0)
                goto fail;
            return 0;
        }
    }

    /* Then the names go to a line of their own under each row (the last band), where they
     * have the whole width: a name is never cut to make room for numbers. The other columns
     * are laid out in bands that fit, the first on the row's own line, the others under it
     * indented (CLI_BAND_INDENT columns more). */
    unsigned last = 0;
    size_t used = indent, in_band = 0;
    for (size_t c = 0; c < ncols; c++) {
        if (c == ofcol || c == olcol)
            continue;
        size_t w = column_width(out, c, rows);
        if (in_band && used + 2 + w > tw) {
            last++;
            used = indent + CLI_BAND_INDENT;
            in_band = 0;
        }
        used += w + (in_band ? 2 : 0);
        in_band++;
        band[c] = (unsigned char)last;
    }
    if (ofcol != SIZE_MAX || olcol != SIZE_MAX) {
        unsigned nb = in_band ? last + 1 : last;
        if (ofcol != SIZE_MAX)
            band[ofcol] = (unsigned char)nb;
        if (olcol != SIZE_MAX)
            band[olcol] = (unsigned char)nb;
        /* A name wider than its line is cut at last: the location first, from the left (its
         * file:line kept), to half the room or what the function leaves; then the function,
         * its end kept when it is qualified. */
        size_t room = tw > indent + (nb ? CLI_BAND_INDENT : 0) ? tw - indent - (nb ? CLI_BAND_INDENT : 0) : 0;
        if (band_width(out, band, nb, rows) > room) {
            size_t fw = ofcol != SIZE_MAX ? column_width(out, ofcol, rows) : 0;
            size_t sep = ofcol != SIZE_MAX && olcol != SIZE_MAX ? 2 : 0;
            size_t lkeep = room > fw + sep ? room - fw - sep : room / 2;
            if (olcol != SIZE_MAX && lkeep < room / 2)
                lkeep = room / 2;
            if (olcol != SIZE_MAX && map_column(out, olcol, rows, clip_end, lkeep < 12 ? 12 : lkeep) != 0)
                goto fail;
            size_t lw = olcol != SIZE_MAX ? column_width(out, olcol, rows) : 0;
            size_t fkeep = room > lw + sep ? room - lw - sep : 8;
            if (ofcol != SIZE_MAX && fw > fkeep &&
                map_column(out, ofcol, rows, clip_function, fkeep < 8 ? 8 : fkeep) != 0)
                goto fail;
        }
    }
    return 0;
fail:
    free(drop);
    free(band);
    *bands = NULL;
    ra_table_free(out);
    return -1;
}
