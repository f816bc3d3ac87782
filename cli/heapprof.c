/*
 * heapprof.c: live heaps of running processes (heap.c) as a gzipped profile.proto, the form
 * `go tool pprof http://HOST/debug/pprof/heap` fetches and continuous profilers scrape.
 *
 * Sample types are a Go heap profile's: alloc_objects and alloc_space (allocated since the
 * recording began), inuse_objects and inuse_space (live now). One sample per stack and process,
 * labelled pid (a number), exe and host, so that several processes in one profile stay apart
 * (pprof -tagfocus, a profiler's series labels). Profile-mode values are the sampled blocks'
 * estimates rounded to whole numbers, and the period is the sampling interval, as Go's sampled
 * heap profiles carry.
 *
 * Frames are symbolized here, on demand, by the host's symbolizer: one location per return
 * address (its lines the inlined functions, innermost first), one mapping per module. Module
 * offsets are what a recording keeps, not run-time addresses, so each mapping gets an address
 * range of its own (as cli/pprof.c does) and a location's address is its start plus the offset.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "profile.pb-c.h"
#include "serve.h"

#define MAPPING_SPAN ((uint64_t)1 << 40)

typedef struct {
    Perftools__Profiles__Profile prof;
    cli__smap_t strings, functions, locations, mappings;
    size_t cap_str, cap_fn, cap_loc, cap_map, cap_sample, cap_types;
    uint64_t *map_max;
    rheap_symbols_t *sym;
    int oom;
} pb_t;

static int64_t str(pb_t *b, const char *s)
{
    uint64_t v;
    int created;
    if (!s)
        s = "";
    if (cli__smap_get(&b->strings, s, b->prof.n_string_table, &v, &created) != 0) {
        b->oom = 1;
        return 0;
    }
    if (created) {
        if (cli__grow(&b->prof.string_table, &b->cap_str, b->prof.n_string_table, sizeof(char *),
                      64) != 0 ||
            !(b->prof.string_table[b->prof.n_string_table] = strdup(s))) {
            b->oom = 1;
            return 0;
        }
        b->prof.n_string_table++;
    }
    return (int64_t)v;
}

static uint64_t function_id(pb_t *b, const char *name, const char *file)
{
    int64_t n = str(b, name), f = str(b, file);
    char key[48];
    snprintf(key, sizeof key, "%" PRId64 ":%" PRId64, n, f);
    uint64_t id;
    int created;
    if (cli__smap_get(&b->functions, key, b->prof.n_function + 1, &id, &created) != 0) {
        b->oom = 1;
        return 0;
    }
    if (created) {
        Perftools__Profiles__Function *fn = malloc(sizeof *fn);
        if (!fn || cli__grow(&b->prof.function, &b->cap_fn, b->prof.n_function, sizeof fn, 64)) {
            free(fn);
            b->oom = 1;
            return 0;
        }
        perftools__profiles__function__init(fn);
        fn->id = id;
        fn->name = fn->system_name = n;
        fn->filename = f;
        b->prof.function[b->prof.n_function++] = fn;
    }
    return id;
}

static uint64_t mapping_id(pb_t *b, int module)
{
    if (module < 0)
        return 0;
    char key[24];
    snprintf(key, sizeof key, "%d", module);
    uint64_t id;
    int created;
    if (cli__smap_get(&b->mappings, key, b->prof.n_mapping + 1, &id, &created) != 0) {
        b->oom = 1;
        return 0;
    }
    if (created) {
        Perftools__Profiles__Mapping *m = malloc(sizeof *m);
        uint64_t *mx = m ? realloc(b->map_max, (b->prof.n_mapping + 1) * sizeof *mx) : NULL;
        if (mx)
            b->map_max = mx;
        if (!m || !mx ||
            cli__grow(&b->prof.mapping, &b->cap_map, b->prof.n_mapping, sizeof m, 16) != 0) {
            free(m);
            b->oom = 1;
            return 0;
        }
        b->map_max[b->prof.n_mapping] = 0;
        perftools__profiles__mapping__init(m);
        m->id = id;
        m->memory_start = id * MAPPING_SPAN;
        m->filename = str(b, rheap_symbols_module_path(b->sym, module));
        m->has_functions = m->has_filenames = m->has_line_numbers = m->has_inline_frames = 1;
        b->prof.mapping[b->prof.n_mapping++] = m;
    }
    return id;
}

static uint64_t location_id(pb_t *b, const sv__frame_t *f)
{
    char key[48];
    snprintf(key, sizeof key, "%d:%" PRIx64, f->module, f->offset);
    uint64_t id;
    int created;
    if (cli__smap_get(&b->locations, key, b->prof.n_location + 1, &id, &created) != 0) {
        b->oom = 1;
        return 0;
    }
    if (!created)
        return id;
    const rheap_symbol_line_t *lines = NULL;
    size_t n = rheap_symbols_resolve(b->sym, f->module, f->offset, &lines);
    uint64_t map = mapping_id(b, f->module);
    Perftools__Profiles__Location *l = malloc(sizeof *l);
    Perftools__Profiles__Line **ls = calloc(n ? n : 1, sizeof *ls);
    if (!n || !l || !ls ||
        cli__grow(&b->prof.location, &b->cap_loc, b->prof.n_location, sizeof l, 64) != 0) {
        free(l);
        free(ls);
        b->oom = 1;
        return 0;
    }
    perftools__profiles__location__init(l);
    l->id = id;
    l->mapping_id = map;
    l->address = map ? map * MAPPING_SPAN + f->offset : f->offset;
    if (map && f->offset > b->map_max[map - 1])
        b->map_max[map - 1] = f->offset;
    l->line = ls;
    b->prof.location[b->prof.n_location++] = l;
    for (size_t i = 0; i < n; i++) {
        Perftools__Profiles__Line *ln = malloc(sizeof *ln);
        if (!ln) {
            b->oom = 1;
            return id;
        }
        perftools__profiles__line__init(ln);
        char name[64];
        const char *fn = lines[i].function;
        if (!fn) {
            /* No symbol: the module and offset, as the database names such frames. */
            const char *mod = f->module >= 0 ? rheap_symbols_module_path(b->sym, f->module) : NULL;
            const char *base = mod ? strrchr(mod, '/') : NULL;
            if (mod)
                snprintf(name, sizeof name, "%s+0x%" PRIx64, base ? base + 1 : mod, f->offset);
            else
                snprintf(name, sizeof name, "0x%" PRIx64, f->offset);
            fn = name;
        }
        ln->function_id = function_id(b, fn, lines[i].file);
        ln->line = lines[i].line;
        ls[l->n_line++] = ln;
    }
    return id;
}

static void value_type(pb_t *b, const char *type, const char *unit)
{
    Perftools__Profiles__ValueType *v = malloc(sizeof *v);
    if (!v || cli__grow(&b->prof.sample_type, &b->cap_types, b->prof.n_sample_type, sizeof v, 4)) {
        free(v);
        b->oom = 1;
        return;
    }
    perftools__profiles__value_type__init(v);
    v->type = str(b, type);
    v->unit = str(b, unit);
    b->prof.sample_type[b->prof.n_sample_type++] = v;
}

static void add_sample(pb_t *b, const sv__stack_t *st, const int64_t *vals, int64_t pid,
                       const int64_t *keys, int64_t exe, int64_t host)
{
    Perftools__Profiles__Sample *sm = malloc(sizeof *sm);
    int64_t *v = malloc(4 * sizeof *v);
    uint64_t *locs = malloc((st->nframes ? st->nframes : 1) * sizeof *locs);
    Perftools__Profiles__Label **lbs = calloc(3, sizeof *lbs);
    if (!sm || !v || !locs || !lbs ||
        cli__grow(&b->prof.sample, &b->cap_sample, b->prof.n_sample, sizeof sm, 64) != 0) {
        free(sm), free(v), free(locs), free(lbs);
        b->oom = 1;
        return;
    }
    perftools__profiles__sample__init(sm);
    memcpy(v, vals, 4 * sizeof *v);
    sm->value = v;
    sm->n_value = 4;
    sm->location_id = locs;
    sm->label = lbs;
    b->prof.sample[b->prof.n_sample++] = sm;
    for (uint32_t i = 0; i < st->nframes; i++)
        locs[sm->n_location_id++] = location_id(b, &st->frames[i]);
    for (int i = 0; i < 3; i++) {
        Perftools__Profiles__Label *l = malloc(sizeof *l);
        if (!l) {
            b->oom = 1;
            return;
        }
        perftools__profiles__label__init(l);
        l->key = keys[i];
        if (i == 0)
            l->num = pid;
        else
            l->str = i == 1 ? exe : host;
        lbs[sm->n_label++] = l;
    }
}

static void pb_free(pb_t *b)
{
    Perftools__Profiles__Profile *p = &b->prof;
    for (size_t i = 0; i < p->n_sample_type; i++)
        free(p->sample_type[i]);
    free(p->sample_type);
    for (size_t i = 0; i < p->n_sample; i++) {
        for (size_t k = 0; k < p->sample[i]->n_label; k++)
            free(p->sample[i]->label[k]);
        free(p->sample[i]->label);
        free(p->sample[i]->value);
        free(p->sample[i]->location_id);
        free(p->sample[i]);
    }
    free(p->sample);
    for (size_t i = 0; i < p->n_mapping; i++)
        free(p->mapping[i]);
    free(p->mapping);
    for (size_t i = 0; i < p->n_location; i++) {
        for (size_t k = 0; k < p->location[i]->n_line; k++)
            free(p->location[i]->line[k]);
        free(p->location[i]->line);
        free(p->location[i]);
    }
    free(p->location);
    for (size_t i = 0; i < p->n_function; i++)
        free(p->function[i]);
    free(p->function);
    for (size_t i = 0; i < p->n_string_table; i++)
        free(p->string_table[i]);
    free(p->string_table);
    free(p->comment);
    free(p->period_type);
    free(b->map_max);
    cli__smap_free(&b->strings);
    cli__smap_free(&b->functions);
    cli__smap_free(&b->locations);
    cli__smap_free(&b->mappings);
}

sv__base_t *sv__base_take(const sv__host_t *h, const size_t *idx, size_t n, size_t *nbase)
{
    *nbase = 0;
    sv__base_t *b = calloc(n ? n : 1, sizeof *b);
    if (!b)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        sv__info_t in;
        sv__host_info(h, idx[i], &in);
        b[i].pid = in.pid;
        b[i].recording = in.recording;
        b[i].nstacks = in.nstacks;
        b[i].v = malloc((in.nstacks ? in.nstacks : 1) * sizeof *b[i].v);
        if (!b[i].v) {
            sv__base_free(b, i);
            return NULL;
        }
        for (size_t k = 0; k < in.nstacks; k++)
            b[i].v[k] = in.stacks[k].v;
        *nbase = i + 1;
    }
    return b;
}

void sv__base_free(sv__base_t *b, size_t n)
{
    if (!b)
        return;
    for (size_t i = 0; i < n; i++)
        free(b[i].v);
    free(b);
}

static int64_t whole(double v)
{
    return (int64_t)llround(v);
}

int sv__profile_write(sv__host_t *h, const size_t *idx, size_t n, int allocs,
                      const sv__base_t *base, size_t nbase, int64_t period_ns, FILE *out,
                      char *err, size_t errlen)
{
    pb_t b;
    memset(&b, 0, sizeof b);
    b.sym = sv__host_symbols(h);
    perftools__profiles__profile__init(&b.prof);
    str(&b, "");
    value_type(&b, "alloc_objects", "count");
    value_type(&b, "alloc_space", "bytes");
    value_type(&b, "inuse_objects", "count");
    value_type(&b, "inuse_space", "bytes");
    b.prof.default_sample_type = str(&b, allocs ? "alloc_space" : "inuse_space");
    b.prof.period_type = malloc(sizeof *b.prof.period_type);
    b.prof.comment = malloc(2 * sizeof *b.prof.comment);
    if (!b.prof.period_type || !b.prof.comment) {
        pb_free(&b);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    perftools__profiles__value_type__init(b.prof.period_type);
    b.prof.period_type->type = str(&b, "space");
    b.prof.period_type->unit = str(&b, "bytes");
    uint64_t interval = 0, first_wall = 0;
    for (size_t i = 0; i < n; i++) {
        sv__info_t in;
        sv__host_info(h, idx[i], &in);
        if (in.interval > interval)
            interval = in.interval;
        if (in.start_wall_ns && (!first_wall || in.start_wall_ns < first_wall))
            first_wall = in.start_wall_ns;
    }
    b.prof.period = interval ? (int64_t)interval : 1;
    b.prof.comment[b.prof.n_comment++] =
        str(&b, base ? "rheap: the change over the period: values now minus at its start"
                     : "rheap: live heap now (inuse) and allocations since recording began");
    if (interval) {
        char note[160];
        snprintf(note, sizeof note,
                 "rheap: profile mode: values are estimates from allocations sampled about once "
                 "every %" PRIu64 " bytes",
                 interval);
        b.prof.comment[b.prof.n_comment++] = str(&b, note);
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    b.prof.time_nanos = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    if (base)
        b.prof.time_nanos -= period_ns;
    b.prof.duration_nanos = base ? period_ns : 0;
    int64_t keys[3] = {str(&b, "pid"), str(&b, "exe"), str(&b, "host")};
    int64_t host = str(&b, sv__host_name(h));
    for (size_t i = 0; i < n && !b.oom; i++) {
        sv__info_t in;
        sv__host_info(h, idx[i], &in);
        const sv__base_t *bs = NULL;
        for (size_t k = 0; base && k < nbase && !bs; k++)
            if (base[k].pid == in.pid && base[k].recording == in.recording)
                bs = &base[k];
        int64_t exe = str(&b, in.exe);
        for (size_t k = 0; k < in.nstacks && !b.oom; k++) {
            sv__vals_t v = in.stacks[k].v;
            if (bs && k < bs->nstacks) {
                v.alloc_blocks -= bs->v[k].alloc_blocks;
                v.alloc_bytes -= bs->v[k].alloc_bytes;
                v.live_blocks -= bs->v[k].live_blocks;
                v.live_bytes -= bs->v[k].live_bytes;
            }
            int64_t vals[4] = {whole(v.alloc_blocks), whole(v.alloc_bytes), whole(v.live_blocks),
                               whole(v.live_bytes)};
            if (!vals[0] && !vals[1] && !vals[2] && !vals[3])
                continue;
            add_sample(&b, &in.stacks[k], vals, in.pid, keys, exe, host);
        }
    }
    for (size_t i = 0; i < b.prof.n_mapping; i++)
        b.prof.mapping[i]->memory_limit = b.prof.mapping[i]->memory_start + b.map_max[i] + 1;
    if (b.oom) {
        pb_free(&b);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    size_t len = perftools__profiles__profile__get_packed_size(&b.prof);
    uint8_t *buf = malloc(len ? len : 1);
    if (!buf) {
        pb_free(&b);
        snprintf(err, errlen, "out of memory (%zu bytes for the profile)", len);
        return -1;
    }
    perftools__profiles__profile__pack(&b.prof, buf);
    pb_free(&b);
    int rc = cli__gzip_write(buf, len, out);
    free(buf);
    if (rc != 0)
        snprintf(err, errlen, "write failed");
    return rc;
}
