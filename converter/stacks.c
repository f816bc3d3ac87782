/*
 * stacks.c: turns recorded stacks into global backtrace ids.
 *
 * Stack ids in the recording are local to a thread file, and the tracer may define one stack
 * several times. After symbolization a stack is the sequence of its resolved locations; two
 * stacks with the same sequence (the same code, in any thread or process) get the same global
 * id and their rows are written once. The table keeps only location ids (4 bytes per frame), so
 * its size follows the number of distinct stacks. Each new stack's frames are also written as a
 * list of distinct frames (uframes.c, table stack_frames): the ids of a location's frames are
 * looked up once per location and kept here by location id.
 */
#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "converter.h"

/* A stack, in the table under the hash of its locations. */
typedef struct {
    uint64_t bt;      /* global id */
    size_t at;        /* start in pool */
    uint32_t n;
} entry_t;

struct cv__stacks {
    /* Open addressing (hashmap.h): keys are hashes, never 0; different stacks may share one. */
    uint64_t *keys;
    entry_t *slots;
    size_t mask, count;
    unsigned shift;
    uint32_t *pool;
    size_t npool, cappool;
    cv__sites_t *sites;        /* the site of every stack, numbered (sites.c) */
    cv__uframes_t *uframes;    /* the distinct frames (uframes.c) */
    uint32_t *loc_at;          /* per location id: 1 + where its frames' ids start in loc_ids */
    size_t nloc_at;
    uint32_t *loc_ids;         /* the distinct frame ids of the locations met, frame by frame */
    size_t nloc_ids, caploc_ids;
    uint32_t *ids;             /* the stack being written: its frames' ids */
    uint8_t *cont;             /* and whether each continues the address before */
    size_t capids;
};

cv__stacks_t *cv__stacks_create(void)
{
    cv__stacks_t *st = calloc(1, sizeof *st);
    if (!st)
        return NULL;
    st->mask = 1023;
    st->shift = 64 - 10;
    st->keys = calloc(st->mask + 1, sizeof *st->keys);
    st->slots = malloc((st->mask + 1) * sizeof *st->slots);
    st->sites = cv__sites_create();
    st->uframes = cv__uframes_create();
    if (!st->keys || !st->slots || !st->sites || !st->uframes) {
        free(st->keys);
        free(st->slots);
        cv__sites_destroy(st->sites);
        cv__uframes_destroy(st->uframes);
        free(st);
        return NULL;
    }
    return st;
}

void cv__stacks_destroy(cv__stacks_t *st)
{
    if (!st)
        return;
    free(st->keys);
    free(st->slots);
    free(st->pool);
    cv__sites_destroy(st->sites);
    cv__uframes_destroy(st->uframes);
    free(st->loc_at);
    free(st->loc_ids);
    free(st->ids);
    free(st->cont);
    free(st);
}

cv__sites_t *cv__stacks_sites(cv__stacks_t *st)
{
    return st->sites;
}

cv__uframes_t *cv__stacks_uframes(cv__stacks_t *st)
{
    return st->uframes;
}

uint64_t cv__stacks_count(const cv__stacks_t *st)
{
    return st->count;
}

static uint64_t hash_locs(const cv__loc_t *const *locs, uint32_t n)
{
    uint64_t h = 0xcbf29ce484222325ull ^ n;
    for (uint32_t i = 0; i < n; i++) {
        h ^= locs[i]->id;
        h *= 0x100000001b3ull;
        h ^= h >> 29;
    }
    return h | 1;
}

/* Allocator plumbing: code that allocates on its caller's behalf, so that an allocation's site
 * is the first frame of its stack that is none of it. This list is the one definition: the
 * converter writes it into every database (table plumbing_patterns), where the view `frames`
 * reads it, so the canned queries' :skip path and the stacks table follow the same rule.
 * Patterns are matched the way SQLite's GLOB matches them: a module pattern against the path of
 * the frame's module, a name pattern against the frame's bare name (the demangled name without
 * leading '<', template arguments or parameters). */
const cv__plumbing_t cv__plumbing[] = {
    /* The C and C++ runtimes and the dynamic loader. */
    {RHEAP_PLUMBING_MODULE, "*/libc.so*"}, {RHEAP_PLUMBING_MODULE, "*/libc-*.so"},
    {RHEAP_PLUMBING_MODULE, "*/ld-linux*"}, {RHEAP_PLUMBING_MODULE, "*/libstdc++.so*"},
    {RHEAP_PLUMBING_MODULE, "*/libc++.so*"}, {RHEAP_PLUMBING_MODULE, "*/libc++abi.so*"},
    /* C++: the global operator new and the standard library's containers and allocators. */
    {RHEAP_PLUMBING_NAME, "operator new*"}, {RHEAP_PLUMBING_NAME, "std::*"},
    {RHEAP_PLUMBING_NAME, "* std::*"}, {RHEAP_PLUMBING_NAME, "__gnu_cxx::*"},
    {RHEAP_PLUMBING_NAME, "* __gnu_cxx::*"},
    /* Rust: the alloc crate (Box, Vec, RawVec, String, collections), the iterator machinery
     * that collect() runs through (Iterator::collect, SpecFromIter, FromIterator, adapters),
     * std's hash tables, and the global allocator's shims. */
    {RHEAP_PLUMBING_NAME, "alloc::*"}, {RHEAP_PLUMBING_NAME, "* alloc::*"},
    {RHEAP_PLUMBING_NAME, "core::iter::*"}, {RHEAP_PLUMBING_NAME, "* core::iter::*"},
    {RHEAP_PLUMBING_NAME, "core::ops::function::*"}, {RHEAP_PLUMBING_NAME, "* core::ops::function::*"},
    {RHEAP_PLUMBING_NAME, "hashbrown::*"}, {RHEAP_PLUMBING_NAME, "* hashbrown::*"},
    {RHEAP_PLUMBING_NAME, "__rust_*"}, {RHEAP_PLUMBING_NAME, "__rdl_*"}, {RHEAP_PLUMBING_NAME, "__rg_*"},
    /* C: the string duplicators and the asprintf family. */
    {RHEAP_PLUMBING_NAME, "__*asprintf*"}, {RHEAP_PLUMBING_NAME, "strdup"},
    {RHEAP_PLUMBING_NAME, "__strdup"}, {RHEAP_PLUMBING_NAME, "strndup"},
    {RHEAP_PLUMBING_NAME, "__strndup"}, {RHEAP_PLUMBING_NAME, "asprintf"},
    {RHEAP_PLUMBING_NAME, "vasprintf"},
    /* rheap_pool.h's wrappers, inlined into the program's pool code. */
    {RHEAP_PLUMBING_NAME, "rheap_pool_*"},
};
const size_t cv__plumbing_count = sizeof cv__plumbing / sizeof *cv__plumbing;

/* A frame is plumbing when its module or its bare name matches a pattern of the list. */
static int is_plumbing(const char *module, const char *sym)
{
    char name[512] = "";
    if (sym) {
        while (*sym == '<')
            sym++;
        size_t n = strcspn(sym, "<(");
        if (n >= sizeof name)
            n = sizeof name - 1;
        memcpy(name, sym, n);
        name[n] = 0;
    }
    for (size_t i = 0; i < cv__plumbing_count; i++) {
        const cv__plumbing_t *p = &cv__plumbing[i];
        const char *s = p->kind == RHEAP_PLUMBING_MODULE ? module : sym ? name : NULL;
        if (s && fnmatch(p->pattern, s, 0) == 0)
            return 1;
    }
    return 0;
}

static int same_module(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

void cv__stack_site(const cv__siteframe_t *fr, uint32_t n, uint32_t *site_no,
                       char *function, size_t flen, char *location, size_t llen)
{
    if (n == 0) {
        *site_no = 0;
        snprintf(function, flen, "(no backtrace)");
        snprintf(location, llen, "??");
        return;
    }
    /* The allocation site is the first frame that is not plumbing (frame 0 when all are). A
     * site without a name moves out over the frames of its own module to the first one with a
     * name, so that a stripped library's internal function reads as the exported one that
     * called it. It never leaves its module: the code of a stripped program is its own site,
     * named by module and offset (`cmake+0x5a1f3`), not the C library's start-up code that
     * called main further out. */
    uint32_t k = 0;
    while (k < n && is_plumbing(fr[k].module, fr[k].sym))
        k++;
    if (k == n)
        k = 0;
    for (uint32_t j = k; !fr[k].sym && j + 1 < n && same_module(fr[j + 1].module, fr[k].module);) {
        if (fr[++j].sym)
            k = j;
    }
    const cv__siteframe_t *f = &fr[k];
    if (f->sym) {
        snprintf(function, flen, "%s", f->sym);
    } else if (f->module) {
        const char *base = strrchr(f->module, '/');
        snprintf(function, flen, "%s+0x%" PRIx64, base ? base + 1 : f->module, f->offset);
    } else {
        snprintf(function, flen, "??");
    }
    const char *where = f->file ? f->file : f->module;
    if (f->line)
        snprintf(location, llen, "%s:%" PRIu32, where ? where : "??", f->line);
    else
        snprintf(location, llen, "%s:0x%" PRIx64, where ? where : "??", f->offset);
    *site_no = k;
}

/* Writes the stacks row of a new stack. */
static int write_site(cv__db_t *db, cv__sites_t *sites, const cv__sym_t *sym, uint64_t bt,
                      const cv__loc_t *const *locs, uint32_t n, char *frame_ids)
{
    uint32_t total = 0;
    for (uint32_t i = 0; i < n; i++)
        total += locs[i]->nframes;
    cv__siteframe_t *fr = malloc((total + 1) * sizeof *fr);
    if (!fr) {
        free(frame_ids);
        return -1;
    }
    uint32_t frame_no = 0;
    for (uint32_t i = 0; i < n; i++) {
        const char *module = cv__sym_file_path(sym, locs[i]->file_id);
        for (uint32_t k = 0; k < locs[i]->nframes; k++, frame_no++) {
            const cv__srcframe_t *f = &locs[i]->frames[k];
            fr[frame_no] = (cv__siteframe_t){f->sym, f->file, module, f->line, locs[i]->offset};
        }
    }
    char function[4096], location[4096];
    uint32_t site_no;
    cv__stack_site(fr, total, &site_no, function, sizeof function, location, sizeof location);
    uint32_t site = cv__sites_add(sites, bt, function, location);
    int rc = -1;
    if (site)
        rc = cv__db_stack(db, bt, total, site_no, site, function, location, frame_ids);
    else
        free(frame_ids);
    free(fr);
    return rc;
}

/* The distinct frame ids of location l's frames, looked up on its first use. NULL when out of
 * memory. */
static const uint32_t *loc_frame_ids(cv__stacks_t *st, const cv__sym_t *sym, const cv__loc_t *l)
{
    if (l->id < st->nloc_at && st->loc_at[l->id])
        return &st->loc_ids[st->loc_at[l->id] - 1];
    if (l->id >= st->nloc_at) {
        size_t n = st->nloc_at ? st->nloc_at : 1024;
        while (n <= l->id)
            n *= 2;
        uint32_t *at = realloc(st->loc_at, n * sizeof *at);
        if (!at)
            return NULL;
        memset(at + st->nloc_at, 0, (n - st->nloc_at) * sizeof *at);
        st->loc_at = at;
        st->nloc_at = n;
    }
    if (st->nloc_ids + l->nframes >= UINT32_MAX)
        return NULL;
    while (st->nloc_ids + l->nframes > st->caploc_ids) {
        size_t cap = st->caploc_ids ? st->caploc_ids * 2 : 4096;
        uint32_t *ids = realloc(st->loc_ids, cap * sizeof *ids);
        if (!ids)
            return NULL;
        st->loc_ids = ids;
        st->caploc_ids = cap;
    }
    const char *module = cv__sym_file_path(sym, l->file_id);
    for (uint32_t k = 0; k < l->nframes; k++) {
        const cv__srcframe_t *f = &l->frames[k];
        uint32_t id = cv__uframes_id(st->uframes, f->file, f->line ? (int64_t)f->line : -1,
                                     f->sym, module, l->offset, f->inlined);
        if (!id)
            return NULL;
        st->loc_ids[st->nloc_ids + k] = id;
    }
    st->loc_at[l->id] = (uint32_t)st->nloc_ids + 1;
    st->nloc_ids += l->nframes;
    return &st->loc_ids[st->loc_at[l->id] - 1];
}

/* The stack_frames text of a new stack (cv__uframes_text); NULL when out of memory. */
static char *frame_ids_text(cv__stacks_t *st, const cv__sym_t *sym, const cv__loc_t *const *locs,
                            uint32_t n)
{
    size_t total = 0;
    for (uint32_t i = 0; i < n; i++)
        total += locs[i]->nframes;
    if (total + 1 > st->capids) {
        size_t cap = total + 64;
        uint32_t *ids = realloc(st->ids, cap * sizeof *ids);
        if (ids)
            st->ids = ids;
        uint8_t *cont = realloc(st->cont, cap);
        if (cont)
            st->cont = cont;
        if (!ids || !cont)
            return NULL;
        st->capids = cap;
    }
    size_t k = 0;
    for (uint32_t i = 0; i < n; i++) {
        const uint32_t *ids = loc_frame_ids(st, sym, locs[i]);
        if (!ids)
            return NULL;
        for (uint32_t j = 0; j < locs[i]->nframes; j++, k++) {
            st->ids[k] = ids[j];
            st->cont[k] = j > 0;
        }
    }
    return cv__uframes_text(st->ids, st->cont, k);
}

uint64_t cv__stacks_intern(cv__stacks_t *st, cv__db_t *db, const cv__sym_t *sym,
                              const cv__loc_t *const *locs, uint32_t n)
{
    uint64_t h = hash_locs(locs, n);
    size_t j = cv__hash_slot(h, st->shift);
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
        if (cv__hash_grow(&st->keys, &st->slots, sizeof *st->slots, &st->mask, &st->shift) != 0)
            return 0;
        j = cv__hash_slot(h, st->shift);
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
        const cv__loc_t *l = locs[i];
        const char *module = cv__sym_file_path(sym, l->file_id);
        for (uint32_t k = 0; k < l->nframes; k++) {
            if (cv__db_frame(db, bt, frame_no++, &l->frames[k], module, l->offset, i) != 0)
                return 0;
        }
        st->pool[st->npool + i] = l->id;
    }
    if (write_site(db, st->sites, sym, bt, locs, n, frame_ids_text(st, sym, locs, n)) != 0)
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
