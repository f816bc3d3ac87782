/*
 * pprof.c: the model's stacks as a pprof profile (profile.proto, gzipped), for `go tool pprof`
 * and everything else that reads the format. The bytes are the caller's to write: the library
 * does no output of its own. pbuild.c encodes; this file says what goes in.
 *
 * How the database maps onto the format:
 * - Sample types are those of a Go heap profile, so pprof's heap views and flags
 *   (-sample_index=alloc_space, ...) work: alloc_objects/count and alloc_space/bytes are every
 *   block allocated, inuse_objects/count and inuse_space/bytes the blocks never freed. The peak
 *   profile has inuse_objects and inuse_space only: the blocks live at each recording's peak.
 * - One sample per stack and recording, labelled with its pid, or, for a model of totals over
 *   the recordings (RA_MODEL_TOTALS: `rheap export` of a process tree), one per stack without
 *   a pid; its locations start at the allocation site (plumbing left out, as in
 *   `collapsed`), leaf first.
 * - One location per return address (its lines the inlined functions), one mapping per module
 *   with its build id, as pbuild.c lays them out.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"

/* The mapping of a module (NULL: none, 0), keyed by its path. */
static uint64_t mapping_id(ra_pb_t *b, const ra_model_t *pd, const char *module)
{
    return module ? ra__pb_mapping(b, module, module, ra_model_build_id(pd, module)) : 0;
}

/* The locations given so far by what names them: the module's text (interned by the model: one
 * pointer per text), the offset and the number of lines (twice, plus 1 for a frame of no name
 * and no module). A build's 6 M frames each printed a key and hashed it, and the mapping's path
 * too; most are a location met before, found here by three integers. */
typedef struct {
    struct loc_slot {
        const char *module;
        int64_t offset;
        uint64_t lines;
        uint64_t id; /* 0: empty */
    } *slots;
    size_t cap, n;
    /* Before the slots: per distinct frame of the model (ra_model_t.frames), the location of
     * the return address that starts with it, and its number of lines (0: not yet). Stacks
     * pass through the same frames, so most addresses are found here by an index. */
    struct loc_memo {
        uint64_t id;
        size_t lines;
    } *memo;
    const ra_frame_t *frames; /* the model's, which memo follows */
    size_t nframes;
} loccache_t;

static size_t loc_hash(const char *module, int64_t offset, uint64_t lines, size_t cap)
{
    uint64_t h = (uint64_t)(uintptr_t)module * 0x9E3779B97F4A7C15ULL;
    h ^= (uint64_t)offset * 0xC2B2AE3D27D4EB4FULL + (h << 6) + (h >> 2);
    h ^= lines * 0x165667B19E3779F9ULL + (h << 6) + (h >> 2);
    return (size_t)(h ^ (h >> 29)) & (cap - 1);
}

/* The slot of the key: its own, or the empty one it goes into. NULL when out of memory. */
static struct loc_slot *loc_slot(loccache_t *c, const char *module, int64_t offset,
                                 uint64_t lines)
{
    if ((c->n + 1) * 2 > c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 4096;
        struct loc_slot *slots = calloc(cap, sizeof *slots);
        if (!slots)
            return NULL;
        for (size_t i = 0; i < c->cap; i++) {
            const struct loc_slot *o = &c->slots[i];
            if (!o->id)
                continue;
            size_t j = loc_hash(o->module, o->offset, o->lines, cap);
            while (slots[j].id)
                j = (j + 1) & (cap - 1);
            slots[j] = *o;
        }
        free(c->slots);
        c->slots = slots;
        c->cap = cap;
    }
    size_t j = loc_hash(module, offset, lines, c->cap);
    while (c->slots[j].id && !(c->slots[j].module == module && c->slots[j].offset == offset &&
                               c->slots[j].lines == lines))
        j = (j + 1) & (c->cap - 1);
    return &c->slots[j];
}

/* The location of frames fr[0, n) of a stack: one return address and its inlined lines; known
 * ones from lc when given. */
static uint64_t location_id(ra_pb_t *b, const ra_model_t *pd, const ra_frame_t *const *fr,
                            size_t n, loccache_t *lc)
{
    const ra_frame_t *outer = fr[n - 1];
    struct loc_slot *known = NULL;
    struct loc_memo *memo = NULL;
    if (lc && lc->memo && fr[0] >= lc->frames && fr[0] < lc->frames + lc->nframes) {
        memo = &lc->memo[fr[0] - lc->frames];
        if (memo->lines == n)
            return memo->id;
    }
    if (lc) {
        known = loc_slot(lc, outer->module, outer->offset,
                         2 * (uint64_t)n + (n == 1 && !outer->sym && !outer->module));
        if (known && known->id) {
            if (memo)
                *memo = (struct loc_memo){known->id, n};
            return known->id;
        }
    }
    uint64_t map = mapping_id(b, pd, outer->module);
    /* The same address can be cut at its site in one stack and whole in another, so the
     * number of lines is part of the key. */
    char key[64];
    snprintf(key, sizeof key, "%" PRIu64 ":%" PRIx64 ":%zu:%s", map, (uint64_t)outer->offset, n,
             n == 1 && !outer->sym && !outer->module ? "?" : "");
    /* A frame without a name is named into its own 64 bytes; the few lines of most return
     * addresses fit on the stack. */
    enum { FEW = 8 };
    ra_pb_line_t few_lines[FEW], *lines = few_lines;
    char few_names[FEW][64], (*names)[64] = few_names;
    if (n > FEW) {
        lines = malloc(n * sizeof *lines);
        names = malloc(n * sizeof *names);
    }
    uint64_t id = 0;
    if (lines && names) {
        for (size_t i = 0; i < n; i++) {
            lines[i].function = ra_frame_name(fr[i], names[i], sizeof names[i]);
            lines[i].file = fr[i]->file;
            lines[i].line = fr[i]->line;
        }
        id = ra__pb_location(b, key, map, (uint64_t)outer->offset, outer->module, lines, n);
    }
    if (memo && id)
        *memo = (struct loc_memo){id, n};
    if (known && id) {
        known->module = outer->module;
        known->offset = outer->offset;
        known->lines = 2 * (uint64_t)n + (n == 1 && !outer->sym && !outer->module);
        known->id = id;
        lc->n++;
    }
    if (n > FEW) {
        free(lines);
        free(names);
    }
    return id;
}

/* A stack's locations once looked up: a process tree has the same stack in hundreds of
 * recordings, a sample each, and the lookups (a key printed and found per return address)
 * were most of the time. The ids do not change once given, so the profile is the same. */
typedef struct {
    const uint64_t *locs; /* the first sample's (not owned); NULL: not looked up yet */
    size_t n;
} seen_t;

/* One sample for the stack of s (read from pd), labelled with its pid unless pid_key < 0.
 * seen: NULL, or one entry per stack of pd and one for samples of no known stack, last. */
static int add_sample(ra_pb_t *b, const ra_model_t *pd, const ra_stat_t *s, const int64_t *values,
                      size_t nvalues, int64_t pid_key, seen_t *seen, loccache_t *lc)
{
    const ra_stack_t *st = ra_model_stack(pd, s->bt);
    seen_t *known = seen ? &seen[st ? (size_t)(st - pd->stacks) : pd->nstacks] : NULL;
    if (known && known->locs) {
        ra__pb_label_t pid = {pid_key, s->pid, 0};
        ra__pb_sample(b, known->locs, known->n, values, nvalues, &pid, pid_key >= 0);
        return 0;
    }
    /* Built here, copied by the sample; most stacks fit the buffer on the stack. */
    uint64_t few[256];
    size_t want = (st ? st->nframes : 0) + 1;
    uint64_t *locs = want <= sizeof few / sizeof *few ? few : malloc(want * sizeof *locs);
    if (!locs)
        return -1;
    size_t nlocs = 0;
    if (!st || st->nframes == 0) {
        ra_frame_t none = {.sym = "(no backtrace)"};
        const ra_frame_t *fr = &none;
        locs[nlocs++] = location_id(b, pd, &fr, 1, NULL);
    } else {
        /* Leaf first: the site's return address, then outward. */
        for (size_t i = 0; i < st->nframes;) {
            size_t j = i + 1;
            while (j < st->nframes && st->ip[j] == st->ip[i])
                j++;
            locs[nlocs++] = location_id(b, pd, &st->frames[i], j - i, lc);
            i = j;
        }
    }
    int oom = 0;
    for (size_t i = 0; i < nlocs; i++)
        oom |= locs[i] == 0; /* ids start at 1: 0 is out of memory */
    ra__pb_label_t pid = {pid_key, s->pid, 0};
    const uint64_t *kept = oom ? NULL : ra__pb_sample(b, locs, nlocs, values, nvalues, &pid,
                                                     pid_key >= 0);
    /* The sample's own copy serves the stack's next samples: it lives as long as the profile. */
    if (kept && known) {
        known->locs = kept;
        known->n = nlocs;
    }
    if (locs != few)
        free(locs);
    return oom ? -1 : 0;
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
        const ra_frame_t *fr = st->frames[i];
        fprintf(f, "%s\x1f%s\x1f%" PRId64 "%s", ra_frame_name(fr, buf, sizeof buf),
                fr->file ? fr->file : "", fr->line,
                i + 1 < st->nframes && st->ip[i + 1] == st->ip[i] ? "\x1f" : "\x1e");
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
    ra_pb_t *b = ra__pb_new();
    if (!b)
        return ra__fail(err, RA_E_NOMEM, "out of memory while building the profile");
    const char *def;
    if (peak) {
        ra__pb_type(b, "inuse_objects", "count");
        ra__pb_type(b, "inuse_space", "bytes");
        def = "inuse_space";
    } else {
        ra__pb_type(b, "alloc_objects", "count");
        ra__pb_type(b, "alloc_space", "bytes");
        ra__pb_type(b, "inuse_objects", "count");
        ra__pb_type(b, "inuse_space", "bytes");
        def = default_weight == RA_W_ALLOCATED     ? "alloc_space"
              : default_weight == RA_W_ALLOCATIONS ? "alloc_objects"
                                                   : "inuse_space";
    }
    /* A trace records every block; a profile-mode recording's values are already scaled up
     * from its samples, as in Go's heap profiles, and the period says how they were drawn. */
    int64_t interval = ra_model_sample_interval(pd);
    if (base && ra_model_sample_interval(base) > interval)
        interval = ra_model_sample_interval(base);
    int64_t first_wall = 0, longest = 0;
    for (size_t i = 0; i < pd->nprocs; i++) {
        if (pd->procs[i].start_wall_ns && (!first_wall || pd->procs[i].start_wall_ns < first_wall))
            first_wall = pd->procs[i].start_wall_ns;
        if (pd->procs[i].end_t > longest)
            longest = pd->procs[i].end_t;
    }
    ra__pb_period(b, def, interval ? interval : 1, first_wall, longest);
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
    ra_pb_comment(b, note);
    if (!base && pd->nstats && pd->stats[0].pid < 0) {
        char totals[160];
        snprintf(totals, sizeof totals,
                 "rheap: one sample per stack, added up over the %zu recordings (export with "
                 "--pid P for one process's, labelled with its pid)",
                 pd->nprocs);
        ra_pb_comment(b, totals);
    }
    if (interval) {
        char sampled[160];
        snprintf(sampled, sizeof sampled,
                 "rheap: profile mode: values are estimates from allocations sampled about once "
                 "every %" PRId64 " bytes",
                 interval);
        ra_pb_comment(b, sampled);
    }
    /* pprof takes the first mapping for the program ("File:" in its header): the executable of
     * the first process recorded (the root of the tree), when it was seen mapped. */
    const char *exe = pd->nprocs ? pd->procs[0].exe : NULL;
    for (size_t i = 0; exe && i < pd->nmodules; i++)
        if (!strcmp(pd->modules[i].path, exe)) {
            mapping_id(b, pd, exe);
            break;
        }
    int64_t pid_key = ra__pb_str(b, "pid");

    int oom = 0;
    if (!base) {
        seen_t *seen = calloc(pd->nstacks + 1, sizeof *seen);
        loccache_t lc = {.frames = pd->frames, .nframes = pd->nframes};
        lc.memo = calloc(pd->nframes + 1, sizeof *lc.memo);
        oom = !seen || !lc.memo;
        for (size_t i = 0; i < pd->nstats && !oom; i++) {
            int64_t v[4];
            size_t nv = stat_values(&pd->stats[i], peak, v);
            /* A stack's totals over the recordings (RA_MODEL_TOTALS) have no one pid. */
            if (v[0])
                oom = add_sample(b, pd, &pd->stats[i], v, nv, pd->stats[i].pid >= 0 ? pid_key : -1,
                                 seen, &lc) != 0;
        }
        free(seen);
        free(lc.slots);
        free(lc.memo);
    } else {
        /* Stacks are matched by their text, every process of a database adding into its side;
         * a sample carries no pid then. Its frames are read from the run that has the stack,
         * NEW first. Stacks the same in both leave no sample. */
        ra_smap_t keys = {0};
        diff_t *ents = NULL;
        size_t n = 0, cap = 0;
        if (diff_add(pd, peak, 1, &keys, &ents, &n, &cap) != 0 ||
            diff_add(base, peak, -1, &keys, &ents, &n, &cap) != 0)
            oom = 1;
        for (size_t i = 0; i < n && !oom; i++) {
            size_t nv = peak ? 2 : 4, k = 0;
            while (k < nv && ents[i].v[k] == 0)
                k++;
            if (k < nv)
                oom = add_sample(b, ents[i].pd, ents[i].s, ents[i].v, nv, -1, NULL, NULL) != 0;
        }
        free(ents);
        ra_smap_free(&keys);
    }
    if (oom) {
        ra_pb_free(b);
        return ra__fail(err, RA_E_NOMEM, "out of memory while building the profile");
    }
    return ra_pb_finish(b, out, outlen, err);
}
