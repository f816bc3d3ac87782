/*
 * stack.c: `rheap stack ID DB`, one symbolized call stack, and the call chains that
 * `query --stacks` and `report --stacks` print under each site row.
 *
 * A stack is printed innermost first, one frame a line, the way a debugger's backtrace reads:
 * frame number, function, file:line (or module+offset when the module has no line
 * information). Inlined functions have rows of their own in `backtraces`; they are marked
 * "inlined", since the frame after them is where their code really runs. The allocation site
 * (stacks.site_frame) is marked with '>'; the frames before it are allocator plumbing.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "cli.h"

static const char frames_sql[] =
    "SELECT b.frame_no, coalesce(b.sym, '?" "?'), b.file, b.line, b.module, b.offset, b.inlined,\n"
    "       b.frame_no = s.site_frame\n"
    "FROM backtraces AS b LEFT JOIN stacks AS s ON s.id = b.id\n"
    "WHERE b.id = ?1 AND b.frame_no >= ?2 ORDER BY b.frame_no";

/* The part of a path after its last '/', for module names. */
static const char *base(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* A frame's file:line made to fit `room` columns: without its directories, then cut from the
 * left (its file:line kept). malloc'ed; NULL on no memory. */
static char *fit_location(const char *loc, size_t room)
{
    if (ra_text_columns(loc) <= room)
        return strdup(loc);
    const char *slash = strrchr(loc, '/');
    const char *b = slash ? slash + 1 : loc;
    return ra_text_clip(b, room < 12 ? 12 : room, 1);
}

int cli__stack_print(sqlite3 *db, long long id, int from_site, const char *indent, size_t width,
                     FILE *out)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, frames_sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    long long first = 0;
    if (from_site) {
        sqlite3_stmt *q;
        if (sqlite3_prepare_v2(db, "SELECT site_frame FROM stacks WHERE id = ?1", -1, &q, NULL) == SQLITE_OK) {
            sqlite3_bind_int64(q, 1, id);
            if (sqlite3_step(q) == SQLITE_ROW)
                first = sqlite3_column_int64(q, 0);
            sqlite3_finalize(q);
        }
    }
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int64(st, 2, first);
    int n = 0, rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *sym = (const char *)sqlite3_column_text(st, 1);
        const char *file = (const char *)sqlite3_column_text(st, 2);
        const char *module = (const char *)sqlite3_column_text(st, 4);
        int site = !from_site && sqlite3_column_int(st, 7);
        char head[96], where[64];
        int hn = snprintf(head, sizeof head, "%s#%-3lld ", site ? "> " : from_site ? "" : "  ",
                          (long long)sqlite3_column_int64(st, 0));
        char *loc = NULL;
        if (file && sqlite3_column_type(st, 3) != SQLITE_NULL) {
            snprintf(where, sizeof where, ":%lld", (long long)sqlite3_column_int64(st, 3));
            size_t n = strlen(file) + strlen(where) + 1;
            if ((loc = malloc(n)))
                snprintf(loc, n, "%s%s", file, where);
        } else {
            snprintf(where, sizeof where, "+0x%llx", (unsigned long long)sqlite3_column_int64(st, 5));
            const char *m = module ? base(module) : "??";
            size_t n = strlen(m) + strlen(where) + 1;
            if ((loc = malloc(n)))
                snprintf(loc, n, "%s%s", m, where);
        }
        const char *inl = sqlite3_column_int(st, 6) ? "  (inlined)" : "";
        /* Within the width the function stays whole; its file loses directories first. */
        size_t used = ra_text_columns(indent) + (size_t)(hn > 0 ? hn : 0) +
                      ra_text_columns(sym) + 2 + strlen(inl);
        char *shown = loc && width ? fit_location(loc, width > used ? width - used : 0) : NULL;
        fprintf(out, "%s%s%s  %s%s\n", indent, head, sym, shown ? shown : loc ? loc : "??", inl);
        free(shown);
        free(loc);
        n++;
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? n : -1;
}

typedef struct {
    sqlite3 *db;
    const ra_table_t *t;
    const char *indent;
    size_t width; /* the lines' width; 0: whole */
    FILE *out;
} chain_t;

static void chain_under_row(size_t row, void *arg)
{
    const chain_t *c = arg;
    const char *id = ra_table_cell(c->t, row, "stack");
    if (!id)
        return;
    char indent[64];
    snprintf(indent, sizeof indent, "%s        ", c->indent);
    cli__stack_print(c->db, strtoll(id, NULL, 10), 1, indent, c->width, c->out);
}

void cli__table_print_chains(sqlite3 *db, const ra_table_t *t, size_t max_rows,
                               const char *indent, int full_names, FILE *out)
{
    chain_t c = {db, t, indent, full_names ? 0 : cli__output_width(out), out};
    cli__table_print_rows(t, max_rows, indent, full_names, out, chain_under_row, &c);
}

static void usage_stack(FILE *f)
{
    fprintf(f,
            "Usage: rheap stack ID DB [--wide]\n"
            "\n"
            "Prints call stack ID of a database (the `stack` column of the site queries, or\n"
            "allocations.bt) innermost first: frame number, function, file:line or\n"
            "module+offset. Inlined functions are frames of their own, marked (inlined); the\n"
            "allocation site is marked '>' (the frames above it are allocator plumbing).\n"
            "\n"
            "Options:\n"
            "  --wide      whole paths (default: fit $COLUMNS, the terminal or 80 columns:\n"
            "              function names whole, locations without their directories)\n"
            "  -h, --help  show this help\n"
            "\n"
            "Exit status: 0 success, 1 usage error or no such stack, 2 the database is\n"
            "missing or not a rheap database.\n");
}

int cli__cmd_stack(int argc, char **argv)
{
    static const struct option longs[] = {
        {"wide", no_argument, NULL, 'W'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int wide = 0, c, rc;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", longs, NULL)) != -1) {
        switch (c) {
        case 'h': usage_stack(stdout); return RHEAP_EXIT_OK;
        case 'W': wide = 1; break;
        default: return cli__option_error(c, argv, longs, "a value", "rheap stack --help");
        }
    }
    if (argc - optind != 2) {
        usage_stack(stderr);
        return RHEAP_EXIT_USAGE;
    }
    const char *ids = argv[optind], *path = argv[optind + 1];
    char *end;
    long long id = strtoll(ids, &end, 10);
    if (!*ids || *end || id <= 0) {
        cli__error(stderr, "'%s' is not a stack id (a positive integer)", ids);
        return RHEAP_EXIT_USAGE;
    }
    sqlite3 *db;
    ra_err_t open_err;
    rc = cli__said(ra_open_read(path, &db, &open_err), &open_err, stderr);
    if (rc != RHEAP_EXIT_OK)
        return rc;
    /* Fitted as the tables are: the function whole, its location shortened. */
    int n = cli__stack_print(db, id, 0, "", wide ? 0 : cli__output_width(stdout), stdout);
    sqlite3_close(db);
    if (n < 0) {
        cli__error(stderr, "%s: cannot read its backtraces", path);
        return RHEAP_EXIT_INPUT;
    }
    if (n == 0) {
        cli__error(stderr, "%s has no stack %lld", path, id);
        return RHEAP_EXIT_USAGE;
    }
    return RHEAP_EXIT_OK; /* main checks that standard output was written */
}
