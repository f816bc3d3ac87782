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
 * Suppression is decided once per stack, from each distinct frame's match (unique_frames) and
 * each stack's list of frames (stack_frames); every output then looks the stack id up. Blocks
 * are never read one by one.
 *
 * Besides the user's files there is a built-in list of allocations that runtimes make once and
 * never free by design; it is on unless --no-default-suppressions, and every output that uses
 * it says what it took away.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "analysis.h"

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

struct ra_supp {
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

int ra_supp_match(const char *pattern, const char *s)
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

ra_supp_t *ra_supp_create(int defaults)
{
    ra_supp_t *s = calloc(1, sizeof *s);
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

void ra_supp_destroy(ra_supp_t *s)
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

ra_status_t ra_supp_parse(ra_supp_t *s, const char *origin, const char *text, size_t len,
                          ra_err_t *err)
{
    int lineno = 0;
    const char *at = text, *end = text + len;
    while (at < end) {
        const char *eol = memchr(at, '\n', (size_t)(end - at));
        size_t n = eol ? (size_t)(eol - at) : (size_t)(end - at);
        char *line = strndup(at, n); /* a NUL in the line ends it, as in a C string */
        if (!line)
            return ra__fail(err, RA_E_NOMEM, "out of memory");
        at += n + (eol != NULL);
        lineno++;
        char *b = line, *e = line + strlen(line);
        while (e > b && (e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t'))
            *--e = 0;
        while (*b == ' ' || *b == '\t')
            b++;
        if (!*b || *b == '#') {
            free(line);
            continue;
        }
        if (strncmp(b, "leak:", 5) != 0 || !b[5]) {
            /* Other sanitizers' kinds (race:, called_from_lib:) belong to other tools. */
            ra_status_t rc = ra__fail(err, RA_E_USAGE,
                                      "%s: line %d: expected leak:PATTERN, got '%s'", origin,
                                      lineno, b);
            free(line);
            return rc;
        }
        rule_t *grown = realloc(s->rules, (s->nrules + 1) * sizeof *grown);
        char *pat = strdup(b + 5);
        free(line);
        if (grown)
            s->rules = grown;
        if (!grown || !pat) {
            free(pat);
            return ra__fail(err, RA_E_NOMEM, "out of memory");
        }
        s->rules[s->nrules++] = (rule_t){pat, origin, 0};
    }
    return RA_OK;
}

ra_status_t ra_supp_load(ra_supp_t *s, const char *path, ra_err_t *err)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return ra__fail(err, RA_E_INPUT, "%s: cannot be read", path);
    size_t cap = 4096, n = 0, got;
    char *text = malloc(cap);
    while (text && (got = fread(text + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            char *grown = realloc(text, cap * 2);
            if (!grown) {
                free(text);
                text = NULL;
                break;
            }
            text = grown;
            cap *= 2;
        }
    }
    int bad = ferror(f);
    fclose(f);
    if (!text || bad) {
        free(text);
        return text ? ra__fail(err, RA_E_INPUT, "%s: cannot be read", path)
                    : ra__fail(err, RA_E_NOMEM, "out of memory");
    }
    ra_status_t rc = ra_supp_parse(s, path, text, n, err);
    free(text);
    return rc;
}

/* One frame against one user rule or one pattern of a built-in rule. */
static int frame_matches(const char *pattern, const char *sym, const char *file, const char *module)
{
    return ra_supp_match(pattern, sym) || ra_supp_match(pattern, file) ||
           ra_supp_match(pattern, module);
}

/* Decides one stack, whose frames were collected by the caller: a user rule matches when one
 * frame matches it; a built-in rule when each of its patterns matches some frame. Returns the
 * first matching rule's index, or -1. */
static long decide(const ra_supp_t *s, char **sym, char **file, char **module, size_t n)
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

/* ---- Deciding every leaking stack at once ----
 * A stack is suppressed by the first rule all of whose patterns match some frame (a user rule
 * has one), so what decides it is the set of patterns that match any of its frames. Each
 * distinct text (a function, a file, a module) is matched against the patterns once and the
 * result kept: a build's leaking stacks have millions of frame rows but a few hundred
 * thousand distinct texts, and matching every pattern of every rule against every frame took
 * most of a second. */

#define MAX_FAST_PATTERNS 64

typedef struct {
    const char *pats[MAX_FAST_PATTERNS];
    size_t npats;
    uint64_t need[1]; /* per rule, the bits of its patterns (allocated to nrules) */
} pattern_set_t;

/* The bit of pattern p in ps, added when new; -1 when there are too many. */
static int pattern_bit(pattern_set_t *ps, const char *p)
{
    for (size_t i = 0; i < ps->npats; i++)
        if (!strcmp(ps->pats[i], p))
            return (int)i;
    if (ps->npats == MAX_FAST_PATTERNS)
        return -1;
    ps->pats[ps->npats] = p;
    return (int)ps->npats++;
}

/* The rules as pattern bits: NULL when out of memory or with more than MAX_FAST_PATTERNS
 * distinct patterns (then each frame is matched rule by rule, as decide does). */
static pattern_set_t *pattern_set(const ra_supp_t *s)
{
    pattern_set_t *ps = calloc(1, sizeof *ps + s->nrules * sizeof ps->need[0]);
    if (!ps)
        return NULL;
    for (size_t r = 0; r < s->nrules; r++) {
        const rule_t *rule = &s->rules[r];
        const char *const *pats = rule->pattern ? (const char *const[]){rule->pattern, NULL}
                                                : default_rules[rule->builtin].patterns;
        for (size_t k = 0; pats[k]; k++) {
            int b = pattern_bit(ps, pats[k]);
            if (b < 0) {
                free(ps);
                return NULL;
            }
            ps->need[r] |= (uint64_t)1 << b;
        }
    }
    return ps;
}

/* A map from a text to the bits of the patterns it matches, open addressing. */
typedef struct {
    char **keys;
    uint64_t *bits;
    size_t n, cap;
} memo_t;

static uint64_t text_hash(const char *t)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (; *t; t++)
        h = (h ^ (unsigned char)*t) * 1099511628211ULL;
    return h;
}

/* The pattern bits of text t (NULL matches nothing); 0 with *oom set when out of memory. */
static uint64_t text_bits(memo_t *m, const pattern_set_t *ps, const char *t, int *oom)
{
    if (!t || !*t)
        return 0;
    if ((m->n + 1) * 2 > m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 4096;
        char **keys = calloc(cap, sizeof *keys);
        uint64_t *bits = calloc(cap, sizeof *bits);
        if (!keys || !bits) {
            free(keys);
            free(bits);
            *oom = 1;
            return 0;
        }
        for (size_t i = 0; i < m->cap; i++)
            if (m->keys[i]) {
                size_t j = text_hash(m->keys[i]) & (cap - 1);
                while (keys[j])
                    j = (j + 1) & (cap - 1);
                keys[j] = m->keys[i];
                bits[j] = m->bits[i];
            }
        free(m->keys);
        free(m->bits);
        m->keys = keys;
        m->bits = bits;
        m->cap = cap;
    }
    size_t j = text_hash(t) & (m->cap - 1);
    while (m->keys[j]) {
        if (!strcmp(m->keys[j], t))
            return m->bits[j];
        j = (j + 1) & (m->cap - 1);
    }
    uint64_t b = 0;
    for (size_t i = 0; i < ps->npats; i++)
        if (ra_supp_match(ps->pats[i], t))
            b |= (uint64_t)1 << i;
    if (!(m->keys[j] = strdup(t))) {
        *oom = 1;
        return 0;
    }
    m->bits[j] = b;
    m->n++;
    return b;
}

static void memo_free(memo_t *m)
{
    for (size_t i = 0; i < m->cap; i++)
        free(m->keys[i]);
    free(m->keys);
    free(m->bits);
}

/* Makes room for one more entry in two arrays of *cap entries that grow together (a stack id
 * and what goes with it), first entries at the first growth. 0, or -1 out of memory (both
 * arrays still valid). */
static int grow_pair(int64_t **ids, size_t **with, size_t n, size_t *cap, size_t first)
{
    if (n < *cap)
        return 0;
    size_t want = *cap ? 2 * *cap : first;
    int64_t *gi = realloc(*ids, want * sizeof *gi);
    if (gi)
        *ids = gi;
    size_t *gw = realloc(*with, want * sizeof *gw);
    if (gw)
        *with = gw;
    if (!gi || !gw)
        return -1;
    *cap = want;
    return 0;
}

/* Adds stack `id`, suppressed by rule r, to s's sorted list (ids come in order). */
static int add_suppressed(ra_supp_t *s, size_t *idcap, int64_t id, size_t r)
{
    if (grow_pair(&s->ids, &s->rule_of, s->nids, idcap, 64) != 0)
        return -1;
    s->ids[s->nids] = id;
    s->rule_of[s->nids++] = r;
    return 0;
}

/* ra_supp_stacks with the rules as pattern bits: one pass over the rows of st (id, sym, file,
 * module in id order). */
static ra_status_t decide_by_bits(ra_supp_t *s, const pattern_set_t *ps, sqlite3 *db,
                                  sqlite3_stmt *st, ra_err_t *err)
{
    memo_t memo = {0};
    size_t idcap = 0;
    int oom = 0, step, have = 0;
    int64_t cur = 0;
    uint64_t bits = 0;
    for (;;) {
        step = sqlite3_step(st);
        int64_t id = step == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
        if (have && (step != SQLITE_ROW || id != cur)) {
            for (size_t r = 0; r < s->nrules; r++)
                if ((bits & ps->need[r]) == ps->need[r]) {
                    oom |= add_suppressed(s, &idcap, cur, r) != 0;
                    break;
                }
            bits = 0;
        }
        if (step != SQLITE_ROW || oom)
            break;
        cur = id;
        have = 1;
        for (int c = 1; c <= 3; c++)
            bits |= text_bits(&memo, ps, (const char *)sqlite3_column_text(st, c), &oom);
    }
    memo_free(&memo);
    if (oom)
        return ra__fail(err, RA_E_NOMEM, "out of memory");
    if (step != SQLITE_DONE)
        return ra__fail(err, RA_E_INPUT, "reading backtraces: %s", sqlite3_errmsg(db));
    return RA_OK;
}

/* ---- Deciding by distinct frame ----
 * The leaking stacks of a build have a million frame rows in backtraces but use a few tens of
 * thousands of distinct frames (unique_frames), and matching the three texts of every row was
 * most of the cost of every answer that suppresses. So each distinct frame a leaking stack uses
 * is matched once (its function, file and module, a bit per pattern), and each stack's bits
 * are the OR of its frames' bits, its frames read from its one row of stack_frames. */

typedef struct {
    uint32_t *ids;     /* the frame ids of every stack read, one after the other */
    size_t n, cap;
    int64_t *stack;    /* per stack, its id and where its frame ids start in ids */
    size_t *start;
    size_t nstacks, scap;
} frame_lists_t;

static void lists_free(frame_lists_t *l)
{
    free(l->ids);
    free(l->stack);
    free(l->start);
}

/* Appends the ids of a stack_frames list ("[12,-40,7]": a negative id names the same frame as
 * its absolute value) to l->ids, marking each in used[id - 1]: 0, -1 for a text that is not such
 * a list or names a frame past the nf of unique_frames, -2 when out of memory. */
static int parse_list(frame_lists_t *l, const char *t, unsigned char *used, size_t nf)
{
    if (!t || *t++ != '[')
        return -1;
    while (*t == ' ')
        t++;
    if (*t == ']')
        return 0;
    for (;;) {
        t += *t == '-';
        if (*t < '0' || *t > '9')
            return -1;
        uint64_t id = 0;
        while (*t >= '0' && *t <= '9') {
            id = id * 10 + (uint64_t)(*t++ - '0');
            if (id > nf)
                return -1;
        }
        if (id == 0)
            return -1;
        if (l->n == l->cap) {
            size_t cap = l->cap ? 2 * l->cap : 65536;
            uint32_t *g = realloc(l->ids, cap * sizeof *g);
            if (!g)
                return -2;
            l->ids = g;
            l->cap = cap;
        }
        l->ids[l->n++] = (uint32_t)id;
        used[id - 1] = 1;
        while (*t == ' ')
            t++;
        if (*t == ']')
            return 0;
        if (*t++ != ',')
            return -1;
        while (*t == ' ')
            t++;
    }
}

/* The frame lists of the stacks `which` selects, in id order, into l: 0, -1 when the database
 * cannot be read this way, -2 when out of memory. */
static int read_lists(sqlite3 *db, const char *which, frame_lists_t *l, unsigned char *used,
                      size_t nf)
{
    char *sql = sqlite3_mprintf("SELECT id, frames FROM main.stack_frames WHERE id IN (%s) ORDER BY id",
                                which);
    if (!sql)
        return -2;
    sqlite3_stmt *st;
    int prep = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    sqlite3_free(sql);
    if (prep != SQLITE_OK)
        return -1;
    int rc = 0, step = SQLITE_DONE;
    while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
        if (grow_pair(&l->stack, &l->start, l->nstacks, &l->scap, 1024) != 0) {
            rc = -2;
            break;
        }
        l->stack[l->nstacks] = sqlite3_column_int64(st, 0);
        l->start[l->nstacks++] = l->n;
        rc = parse_list(l, (const char *)sqlite3_column_text(st, 1), used, nf);
    }
    if (rc == 0 && step != SQLITE_DONE)
        rc = -1;
    sqlite3_finalize(st);
    return rc;
}

/* The pattern bits of every frame marked in used, into fb[id - 1]: by one scan of unique_frames
 * when the marked are many, by id when few (a program's handful of leaking stacks). 0, -1 when
 * a marked frame is missing, -2 when out of memory. */
static int frame_bits(sqlite3 *db, const pattern_set_t *ps, const unsigned char *used, size_t nf,
                      uint64_t *fb)
{
    size_t marked = 0;
    for (size_t i = 0; i < nf; i++)
        marked += used[i];
    int scan = marked > nf / 8;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db,
                           scan ? "SELECT id, sym, file, module FROM main.unique_frames"
                                : "SELECT id, sym, file, module FROM main.unique_frames WHERE id = ?1",
                           -1, &st, NULL) != SQLITE_OK)
        return -1;
    memo_t memo = {0};
    int oom = 0;
    size_t done = 0, next = 0;
    for (;;) {
        if (!scan) {
            while (next < nf && !used[next])
                next++;
            if (next == nf)
                break;
            sqlite3_reset(st);
            sqlite3_bind_int64(st, 1, (sqlite3_int64)++next);
        }
        if (sqlite3_step(st) != SQLITE_ROW)
            break;
        int64_t id = sqlite3_column_int64(st, 0);
        if (id < 1 || (uint64_t)id > nf || !used[id - 1])
            continue;
        uint64_t b = 0;
        for (int c = 1; c <= 3; c++)
            b |= text_bits(&memo, ps, (const char *)sqlite3_column_text(st, c), &oom);
        fb[id - 1] = b;
        done++;
        if (oom)
            break;
    }
    sqlite3_finalize(st);
    memo_free(&memo);
    return oom ? -2 : done == marked ? 0 : -1;
}

/* ra_supp_stacks by distinct frame, for the stacks `which` selects. Sets *used when it decided;
 * leaves it 0 when the database cannot be read this way (a frame that unique_frames does not
 * hold yet: `rheap run` reads its database while the converter, which writes the distinct
 * frames last, is still at work), and the caller then reads backtraces. */
static ra_status_t decide_by_frames(ra_supp_t *s, const pattern_set_t *ps, sqlite3 *db,
                                    const char *which, int *decided, ra_err_t *err)
{
    *decided = 0;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "SELECT max(id) FROM main.unique_frames", -1, &st, NULL) != SQLITE_OK)
        return RA_OK;
    int64_t max = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_finalize(st);
    if (max <= 0 || (uint64_t)max >= UINT32_MAX)
        return RA_OK;
    size_t nf = (size_t)max;
    frame_lists_t l = {0};
    unsigned char *used = calloc(nf, 1);
    uint64_t *fb = malloc(nf * sizeof *fb);
    int rc = used && fb ? read_lists(db, which, &l, used, nf) : -2;
    if (rc == 0)
        rc = frame_bits(db, ps, used, nf, fb);
    size_t idcap = 0;
    for (size_t k = 0; rc == 0 && k < l.nstacks; k++) {
        size_t end = k + 1 < l.nstacks ? l.start[k + 1] : l.n;
        uint64_t bits = 0;
        for (size_t i = l.start[k]; i < end; i++)
            bits |= fb[l.ids[i] - 1];
        for (size_t r = 0; r < s->nrules; r++)
            if ((bits & ps->need[r]) == ps->need[r]) {
                rc = add_suppressed(s, &idcap, l.stack[k], r) != 0 ? -2 : 0;
                break;
            }
    }
    lists_free(&l);
    free(used);
    free(fb);
    if (rc == -2)
        return ra__fail(err, RA_E_NOMEM, "out of memory");
    if (rc < 0) {
        s->nids = 0; /* what was decided is decided again from backtraces */
        return RA_OK;
    }
    *decided = 1;
    return RA_OK;
}

ra_status_t ra_supp_stacks(ra_supp_t *s, sqlite3 *db, ra_err_t *err)
{
    free(s->ids);
    free(s->rule_of);
    s->ids = NULL;
    s->rule_of = NULL;
    s->nids = 0;
    if (s->nrules == 0)
        return RA_OK;
    sqlite3_stmt *st;
    /* Only stacks with leaks: a python3 recording's 218,000 frame rows took 50 ms to match
     * where its 90 leaking stacks' rows take under one. They are found in the totals per stack
     * (stack_totals: a row per stack, where stack_stats has one per stack and recording, 2.5
     * million on a build's tree, a scan of 0.25 s); what a window left live counts too. */
    int totals = ra__has_table(db, "stack_totals") > 0;
    pattern_set_t *ps = pattern_set(s);
    if (ps) {
        int decided;
        ra_status_t rc = decide_by_frames(s, ps, db,
                                          totals ? "SELECT bt FROM main.stack_totals\n"
                                                   "WHERE leaked_blocks > 0 OR stopped_blocks > 0"
                                                 : "SELECT bt FROM main.stack_stats WHERE leaked_blocks > 0",
                                          &decided, err);
        if (rc != RA_OK || decided) {
            free(ps);
            return rc;
        }
    }
    if (sqlite3_prepare_v2(db,
                           totals ? "SELECT id, sym, file, module FROM backtraces\n"
                                    "WHERE id IN (SELECT bt FROM main.stack_totals\n"
                                    "             WHERE leaked_blocks > 0 OR stopped_blocks > 0)\n"
                                    "ORDER BY id, frame_no"
                                  : "SELECT id, sym, file, module FROM backtraces\n"
                                    "WHERE id IN (SELECT bt FROM main.stack_stats WHERE leaked_blocks > 0)\n"
                                    "ORDER BY id, frame_no",
                           -1, &st, NULL) != SQLITE_OK) {
        free(ps);
        return ra__fail(err, RA_E_INPUT, "reading backtraces: %s", sqlite3_errmsg(db));
    }
    if (ps) {
        ra_status_t fast = decide_by_bits(s, ps, db, st, err);
        free(ps);
        sqlite3_finalize(st);
        return fast;
    }
    /* The frames of the stack being read, as copies (a step invalidates the column texts). */
    size_t cap = 0, n = 0, idcap = 0;
    char **cols[3] = {NULL, NULL, NULL};
    int64_t cur = 0;
    ra_status_t rc = RA_OK;
    int step, have = 0;
    for (;;) {
        step = sqlite3_step(st);
        int64_t id = step == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
        if (have && (step != SQLITE_ROW || id != cur)) {
            long r = decide(s, cols[0], cols[1], cols[2], n);
            if (r >= 0 && add_suppressed(s, &idcap, cur, (size_t)r) != 0) {
                rc = ra__fail(err, RA_E_NOMEM, "out of memory");
                break;
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
                    rc = ra__fail(err, RA_E_NOMEM, "out of memory");
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
    if (rc == RA_OK && step != SQLITE_DONE)
        rc = ra__fail(err, RA_E_INPUT, "reading backtraces: %s", sqlite3_errmsg(db));
done:
    for (size_t k = 0; k < n; k++)
        for (int c = 0; c < 3; c++)
            free(cols[c][k]);
    for (int c = 0; c < 3; c++)
        free(cols[c]);
    sqlite3_finalize(st);
    return rc;
}

long ra_supp_rule_of(const ra_supp_t *s, int64_t bt)
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

size_t ra_supp_nids(const ra_supp_t *s)
{
    return s ? s->nids : 0;
}

/* The database has the sums per site (schema.sql's site_stats). */
static int has_site_stats(sqlite3 *db)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM main.sqlite_schema WHERE type = 'table' AND name = 'site_stats'",
                           -1, &st, NULL) != SQLITE_OK)
        return 0;
    int yes = sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    return yes;
}

/* The temp schema is searched before main, so the canned queries' `stack_stats` becomes this
 * view: the same rows, with the leak columns of suppressed stacks emptied. The query files stay
 * as they are and still run unchanged in the sqlite3 shell. */
static const char stack_view_sql[] =
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

/* And `site_stats`: the converter's rows, with the leak columns of the sites re-added in
 * rheap_suppressed_sites taken from there. */
static const char site_view_sql[] =
    "CREATE TEMP VIEW site_stats AS\n"
    "SELECT m.pid, m.recording, m.site, stacks, blocks, bytes, freed_blocks, freed_bytes,\n"
    "       coalesce(x.leaked_blocks, m.leaked_blocks) AS leaked_blocks,\n"
    "       coalesce(x.leaked_bytes, m.leaked_bytes) AS leaked_bytes,\n"
    "       temporary_blocks, temporary_bytes, first_ns, last_ns,\n"
    "       CASE WHEN x.site IS NULL THEN m.leak_first_ns ELSE x.leak_first_ns END AS leak_first_ns,\n"
    "       CASE WHEN x.site IS NULL THEN m.leak_last_ns ELSE x.leak_last_ns END AS leak_last_ns,\n"
    "       min_size, max_size, life_min_ns, life_max_ns, life_total_ns, peak_blocks, peak_bytes,\n"
    "       bytes_stack, blocks_stack,\n"
    "       CASE WHEN x.site IS NULL THEN m.leak_stack ELSE x.leak_stack END AS leak_stack,\n"
    "       temporary_stack, peak_stack, growth_stack\n"
    "FROM main.site_stats AS m\n"
    "LEFT JOIN temp.rheap_suppressed_sites AS x\n"
    "       ON x.pid = m.pid AND x.recording = m.recording AND x.site = m.site;\n";

ra_status_t ra_supp_views(const ra_supp_t *s, sqlite3 *db, int on, ra_err_t *err)
{
    if (!s || s->nids == 0)
        return RA_OK; /* nothing is shadowed */
    char *msg = NULL;
    int rc = on ? sqlite3_exec(db, stack_view_sql, NULL, NULL, &msg)
                : sqlite3_exec(db, "DROP VIEW IF EXISTS temp.stack_stats;"
                                   "DROP VIEW IF EXISTS temp.site_stats", NULL, NULL, &msg);
    if (rc == SQLITE_OK && on && has_site_stats(db))
        rc = sqlite3_exec(db, site_view_sql, NULL, NULL, &msg);
    if (rc != SQLITE_OK) {
        ra__fail(err, RA_E_INPUT, "suppressions: %s", msg ? msg : sqlite3_errmsg(db));
        sqlite3_free(msg);
        return RA_E_INPUT;
    }
    return RA_OK;
}

ra_status_t ra_supp_shadow(const ra_supp_t *s, sqlite3 *db, ra_err_t *err)
{
    static const char sql[] = "CREATE TEMP TABLE rheap_suppressed (id INTEGER PRIMARY KEY);\n";
    if (!s || s->nids == 0)
        return RA_OK; /* nothing to take out: the queries read the table itself */
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        ra__fail(err, RA_E_INPUT, "suppressions: %s", msg ? msg : sqlite3_errmsg(db));
        sqlite3_free(msg);
        return RA_E_INPUT;
    }
    sqlite3_stmt *ins;
    if (sqlite3_prepare_v2(db, "INSERT INTO temp.rheap_suppressed VALUES (?)", -1, &ins, NULL) !=
        SQLITE_OK)
        return ra__fail(err, RA_E_INPUT, "suppressions: %s", sqlite3_errmsg(db));
    ra_status_t rc = RA_OK;
    /* One transaction for the inserts, unless the caller is inside one (rheap run's summary
     * reads the database while the converter is still loading it). */
    int own = sqlite3_get_autocommit(db);
    if (own)
        sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
    for (size_t i = 0; s && i < s->nids && rc == RA_OK; i++) {
        sqlite3_bind_int64(ins, 1, s->ids[i]);
        if (sqlite3_step(ins) != SQLITE_DONE)
            rc = ra__fail(err, RA_E_INPUT, "suppressions: %s", sqlite3_errmsg(db));
        sqlite3_reset(ins);
    }
    sqlite3_finalize(ins);
    /* The sums per site (site_stats) hold the suppressed stacks' leaks too: the sites that
     * have a suppressed stack get theirs again from the stacks' rows, with the suppressed
     * ones' leaks emptied as in the view above; the others stay as the converter wrote them.
     * Only the recordings where such a site leaked can change (where it left nothing, its
     * figures are those written), and their stack rows are read by rowid (recording_rows):
     * a scan of every recording's rows for them took 0.3 s on a build's tree. */
    static const char sites_sql[] =
        "CREATE TEMP TABLE rheap_suppressed_sites (\n"
        "    pid INTEGER, recording INTEGER, site INTEGER, leaked_blocks INTEGER, leaked_bytes INTEGER,\n"
        "    leak_first_ns INTEGER, leak_last_ns INTEGER, leak_stack INTEGER,\n"
        "    PRIMARY KEY (pid, recording, site)) WITHOUT ROWID;\n"
        "WITH changed AS MATERIALIZED (\n"
        "    SELECT DISTINCT site FROM main.stacks WHERE id IN (SELECT id FROM temp.rheap_suppressed)),\n"
        "recs AS MATERIALIZED (\n"
        "    SELECT DISTINCT pid, recording FROM main.site_stats\n"
        "    WHERE leaked_blocks > 0 AND site IN (SELECT site FROM changed)),\n"
        "rows AS (\n"
        "    SELECT m.pid AS pid, m.recording AS recording, m.bt AS bt, k.site AS site,\n"
        "           CASE WHEN x.id IS NULL THEN m.leaked_blocks ELSE 0 END AS leaked_blocks,\n"
        "           CASE WHEN x.id IS NULL THEN m.leaked_bytes ELSE 0 END AS leaked_bytes,\n"
        "           CASE WHEN x.id IS NULL THEN m.leak_first_ns END AS leak_first_ns,\n"
        "           CASE WHEN x.id IS NULL THEN m.leak_last_ns END AS leak_last_ns\n"
        "    FROM recs AS e\n"
        "    JOIN main.recording_rows AS r ON r.pid = e.pid AND r.recording = e.recording\n"
        "    JOIN main.stack_stats AS m ON m.rowid BETWEEN r.first_row AND r.last_row\n"
        "    JOIN main.stacks AS k ON k.id = m.bt\n"
        "    LEFT JOIN temp.rheap_suppressed AS x ON x.id = m.bt\n"
        "    WHERE k.site IN (SELECT site FROM changed))\n"
        "INSERT INTO temp.rheap_suppressed_sites\n"
        "SELECT pid, recording, site, sum(leaked_blocks), sum(leaked_bytes), min(leak_first_ns),\n"
        "       max(leak_last_ns), CASE WHEN max(leaked_blocks) > 0 THEN min(stack) END\n"
        "FROM (SELECT *, first_value(bt) OVER (PARTITION BY pid, recording, site\n"
        "                                      ORDER BY leaked_blocks > 0 DESC, leaked_bytes DESC, bt)\n"
        "                 AS stack\n"
        "      FROM rows)\n"
        "GROUP BY pid, recording, site;\n";
    if (rc == RA_OK && has_site_stats(db) && sqlite3_exec(db, sites_sql, NULL, NULL, &msg) != SQLITE_OK) {
        rc = ra__fail(err, RA_E_INPUT, "suppressions: %s", msg ? msg : sqlite3_errmsg(db));
        sqlite3_free(msg);
    }
    if (own)
        sqlite3_exec(db, rc == RA_OK ? "COMMIT" : "ROLLBACK", NULL, NULL, NULL);
    return rc == RA_OK ? ra_supp_views(s, db, 1, err) : rc;
}

void ra_supp_unshadow(sqlite3 *db)
{
    sqlite3_exec(db,
                 "DROP VIEW IF EXISTS temp.stack_stats; DROP TABLE IF EXISTS temp.rheap_suppressed; "
                 "DROP VIEW IF EXISTS temp.site_stats; DROP TABLE IF EXISTS temp.rheap_suppressed_sites",
                 NULL, NULL, NULL);
}

const char *ra_supp_rule(const ra_supp_t *s, size_t r, const char **from)
{
    *from = s->rules[r].pattern ? s->rules[r].from : NULL;
    return s->rules[r].pattern ? s->rules[r].pattern : default_rules[s->rules[r].builtin].label;
}

size_t ra_supp_nrules(const ra_supp_t *s)
{
    return s ? s->nrules : 0;
}

void ra_supp_apply(const ra_supp_t *s, ra_model_t *pd, int64_t *blocks, int64_t *bytes)
{
    if (!s || s->nids == 0)
        return;
    for (size_t i = 0; i < pd->nstats; i++) {
        ra_stat_t *st = &pd->stats[i];
        long r = ra_supp_rule_of(s, st->bt);
        if (r < 0 || st->leaked_blocks == 0)
            continue;
        blocks[r] += st->leaked_blocks;
        bytes[r] += st->leaked_bytes;
        /* A stack's totals over the recordings (RA_MODEL_TOTALS) belong to no one recording. */
        ra_proc_t *p = (ra_proc_t *)ra_model_proc(pd, st->pid, st->recording);
        if (p) {
            p->leaked_blocks -= st->leaked_blocks;
            p->leaked_bytes -= st->leaked_bytes;
        }
        st->leaked_blocks = 0;
        st->leaked_bytes = 0;
    }
}

ra_status_t ra_supp_totals(const ra_supp_t *s, sqlite3 *db, const char *pid, int64_t *blocks,
                           int64_t *bytes, ra_err_t *err)
{
    if (!s || s->nids == 0)
        return RA_OK;
    sqlite3_stmt *st;
    /* Over every process, the totals per stack hold the same sums (their leaked columns count
     * only the recordings that lasted until their process ended): a row per stack instead of
     * one per stack and recording. */
    if (!pid && ra__has_table(db, "stack_totals") > 0) {
        if (sqlite3_prepare_v2(db,
                               "SELECT bt, leaked_blocks, leaked_bytes FROM main.stack_totals\n"
                               "WHERE leaked_blocks > 0 AND bt IS NOT NULL",
                               -1, &st, NULL) != SQLITE_OK)
            return ra__fail(err, RA_E_INPUT, "suppressions: %s", sqlite3_errmsg(db));
    } else if (sqlite3_prepare_v2(db,
                           /* Leaks only: what a window left live is none (recording_ends). */
                           "SELECT bt, leaked_blocks, leaked_bytes FROM main.stack_stats\n"
                           "WHERE leaked_blocks > 0 AND bt IS NOT NULL AND pid = coalesce(?1, pid)\n"
                           "  AND (pid, recording) IN (SELECT pid, recording FROM main.recording_ends\n"
                           "                           WHERE until_exit)",
                           -1, &st, NULL) != SQLITE_OK)
        return ra__fail(err, RA_E_INPUT, "suppressions: %s", sqlite3_errmsg(db));
    else if (pid)
        sqlite3_bind_int64(st, 1, strtoll(pid, NULL, 10));
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        long r = ra_supp_rule_of(s, sqlite3_column_int64(st, 0));
        if (r < 0)
            continue;
        blocks[r] += sqlite3_column_int64(st, 1);
        bytes[r] += sqlite3_column_int64(st, 2);
    }
    ra_status_t rc = step == SQLITE_DONE
                         ? RA_OK
                         : ra__fail(err, RA_E_INPUT, "suppressions: %s", sqlite3_errmsg(db));
    sqlite3_finalize(st);
    return rc;
}
