/*
 * pbuild.c: a Go heap profile (profile.proto, gzipped) built sample by sample, for heaps that
 * come from no database: the host collector's live heaps (`rheap serve`, `rheap snapshot`).
 * pprof.c encodes a database's model; this file encodes what its caller hands it, with the same
 * choices: sample types alloc_objects, alloc_space, inuse_objects, inuse_space; one location per
 * return address, its lines the inlined functions innermost first; one mapping per module, with
 * an address range of its own (recordings keep offsets from each module's load bias, not
 * run-time addresses), a location's address its start plus the offset.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "profile.pb-c.h"

/* Each mapping's synthetic address range: 1 TiB, more than any module's size. */
#define MAPPING_SPAN ((uint64_t)1 << 40)

struct ra_pb {
    Perftools__Profiles__Profile prof;
    ra_smap_t strings, functions, locations, mappings;
    size_t cap_str, cap_fn, cap_loc, cap_map, cap_sample, cap_types, cap_comment;
    uint64_t *map_max;         /* per mapping: the largest offset of its locations */
    int64_t keys[3];           /* the label keys pid, exe, host */
    int oom;
};

static int64_t str(ra_pb_t *b, const char *s)
{
    uint64_t v;
    int created;
    if (!s)
        s = "";
    if (ra_smap_get(&b->strings, s, b->prof.n_string_table, &v, &created) != 0) {
        b->oom = 1;
        return 0;
    }
    if (created) {
        if (rheap_grow(&b->prof.string_table, &b->cap_str, b->prof.n_string_table, sizeof(char *),
                     64) != 0 ||
            !(b->prof.string_table[b->prof.n_string_table] = strdup(s))) {
            b->oom = 1;
            return 0;
        }
        b->prof.n_string_table++;
    }
    return (int64_t)v;
}

static void value_type(ra_pb_t *b, const char *type, const char *unit)
{
    Perftools__Profiles__ValueType *v = malloc(sizeof *v);
    if (!v || rheap_grow(&b->prof.sample_type, &b->cap_types, b->prof.n_sample_type, sizeof v, 4)) {
        free(v);
        b->oom = 1;
        return;
    }
    perftools__profiles__value_type__init(v);
    v->type = str(b, type);
    v->unit = str(b, unit);
    b->prof.sample_type[b->prof.n_sample_type++] = v;
}

ra_pb_t *ra_pb_create(int allocs, int64_t period, int64_t time_nanos, int64_t duration_nanos)
{
    ra_pb_t *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    perftools__profiles__profile__init(&b->prof);
    str(b, "");
    value_type(b, "alloc_objects", "count");
    value_type(b, "alloc_space", "bytes");
    value_type(b, "inuse_objects", "count");
    value_type(b, "inuse_space", "bytes");
    b->prof.default_sample_type = str(b, allocs ? "alloc_space" : "inuse_space");
    b->prof.period_type = malloc(sizeof *b->prof.period_type);
    if (b->prof.period_type) {
        perftools__profiles__value_type__init(b->prof.period_type);
        b->prof.period_type->type = str(b, "space");
        b->prof.period_type->unit = str(b, "bytes");
    }
    b->prof.period = period;
    b->prof.time_nanos = time_nanos;
    b->prof.duration_nanos = duration_nanos;
    b->keys[0] = str(b, "pid");
    b->keys[1] = str(b, "exe");
    b->keys[2] = str(b, "host");
    if (!b->prof.period_type || b->oom) {
        ra_pb_free(b);
        return NULL;
    }
    return b;
}

void ra_pb_comment(ra_pb_t *b, const char *text)
{
    if (rheap_grow(&b->prof.comment, &b->cap_comment, b->prof.n_comment, sizeof(int64_t), 4)) {
        b->oom = 1;
        return;
    }
    int64_t s = str(b, text);
    b->prof.comment[b->prof.n_comment++] = s;
}

static uint64_t function_id(ra_pb_t *b, const char *name, const char *file)
{
    int64_t n = str(b, name), f = str(b, file);
    char key[48];
    snprintf(key, sizeof key, "%" PRId64 ":%" PRId64, n, f);
    uint64_t id;
    int created;
    if (ra_smap_get(&b->functions, key, b->prof.n_function + 1, &id, &created) != 0) {
        b->oom = 1;
        return 0;
    }
    if (created) {
        Perftools__Profiles__Function *fn = malloc(sizeof *fn);
        if (!fn || rheap_grow(&b->prof.function, &b->cap_fn, b->prof.n_function, sizeof fn, 64)) {
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

static uint64_t mapping_id(ra_pb_t *b, int module, const char *path)
{
    if (module < 0)
        return 0;
    char key[24];
    snprintf(key, sizeof key, "%d", module);
    uint64_t id;
    int created;
    if (ra_smap_get(&b->mappings, key, b->prof.n_mapping + 1, &id, &created) != 0) {
        b->oom = 1;
        return 0;
    }
    if (created) {
        Perftools__Profiles__Mapping *m = malloc(sizeof *m);
        uint64_t *mx = m ? realloc(b->map_max, (b->prof.n_mapping + 1) * sizeof *mx) : NULL;
        if (mx)
            b->map_max = mx;
        if (!m || !mx ||
            rheap_grow(&b->prof.mapping, &b->cap_map, b->prof.n_mapping, sizeof m, 16) != 0) {
            free(m);
            b->oom = 1;
            return 0;
        }
        b->map_max[b->prof.n_mapping] = 0;
        perftools__profiles__mapping__init(m);
        m->id = id;
        m->memory_start = id * MAPPING_SPAN;
        m->filename = str(b, path);
        m->has_functions = m->has_filenames = m->has_line_numbers = m->has_inline_frames = 1;
        b->prof.mapping[b->prof.n_mapping++] = m;
    }
    return id;
}

uint64_t ra_pb_location(ra_pb_t *b, int module, const char *module_path, uint64_t offset,
                        const ra_pb_line_t *lines, size_t nlines)
{
    char key[48];
    snprintf(key, sizeof key, "%d:%" PRIx64, module, offset);
    uint64_t id;
    int created;
    if (ra_smap_get(&b->locations, key, b->prof.n_location + 1, &id, &created) != 0) {
        b->oom = 1;
        return 0;
    }
    if (!created)
        return id;
    uint64_t map = mapping_id(b, module, module_path);
    Perftools__Profiles__Location *l = malloc(sizeof *l);
    Perftools__Profiles__Line **ls = calloc(nlines ? nlines : 1, sizeof *ls);
    if (!l || !ls ||
        rheap_grow(&b->prof.location, &b->cap_loc, b->prof.n_location, sizeof l, 64) != 0) {
        free(l);
        free(ls);
        b->oom = 1;
        return 0;
    }
    perftools__profiles__location__init(l);
    l->id = id;
    l->mapping_id = map;
    l->address = map ? map * MAPPING_SPAN + offset : offset;
    if (map && offset > b->map_max[map - 1])
        b->map_max[map - 1] = offset;
    l->line = ls;
    b->prof.location[b->prof.n_location++] = l;
    for (size_t i = 0; i < nlines; i++) {
        Perftools__Profiles__Line *ln = malloc(sizeof *ln);
        if (!ln) {
            b->oom = 1;
            return id;
        }
        perftools__profiles__line__init(ln);
        ln->function_id = function_id(b, lines[i].function, lines[i].file);
        ln->line = lines[i].line;
        ls[l->n_line++] = ln;
    }
    return id;
}

void ra_pb_sample(ra_pb_t *b, const uint64_t *locs, size_t nlocs, const int64_t values[4],
                  int64_t pid, const char *exe, const char *host)
{
    Perftools__Profiles__Sample *sm = malloc(sizeof *sm);
    int64_t *v = malloc(4 * sizeof *v);
    uint64_t *ls = malloc((nlocs ? nlocs : 1) * sizeof *ls);
    Perftools__Profiles__Label **lbs = calloc(3, sizeof *lbs);
    if (!sm || !v || !ls || !lbs ||
        rheap_grow(&b->prof.sample, &b->cap_sample, b->prof.n_sample, sizeof sm, 64) != 0) {
        free(sm), free(v), free(ls), free(lbs);
        b->oom = 1;
        return;
    }
    perftools__profiles__sample__init(sm);
    memcpy(v, values, 4 * sizeof *v);
    memcpy(ls, locs, nlocs * sizeof *ls);
    sm->value = v;
    sm->n_value = 4;
    sm->location_id = ls;
    sm->n_location_id = nlocs;
    sm->label = lbs;
    b->prof.sample[b->prof.n_sample++] = sm;
    int64_t strs[3] = {0, str(b, exe), str(b, host)};
    for (int i = 0; i < 3; i++) {
        Perftools__Profiles__Label *l = malloc(sizeof *l);
        if (!l) {
            b->oom = 1;
            return;
        }
        perftools__profiles__label__init(l);
        l->key = b->keys[i];
        if (i == 0)
            l->num = pid;
        else
            l->str = strs[i];
        lbs[sm->n_label++] = l;
    }
}

void ra_pb_free(ra_pb_t *b)
{
    if (!b)
        return;
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
    ra_smap_free(&b->strings);
    ra_smap_free(&b->functions);
    ra_smap_free(&b->locations);
    ra_smap_free(&b->mappings);
    free(b);
}

ra_status_t ra_pb_finish(ra_pb_t *b, uint8_t **out, size_t *len, ra_err_t *err)
{
    *out = NULL;
    *len = 0;
    for (size_t i = 0; i < b->prof.n_mapping; i++)
        b->prof.mapping[i]->memory_limit = b->prof.mapping[i]->memory_start + b->map_max[i] + 1;
    if (b->oom) {
        ra_pb_free(b);
        return ra__fail(err, RA_E_NOMEM, "out of memory while building the profile");
    }
    size_t n = perftools__profiles__profile__get_packed_size(&b->prof);
    uint8_t *buf = malloc(n ? n : 1);
    if (!buf) {
        ra_pb_free(b);
        return ra__fail(err, RA_E_NOMEM, "out of memory (%zu bytes for the profile)", n);
    }
    perftools__profiles__profile__pack(&b->prof, buf);
    ra_pb_free(b);
    int rc = ra__gzip(buf, n, out, len);
    free(buf);
    return rc == 0 ? RA_OK : ra__fail(err, RA_E_NOMEM, "out of memory (gzip of %zu bytes)", n);
}
