/*
 * fetch.c: running SQL into tables, and the canned query files: reading a file's header
 * (its title and declared parameters), binding values by name, refusing a name the query does
 * not take.
 *
 * `rheap query`, `rheap report` and the summary of `rheap run` all go through these functions
 * with the same query files, so they can never disagree.
 */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dirent.h>
#include <sqlite3.h>

#include "analysis.h"

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

/* A parameter's name: letters, digits and '_', at least one. */
static int word(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_')
            return 0;
    return 1;
}

static int add_param(ra_query_t *q, const char *name, const char *def, const char *desc)
{
    ra_qparam_t *np = realloc(q->params, (q->nparams + 1) * sizeof *np);
    if (!np)
        return -1;
    q->params = np;
    ra_qparam_t *p = &q->params[q->nparams++];
    p->name = strdup(name);
    p->def = strdup(def);
    p->desc = strdup(desc);
    return p->name && p->def && p->desc ? 0 : -1;
}

/* Reads the leading comment block: its first line is the title, and each line
 * `-- param: NAME = DEFAULT  (description)` declares a parameter. */
static int parse_header(ra_query_t *q)
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
                /* A line whose name could not be an SQL parameter's (":x", "", "a b")
                 * declares nothing a user could set. */
                if (word(name) && add_param(q, name, trim(def), trim(desc)) != 0) {
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

int ra_query_name_ok(const char *name)
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
char **ra_query_names(const char *dir, size_t *n)
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
        if (rheap_grow(&names, &cap, *n, sizeof *names, 16) != 0)
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


ra_status_t ra_query_parse(const char *name, const char *path, const char *text, size_t len,
                           ra_query_t *q, ra_err_t *err)
{
    memset(q, 0, sizeof *q);
    q->sql = strndup(text, len);
    q->name = strdup(name);
    q->path = strdup(path);
    if (!q->sql || !q->name || !q->path || parse_header(q) != 0) {
        ra_query_free(q);
        return ra__fail(err, RA_E_NOMEM, "out of memory");
    }
    return RA_OK;
}

ra_status_t ra_query_load(const char *dir, const char *name, ra_query_t *q, ra_err_t *err)
{
    memset(q, 0, sizeof *q);
    char path[4096 + 256];
    if (!ra_query_name_ok(name))
        return ra__fail(err, RA_E_USAGE,
                        "'%s' is not a query name (letters, digits, - and _; see rheap query --list)",
                        name);
    snprintf(path, sizeof path, "%s/%s.sql", dir, name);
    FILE *f = fopen(path, "r");
    if (!f) {
        if (errno == ENOENT)
            return ra__fail(err, RA_E_USAGE, "no query named '%s' in %s", name, dir);
        return ra__fail(err, RA_E_INPUT, "%s: %s", path, strerror(errno));
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
        free(sql);
        return sql ? ra__fail(err, RA_E_INPUT, "%s: read error", path)
                   : ra__fail(err, RA_E_NOMEM, "%s: out of memory", path);
    }
    ra_status_t st = ra_query_parse(name, path, sql, n, q, err);
    free(sql);
    return st;
}

void ra_query_free(ra_query_t *q)
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

void ra_table_free(ra_table_t *t)
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

const char *ra_table_cell(const ra_table_t *t, size_t row, const char *col)
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

static int grow_rows(ra_table_t *t, size_t *cap)
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

ra_status_t ra_fetch(sqlite3 *db, const char *sql, const ra_kv_t *kv, size_t nkv,
                     ra_table_t *t, ra_err_t *err)
{
    return ra_fetch_rows(db, sql, kv, nkv, SIZE_MAX, t, err);
}

ra_status_t ra_fetch_rows(sqlite3 *db, const char *sql, const ra_kv_t *kv, size_t nkv,
                          size_t max_rows, ra_table_t *t, ra_err_t *err)
{
    memset(t, 0, sizeof *t);
    const char *tail = sql;
    ra_status_t status = RA_OK;
    while (tail && *tail) {
        sqlite3_stmt *st = NULL;
        if (sqlite3_prepare_v2(db, tail, -1, &st, &tail) != SQLITE_OK) {
            return ra__fail(err, RA_E_INPUT, "%s", sqlite3_errmsg(db));
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
            ra_table_free(t);
            t->ncols = (size_t)ncols;
            t->names = calloc((size_t)ncols, sizeof *t->names);
            if (!t->names) {
                sqlite3_finalize(st);
                return ra__fail(err, RA_E_NOMEM, "out of memory");
            }
            for (int c = 0; c < ncols; c++)
                t->names[c] = strdup(sqlite3_column_name(st, c));
        }
        size_t cap = 0;
        int rc;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            if (ncols <= 0)
                continue;
            /* Beyond the rows kept, only counted: no text is made of them. */
            if (t->nrows >= max_rows) {
                t->more++;
                continue;
            }
            if (grow_rows(t, &cap) != 0) {
                status = ra__fail(err, RA_E_NOMEM, "out of memory");
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
            status = ra__fail(err, RA_E_INPUT, "%s", sqlite3_errmsg(db));
        }
        sqlite3_finalize(st);
        if (status != RA_OK)
            return status;
    }
    return RA_OK;
}

ra_status_t ra_query_run(sqlite3 *db, const ra_query_t *q, const ra_kv_t *kv, size_t nkv,
                         ra_table_t *t, ra_err_t *err)
{
    return ra_query_run_rows(db, q, kv, nkv, SIZE_MAX, t, err);
}

ra_status_t ra_query_run_rows(sqlite3 *db, const ra_query_t *q, const ra_kv_t *kv, size_t nkv,
                              size_t max_rows, ra_table_t *t, ra_err_t *err)
{
    memset(t, 0, sizeof *t);
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
            return ra__fail(err, RA_E_USAGE, "query %s has no parameter '%s'; %s", q->name,
                            kv[k].key, valid);
        }
    }
    /* Each value the parameter's kind does not take (params.c). */
    for (size_t k = 0; k < nkv; k++)
        for (size_t i = 0; i < q->nparams; i++)
            if (!strcmp(q->params[i].name, kv[k].key)) {
                ra_status_t rc = ra_param_check(db, kv[k].key, kv[k].value, NULL, err);
                if (rc != RA_OK)
                    return rc;
            }
    /* Times with a unit are bound as the ns the SQL compares with. */
    ra_kv_t *bound = calloc(nkv ? nkv : 1, sizeof *bound);
    char (*ns)[24] = calloc(nkv ? nkv : 1, sizeof *ns);
    if (!bound || !ns) {
        free(bound);
        free(ns);
        return ra__fail(err, RA_E_NOMEM, "out of memory");
    }
    for (size_t k = 0; k < nkv; k++) {
        bound[k].key = kv[k].key;
        bound[k].value = kv[k].value ? ra__param_value(db, kv[k].key, kv[k].value, ns[k], sizeof ns[k])
                                     : NULL;
    }
    ra_err_t why;
    ra_status_t rc = ra_fetch_rows(db, q->sql, bound, nkv, max_rows, t, &why);
    free(bound);
    free(ns);
    if (rc != RA_OK) {
        ra_table_free(t);
        return ra__fail(err, rc, "query %s (%s): %s", q->name, q->path, why.msg);
    }
    return RA_OK;
}

/* ---- Printing a table ---- */

