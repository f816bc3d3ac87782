/*
 * pprof.c: the model's stacks as a pprof profile (profile.proto, gzipped), for `go tool pprof`
 * and everything else that reads the format. The bytes are the caller's to write: the library
 * does no output of its own.
 *
 * The message types come from pprof's own profile.proto, compiled by protoc-c at build time
 * (analysis/CMakeLists.txt), and protobuf-c encodes them: the schema is fixed and well known, and a
 * hand-written encoder would be one more thing to get wrong. zlib writes the gzip wrapper that
 * pprof expects.
 *
 * How the database maps onto the format:
 * - Sample types are those of a Go heap profile, so pprof's heap views and flags
 *   (-sample_index=alloc_space, ...) work: alloc_objects/count and alloc_space/bytes are every
 *   block allocated, inuse_objects/count and inuse_space/bytes the blocks never freed. The peak
 *   profile has inuse_objects and inuse_space only: the blocks live at each recording's peak.
 * - One sample per stack and recording, labelled with its pid; its locations start at the
 *   allocation site (plumbing left out, as in `collapsed`), leaf first.
 * - One location per return address: its lines are the inlined functions, innermost first and
 *   the function they were inlined into last, as profile.proto asks.
 * - One mapping per module with its build id. The database keeps offsets relative to each
 *   module's load bias, not the run-time addresses (which differ between processes), so each
 *   mapping gets an address range of its own and a location's address is that range's start
 *   plus the offset; file_offset 0 makes pprof read the address back as the offset.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "analysis.h"
#include "profile.pb-c.h"

/* Each mapping's synthetic address range: 1 TiB, more than any module's size. */
#define MAPPING_SPAN ((uint64_t)1 << 40)

/* ---- Building the profile ---- */

typedef struct {
    Perftools__Profiles__Profile prof;
    ra_smap_t strings, functions, locations, mappings;
    size_t cap_str, cap_fn, cap_loc, cap_map, cap_sample, cap_types;
    uint64_t *map_max; /* per mapping: the largest offset of its locations */
    int oom;
} builder_t;

/* The string table index of s ("" is index 0, as the format requires). */
static int64_t str(builder_t *b, const char *s)
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

/* A function is its name and file in its module: `_start` of perl and of python3 are two. */
static uint64_t function_id(builder_t *b, const char *name, const char *file, const char *module)
{
    int64_t n = str(b, name), f = str(b, file), m = str(b, module);
    char key[72];
    snprintf(key, sizeof key, "%" PRId64 ":%" PRId64 ":%" PRId64, n, f, m);
    uint64_t id;
    int created;
    if (ra_smap_get(&b->functions, key, b->prof.n_function + 1, &id, &created) != 0) {
        b->oom = 1;
        return 0;
    }
    if (created) {
        Perftools__Profiles__Function *fn = malloc(sizeof *fn);
        if (!fn ||
            rheap_grow(&b->prof.function, &b->cap_fn, b->prof.n_function, sizeof fn, 64) != 0) {
            free(fn);
            b->oom = 1;
            return 0;
        }
        perftools__profiles__function__init(fn);
        fn->id = id;
        fn->name = n;
        fn->system_name = n;
        fn->filename = f;
        b->prof.function[b->prof.n_function++] = fn;
    }
    return id;
}

static uint64_t mapping_id(builder_t *b, const ra_model_t *pd, const char *module)
{
    if (!module)
        return 0;
    uint64_t id;
    int created;
    if (ra_smap_get(&b->mappings, module, b->prof.n_mapping + 1, &id, &created) != 0) {
        b->oom = 1;
        return 0;
    }
    if (created) {
        Perftools__Profiles__Mapping *m = malloc(sizeof *m);
        if (!m ||
            rheap_grow(&b->prof.mapping, &b->cap_map, b->prof.n_mapping, sizeof m, 64) != 0) {
            free(m);
            b->oom = 1;
            return 0;
        }
        size_t cap = b->cap_map;
        uint64_t *mx = realloc(b->map_max, cap * sizeof *mx);
        if (!mx) {
            free(m);
            b->oom = 1;
            return 0;
        }
        b->map_max = mx;
        b->map_max[b->prof.n_mapping] = 0;
        perftools__profiles__mapping__init(m);
        m->id = id;
        m->memory_start = id * MAPPING_SPAN;
        m->filename = str(b, module);
        m->build_id = str(b, ra_model_build_id(pd, module));
        m->has_functions = m->has_filenames = m->has_line_numbers = m->has_inline_frames = 1;
        b->prof.mapping[b->prof.n_mapping++] = m;
    }
    return id;
}

/* The location of frames[from, to) of a stack: one return address and its inlined lines. */
static uint64_t location_id(builder_t *b, const ra_model_t *pd, const ra_frame_t *fr,
                            size_t n)
{
    const ra_frame_t *outer = &fr[n - 1];
    uint64_t map = mapping_id(b, pd, outer->module);
    /* The same address can be cut at its site in one stack and whole in another, so the
     * number of lines is part of the key. */
    char key[64];
    snprintf(key, sizeof key, "%" PRIu64 ":%" PRIx64 ":%zu:%s", map, (uint64_t)outer->offset, n,
             n == 1 && !outer->sym && !outer->module ? "?" : "");
    uint64_t id;
    int created;
    if (ra_smap_get(&b->locations, key, b->prof.n_location + 1, &id, &created) != 0) {
        b->oom = 1;
        return 0;
    }
    if (!created)
        return id;
    Perftools__Profiles__Location *l = malloc(sizeof *l);
    Perftools__Profiles__Line **lines = calloc(n, sizeof *lines);
    if (!l || !lines ||
        rheap_grow(&b->prof.location, &b->cap_loc, b->prof.n_location, sizeof l, 64) != 0) {
        free(l);
        free(lines);
        b->oom = 1;
        return 0;
    }
    perftools__profiles__location__init(l);
    l->id = id;
    l->mapping_id = map;
    l->address = map * MAPPING_SPAN + (uint64_t)outer->offset;
    if (map && (uint64_t)outer->offset > b->map_max[map - 1])
        b->map_max[map - 1] = (uint64_t)outer->offset;
    l->line = lines;
    b->prof.location[b->prof.n_location++] = l;
    for (size_t i = 0; i < n; i++) {
        Perftools__Profiles__Line *ln = malloc(sizeof *ln);
        if (!ln) {
            b->oom = 1;
            return id;
        }
        perftools__profiles__line__init(ln);
        char buf[64];
        ln->function_id = function_id(b, ra_frame_name(&fr[i], buf, sizeof buf), fr[i].file,
                                      outer->module);
        ln->line = fr[i].line;
        lines[l->n_line++] = ln;
    }
    return id;
}

static void value_type(builder_t *b, const char *type, const char *unit)
{
    Perftools__Profiles__ValueType *v = malloc(sizeof *v);
    if (!v || rheap_grow(&b->prof.sample_type, &b->cap_types, b->prof.n_sample_type, sizeof v,
                          64) != 0) {
        free(v);
        b->oom = 1;
        return;
    }
    perftools__profiles__value_type__init(v);
    v->type = str(b, type);
    v->unit = str(b, unit);
    b->prof.sample_type[b->prof.n_sample_type++] = v;
}

/* One sample for the stack of s (read from pd), labelled with its pid unless pid_key < 0. */
static void add_sample(builder_t *b, const ra_model_t *pd, const ra_stat_t *s,
                       const int64_t *values, size_t nvalues, int64_t pid_key)
{
    const ra_stack_t *st = ra_model_stack(pd, s->bt);
    Perftools__Profiles__Sample *sm = malloc(sizeof *sm);
    Perftools__Profiles__Label *lb = malloc(sizeof *lb);
    Perftools__Profiles__Label **lbs = malloc(sizeof *lbs);
    int64_t *vals = malloc(nvalues * sizeof *vals);
    uint64_t *locs = malloc(((st ? st->nframes : 0) + 1) * sizeof *locs);
    if (!sm || !lb || !lbs || !vals || !locs ||
        rheap_grow(&b->prof.sample, &b->cap_sample, b->prof.n_sample, sizeof sm, 64) != 0) {
        free(sm), free(lb), free(lbs), free(vals), free(locs);
        b->oom = 1;
        return;
    }
    perftools__profiles__sample__init(sm);
    memcpy(vals, values, nvalues * sizeof *vals);
    sm->value = vals;
    sm->n_value = nvalues;
    sm->location_id = locs;
    if (!st || st->nframes == 0) {
        ra_frame_t none = {.sym = "(no backtrace)"};
        locs[sm->n_location_id++] = location_id(b, pd, &none, 1);
    } else {
        /* Leaf first: the site's return address, then outward. */
        for (size_t i = 0; i < st->nframes;) {
            size_t j = i + 1;
            while (j < st->nframes && st->frames[j].ip_index == st->frames[i].ip_index)
                j++;
            locs[sm->n_location_id++] = location_id(b, pd, &st->frames[i], j - i);
            i = j;
        }
    }
    if (pid_key >= 0) {
        perftools__profiles__label__init(lb);
        lb->key = pid_key;
        lb->num = s->pid;
        lbs[0] = lb;
        sm->label = lbs;
        sm->n_label = 1;
    } else {
        free(lb);
        free(lbs);
    }
    b->prof.sample[b->prof.n_sample++] = sm;
}

static void builder_free(builder_t *b)
{
    Perftools__Profiles__Profile *p = &b->prof;
    for (size_t i = 0; i < p->n_sample_type; i++)
        free(p->sample_type[i]);
    free(p->sample_type);
    for (size_t i = 0; i < p->n_sample; i++) {
        Perftools__Profiles__Sample *s = p->sample[i];
        free(s->location_id);
        free(s->value);
        for (size_t k = 0; k < s->n_label; k++)
            free(s->label[k]);
        free(s->label);
        free(s);
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
}

/* buf gzipped into a new buffer (*out, malloc'ed, *outlen bytes). 0, or -1 out of memory. */
int ra__gzip(const uint8_t *buf, size_t len, uint8_t **out, size_t *outlen)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    /* 15 + 16: the largest window, with a gzip header and trailer instead of zlib's. */
    if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return -1;
    /* deflateBound is zlib's, without the gzip header and trailer: 18 bytes more. */
    size_t cap = deflateBound(&z, (uLong)len) + 18;
    *out = malloc(cap);
    if (!*out) {
        deflateEnd(&z);
        return -1;
    }
    z.next_in = (Bytef *)buf;
    z.avail_in = (uInt)len;
    z.next_out = *out;
    z.avail_out = (uInt)cap;
    int rc = deflate(&z, Z_FINISH);
    *outlen = cap - z.avail_out;
    deflateEnd(&z);
    if (rc != Z_STREAM_END) {
        free(*out);
        *out = NULL;
        return -1;
    }
    return 0;
}

/* The values of one stack's sample: inuse blocks and bytes at the peak, or alloc and inuse
 * blocks and bytes, inuse being what the recording left live: never freed before the process
 * ended, or, in a window, still live when it stopped (one of the two is 0). Returns how many. */
static size_t stat_values(const ra_stat_t *s, int peak, int64_t *v)
{
    if (peak) {
        v[0] = s->peak_blocks;
        v[1] = s->peak_bytes;
        return 2;
    }
    v[0] = s->blocks;
    v[1] = s->bytes;
    v[2] = s->leaked_blocks + s->stopped_blocks;
    v[3] = s->leaked_bytes + s->stopped_bytes;
    return 4;
}

/* A stack as text that means the same in any database: each frame's function, file and line
 * (module+offset for a frame without a name), and where one return address ends, since stack
 * ids, pids and addresses differ between two runs. malloc'ed, NULL when out of memory. */
static char *stack_text(const ra_model_t *pd, int64_t bt)
{
    const ra_stack_t *st = ra_model_stack(pd, bt);
    if (!st || st->nframes == 0)
        return strdup("(no backtrace)");
    char *txt = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&txt, &len);
    if (!f)
        return NULL;
    for (size_t i = 0; i < st->nframes; i++) {
        char buf[64];
        const ra_frame_t *fr = &st->frames[i];
        fprintf(f, "%s\x1f%s\x1f%" PRId64 "%s", ra_frame_name(fr, buf, sizeof buf),
                fr->file ? fr->file : "", fr->line,
                i + 1 < st->nframes && st->frames[i + 1].ip_index == fr->ip_index ? "\x1f" : "\x1e");
    }
    if (fclose(f) != 0) {
        free(txt);
        return NULL;
    }
    return txt;
}

/* One stack of the difference: the values NEW minus BASE, and where to read its frames. */
typedef struct {
    const ra_model_t *pd;
    const ra_stat_t *s;
    int64_t v[4];
} diff_t;

/* Adds sign * the values of every stack of pd into the entries, keyed by stack text. */
static int diff_add(const ra_model_t *pd, int peak, int sign, ra_smap_t *keys, diff_t **ents,
                    size_t *n, size_t *cap)
{
    for (size_t i = 0; i < pd->nstats; i++) {
        const ra_stat_t *s = &pd->stats[i];
        int64_t v[4];
        size_t nv = stat_values(s, peak, v);
        if (v[0] == 0)
            continue;
        char *key = stack_text(pd, s->bt);
        uint64_t idx;
        int created;
        if (!key || ra_smap_get(keys, key, *n, &idx, &created) != 0) {
            free(key);
            return -1;
        }
        free(key);
        if (created) {
            if (rheap_grow(ents, cap, *n, sizeof **ents, 64) != 0)
                return -1;
            (*ents)[*n] = (diff_t){pd, s, {0, 0, 0, 0}};
            (*n)++;
        }
        for (size_t k = 0; k < nv; k++)
            (*ents)[idx].v[k] += sign * v[k];
    }
    return 0;
}

ra_status_t ra_pprof_encode(const ra_model_t *pd, const ra_model_t *base, int peak,
                            ra_weight_t default_weight, uint8_t **out, size_t *outlen,
                            ra_err_t *err)
{
    *out = NULL;
    *outlen = 0;
    builder_t b;
    memset(&b, 0, sizeof b);
    perftools__profiles__profile__init(&b.prof);
    str(&b, "");
    const char *def;
    if (peak) {
        value_type(&b, "inuse_objects", "count");
        value_type(&b, "inuse_space", "bytes");
        def = "inuse_space";
    } else {
        value_type(&b, "alloc_objects", "count");
        value_type(&b, "alloc_space", "bytes");
        value_type(&b, "inuse_objects", "count");
        value_type(&b, "inuse_space", "bytes");
        def = default_weight == RA_W_ALLOCATED     ? "alloc_space"
              : default_weight == RA_W_ALLOCATIONS ? "alloc_objects"
                                                      : "inuse_space";
    }
    b.prof.default_sample_type = str(&b, def);
    b.prof.period_type = malloc(sizeof *b.prof.period_type);
    if (b.prof.period_type) {
        perftools__profiles__value_type__init(b.prof.period_type);
        b.prof.period_type->type = str(&b, "space");
        b.prof.period_type->unit = str(&b, "bytes");
    }
    /* A trace records every block; a profile-mode recording's values are already scaled up
     * from its samples, as in Go's heap profiles, and the period says how they were drawn. */
    int64_t interval = ra_model_sample_interval(pd);
    if (base && ra_model_sample_interval(base) > interval)
        interval = ra_model_sample_interval(base);
    b.prof.period = interval ? interval : 1;
    /* inuse is a leak only where the recording lasted until its process ended. */
    int windows = 0;
    for (size_t i = 0; i < pd->nprocs; i++)
        windows |= !pd->procs[i].until_exit;
    for (size_t i = 0; base && i < base->nprocs; i++)
        windows |= !base->procs[i].until_exit;
    const char *inuse = windows ? "inuse = never freed before the process ended or, in a window "
                                  "(a recording stopped while its process went on), still live "
                                  "when it stopped (not leaks)"
                                : "inuse = never freed before the process ended";
    char note_buf[320];
    snprintf(note_buf, sizeof note_buf, "rheap: %s%s",
             base ? "this run minus the base run, per stack; " : "", inuse);
    const char *note = note_buf;
    if (peak)
        note = base ? "rheap: blocks live at the peak, this run minus the base run, per stack"
                    : "rheap: blocks live at each process's peak of live heap";
    char sampled[160];
    snprintf(sampled, sizeof sampled,
             "rheap: profile mode: values are estimates from allocations sampled about once "
             "every %" PRId64 " bytes",
             interval);
    b.prof.comment = malloc(2 * sizeof *b.prof.comment);
    if (b.prof.comment) {
        b.prof.comment[0] = str(&b, note);
        b.prof.n_comment = 1;
        if (interval)
            b.prof.comment[b.prof.n_comment++] = str(&b, sampled);
    }
    /* pprof takes the first mapping for the program ("File:" in its header): the executable of
     * the first process recorded (the root of the tree), when it was seen mapped. */
    const char *exe = pd->nprocs ? pd->procs[0].exe : NULL;
    for (size_t i = 0; exe && i < pd->nmodules; i++)
        if (!strcmp(pd->modules[i].path, exe)) {
            mapping_id(&b, pd, exe);
            break;
        }
    int64_t pid_key = str(&b, "pid");
    int64_t first_wall = 0, longest = 0;
    for (size_t i = 0; i < pd->nprocs; i++) {
        if (pd->procs[i].start_wall_ns && (!first_wall || pd->procs[i].start_wall_ns < first_wall))
            first_wall = pd->procs[i].start_wall_ns;
        if (pd->procs[i].end_t > longest)
            longest = pd->procs[i].end_t;
    }
    b.prof.time_nanos = first_wall;
    b.prof.duration_nanos = longest;

    if (!base) {
        for (size_t i = 0; i < pd->nstats && !b.oom; i++) {
            int64_t v[4];
            size_t nv = stat_values(&pd->stats[i], peak, v);
            if (v[0])
                add_sample(&b, pd, &pd->stats[i], v, nv, pid_key);
        }
    } else {
        /* Stacks are matched by their text, every process of a database adding into its side;
         * a sample carries no pid then. Its frames are read from the run that has the stack,
         * NEW first. Stacks the same in both leave no sample. */
        ra_smap_t keys = {0};
        diff_t *ents = NULL;
        size_t n = 0, cap = 0;
        if (diff_add(pd, peak, 1, &keys, &ents, &n, &cap) != 0 ||
            diff_add(base, peak, -1, &keys, &ents, &n, &cap) != 0)
            b.oom = 1;
        for (size_t i = 0; i < n && !b.oom; i++) {
            size_t nv = peak ? 2 : 4, k = 0;
            while (k < nv && ents[i].v[k] == 0)
                k++;
            if (k < nv)
                add_sample(&b, ents[i].pd, ents[i].s, ents[i].v, nv, -1);
        }
        free(ents);
        ra_smap_free(&keys);
    }
    for (size_t i = 0; i < b.prof.n_mapping; i++)
        b.prof.mapping[i]->memory_limit = b.prof.mapping[i]->memory_start + b.map_max[i] + 1;
    if (!b.prof.period_type || !b.prof.comment)
        b.oom = 1;
    if (b.oom) {
        builder_free(&b);
        return ra__fail(err, RA_E_NOMEM, "out of memory");
    }
    size_t len = perftools__profiles__profile__get_packed_size(&b.prof);
    uint8_t *buf = malloc(len ? len : 1);
    if (!buf) {
        builder_free(&b);
        return ra__fail(err, RA_E_NOMEM, "out of memory (%zu bytes for the profile)", len);
    }
    perftools__profiles__profile__pack(&b.prof, buf);
    builder_free(&b);
    int rc = ra__gzip(buf, len, out, outlen);
    free(buf);
    return rc == 0 ? RA_OK : ra__fail(err, RA_E_NOMEM, "out of memory (gzip of %zu bytes)", len);
}
