/*
 * table.c: printing a fetched table as aligned columns (sizes and names made for reading),
 * CSV (RFC 4180) or JSON, for `rheap query`, `rheap report`, `rheap diff` and `rheap stack`.
 */
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "cli.h"

static int is_number(int type)
{
    return type == SQLITE_INTEGER || type == SQLITE_FLOAT;
}

/* Display width of UTF-8 text: one column per code point (good enough for names and paths). */
static size_t width(const char *s)
{
    size_t w = 0;
    for (; *s; s++)
        w += ((unsigned char)*s & 0xC0) != 0x80;
    return w;
}

static void pad(FILE *out, size_t n)
{
    while (n--)
        fputc(' ', out);
}

void cli__table_print_columns(const ra_table_t *t, size_t max_rows, const char *indent,
                                int full_names, FILE *out)
{
    cli__table_print_rows(t, max_rows, indent, full_names, out, NULL, NULL);
}

/* One line of band b: the header's names (what 0), its dashes (1) or row r's cells (2). */
static void band_line(const ra_table_t *t, const unsigned char *band, unsigned b,
                      const size_t *w, size_t rows, size_t r, int what, const char *indent,
                      FILE *out)
{
    fputs(indent, out);
    if (b)
        pad(out, CLI_BAND_INDENT);
    size_t last = SIZE_MAX;
    for (size_t c = 0; c < t->ncols; c++)
        if (!band || band[c] == b)
            last = c;
    int first = 1;
    for (size_t c = 0; c < t->ncols; c++) {
        if (band && band[c] != b)
            continue;
        if (!first)
            fputs("  ", out);
        first = 0;
        if (what == 1) {
            for (size_t i = 0; i < w[c]; i++)
                fputc('-', out);
            continue;
        }
        const char *v = what == 0 ? t->names[c] : t->cells[r * t->ncols + c];
        if (!v)
            v = "";
        size_t vw = width(v);
        int num = what == 0 ? rows > 0 && is_number(t->types[c]) : is_number(t->types[r * t->ncols + c]);
        /* Numbers are right-aligned, so their digits line up; everything else left-aligned.
         * The last column of a line is not padded, so lines carry no trailing blanks. */
        if (num)
            pad(out, w[c] - vw);
        fputs(v, out);
        if (!num && c != last)
            pad(out, w[c] - vw);
    }
    fputc('\n', out);
}

void cli__table_print_rows(const ra_table_t *t, size_t max_rows, const char *indent,
                             int full_names, FILE *out, void (*after_row)(size_t row, void *arg),
                             void *arg)
{
    /* Made to fit the width (names.c), unless the command was asked for everything whole
     * (--wide, --full-names); CSV and JSON keep everything. */
    ra_table_t shown = {0};
    unsigned char *band = NULL;
    size_t more = t->more; /* rows the query gave beyond those fetched */
    if (!full_names &&
        cli__names_for_display(t, max_rows, strlen(indent), out, &shown, &band) == 0)
        t = &shown;
    size_t rows = t->nrows < max_rows ? t->nrows : max_rows;
    size_t *w = calloc(t->ncols ? t->ncols : 1, sizeof *w);
    if (!w) {
        free(band);
        ra_table_free(&shown);
        return;
    }
    unsigned nbands = 1;
    for (size_t c = 0; c < t->ncols; c++) {
        if (band && band[c] + 1u > nbands)
            nbands = band[c] + 1u;
        w[c] = width(t->names[c]);
        for (size_t r = 0; r < rows; r++) {
            const char *v = t->cells[r * t->ncols + c];
            size_t vw = v ? width(v) : 0;
            if (vw > w[c])
                w[c] = vw;
        }
    }
    /* A row on several lines: the header names each line's columns, then one line of dashes
     * under the first line's. */
    for (unsigned b = 0; b < nbands; b++)
        band_line(t, band, b, w, rows, 0, 0, indent, out);
    band_line(t, band, 0, w, rows, 0, 1, indent, out);
    for (size_t r = 0; r < rows; r++) {
        for (unsigned b = 0; b < nbands; b++)
            band_line(t, band, b, w, rows, r, 2, indent, out);
        if (after_row)
            after_row(r, arg);
    }
    if (rows < t->nrows || more)
        fprintf(out, "%s... %zu more rows\n", indent, t->nrows - rows + more);
    free(w);
    free(band);
    ra_table_free(&shown);
}

static void csv_field(const char *v, FILE *out)
{
    if (!strpbrk(v, ",\"\n\r")) {
        fputs(v, out);
        return;
    }
    fputc('"', out);
    for (; *v; v++) {
        if (*v == '"')
            fputc('"', out);
        fputc(*v, out);
    }
    fputc('"', out);
}

void cli__table_print(const ra_table_t *t, cli__fmt_t fmt, int full_names, FILE *out)
{
    if (fmt == RHEAP_FMT_COLUMN) {
        if (t->ncols)
            cli__table_print_columns(t, t->nrows, "", full_names, out);
        return;
    }
    if (fmt == RHEAP_FMT_CSV) {
        for (size_t c = 0; c < t->ncols; c++) {
            if (c)
                fputc(',', out);
            csv_field(t->names[c], out);
        }
        if (t->ncols)
            fputs("\r\n", out);
        for (size_t r = 0; r < t->nrows; r++) {
            for (size_t c = 0; c < t->ncols; c++) {
                const char *v = t->cells[r * t->ncols + c];
                if (c)
                    fputc(',', out);
                csv_field(v ? v : "", out);
            }
            fputs("\r\n", out);
        }
        return;
    }
    /* JSON: an array with one object per row, numbers as numbers and NULL as null. */
    fputc('[', out);
    for (size_t r = 0; r < t->nrows; r++) {
        fputs(r ? ",\n{" : "\n{", out);
        for (size_t c = 0; c < t->ncols; c++) {
            size_t at = r * t->ncols + c;
            if (c)
                fputs(", ", out);
            cli__json_string(out, t->names[c], 0);
            fputs(": ", out);
            const char *v = t->cells[at];
            if (!v)
                fputs("null", out);
            else if (t->types[at] == SQLITE_INTEGER)
                fputs(v, out);
            else if (t->types[at] == SQLITE_FLOAT)
                /* inf and nan are not JSON numbers */
                (strpbrk(v, "in") ? cli__json_string(out, v, 0) : (void)fputs(v, out));
            else
                cli__json_string(out, v, 0);
        }
        fputc('}', out);
    }
    fputs(t->nrows ? "\n]\n" : "]\n", out);
}

/* ---- `rheap query` ---- */
