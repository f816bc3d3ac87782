/*
 * rows.c: the first rows of a canned query and the count of the others, without putting every
 * row in order.
 *
 * A table in columns (`rheap query`, the report's sections, `rheap run`'s summary) shows a few
 * rows of answers that have hundreds of thousands on a process tree (a row per site and
 * recording), and says how many it left out. Stepping through the whole answer to count them
 * made SQLite sort every row, text columns and all, to print ten: on a build's tree most of
 * the time of `rheap query leaks`, `peak` or `lifetimes`. So the query runs twice instead: as
 * written with `LIMIT N` after its final ORDER BY, where SQLite keeps only the N first rows
 * while it reads, and as `SELECT count(*)` over the same query without its ORDER BY, which
 * sorts nothing. The rows are those the whole answer starts with, as the canned queries order
 * their rows completely (each ORDER BY ends with the columns that tell any two rows apart).
 *
 * Only a file of one statement is changed, and only when its ORDER BY is the last clause at
 * the top level (outside any parentheses, strings and comments) with no LIMIT of its own; any
 * other file runs whole, as ra_query_run_rows runs it.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <sqlite3.h>

#include "cli.h"

/* Most arms of a compound SELECT counted one by one. */
#define MAX_ARMS 8

/* Where the clauses are, as offsets into the query's text: the last statement runs from start
 * to end (its ';' or the end of the text), and its top-level ORDER BY starts at order. Its
 * SELECT after any WITH clause starts at body; when that is a compound of arms joined by
 * UNION ALL, arm[k] to arm_end[k] is each (narms of them; 0 for any other shape). */
typedef struct {
    size_t start, order, end, body;
    size_t arm[MAX_ARMS], arm_end[MAX_ARMS];
    int narms;
} shape_t;

/* The first byte after the comment, string or quoted name that starts at i, or i when none
 * does. */
static size_t skip_token(const char *s, size_t n, size_t i)
{
    if (i + 1 < n && s[i] == '-' && s[i + 1] == '-') {
        while (i < n && s[i] != '\n')
            i++;
        return i;
    }
    if (i + 1 < n && s[i] == '/' && s[i + 1] == '*') {
        const char *e = strstr(s + i + 2, "*/");
        return e && (size_t)(e - s) + 2 <= n ? (size_t)(e - s) + 2 : n;
    }
    char close = s[i] == '[' ? ']' : s[i];
    if (close != '\'' && close != '"' && close != '`' && close != ']')
        return i;
    for (size_t j = i + 1; j < n; j++) {
        if (s[j] != close)
            continue;
        if (close != ']' && j + 1 < n && s[j + 1] == close) {
            j++; /* a doubled quote stands for itself */
            continue;
        }
        return j + 1;
    }
    return n;
}

static int word_at(const char *s, size_t n, size_t i, const char *w)
{
    size_t k = strlen(w);
    if (i + k > n || strncasecmp(s + i, w, k) != 0)
        return 0;
    return i + k == n || !(isalnum((unsigned char)s[i + k]) || s[i + k] == '_');
}

/* Reads the query's text for its last statement's top-level ORDER BY. 0, or -1 when the text
 * is not of the shape this file handles. */
static int shape_of(const char *s, shape_t *sh)
{
    size_t n = strlen(s), i = 0;
    int depth = 0, limit = 0, found = 0, other = 0, body = 0;
    sh->start = 0;
    sh->end = n;
    sh->narms = 0;
    while (i < n) {
        size_t next = skip_token(s, n, i);
        if (next != i) {
            i = next;
            continue;
        }
        char c = s[i];
        if (c == '(') {
            depth++;
        } else if (c == ')') {
            depth--;
        } else if (c == ';' && depth == 0) {
            /* Only comments and blanks may follow the last statement. */
            size_t j = i + 1;
            while (j < n) {
                size_t k = skip_token(s, n, j);
                if (k != j)
                    j = k;
                else if (isspace((unsigned char)s[j]))
                    j++;
                else
                    break;
            }
            if (j == n) {
                sh->end = i;
                break;
            }
            sh->start = i + 1;
            found = limit = other = body = 0;
            sh->narms = 0;
        } else if (depth == 0 && (isalpha((unsigned char)c) || c == '_') &&
                   (i == 0 || !(isalnum((unsigned char)s[i - 1]) || s[i - 1] == '_'))) {
            size_t k = i;
            while (k < n && (isalnum((unsigned char)s[k]) || s[k] == '_'))
                k++;
            if (word_at(s, n, i, "ORDER")) {
                size_t j = k;
                while (j < n && isspace((unsigned char)s[j]))
                    j++;
                if (word_at(s, n, j, "BY")) {
                    sh->order = i;
                    found = 1;
                }
            } else if (word_at(s, n, i, "LIMIT")) {
                limit = 1;
            } else if (!body && (word_at(s, n, i, "SELECT") || word_at(s, n, i, "VALUES"))) {
                /* The first SELECT outside parentheses: a CTE's are all inside theirs. */
                body = 1;
                sh->body = sh->arm[0] = i;
                sh->narms = 1;
            } else if (body && !found && word_at(s, n, i, "UNION")) {
                size_t j = k;
                while (j < n && isspace((unsigned char)s[j]))
                    j++;
                if (word_at(s, n, j, "ALL") && sh->narms < MAX_ARMS) {
                    sh->arm_end[sh->narms - 1] = i;
                    sh->arm[sh->narms++] = j + 3;
                    k = j + 3;
                } else {
                    other = 1;
                }
            } else if (body && (word_at(s, n, i, "INTERSECT") || word_at(s, n, i, "EXCEPT"))) {
                other = 1;
            }
            i = k;
            continue;
        }
        i++;
    }
    if (!found || limit || depth != 0)
        return -1;
    if (sh->narms > 0)
        sh->arm_end[sh->narms - 1] = sh->order;
    if (other || !body)
        sh->narms = 0;
    return 0;
}

/* The statement that counts the answer's rows: the query without its ORDER BY under count(*);
 * a compound's arms counted one by one and added up, which lets SQLite drop what each arm
 * computes for columns only (a compound under an aggregate is computed whole). NULL when out
 * of memory. */
static char *count_sql(const char *sql, const shape_t *sh)
{
    size_t head = sh->order - sh->start, cap = head + 64 + 48 * (size_t)sh->narms;
    char *c = malloc(cap);
    if (!c)
        return NULL;
    if (sh->narms < 2) {
        snprintf(c, cap, "SELECT count(*) AS n FROM (\n%.*s\n)", (int)head, sql + sh->start);
        return c;
    }
    size_t at = (size_t)snprintf(c, cap, "%.*sSELECT ", (int)(sh->body - sh->start),
                                 sql + sh->start);
    for (int k = 0; k < sh->narms; k++)
        at += (size_t)snprintf(c + at, cap - at, "%s(SELECT count(*) FROM (\n%.*s\n))",
                               k ? " + " : "", (int)(sh->arm_end[k] - sh->arm[k]),
                               sql + sh->arm[k]);
    snprintf(c + at, cap - at, " AS n");
    return c;
}

/* q with its text replaced by sql; it runs with the same checks of the values. */
static ra_status_t run_as(sqlite3 *db, const ra_query_t *q, char *sql, const ra_kv_t *kv,
                          size_t nkv, size_t rows, ra_table_t *t, ra_err_t *err)
{
    ra_query_t as = *q;
    as.sql = sql;
    return ra_query_run_rows(db, &as, kv, nkv, rows, t, err);
}

ra_status_t cli__query_rows(struct sqlite3 *db, const ra_query_t *q, const ra_kv_t *kv, size_t nkv,
                            size_t rows, ra_table_t *t, ra_err_t *err)
{
    shape_t sh = {0};
    if (rows == SIZE_MAX || shape_of(q->sql, &sh) != 0 || sh.start != 0)
        return ra_query_run_rows(db, q, kv, nkv, rows, t, err);
    size_t body = sh.end - sh.start;
    char *limited = malloc(body + 32), *count = count_sql(q->sql, &sh);
    if (!limited || !count) {
        free(limited);
        free(count);
        return ra_query_run_rows(db, q, kv, nkv, rows, t, err);
    }
    /* A line of its own: the ORDER BY may end in a comment. */
    snprintf(limited, body + 32, "%.*s\nLIMIT %zu", (int)body, q->sql + sh.start, rows);
    ra_status_t rc = run_as(db, q, limited, kv, nkv, rows, t, err);
    ra_table_t c;
    if (rc == RA_OK) {
        rc = run_as(db, q, count, kv, nkv, SIZE_MAX, &c, err);
        if (rc == RA_OK) {
            const char *v = c.nrows == 1 ? ra_table_cell(&c, 0, "n") : NULL;
            size_t all = v ? (size_t)strtoull(v, NULL, 10) : t->nrows;
            t->more = all > t->nrows ? all - t->nrows : 0;
        }
        ra_table_free(&c);
        if (rc != RA_OK)
            ra_table_free(t);
    }
    free(limited);
    free(count);
    return rc;
}
