/*
 * query.c: `rheap query`, and the machinery every command that reads a database shares: where
 * the canned queries live, reading a query file's header, binding parameters by name, fetching
 * a result into a table and printing it as aligned columns, CSV or JSON.
 *
 * `rheap report` and the summary of `rheap run` go through the same functions with the same
 * query files, so they can never disagree with `rheap query`.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dirent.h>
#include <sqlite3.h>

#include "cli.h"
#include "profile.h"

/* ---- Where things are installed ---- */

int rheap__exe_dir(char *buf, size_t len)
{
    ssize_t n = readlink("/proc/self/exe", buf, len - 1);
    if (n <= 0 || (size_t)n >= len - 1)
        return -1;
    buf[n] = 0;
    char *slash = strrchr(buf, '/');
    if (!slash)
        return -1;
    *slash = 0;
    return 0;
}

int rheap__install_path(const char *installdir, const char *rest, char *buf, size_t len)
{
    char bindir[PATH_MAX];
    int n;
    if (installdir[0] == '/') {
        n = snprintf(buf, len, "%s/%s", installdir, rest);
    } else {
        if (rheap__exe_dir(bindir, sizeof bindir) != 0)
            return -1;
        /* The binary is PREFIX/bin/rheap; the prefix is its directory's parent. */
        n = snprintf(buf, len, "%s/../%s/%s", bindir, installdir, rest);
    }
    return n > 0 && (size_t)n < len ? 0 : -1;
}

static int is_dir(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
}

const char *rheap__queries_dir(char *buf, size_t len)
{
    const char *env = getenv("RHEAP_QUERIES");
    if (env && *env) {
        snprintf(buf, len, "%s", env);
        return buf;
    }
    char p[PATH_MAX];
    if (rheap__install_path(RHEAP_INSTALL_DATADIR, "rheap/queries", p, sizeof p) == 0 && is_dir(p)) {
        if (!realpath(p, buf))
            snprintf(buf, len, "%s", p);
        return buf;
    }
    /* Running from the build tree: the source tree's queries. */
    if (is_dir(RHEAP_SOURCE_QUERIES)) {
        snprintf(buf, len, "%s", RHEAP_SOURCE_QUERIES);
        return buf;
    }
    return NULL;
}

/* ---- Query files ---- */

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        s[--n] = 0;
    return s;
}

static int add_param(rheap__query_t *q, const char *name, const char *def, const char *desc)
{
    rheap__qparam_t *np = realloc(q->params, (q->nparams + 1) * sizeof *np);
    if (!np)
        return -1;
    q->params = np;
    rheap__qparam_t *p = &q->params[q->nparams++];
    p->name = strdup(name);
    p->def = strdup(def);
    p->desc = strdup(desc);
    return p->name && p->def && p->desc ? 0 : -1;
}

/* Reads the leading comment block: its first line is the title, and each line
 * `-- param: NAME = DEFAULT  (description)` declares a parameter. */
static int parse_header(rheap__query_t *q)
{
    const char *s = q->sql;
    int first = 1;
    while (*s) {
        const char *eol = strchr(s, '\n');
        size_t n = eol ? (size_t)(eol - s) : strlen(s);
        char *line = strndup(s, n);
        if (!line)
            return -1;
        char *t = trim(line);
        if (strncmp(t, "--", 2) != 0) {
            int blank = *t == 0;
            free(line);
            if (!blank)
                break;
            s = eol ? eol + 1 : s + n;
            continue;
        }
        t = trim(t + 2);
        if (first && *t) {
            /* "leaks: which sites leak?" reads better without the repeated name. */
            size_t nl = strlen(q->name);
            if (!strncmp(t, q->name, nl) && t[nl] == ':')
                t = trim(t + nl + 1);
            q->title = strdup(t);
            first = 0;
        } else if (!strncmp(t, "param:", 6)) {
            char *name = trim(t + 6), *eq = strchr(name, '=');
            if (eq) {
                *eq = 0;
                char *def = trim(eq + 1), *desc = "";
                char *paren = strchr(def, '(');
                /* The description is the parenthesized text after the default. */
                if (paren && paren > def && isspace((unsigned char)paren[-1])) {
                    *paren = 0;
                    desc = paren + 1;
                    char *close = strrchr(desc, ')');
                    if (close)
                        *close = 0;
                }
                name = trim(name);
                if (*name == ':')
                    name++;
                if (add_param(q, name, trim(def), trim(desc)) != 0) {
                    free(line);
                    return -1;
                }
            }
        }
        free(line);
        s = eol ? eol + 1 : s + n;
    }
    if (!q->title)
        q->title = strdup("");
    return q->title ? 0 : -1;
}

static int valid_name(const char *name)
{
    if (!*name)
        return 0;
    for (const char *p = name; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '-' && *p != '_')
            return 0;
    return 1;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Lists the NAME.sql files of the queries directory, sorted. Returns a malloc'ed array of
 * malloc'ed names (without .sql), *n set; NULL with *n = 0 when none or on error. */
char **rheap__query_names(const char *dir, size_t *n)
{
    *n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return NULL;
    char **names = NULL;
    size_t cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len <= 4 || strcmp(e->d_name + len - 4, ".sql") || e->d_name[0] == '.')
            continue;
        if (rheap__grow(&names, &cap, *n, sizeof *names, 16) != 0)
            break;
        names[*n] = strndup(e->d_name, len - 4);
        if (names[*n])
            (*n)++;
    }
    closedir(d);
    if (*n)
        qsort(names, *n, sizeof *names, cmp_str);
    return names;
}

/* "no query named 'leak' in DIR; did you mean 'leaks'?" */
static void no_such_query(const char *name, const char *dir, FILE *err)
{
    size_t n;
    char **names = rheap__query_names(dir, &n);
    const char *near = rheap__suggest(name, (const char *const *)names, n);
    if (near)
        rheap__error(err, "no query named '%s' in %s; did you mean '%s'?", name, dir, near);
    else
        rheap__error(err, "no query named '%s' in %s (rheap query --list shows them)", name, dir);
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

int rheap__query_load(const char *name, rheap__query_t *q, FILE *err)
{
    memset(q, 0, sizeof *q);
    char dir[PATH_MAX], path[PATH_MAX + 256];
    if (!valid_name(name)) {
        rheap__error(err, "'%s' is not a query name (letters, digits, - and _; see rheap query --list)",
                     name);
        return RHEAP_EXIT_USAGE;
    }
    if (!rheap__queries_dir(dir, sizeof dir)) {
        rheap__error(err, "cannot find the queries directory; set RHEAP_QUERIES to it");
        return RHEAP_EXIT_INPUT;
    }
    snprintf(path, sizeof path, "%s/%s.sql", dir, name);
    FILE *f = fopen(path, "r");
    if (!f) {
        if (errno == ENOENT)
            no_such_query(name, dir, err);
        else
            rheap__error(err, "%s: %s", path, strerror(errno));
        return errno == ENOENT ? RHEAP_EXIT_USAGE : RHEAP_EXIT_INPUT;
    }
    size_t cap = 4096, n = 0;
    char *sql = malloc(cap);
    size_t got;
    while (sql && (got = fread(sql + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (cap - n - 1 == 0) {
            char *ns = realloc(sql, cap * 2);
            if (!ns) {
                free(sql);
                sql = NULL;
                break;
            }
            sql = ns;
            cap *= 2;
        }
    }
    int bad = ferror(f);
    fclose(f);
    if (!sql || bad) {
        rheap__error(err, "%s: %s", path, sql ? "read error" : "out of memory");
        free(sql);
        return RHEAP_EXIT_INPUT;
    }
    sql[n] = 0;
    q->sql = sql;
    q->name = strdup(name);
    q->path = strdup(path);
    if (!q->name || !q->path || parse_header(q) != 0) {
        rheap__error(err, "out of memory");
        rheap__query_free(q);
        return RHEAP_EXIT_OUTPUT;
    }
    return RHEAP_EXIT_OK;
}

void rheap__query_free(rheap__query_t *q)
{
    if (!q)
        return;
    for (size_t i = 0; i < q->nparams; i++) {
        free(q->params[i].name);
        free(q->params[i].def);
        free(q->params[i].desc);
    }
    free(q->params);
    free(q->name);
    free(q->path);
    free(q->title);
    free(q->sql);
    memset(q, 0, sizeof *q);
}

/* ---- Running SQL into a table ---- */

void rheap__table_free(rheap__table_t *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->ncols; i++)
        free(t->names[i]);
    for (size_t i = 0; i < t->ncols * t->nrows; i++)
        free(t->cells[i]);
    free(t->names);
    free(t->cells);
    free(t->types);
    memset(t, 0, sizeof *t);
}

const char *rheap__table_cell(const rheap__table_t *t, size_t row, const char *col)
{
    if (row >= t->nrows)
        return NULL;
    for (size_t c = 0; c < t->ncols; c++)
        if (!strcmp(t->names[c], col))
            return t->cells[row * t->ncols + c];
    return NULL;
}

/* Binds a value as an integer or a real when it reads as one, so `size >= :min` compares
 * numbers (SQLite orders any text after every number). */
static int bind_value(sqlite3_stmt *st, int idx, const char *v)
{
    char *end;
    if (*v) {
        errno = 0;
        /* Decimal only: "010" is ten, and "0x10", "inf" or "nan" stay text. */
        long long ll = strtoll(v, &end, 10);
        if (!*end && !errno)
            return sqlite3_bind_int64(st, idx, ll);
        double d = strtod(v, &end);
        if (!*end && strspn(v, "+-.0123456789eE") == strlen(v))
            return sqlite3_bind_double(st, idx, d);
    }
    return sqlite3_bind_text(st, idx, v, -1, SQLITE_TRANSIENT);
}

static int grow_rows(rheap__table_t *t, size_t *cap)
{
    if (t->nrows < *cap)
        return 0;
    size_t nc = *cap ? *cap * 2 : 64;
    char **cells = realloc(t->cells, nc * t->ncols * sizeof *cells);
    if (!cells)
        return -1;
    t->cells = cells;
    unsigned char *types = realloc(t->types, nc * t->ncols);
    if (!types)
        return -1;
    t->types = types;
    *cap = nc;
    return 0;
}

static void set_err(char *errbuf, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(errbuf, errlen, fmt, ap);
    va_end(ap);
}

int rheap__sql_fetch(sqlite3 *db, const char *sql, const rheap__kv_t *kv, size_t nkv,
                     rheap__table_t *t, char *errbuf, size_t errlen)
{
    memset(t, 0, sizeof *t);
    const char *tail = sql;
    int status = 0;
    while (tail && *tail) {
        sqlite3_stmt *st = NULL;
        if (sqlite3_prepare_v2(db, tail, -1, &st, &tail) != SQLITE_OK) {
            set_err(errbuf, errlen, "%s", sqlite3_errmsg(db));
            return -1;
        }
        if (!st)
            continue; /* only comments or whitespace left */
        for (int i = 1; i <= sqlite3_bind_parameter_count(st); i++) {
            const char *pn = sqlite3_bind_parameter_name(st, i);
            if (!pn)
                continue;
            for (size_t k = 0; k < nkv; k++)
                if (!strcmp(pn + 1, kv[k].key))
                    bind_value(st, i, kv[k].value);
        }
        int ncols = sqlite3_column_count(st);
        if (ncols > 0) {
            /* The result shown is the last statement's that returns columns. */
            rheap__table_free(t);
            t->ncols = (size_t)ncols;
            t->names = calloc((size_t)ncols, sizeof *t->names);
            if (!t->names) {
                sqlite3_finalize(st);
                set_err(errbuf, errlen, "out of memory");
                return -1;
            }
            for (int c = 0; c < ncols; c++)
                t->names[c] = strdup(sqlite3_column_name(st, c));
        }
        size_t cap = 0;
        int rc;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            if (ncols <= 0)
                continue;
            if (grow_rows(t, &cap) != 0) {
                status = -1;
                set_err(errbuf, errlen, "out of memory");
                break;
            }
            for (int c = 0; c < ncols; c++) {
                size_t at = t->nrows * t->ncols + (size_t)c;
                int type = sqlite3_column_type(st, c);
                t->types[at] = (unsigned char)type;
                if (type == SQLITE_NULL) {
                    t->cells[at] = NULL;
                } else if (type == SQLITE_FLOAT) {
                    char b[64];
                    snprintf(b, sizeof b, "%.15g", sqlite3_column_double(st, c));
                    t->cells[at] = strdup(b);
                } else {
                    const unsigned char *v = sqlite3_column_text(st, c);
                    t->cells[at] = strdup(v ? (const char *)v : "");
                }
            }
            t->nrows++;
        }
        if (status == 0 && rc != SQLITE_DONE) {
            set_err(errbuf, errlen, "%s", sqlite3_errmsg(db));
            status = -1;
        }
        sqlite3_finalize(st);
        if (status)
            return status;
    }
    return 0;
}

int rheap__query_run(sqlite3 *db, const rheap__query_t *q, const rheap__kv_t *kv, size_t nkv,
                     rheap__table_t *t, FILE *err)
{
    /* Every name the user gave must be a declared parameter or appear in the SQL; a typo
     * would otherwise silently run the query with its default. */
    for (size_t k = 0; k < nkv; k++) {
        int known = 0;
        for (size_t i = 0; i < q->nparams && !known; i++)
            known = !strcmp(q->params[i].name, kv[k].key);
        if (!known) {
            char pat[256];
            snprintf(pat, sizeof pat, ":%s", kv[k].key);
            const char *hit = q->sql;
            size_t pl = strlen(pat);
            while (!known && (hit = strstr(hit, pat))) {
                char next = hit[pl];
                known = !(isalnum((unsigned char)next) || next == '_');
                hit += pl;
            }
        }
        if (!known) {
            char valid[1024] = "it takes none";
            size_t at = 0;
            for (size_t i = 0; i < q->nparams && at < sizeof valid; i++)
                at += (size_t)snprintf(valid + at, sizeof valid - at, "%s %s",
                                       i ? "" : "valid ones:", q->params[i].name);
            rheap__error(err, "query %s has no parameter '%s'; %s", q->name, kv[k].key, valid);
            return RHEAP_EXIT_USAGE;
        }
    }
    int rc = rheap__params_check(db, q, kv, nkv, err);
    if (rc != RHEAP_EXIT_OK) {
        memset(t, 0, sizeof *t);
        return rc;
    }
    char errbuf[1024];
    if (rheap__sql_fetch(db, q->sql, kv, nkv, t, errbuf, sizeof errbuf) != 0) {
        rheap__error(err, "query %s (%s): %s", q->name, q->path, errbuf);
        rheap__table_free(t);
        return RHEAP_EXIT_INPUT;
    }
    return RHEAP_EXIT_OK;
}

/* ---- Printing a table ---- */

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

void rheap__table_print_columns(const rheap__table_t *t, size_t max_rows, const char *indent,
                                FILE *out)
{
    rheap__table_print_rows(t, max_rows, indent, out, NULL, NULL);
}

void rheap__table_print_rows(const rheap__table_t *t, size_t max_rows, const char *indent,
                             FILE *out, void (*after_row)(size_t row, void *arg), void *arg)
{
    /* Function names shortened and clipped for reading (names.c); CSV and JSON keep them. */
    rheap__table_t shown;
    if (rheap__names_for_display(t, max_rows, strlen(indent), &shown) == 0)
        t = &shown;
    size_t rows = t->nrows < max_rows ? t->nrows : max_rows;
    size_t *w = calloc(t->ncols ? t->ncols : 1, sizeof *w);
    if (!w) {
        rheap__table_free(&shown);
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
    rheap__table_free(&shown);
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

void rheap__table_print(const rheap__table_t *t, rheap__fmt_t fmt, FILE *out)
{
    if (fmt == RHEAP_FMT_COLUMN) {
        if (t->ncols)
            rheap__table_print_columns(t, t->nrows, "", out);
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
            rheap__json_string(out, t->names[c], 0);
            fputs(": ", out);
            const char *v = t->cells[at];
            if (!v)
                fputs("null", out);
            else if (t->types[at] == SQLITE_INTEGER)
                fputs(v, out);
            else if (t->types[at] == SQLITE_FLOAT)
                /* inf and nan are not JSON numbers */
                (strpbrk(v, "in") ? rheap__json_string(out, v, 0) : (void)fputs(v, out));
            else
                rheap__json_string(out, v, 0);
        }
        fputc('}', out);
    }
    fputs(t->nrows ? "\n]\n" : "]\n", out);
}

/* ---- `rheap query` ---- */

static void usage_query(FILE *f)
{
    fprintf(f,
            "Usage: rheap query NAME DB [--param KEY=VALUE]... [--csv | --json | --raw] [--stacks]\n"
            "       rheap query --list\n"
            "\n"
            "Runs the canned query NAME (the file NAME.sql of the queries directory) on the\n"
            "database DB and prints its result as aligned columns with a header. Each file\n"
            "also runs as is in the sqlite3 shell: sqlite3 DB < NAME.sql.\n"
            "\n"
            "Options:\n"
            "  --list                 list the queries, what each answers, and their parameters\n"
            "  -p, --param KEY=VALUE  set the query parameter :KEY (repeatable); unset ones\n"
            "                         take the default written in the query's header\n"
            "  --csv                  print CSV (RFC 4180) instead of columns\n"
            "  --json                 print a JSON array of objects\n"
            "  --raw                  exact integers in columns too (default: sizes in KiB,\n"
            "                         MiB, ...; times in us, ms, s; CSV and JSON are exact)\n"
            "  --stacks               print each row's call chain under it, from the\n"
            "                         allocation site outwards (queries with a stack column)\n"
            "  --full-names           columns: keep template arguments and whole names\n"
            "  -h, --help             show this help\n"
            "\n"
            "The leaks query also takes (its suppressed blocks are counted on stderr):\n"
            RHEAP_SUPP_HELP
            "\n"
            "The queries directory is $RHEAP_QUERIES when set, else the installed\n"
            "share/rheap/queries, else the source tree's queries/.\n"
            "\n"
            "Parameter values are checked: pid a process of DB, buckets, phases and top\n"
            "whole numbers from 1, by bytes or blocks, marker a marker label of DB, a and b\n"
            "a marker label or a time in ns, ...\n"
            "\n"
            "Exit status: 0 success, 1 usage error (unknown query or parameter, or a value\n"
            "the parameter does not take), 2 the database is missing, not a rheap database of\n"
            "this version, or locked, or the query failed; 4 the output could not be written.\n");
}

static int list_queries(FILE *out, FILE *err)
{
    char dir[PATH_MAX];
    if (!rheap__queries_dir(dir, sizeof dir)) {
        rheap__error(err, "cannot find the queries directory; set RHEAP_QUERIES to it");
        return RHEAP_EXIT_INPUT;
    }
    size_t n;
    char **names = rheap__query_names(dir, &n);
    if (n == 0) {
        rheap__error(err, "no queries (*.sql) in %s", dir);
        free(names);
        return RHEAP_EXIT_INPUT;
    }
    size_t w = 0;
    for (size_t i = 0; i < n; i++)
        if (strlen(names[i]) > w)
            w = strlen(names[i]);
    fprintf(out, "Queries in %s:\n\n", dir);
    int status = RHEAP_EXIT_OK;
    for (size_t i = 0; i < n; i++) {
        rheap__query_t q;
        if (rheap__query_load(names[i], &q, err) != RHEAP_EXIT_OK) {
            status = RHEAP_EXIT_INPUT;
            free(names[i]);
            continue;
        }
        fprintf(out, "  %-*s  %s\n", (int)w, q.name, q.title);
        for (size_t p = 0; p < q.nparams; p++)
            fprintf(out, "  %-*s    --param %s=%s%s%s\n", (int)w, "", q.params[p].name,
                    q.params[p].def, *q.params[p].desc ? "  " : "", q.params[p].desc);
        rheap__query_free(&q);
        free(names[i]);
    }
    free(names);
    fprintf(out, "\nRun one: rheap query NAME DB [--param KEY=VALUE]...\n");
    return status;
}

int rheap__cmd_query(int argc, char **argv)
{
    static const struct option longs[] = {
        {"list", no_argument, NULL, 'l'},
        {"raw", no_argument, NULL, 'R'},
        {"stacks", no_argument, NULL, 'S'},
        {"csv", no_argument, NULL, 'C'},
        {"json", no_argument, NULL, 'J'},
        {"full-names", no_argument, NULL, 'F'},
        {"param", required_argument, NULL, 'p'},
        {"help", no_argument, NULL, 'h'},
        RHEAP_SUPP_LONGS,
        {NULL, 0, NULL, 0},
    };
    rheap__supp_opts_t so = {0};
    rheap__fmt_t fmt = RHEAP_FMT_COLUMN;
    int list = 0, raw = 0, chains = 0;
    rheap__kv_t *kv = calloc((size_t)argc + 1, sizeof *kv);
    char **owned = calloc((size_t)argc + 1, sizeof *owned);
    size_t nkv = 0;
    int status = RHEAP_EXIT_USAGE;
    if (!kv || !owned) {
        rheap__error(stderr, "out of memory");
        free(kv);
        free(owned);
        return RHEAP_EXIT_OUTPUT;
    }
    int c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":p:h", longs, NULL)) != -1) {
        switch (c) {
        case 'h':
            usage_query(stdout);
            status = RHEAP_EXIT_OK;
            goto done;
        case 'l': list = 1; break;
        case 'R': raw = 1; break;
        case 'S': chains = 1; break;
        case 'C': fmt = RHEAP_FMT_CSV; break;
        case 'J': fmt = RHEAP_FMT_JSON; break;
        case 'F': rheap__names_full(1); break;
        case 'p': {
            const char *eq = strchr(optarg, '=');
            if (!eq || eq == optarg) {
                rheap__error(stderr, "--param '%s': expected KEY=VALUE", optarg);
                goto done;
            }
            owned[nkv] = strndup(optarg, (size_t)(eq - optarg));
            if (!owned[nkv]) {
                status = RHEAP_EXIT_OUTPUT;
                goto done;
            }
            kv[nkv].key = owned[nkv][0] == ':' ? owned[nkv] + 1 : owned[nkv];
            kv[nkv].value = eq + 1;
            nkv++;
            break;
        }
        default: {
            int sr = rheap__supp_option(&so, c, optarg);
            if (sr > 0)
                break;
            if (sr < 0)
                goto done;
            rheap__option_error(c, argv, longs, "KEY=VALUE", "rheap query --help");
            goto done;
        }
        }
    }
    /* NAME and DB, wherever they were among the options. */
    const char *const *pos = (const char *const *)argv + optind;
    int npos = argc - optind;
    if (npos > 2) {
        rheap__error(stderr, "too many arguments at '%s' (try rheap query --help)", pos[2]);
        goto done;
    }
    if (list) {
        status = list_queries(stdout, stderr);
        goto done;
    }
    if (npos < 2) {
        rheap__error(stderr, "%s (try rheap query --help, or rheap query --list)",
                     npos == 0 ? "no query name given" : "no database given");
        goto done;
    }
    rheap__query_t q;
    status = rheap__query_load(pos[0], &q, stderr);
    if (status != RHEAP_EXIT_OK)
        goto done;
    sqlite3 *db;
    status = rheap__db_open_read(pos[1], &db, stderr);
    /* Suppressions belong to the leaks query: it reads stack_stats, which becomes a view with
     * the suppressed stacks' leaks taken out (suppress.c); the file itself is unchanged. */
    int leaks = !strcmp(q.name, "leaks");
    rheap__supp_t *supp = NULL;
    if (status == RHEAP_EXIT_OK && !leaks && (so.nfiles || so.no_defaults)) {
        rheap__error(stderr, "--suppress and --no-default-suppressions apply to the leaks query only");
        status = RHEAP_EXIT_USAGE;
        sqlite3_close(db);
    } else if (status == RHEAP_EXIT_OK && leaks) {
        char msg[512];
        status = rheap__supp_open(&so, db, &supp, stderr);
        if (status == RHEAP_EXIT_OK && rheap__supp_shadow(supp, db, msg, sizeof msg) != 0) {
            rheap__error(stderr, "%s", msg);
            status = RHEAP_EXIT_INPUT;
        }
        if (status != RHEAP_EXIT_OK)
            sqlite3_close(db);
    }
    if (status == RHEAP_EXIT_OK) {
        rheap__table_t t;
        status = rheap__query_run(db, &q, kv, nkv, &t, stderr);
        if (status == RHEAP_EXIT_OK && supp && rheap__supp_nids(supp)) {
            const char *pid = NULL;
            for (size_t i = 0; i < nkv; i++)
                if (!strcmp(kv[i].key, "pid"))
                    pid = kv[i].value;
            size_t nr = rheap__supp_nrules(supp);
            int64_t *bl = calloc(nr, sizeof *bl), *by = calloc(nr, sizeof *by);
            if (bl && by && rheap__supp_totals(supp, db, pid, bl, by) == 0)
                rheap__supp_print(supp, bl, by, "rheap: ", stderr);
            free(bl);
            free(by);
        }
        if (status == RHEAP_EXIT_OK) {
            if (fmt == RHEAP_FMT_COLUMN && !raw)
                rheap__table_humanize(&t);
            if (fmt == RHEAP_FMT_COLUMN && chains && t.ncols)
                rheap__table_print_chains(db, &t, t.nrows, "", stdout);
            else
                rheap__table_print(&t, fmt, stdout);
            rheap__table_free(&t);
            long long interval = rheap__db_sample_interval(db, NULL);
            if (interval)
                fprintf(stderr,
                        "rheap: profile mode: blocks and bytes are estimates from allocations "
                        "sampled about once every %lld bytes\n",
                        interval);
        }
        sqlite3_close(db);
    }
    rheap__supp_destroy(supp);
    rheap__query_free(&q);
done:
    for (size_t i = 0; i < nkv; i++)
        free(owned[i]);
    free(owned);
    free(kv);
    return status;
}
