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
 * Frames are symbolized here, on demand, by the host's symbolizer, each return address once per
 * profile; the analysis library encodes the profile (ra_pb_*, analysis/pbuild.c: one location
 * per return address with its inlined functions as lines, one mapping per module).
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rheap_analysis.h"

#include "collector.h"

/* What a profile being written knows: its frames' locations by (module, offset), so that each
 * return address is symbolized once per profile. The profile numbers locations 1, 2, ... in the
 * order it first meets them, as this map does. */
typedef struct {
    ra_pb_t *b;
    ra_smap_t seen;
    uint64_t nlocs;
    rheap_symbols_t *sym;
    int oom;
} writer_t;

static uint64_t location(writer_t *w, const rc__frame_t *f)
{
    char key[48];
    snprintf(key, sizeof key, "%d:%" PRIx64, f->module, f->offset);
    uint64_t id;
    int created;
    if (ra_smap_get(&w->seen, key, w->nlocs + 1, &id, &created) != 0) {
        w->oom = 1;
        return 0;
    }
    if (!created)
        return id;
    w->nlocs++;
    const rheap_symbol_line_t *sl = NULL;
    size_t n = rheap_symbols_resolve(w->sym, f->module, f->offset, &sl);
    if (n == 0) {
        w->oom = 1;
        return 0;
    }
    ra_pb_line_t lines[64];
    char names[64][64];
    if (n > 64)
        n = 64;
    const char *mod = f->module >= 0 ? rheap_symbols_module_path(w->sym, f->module) : NULL;
    for (size_t i = 0; i < n; i++) {
        lines[i].function = sl[i].function;
        lines[i].file = sl[i].file;
        lines[i].line = sl[i].line;
        if (!lines[i].function) {
            /* No symbol: the module and offset, as the database names such frames. */
            const char *base = mod ? strrchr(mod, '/') : NULL;
            if (mod)
                snprintf(names[i], sizeof names[i], "%s+0x%" PRIx64, base ? base + 1 : mod,
                         f->offset);
            else
                snprintf(names[i], sizeof names[i], "0x%" PRIx64, f->offset);
            lines[i].function = names[i];
        }
    }
    uint64_t given = ra_pb_location(w->b, f->module, mod, f->offset, lines, n);
    if (given != id)
        w->oom = 1; /* only out of memory breaks the numbering */
    return id;
}

rc__base_t *rc__base_take(const rc_host_t *h, const size_t *idx, size_t n, size_t *nbase)
{
    *nbase = 0;
    rc__base_t *b = calloc(n ? n : 1, sizeof *b);
    if (!b)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        rc_info_t in;
        rc_host_info(h, idx[i], &in);
        b[i].pid = in.pid;
        b[i].recording = in.recording;
        const rc__stack_t *stacks = rc__host_stacks(h, idx[i], &b[i].nstacks);
        b[i].v = malloc((b[i].nstacks ? b[i].nstacks : 1) * sizeof *b[i].v);
        if (!b[i].v) {
            rc__base_free(b, i);
            return NULL;
        }
        for (size_t k = 0; k < b[i].nstacks; k++)
            b[i].v[k] = stacks[k].v;
        *nbase = i + 1;
    }
    return b;
}

void rc__base_free(rc__base_t *b, size_t n)
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

rc_status_t rc__profile_write(rc_host_t *h, const size_t *idx, size_t n, int allocs,
                              const rc__base_t *base, size_t nbase, int64_t period_ns, FILE *out,
                              rc_err_t *err)
{
    uint64_t interval = 0;
    for (size_t i = 0; i < n; i++) {
        rc_info_t in;
        rc_host_info(h, idx[i], &in);
        if (in.interval > interval)
            interval = in.interval;
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t now = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    writer_t w = {0};
    w.sym = rc__host_symbols(h);
    w.b = ra_pb_create(allocs, interval ? (int64_t)interval : 1, base ? now - period_ns : now,
                       base ? period_ns : 0);
    if (!w.b)
        return rc__fail(err, RC_E_NOMEM, "out of memory");
    ra_pb_comment(w.b, base ? "rheap: the change over the period: values now minus at its start"
                            : "rheap: live heap now (inuse) and allocations since recording "
                              "began");
    if (interval) {
        char note[160];
        snprintf(note, sizeof note,
                 "rheap: profile mode: values are estimates from allocations sampled about once "
                 "every %" PRIu64 " bytes",
                 interval);
        ra_pb_comment(w.b, note);
    }
    uint64_t *locs = NULL;
    size_t caplocs = 0;
    for (size_t i = 0; i < n && !w.oom; i++) {
        rc_info_t in;
        rc_host_info(h, idx[i], &in);
        const rc__base_t *bs = NULL;
        for (size_t k = 0; base && k < nbase && !bs; k++)
            if (base[k].pid == in.pid && base[k].recording == in.recording)
                bs = &base[k];
        size_t nstacks;
        const rc__stack_t *stacks = rc__host_stacks(h, idx[i], &nstacks);
        for (size_t k = 0; k < nstacks && !w.oom; k++) {
            const rc__stack_t *st = &stacks[k];
            rc__vals_t v = st->v;
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
            if (st->nframes > caplocs) {
                uint64_t *grown = realloc(locs, st->nframes * sizeof *grown);
                if (!grown) {
                    w.oom = 1;
                    break;
                }
                locs = grown;
                caplocs = st->nframes;
            }
            for (uint32_t f = 0; f < st->nframes; f++)
                locs[f] = location(&w, &st->frames[f]);
            ra_pb_sample(w.b, locs, st->nframes, vals, in.pid, in.exe, rc__host_name(h));
        }
    }
    free(locs);
    ra_smap_free(&w.seen);
    if (w.oom) {
        ra_pb_free(w.b);
        return rc__fail(err, RC_E_NOMEM, "out of memory");
    }
    uint8_t *buf;
    size_t len;
    ra_err_t e;
    if (ra_pb_finish(w.b, &buf, &len, &e) != RA_OK)
        return rc__fail(err, RC_E_NOMEM, "%s", e.msg);
    size_t put = fwrite(buf, 1, len, out);
    free(buf);
    if (put != len)
        return rc__fail(err, RC_E_OUTPUT, "write failed");
    return RC_OK;
}

rc_status_t rc_profile_write(rc_host_t *h, const size_t *idx, size_t n, int allocs, FILE *out,
                             rc_err_t *err)
{
    return rc__profile_write(h, idx, n, allocs, NULL, 0, 0, out, err);
}
