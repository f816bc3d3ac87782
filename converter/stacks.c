/*
 * stacks.c: turns recorded stacks into global backtrace ids.
 *
 * Stack ids in the recording are local to a thread file, and the tracer may define one stack
 * several times. After symbolization a stack is the sequence of its resolved locations; two
 * stacks with the same sequence (the same code, in any thread or process) get the same global
 * id and their rows are written once. The table keeps only location ids (4 bytes per frame), so
 * its size follows the number of distinct stacks.
 */
#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* A stack, in the table under the hash of its locations. */
typedef struct {
    uint64_t bt;      /* global id */
    size_t at;        /* start in pool */
    uint32_t n;
} entry_t;

struct rheap__stacks {
    /* Open addressing (hashmap.h): keys are hashes, never 0; different stacks may share one. */
    uint64_t *keys;
    entry_t *slots;
    size_t mask, count;
    unsigned shift;
    uint32_t *pool;
    size_t npool, cappool;
};

rheap__stacks_t *rheap__stacks_create(void)
{
    rheap__stacks_t *st = calloc(1, sizeof *st);
    if (!st)
        return NULL;
    st->mask = 1023;
    st->shift = 64 - 10;
    st->keys = calloc(st->mask + 1, sizeof *st->keys);
    st->slots = malloc((st->mask + 1) * sizeof *st->slots);
    if (!st->keys || !st->slots) {
        free(st->keys);
        free(st->slots);
        free(st);
        return NULL;
    }
    return st;
}

void rheap__stacks_destroy(rheap__stacks_t *st)
{
    if (!st)
        return;
    free(st->keys);
    free(st->slots);
    free(st->pool);
    free(st);
}

uint64_t rheap__stacks_count(const rheap__stacks_t *st)
{
    return st->count;
}

static uint64_t hash_locs(const rheap__loc_t *const *locs, uint32_t n)
{
    uint64_t h = 0xcbf29ce484222325ull ^ n;
    for (uint32_t i = 0; i < n; i++) {
        h ^= locs[i]->id;
        h *= 0x100000001b3ull;
        h ^= h >> 29;
    }
    return h | 1;
}

/* The rule of schema.sql's view `frames`, which the canned queries use with their `skip`
 * parameter: the same patterns, matched the way SQLite's GLOB matches them. */
static const char *const plumbing_modules[] = {
    "*/libc.so*", "*/libc-*.so", "*/ld-linux*", "*/libstdc++.so*", "*/libc++.so*", "*/libc++abi.so*",
};
static const char *const plumbing_names[] = {
    "operator new*", "std::*", "* std::*", "__gnu_cxx::*", "* __gnu_cxx::*", "alloc::*", "* alloc::*",
    "__rust_*", "__rdl_*", "__rg_*", "__*asprintf*", "strdup", "__strdup", "strndup", "__strndup",
    "asprintf", "vasprintf",
};

static int any_match(const char *const *pats, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (fnmatch(pats[i], s, 0) == 0)
            return 1;
    return 0;
}

/* A frame is plumbing when its module is the C or C++ runtime or its bare name (the demangled
 * name without leading '<', template arguments or parameters) is an allocation wrapper. */
static int is_plumbing(const char *module, const char *sym)
{
    if (module && any_match(plumbing_modules, sizeof plumbing_modules / sizeof *plumbing_modules, module))
        return 1;
    if (!sym)
        return 0;
    while (*sym == '<')
        sym++;
    char name[512];
    size_t n = strcspn(sym, "<(");
    if (n >= sizeof name)
        n = sizeof name - 1;
    memcpy(name, sym, n);
    name[n] = 0;
    return any_match(plumbing_names, sizeof plumbing_names / sizeof *plumbing_names, name);
}

const char *rheap__stack_site(const rheap__siteframe_t *fr, uint32_t n, uint32_t *site_no,
                              char *location, size_t len)
{
    /* The allocation site is the first frame that is not plumbing (frame 0 when all are), moved
     * out to the first frame with a name when it has none, so that a stripped library's
     * internal function reads as the exported one that called it. */
    uint32_t site = UINT32_MAX, named = UINT32_MAX;
    for (uint32_t i = 0; i < n && named == UINT32_MAX; i++) {
        if (site == UINT32_MAX && !is_plumbing(fr[i].module, fr[i].sym))
            site = i;
        if (site != UINT32_MAX && fr[i].sym)
            named = i;
    }
    if (n == 0) {
        *site_no = 0;
        snprintf(location, len, "??");
        return "(no backtrace)";
    }
    uint32_t k = named != UINT32_MAX ? named : site != UINT32_MAX ? site : 0;
    const char *where = fr[k].file ? fr[k].file : fr[k].module;
    if (fr[k].line)
        snprintf(location, len, "%s:%" PRIu32, where ? where : "??", fr[k].line);
    else
        snprintf(location, len, "%s:0x%" PRIx64, where ? where : "??", fr[k].offset);
    *site_no = k;
    return fr[k].sym ? fr[k].sym : "??";
}

/* Writes the stacks row of a new stack. */
static int write_site(rheap__db_t *db, const rheap__sym_t *sym, uint64_t bt,
                      const rheap__loc_t *const *locs, uint32_t n)
{
    uint32_t total = 0;
    for (uint32_t i = 0; i < n; i++)
        total += locs[i]->nframes;
    rheap__siteframe_t *fr = malloc((total + 1) * sizeof *fr);
    if (!fr)
        return -1;
    uint32_t frame_no = 0;
    for (uint32_t i = 0; i < n; i++) {
        const char *module = rheap__sym_file_path(sym, locs[i]->file_id);
        for (uint32_t k = 0; k < locs[i]->nframes; k++, frame_no++) {
            const rheap__srcframe_t *f = &locs[i]->frames[k];
            fr[frame_no] = (rheap__siteframe_t){f->sym, f->file, module, f->line, locs[i]->offset};
        }
    }
    char location[4096];
    uint32_t site_no;
    const char *function = rheap__stack_site(fr, total, &site_no, location, sizeof location);
    int rc = rheap__db_stack(db, bt, total, site_no, function, location);
    free(fr);
    return rc;
}

uint64_t rheap__stacks_intern(rheap__stacks_t *st, rheap__db_t *db, const rheap__sym_t *sym,
                              const rheap__loc_t *const *locs, uint32_t n)
{
    uint64_t h = hash_locs(locs, n);
    size_t j = rheap__hash_slot(h, st->shift);
    for (; st->keys[j]; j = (j + 1) & st->mask) {
        entry_t *e = &st->slots[j];
        if (st->keys[j] != h || e->n != n)
            continue;
        uint32_t k = 0;
        while (k < n && st->pool[e->at + k] == locs[k]->id)
            k++;
        if (k == n)
            return e->bt;
    }
    if ((st->count + 1) * 2 > st->mask + 1) {
        if (rheap__hash_grow(&st->keys, &st->slots, sizeof *st->slots, &st->mask, &st->shift) != 0)
            return 0;
        j = rheap__hash_slot(h, st->shift);
        while (st->keys[j])
            j = (j + 1) & st->mask;
    }
    if (st->npool + n > st->cappool) {
        size_t cap = st->cappool ? st->cappool : 4096;
        while (cap < st->npool + n)
            cap *= 2;
        uint32_t *p = realloc(st->pool, cap * sizeof *p);
        if (!p)
            return 0;
        st->pool = p;
        st->cappool = cap;
    }
    uint64_t bt = st->count + 1;
    uint32_t frame_no = 0;
    for (uint32_t i = 0; i < n; i++) {
        const rheap__loc_t *l = locs[i];
        const char *module = rheap__sym_file_path(sym, l->file_id);
        for (uint32_t k = 0; k < l->nframes; k++) {
            if (rheap__db_frame(db, bt, frame_no++, &l->frames[k], module, l->offset, i) != 0)
                return 0;
        }
        st->pool[st->npool + i] = l->id;
    }
    if (write_site(db, sym, bt, locs, n) != 0)
        return 0;
    st->keys[j] = h;
    entry_t *e = &st->slots[j];
    e->bt = bt;
    e->at = st->npool;
    e->n = n;
    st->npool += n;
    st->count++;
    return bt;
}
