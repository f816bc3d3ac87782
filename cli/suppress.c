/*
 * suppress.c: leak suppressions in LeakSanitizer's format, applied to stacks.
 *
 * A suppression file has one rule a line, `leak:PATTERN`; `#` starts a comment and blank lines
 * are skipped. A PATTERN matches a frame when it matches the frame's function name, its source
 * file or its module path, with LeakSanitizer's rules: it matches anywhere in the name unless
 * it starts with `^` (then only at the start) or ends with `$` (only at the end), and `*`
 * stands for any run of characters. A stack is suppressed when any of its frames matches any
 * rule, the first matching rule being the one it is counted under.
 *
 * Suppression is decided once per stack, in one pass over `backtraces`; every output then
 * looks the stack id up. Blocks are never read one by one.
 *
 * Besides the user's files there is a built-in list of allocations that runtimes make once and
 * never free by design; it is on unless --no-default-suppressions, and every output that uses
 * it says what it took away.
 */
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "cli.h"
#include "profile.h"

/* The built-in list. Each entry's patterns must all match (each some frame of the stack), so
 * that an entry can name both a function and the library it lives in. */
typedef struct {
    const char *label;
    const char *patterns[3];
} default_rule_t;

static const default_rule_t default_rules[] = {
    /* glibc gives each FILE a buffer on its first use (printf's stdout, fopen) and keeps it
     * until exit; the function is _IO_file_doallocate (__GI__IO_file_doallocate in libc's
     * debug information). */
    {"stdio buffers", {"_IO_file_doallocate", NULL}},
    /* libstdc++ reserves a pool for exceptions thrown when malloc fails, from its static
     * initialization; __gnu_cxx::__freeres is the only thing that would release it. Without
     * libstdc++'s debug information the allocating frame has no name: the stack is then a
     * libstdc++ frame called by the dynamic loader's _dl_init, which runs libraries' static
     * initializers. */
    {"libstdc++ emergency exception pool", {"(anonymous namespace)::pool::pool", "libstdc++.so", NULL}},
    {"libstdc++ emergency exception pool", {"libstdc++.so", "_dl_init", NULL}},
    {"libstdc++ emergency exception pool", {"_GLOBAL__sub_I_eh_alloc.cc", NULL}},
    {"libstdc++ emergency exception pool", {"__gnu_cxx::__freeres", NULL}},
};
#define NDEFAULT (sizeof default_rules / sizeof default_rules[0])

typedef struct {
    char *pattern;     /* the user's pattern; NULL for a built-in rule */
    const char *from;  /* the file it came from */
    size_t builtin;    /* index into default_rules when pattern is NULL */
} rule_t;

struct rheap__supp {
    rule_t *rules;
    size_t nrules;
    int64_t *ids;      /* suppressed stack ids, sorted */
    size_t *rule_of;   /* the rule each was suppressed by */
    size_t nids;
};

/* Glob matching with `*` only, the usual way: one restart point after the last `*` suffices. */
static int glob_star(const char *p, size_t n, const char *s)
{
    size_t i = 0;
    const char *star_s = NULL;
    size_t star_i = 0;
    while (*s) {
        if (i < n && p[i] == '*') {
            star_i = ++i;
            star_s = s;
        } else if (i < n && p[i] == *s) {
            i++;
            s++;
        } else if (star_s) {
            i = star_i;
            s = ++star_s;
        } else {
            return 0;
        }
    }
    while (i < n && p[i] == '*')
        i++;
    return i == n;
}

int rheap__supp_match(const char *pattern, const char *s)
{
    if (!s || !*s)
        return 0;
    size_t plen = strlen(pattern);
    int at_start = plen > 0 && pattern[0] == '^';
    int at_end = plen > (size_t)at_start && pattern[plen - 1] == '$';
    /* An unanchored side matches as if `*` stood there. */
    size_t core = plen - at_start - at_end;
    char stackbuf[256];
    char *g = core + 3 <= sizeof stackbuf ? stackbuf : malloc(core + 3);
    if (!g)
        return 0;
    size_t n = 0;
    if (!at_start)
        g[n++] = '*';
    memcpy(g + n, pattern + at_start, core);
    n += core;
    if (!at_end)
        g[n++] = '*';
    int m = glob_star(g, n, s);
    if (g != stackbuf)
        free(g);
    return m;
}

rheap__supp_t *rheap__supp_create(int defaults)
{
    rheap__supp_t *s = calloc(1, sizeof *s);
    if (!s || !defaults)
        return s;
    s->rules = calloc(NDEFAULT, sizeof *s->rules);
    if (!s->rules) {
        free(s);
        return NULL;
    }
    for (size_t i = 0; i < NDEFAULT; i++)
        s->rules[s->nrules++] = (rule_t){NULL, NULL, i};
    return s;
}

void rheap__supp_destroy(rheap__supp_t *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nrules; i++)
        free(s->rules[i].pattern);
    free(s->rules);
    free(s->ids);
    free(s->rule_of);
    free(s);
}

int rheap__supp_load(rheap__supp_t *s, const char *path, FILE *err)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        rheap__error(err, "--suppress %s: cannot be read", path);
        return RHEAP_EXIT_INPUT;
    }
    char line[4096];
    int lineno = 0, rc = RHEAP_EXIT_OK;
    while (rc == RHEAP_EXIT_OK && fgets(line, sizeof line, f)) {
        lineno++;
        char *b = line, *e = line + strlen(line);
        while (e > b && (e[-1] == '\n' || e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t'))
            *--e = 0;
        while (*b == ' ' || *b == '\t')
            b++;
        if (!*b || *b == '#')
            continue;
        if (strncmp(b, "leak:", 5) != 0 || !b[5]) {
            /* Other sanitizers' kinds (race:, called_from_lib:) belong to other tools. */
            rheap__error(err, "--suppress %s: line %d: expected leak:PATTERN, got '%s'", path,
                         lineno, b);
            rc = RHEAP_EXIT_USAGE;
            break;
        }
        rule_t *grown = realloc(s->rules, (s->nrules + 1) * sizeof *grown);
        char *pat = strdup(b + 5);
        if (!grown || !pat) {
            free(pat);
            if (grown)
                s->rules = grown;
            rheap__error(err, "out of memory");
            rc = RHEAP_EXIT_OUTPUT;
            break;
        }
        s->rules = grown;
        s->rules[s->nrules++] = (rule_t){pat, path, 0};
    }
    fclose(f);
    return rc;
}

/* One frame against one user rule or one pattern of a built-in rule. */
static int frame_matches(const char *pattern, const char *sym, const char *file, const char *module)
{
    return rheap__supp_match(pattern, sym) || rheap__supp_match(pattern, file) ||
           rheap__supp_match(pattern, module);
}

/* Decides one stack, whose frames were collected by the caller: a user rule matches when one
 * frame matches it; a built-in rule when each of its patterns matches some frame. Returns the
 * first matching rule's index, or -1. */
static long decide(const rheap__supp_t *s, char **sym, char **file, char **module, size_t n)
{
    for (size_t r = 0; r < s->nrules; r++) {
        const rule_t *rule = &s->rules[r];
        if (rule->pattern) {
            for (size_t k = 0; k < n; k++)
                if (frame_matches(rule->pattern, sym[k], file[k], module[k]))
                    return (long)r;
            continue;
        }
        const default_rule_t *d = &default_rules[rule->builtin];
        int all = 1;
        for (size_t p = 0; all && d->patterns[p]; p++) {
            int any = 0;
            for (size_t k = 0; !any && k < n; k++)
                any = frame_matches(d->patterns[p], sym[k], file[k], module[k]);
            all = any;
        }
        if (all)
            return (long)r;
    }
    return -1;
}

int rheap__supp_stacks(rheap__supp_t *s, sqlite3 *db, char *err, size_t errlen)
{
    free(s->ids);
    free(s->rule_of);
    s->ids = NULL;
    s->rule_of = NULL;
    s->nids = 0;
    if (s->nrules == 0)
        return 0;
    sqlite3_stmt *st;
    /* Only stacks with leaks: a python3 recording's 218,000 frame rows took 50 ms to match
     * where its 90 leaking stacks' rows take under one. */
    if (sqlite3_prepare_v2(db,
                           "SELECT id, sym, file, module FROM backtraces\n"
                           "WHERE id IN (SELECT bt FROM main.stack_stats WHERE leaked_blocks > 0)\n"
                           "ORDER BY id, frame_no",
                           -1, &st, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "reading backtraces: %s", sqlite3_errmsg(db));
        return -1;
    }
    /* The frames of the stack being read, as copies (a step invalidates the column texts). */
    size_t cap = 0, n = 0, idcap = 0;
    char **cols[3] = {NULL, NULL, NULL};
    int64_t cur = 0;
    int rc = 0, step;
    int have = 0;
    for (;;) {
        step = sqlite3_step(st);
        int64_t id = step == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
        if (have && (step != SQLITE_ROW || id != cur)) {
            long r = decide(s, cols[0], cols[1], cols[2], n);
            if (r >= 0) {
                if (s->nids == idcap) {
                    idcap = idcap ? 2 * idcap : 64;
                    int64_t *ni = realloc(s->ids, idcap * sizeof *ni);
                    if (ni)
                        s->ids = ni;
                    size_t *nr = realloc(s->rule_of, idcap * sizeof *nr);
                    if (nr)
                        s->rule_of = nr;
                    if (!ni || !nr) {
                        snprintf(err, errlen, "out of memory");
                        rc = -1;
                        break;
                    }
                }
                s->ids[s->nids] = cur;
                s->rule_of[s->nids++] = (size_t)r;
            }
            for (size_t k = 0; k < n; k++)
                for (int c = 0; c < 3; c++)
                    free(cols[c][k]);
            n = 0;
        }
        if (step != SQLITE_ROW)
            break;
        cur = id;
        have = 1;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            for (int c = 0; c < 3; c++) {
                char **g = realloc(cols[c], cap * sizeof *g);
                if (!g) {
                    snprintf(err, errlen, "out of memory");
                    rc = -1;
                    goto done;
                }
                cols[c] = g;
            }
        }
        for (int c = 0; c < 3; c++) {
            const unsigned char *t = sqlite3_column_text(st, c + 1);
            cols[c][n] = t ? strdup((const char *)t) : NULL;
        }
        n++;
    }
    if (rc == 0 && step != SQLITE_DONE) {
        snprintf(err, errlen, "reading backtraces: %s", sqlite3_errmsg(db));
        rc = -1;
    }
done:
    for (size_t k = 0; k < n; k++)
        for (int c = 0; c < 3; c++)
            free(cols[c][k]);
    for (int c = 0; c < 3; c++)
        free(cols[c]);
    sqlite3_finalize(st);
    return rc;
}

long rheap__supp_rule_of(const rheap__supp_t *s, int64_t bt)
{
    if (!s)
        return -1;
    size_t lo = 0, hi = s->nids;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->ids[mid] < bt)
            lo = mid + 1;
        else if (s->ids[mid] > bt)
            hi = mid;
        else
            return (long)s->rule_of[mid];
    }
    return -1;
}

size_t rheap__supp_nids(const rheap__supp_t *s)
{
    return s ? s->nids : 0;
}

int rheap__supp_shadow(const rheap__supp_t *s, sqlite3 *db, char *err, size_t errlen)
{
    /* The temp schema is searched before main, so the canned queries' `stack_stats` becomes
     * this view: the same rows, with the leak columns of suppressed stacks emptied. The query
     * files stay as they are and still run unchanged in the sqlite3 shell. */
    static const char sql[] =
        "CREATE TEMP TABLE rheap_suppressed (id INTEGER PRIMARY KEY);\n"
        "CREATE TEMP VIEW stack_stats AS\n"
        "SELECT pid, recording, bt, blocks, bytes, freed_blocks, freed_bytes,\n"
        "       CASE WHEN x.id IS NULL THEN leaked_blocks ELSE 0 END AS leaked_blocks,\n"
        "       CASE WHEN x.id IS NULL THEN leaked_bytes ELSE 0 END AS leaked_bytes,\n"
        "       temporary_blocks, temporary_bytes, first_ns, last_ns,\n"
        "       CASE WHEN x.id IS NULL THEN leak_first_ns END AS leak_first_ns,\n"
        "       CASE WHEN x.id IS NULL THEN leak_last_ns END AS leak_last_ns,\n"
        "       min_size, max_size, life_min_ns, life_max_ns, life_total_ns,\n"
        "       peak_blocks, peak_bytes\n"
        "FROM main.stack_stats LEFT JOIN temp.rheap_suppressed AS x ON x.id = bt;\n";
    if (!s || s->nids == 0)
        return 0; /* nothing to take out: the queries read the table itself */
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        snprintf(err, errlen, "suppressions: %s", msg ? msg : sqlite3_errmsg(db));
        sqlite3_free(msg);
        return -1;
    }
    sqlite3_stmt *ins;
    if (sqlite3_prepare_v2(db, "INSERT INTO temp.rheap_suppressed VALUES (?)", -1, &ins, NULL) !=
        SQLITE_OK) {
        snprintf(err, errlen, "suppressions: %s", sqlite3_errmsg(db));
        return -1;
    }
    int rc = 0;
    /* One transaction for the inserts, unless the caller is inside one (rheap run's summary
     * reads the database while the converter is still loading it). */
    int own = sqlite3_get_autocommit(db);
    if (own)
        sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
    for (size_t i = 0; s && i < s->nids && rc == 0; i++) {
        sqlite3_bind_int64(ins, 1, s->ids[i]);
        if (sqlite3_step(ins) != SQLITE_DONE) {
            snprintf(err, errlen, "suppressions: %s", sqlite3_errmsg(db));
            rc = -1;
        }
        sqlite3_reset(ins);
    }
    if (own)
        sqlite3_exec(db, rc == 0 ? "COMMIT" : "ROLLBACK", NULL, NULL, NULL);
    sqlite3_finalize(ins);
    return rc;
}

void rheap__supp_unshadow(sqlite3 *db)
{
    sqlite3_exec(db, "DROP VIEW IF EXISTS temp.stack_stats; DROP TABLE IF EXISTS temp.rheap_suppressed",
                 NULL, NULL, NULL);
}

/* A rule's name in the summary line: the built-in entry's label, or the user's pattern. */
static const char *rule_name(const rheap__supp_t *s, size_t r)
{
    return s->rules[r].pattern ? s->rules[r].pattern : default_rules[s->rules[r].builtin].label;
}

void rheap__supp_print(const rheap__supp_t *s, const int64_t *blocks, const int64_t *bytes,
                       const char *prefix, FILE *out)
{
    if (!s || s->nrules == 0)
        return;
    int64_t tb = 0, tbytes = 0;
    for (size_t r = 0; r < s->nrules; r++) {
        tb += blocks[r];
        tbytes += bytes[r];
    }
    fprintf(out, "%ssuppressed: %lld blocks, %lld bytes", prefix, (long long)tb, (long long)tbytes);
    /* Named by where the rules came from: the built-in list first, then each file; a rule is
     * named once however many entries share its name, and only when it took something. */
    int any = 0;
    const char *group = "";
    for (size_t r = 0; r < s->nrules; r++) {
        if (blocks[r] == 0)
            continue;
        const char *from = s->rules[r].pattern ? s->rules[r].from : "default list";
        int dup = 0;
        for (size_t q = 0; q < r; q++)
            if (blocks[q] && !strcmp(rule_name(s, q), rule_name(s, r)) &&
                !!s->rules[q].pattern == !!s->rules[r].pattern)
                dup = 1;
        if (dup)
            continue;
        if (strcmp(from, group) != 0) {
            fprintf(out, "%s%s: ", any ? "; " : " (", from);
            group = from;
        } else {
            fputs(", ", out);
        }
        fputs(rule_name(s, r), out);
        any = 1;
    }
    fputs(any ? ")\n" : "\n", out);
}

size_t rheap__supp_nrules(const rheap__supp_t *s)
{
    return s ? s->nrules : 0;
}

int rheap__supp_open(const rheap__supp_opts_t *o, sqlite3 *db, rheap__supp_t **out, FILE *err)
{
    *out = NULL;
    rheap__supp_t *s = rheap__supp_create(!o->no_defaults);
    if (!s) {
        rheap__error(err, "out of memory");
        return RHEAP_EXIT_OUTPUT;
    }
    for (size_t i = 0; i < o->nfiles; i++) {
        int rc = rheap__supp_load(s, o->files[i], err);
        if (rc != RHEAP_EXIT_OK) {
            rheap__supp_destroy(s);
            return rc;
        }
    }
    char msg[512];
    if (rheap__supp_stacks(s, db, msg, sizeof msg) != 0) {
        rheap__error(err, "%s", msg);
        rheap__supp_destroy(s);
        return RHEAP_EXIT_INPUT;
    }
    *out = s;
    return RHEAP_EXIT_OK;
}

int rheap__supp_option(rheap__supp_opts_t *o, int c, const char *arg)
{
    if (c == RHEAP_SUPP_OPT_FILE) {
        if (o->nfiles == sizeof o->files / sizeof o->files[0]) {
            rheap__error(stderr, "at most %zu --suppress files", o->nfiles);
            return -1;
        }
        o->files[o->nfiles++] = arg;
        return 1;
    }
    if (c == RHEAP_SUPP_OPT_NO_DEFAULTS) {
        o->no_defaults = 1;
        return 1;
    }
    return 0;
}

void rheap__supp_apply_pd(const rheap__supp_t *s, rheap__pd_t *pd, int64_t *blocks, int64_t *bytes)
{
    if (!s || s->nids == 0)
        return;
    for (size_t i = 0; i < pd->nstats; i++) {
        rheap__stack_stat_t *st = &pd->stats[i];
        long r = rheap__supp_rule_of(s, st->bt);
        if (r < 0 || st->leaked_blocks == 0)
            continue;
        blocks[r] += st->leaked_blocks;
        bytes[r] += st->leaked_bytes;
        for (size_t p = 0; p < pd->nprocs; p++)
            if (pd->procs[p].pid == st->pid && pd->procs[p].recording == st->recording) {
                pd->procs[p].leaked_blocks -= st->leaked_blocks;
                pd->procs[p].leaked_bytes -= st->leaked_bytes;
            }
        st->leaked_blocks = 0;
        st->leaked_bytes = 0;
    }
}

int rheap__supp_totals(const rheap__supp_t *s, sqlite3 *db, const char *pid, int64_t *blocks,
                       int64_t *bytes)
{
    if (!s || s->nids == 0)
        return 0;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db,
                           "SELECT bt, leaked_blocks, leaked_bytes FROM main.stack_stats\n"
                           "WHERE leaked_blocks > 0 AND bt IS NOT NULL AND pid = coalesce(?1, pid)",
                           -1, &st, NULL) != SQLITE_OK)
        return -1;
    if (pid)
        sqlite3_bind_int64(st, 1, strtoll(pid, NULL, 10));
    while (sqlite3_step(st) == SQLITE_ROW) {
        long r = rheap__supp_rule_of(s, sqlite3_column_int64(st, 0));
        if (r < 0)
            continue;
        blocks[r] += sqlite3_column_int64(st, 1);
        bytes[r] += sqlite3_column_int64(st, 2);
    }
    sqlite3_finalize(st);
    return 0;
}
