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

void cli__table_print_rows(const ra_table_t *t, size_t max_rows, const char *indent,
                             int full_names, FILE *out, void (*after_row)(size_t row, void *arg),
                             void *arg)
{
    /* Function names shortened and clipped for reading (names.c), unless the command was asked
     * for them whole; CSV and JSON keep them. */
    ra_table_t shown = {0};
    if (!full_names && cli__names_for_display(t, max_rows, strlen(indent), &shown) == 0)
        t = &shown;
    size_t rows = t->nrows < max_rows ? t->nrows : max_rows;
    size_t *w = calloc(t->ncols ? t->ncols : 1, sizeof *w);
    if (!w) {
        ra_table_free(&shown);
        return;
    }
    for (size_t c = 0; c < t->ncols; c++) {
        w[c] = width(t->names[c]);
        for (size_t r = 0; r < rows; r++) {
            const char *v = t->cells[r * t->ncols + c];
            size_t vw = v ? width(v) : 0;
            if (vw > w[c])
                w[c] = vw;
        }
    }
    /* Numbers are right-aligned, so their digits line up; everything else left-aligned. The
     * last column is not padded, so lines carry no trailing blanks. */
    for (int pass = 0; pass < 2; pass++) {
        fputs(indent, out);
        for (size_t c = 0; c < t->ncols; c++) {
            int num = rows > 0 && is_number(t->types[c]);
            size_t vw = pass == 0 ? width(t->names[c]) : w[c];
            if (c)
                fputs("  ", out);
            if (pass == 0) {
                if (num)
                    pad(out, w[c] - vw);
                fputs(t->names[c], out);
                if (!num && c + 1 < t->ncols)
                    pad(out, w[c] - vw);
            } else {
                for (size_t i = 0; i < w[c]; i++)
                    fputc('-', out);
            }
        }
        fputc('\n', out);
    }
    for (size_t r = 0; r < rows; r++) {
        fputs(indent, out);
        for (size_t c = 0; c < t->ncols; c++) {
            size_t at = r * t->ncols + c;
            const char *v = t->cells[at] ? t->cells[at] : "";
            size_t vw = width(v);
            if (c)
                fputs("  ", out);
            if (is_number(t->types[at])) {
                pad(out, w[c] - vw);
                fputs(v, out);
            } else {
                fputs(v, out);
                if (c + 1 < t->ncols)
                    pad(out, w[c] - vw);
            }
        }
        fputc('\n', out);
        if (after_row)
            after_row(r, arg);
    }
    if (rows < t->nrows)
        fprintf(out, "%s... %zu more rows\n", indent, t->nrows - rows);
    free(w);
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
