/*
 * sites.c: the allocation sites, numbered.
 *
 * Every stack has a site, a (function, location) pair decided once (stacks.c); many stacks
 * share one (every caller of one wrapper, every path into one function). The canned queries
 * group by site, and grouping a process tree's million per-stack rows by two text columns was
 * what made them slow. So each distinct pair gets a small integer here, in the order the
 * stacks bringing them appear, the stacks row records it (stacks.site) and the summaries
 * (summary.c) add their per-stack figures up per (recording, site) from it.
 *
 * Memory: the pairs' text once each and four bytes per stack; sites are a few thousand even
 * in a build's worth of processes.
 */
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "converter.h"

typedef struct {
    char *function, *location;
    uint64_t hash;
} site_t;

struct cv__sites {
    site_t *sites;             /* sites[id - 1] */
    size_t n, cap;
    size_t written;            /* sites rows written so far: ids 1 .. written */
    uint32_t *slots;           /* open addressing on the names' hash: 0 empty, else an id */
    size_t mask;
    uint32_t *of_bt;           /* of_bt[bt]: the site of stack bt (0: not known yet) */
    size_t nbt;
    uint32_t none;             /* the site of allocations without a backtrace, once needed */
};

static uint64_t hash_names(const char *function, const char *location)
{
    /* FNV-1a over both names and the separator between them. */
    uint64_t h = 1469598103934665603ull;
    for (const unsigned char *p = (const unsigned char *)function; *p; p++)
        h = (h ^ *p) * 1099511628211ull;
    h = (h ^ 0xff) * 1099511628211ull;
    for (const unsigned char *p = (const unsigned char *)location; *p; p++)
        h = (h ^ *p) * 1099511628211ull;
    return h;
}

cv__sites_t *cv__sites_create(void)
{
    cv__sites_t *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->mask = 255;
    s->slots = calloc(s->mask + 1, sizeof *s->slots);
    if (!s->slots) {
        free(s);
        return NULL;
    }
    return s;
}

void cv__sites_destroy(cv__sites_t *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++) {
        free(s->sites[i].function);
        free(s->sites[i].location);
    }
    free(s->sites);
    free(s->slots);
    free(s->of_bt);
    free(s);
}

/* Doubles the slots while they are more than half full. */
static int grow_slots(cv__sites_t *s)
{
    size_t mask = s->mask * 2 + 1;
    uint32_t *slots = calloc(mask + 1, sizeof *slots);
    if (!slots)
        return -1;
    for (size_t i = 0; i < s->n; i++) {
        size_t j = (size_t)s->sites[i].hash & mask;
        while (slots[j])
            j = (j + 1) & mask;
        slots[j] = (uint32_t)(i + 1);
    }
    free(s->slots);
    s->slots = slots;
    s->mask = mask;
    return 0;
}

/* The id of the site named (function, location), made when new; 0 when out of memory. */
static uint32_t intern(cv__sites_t *s, const char *function, const char *location)
{
    uint64_t h = hash_names(function, location);
    size_t j = (size_t)h & s->mask;
    for (; s->slots[j]; j = (j + 1) & s->mask) {
        const site_t *x = &s->sites[s->slots[j] - 1];
        if (x->hash == h && !strcmp(x->function, function) && !strcmp(x->location, location))
            return s->slots[j];
    }
    if ((s->n + 1) * 2 > s->mask + 1 || s->n == s->cap) {
        if ((s->n + 1) * 2 > s->mask + 1 && grow_slots(s) != 0)
            return 0;
        if (s->n == s->cap && rheap_grow(&s->sites, &s->cap, s->n, sizeof *s->sites, 256) != 0)
            return 0;
        j = (size_t)h & s->mask;
        while (s->slots[j])
            j = (j + 1) & s->mask;
    }
    char *fn = strdup(function), *loc = strdup(location);
    if (!fn || !loc) {
        free(fn);
        free(loc);
        return 0;
    }
    s->sites[s->n] = (site_t){fn, loc, h};
    s->n++;
    s->slots[j] = (uint32_t)s->n;
    return (uint32_t)s->n;
}

uint32_t cv__sites_add(cv__sites_t *s, uint64_t bt, const char *function, const char *location)
{
    if (bt >= s->nbt) {
        size_t n = s->nbt ? s->nbt : 1024;
        while (n <= bt)
            n *= 2;
        uint32_t *p = realloc(s->of_bt, n * sizeof *p);
        if (!p)
            return 0;
        memset(p + s->nbt, 0, (n - s->nbt) * sizeof *p);
        s->of_bt = p;
        s->nbt = n;
    }
    uint32_t id = intern(s, function, location);
    s->of_bt[bt] = id;
    return id;
}

uint32_t cv__sites_of(cv__sites_t *s, uint64_t bt)
{
    if (bt == 0) {
        /* Named as the queries name a row without a stack (and as cv__stack_site names an
         * empty one): one site with them when a stack of no frames shows up. */
        if (!s->none)
            s->none = intern(s, "(no backtrace)", "??");
        return s->none;
    }
    return bt < s->nbt ? s->of_bt[bt] : 0;
}

size_t cv__sites_count(const cv__sites_t *s)
{
    return s->n;
}

int cv__sites_write(cv__sites_t *s, struct sqlite3 *h)
{
    if (s->written == s->n)
        return 0;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(h, "INSERT INTO sites (id, function, location) VALUES (?1, ?2, ?3)", -1,
                           &st, NULL) != SQLITE_OK)
        return -1;
    int rc = 0;
    while (rc == 0 && s->written < s->n) {
        const site_t *x = &s->sites[s->written];
        sqlite3_bind_int64(st, 1, (sqlite3_int64)(s->written + 1));
        sqlite3_bind_text(st, 2, x->function, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, x->location, -1, SQLITE_STATIC);
        rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
        sqlite3_reset(st);
        if (rc == 0)
            s->written++;
    }
    sqlite3_finalize(st);
    return rc;
}
