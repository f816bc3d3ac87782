/*
 * params.c: the values each documented query parameter takes (queries/README.md,
 * "Parameters"), checked before a query runs. The SQL itself takes anything, so a value it
 * cannot use (pid=abc, buckets=0, by=size, a marker label the recording does not have) would
 * otherwise give empty output and status 0. A parameter means the same in every query file
 * that declares it, a query of the user's own included; names not listed here are not checked.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "analysis.h"

typedef enum {
    P_PID,    /* a process of the database */
    P_NUMBER, /* a whole number from min up */
    P_CHOICE, /* one of choices */
    P_MARKER, /* a marker label of the database */
    P_MOMENT, /* a marker label of the database, or a time (ra_duration_ns) */
    P_TIME,   /* a time from 0 up (ra_duration_ns) */
    P_TEXT,   /* any text but the empty one */
} kind_t;

static const struct {
    const char *name;
    kind_t kind;
    long long min;
    const char *const *choices;
} rules[] = {
    {"pid", P_PID, 0, NULL},
    {"buckets", P_NUMBER, 1, NULL},
    {"phases", P_NUMBER, 1, NULL},
    {"top", P_NUMBER, 1, NULL},
    {"min_phases", P_NUMBER, 0, NULL},
    {"max_ns", P_TIME, 0, NULL},
    {"by", P_CHOICE, 0, (const char *const[]){"bytes", "blocks", NULL}},
    {"marker", P_MARKER, 0, NULL},
    {"a", P_MOMENT, 0, NULL},
    {"b", P_MOMENT, 0, NULL},
    {"skip", P_TEXT, 0, NULL},
};

/* Lists (in a, at most max bytes) the distinct values of one column, "'x', 'y'" (quoted) or
 * "1, 2", cut with ", ..." when long; "" when there are none. */
static void list_values(sqlite3 *db, const char *sql, int quote, char *a, size_t max)
{
    a[0] = 0;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return;
    size_t at = 0;
    int n = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *v = (const char *)sqlite3_column_text(st, 0);
        const char *q = quote ? "'" : "";
        int w = snprintf(a + at, max - at, "%s%s%s%s", n++ ? ", " : "", q, v ? v : "", q);
        if (w < 0 || (size_t)w >= max - at || n > 20) {
            snprintf(a + at, max - at, ", ...");
            break;
        }
        at += (size_t)w;
    }
    sqlite3_finalize(st);
}

/* 1 when the query sql, with ?1 bound to v, returns a row. */
static int found(sqlite3 *db, const char *sql, const char *v)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return 0;
    sqlite3_bind_text(st, 1, v, -1, SQLITE_STATIC);
    int hit = sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    return hit;
}

/* A decimal whole number without sign or blanks, as bind_value (query.c) binds it. */
static int whole(const char *v, long long *out)
{
    if (!*v || strspn(v, "0123456789") != strlen(v))
        return 0;
    errno = 0;
    *out = strtoll(v, NULL, 10);
    return errno == 0;
}

int ra_duration_ns(const char *text, int64_t *ns)
{
    /* The units a person writes, and the ones rheap prints ("1.80 s", "250 ms", "12 us"). */
    static const struct {
        const char *unit;
        double ns;
    } units[] = {{"", 1}, {"ns", 1}, {"us", 1e3}, {"\xc2\xb5s", 1e3}, {"ms", 1e6}, {"s", 1e9}};
    size_t digits = strspn(text, "0123456789");
    if (digits == 0)
        return -1;
    size_t n = digits;
    if (text[n] == '.') {
        size_t frac = strspn(text + n + 1, "0123456789");
        if (frac == 0)
            return -1;
        n += 1 + frac;
    }
    const char *unit = text + n;
    if (*unit == ' ')
        unit++;
    for (size_t i = 0; i < sizeof units / sizeof *units; i++) {
        if (strcmp(unit, units[i].unit) != 0 || (i == 0 && unit != text + n))
            continue;
        if (i == 0 || (i == 1 && n == digits)) {
            /* Plain digits (or digits and ns) are exact whatever their size. */
            if (n != digits)
                return -1;
            errno = 0;
            long long v = strtoll(text, NULL, 10);
            if (errno)
                return -1;
            *ns = v;
            return 0;
        }
        double v = strtod(text, NULL) * units[i].ns;
        if (!(v < 9.2e18))
            return -1;
        *ns = (int64_t)llround(v);
        return 0;
    }
    return -1;
}

/* A time parameter's value as the query binds it: whole ns, in buf, when it is a time with a
 * unit; the value itself otherwise (digits, a marker label). */
const char *ra__param_value(sqlite3 *db, const char *name, const char *v, char *buf, size_t len)
{
    size_t i = 0, n = sizeof rules / sizeof *rules;
    while (i < n && strcmp(rules[i].name, name))
        i++;
    int64_t ns;
    if (i == n || (rules[i].kind != P_TIME && rules[i].kind != P_MOMENT) ||
        strspn(v, "0123456789") == strlen(v) || ra_duration_ns(v, &ns) != 0)
        return v;
    /* A marker label wins over a time it happens to spell. */
    if (rules[i].kind == P_MOMENT) {
        sqlite3_stmt *st;
        int label = 0;
        if (sqlite3_prepare_v2(db, "SELECT 1 FROM markers WHERE label = ?1", -1, &st, NULL) ==
            SQLITE_OK) {
            sqlite3_bind_text(st, 1, v, -1, SQLITE_STATIC);
            label = sqlite3_step(st) == SQLITE_ROW;
            sqlite3_finalize(st);
        }
        if (label)
            return v;
    }
    snprintf(buf, len, "%lld", (long long)ns);
    return buf;
}

static const char markers_sql[] = "SELECT DISTINCT label FROM markers ORDER BY label";
static const char marker_sql[] = "SELECT 1 FROM markers WHERE label = ?1";

ra_status_t ra_param_check(sqlite3 *db, const char *name, const char *v, const char *opt,
                           ra_err_t *err)
{
    char label[128];
    if (!opt) {
        snprintf(label, sizeof label, "--param %s", name);
        opt = label;
    }
    size_t i = 0, n = sizeof rules / sizeof *rules;
    while (i < n && strcmp(rules[i].name, name))
        i++;
    if (i == n)
        return RA_OK;
    char list[512];
    long long num;
    switch (rules[i].kind) {
    case P_PID:
        if (whole(v, &num) && found(db, "SELECT 1 FROM processes WHERE pid = ?1", v))
            return RA_OK;
        list_values(db, "SELECT DISTINCT pid FROM processes ORDER BY pid", 0, list, sizeof list);
        return ra__fail(err, RA_E_USAGE, "%s: expected the pid of a process in the database (%s); got '%s'", opt,
                     *list ? list : "it has none", v);
    case P_NUMBER:
        if (whole(v, &num) && num >= rules[i].min)
            return RA_OK;
        return ra__fail(err, RA_E_USAGE, "%s: expected a whole number from %lld up; got '%s'", opt, rules[i].min,
                     v);
    case P_CHOICE: {
        size_t at = 0;
        for (const char *const *c = rules[i].choices; *c; c++) {
            if (!strcmp(*c, v))
                return RA_OK;
            at += (size_t)snprintf(list + at, sizeof list - at, "%s%s", at ? ", " : "", *c);
        }
        return ra__fail(err, RA_E_USAGE, "%s: expected one of %s; got '%s'", opt, list, v);
    }
    case P_TIME: {
        int64_t ns;
        if (ra_duration_ns(v, &ns) == 0)
            return RA_OK;
        return ra__fail(err, RA_E_USAGE,
                        "%s: expected a time (ns, or with a unit: 250ms, 1.8s, 12us); got '%s'",
                        opt, v);
    }
    case P_MARKER:
    case P_MOMENT: {
        int64_t ns;
        if (found(db, marker_sql, v) || (rules[i].kind == P_MOMENT && ra_duration_ns(v, &ns) == 0))
            return RA_OK;
        list_values(db, markers_sql, 1, list, sizeof list);
        return ra__fail(err, RA_E_USAGE, "%s: expected %s (%s%s); got '%s'", opt,
                     rules[i].kind == P_MOMENT ? "a time (ns, or 250ms, 1.8s, ...) or a marker label"
                                               : "a marker label",
                     *list ? "the database's: " : "the database has no markers", list, v);
    }
    case P_TEXT:
        if (*v)
            return RA_OK;
        return ra__fail(err, RA_E_USAGE, "%s: expected a pattern; got ''", opt);
    }
    return RA_OK;
}
