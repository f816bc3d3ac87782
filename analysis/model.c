/*
 * model.c: the model the pictures are drawn from (`rheap export`, `rheap report --html`, `rheap
 * diff`): every read of the database behind them, and the weights and frame names they share.
 *
 * The pictures need, per recording of each process: per stack the blocks and bytes allocated,
 * never freed, live at the peak and temporary; the stacks' frames from the allocation site
 * outward; memory over time; markers, windows, threads and size classes.
 *
 * The converter writes all of that as summary tables (schema.sql's "Summaries":
 * recording_stats, stack_stats, stack_sizes, thread_stats, timeline, stacks), a few rows per
 * stack, and it is read from there; every database of this schema version has them. The slow
 * way, a pass over the rows of `allocations`, is the test oracle tests/visual/model_oracle.c,
 * which checks that the summaries hold what the rows give.
 */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "analysis.h"

/* ---- Strings: interned, so equal names share one pointer and are freed together ---- */

struct ra_pool {
    char **slots; /* open addressing over the strings */
    size_t cap, n;
    int oom;      /* a copy failed; ra_model_load reports it */
    /* The stacks' arrays of frame pointers and address numbers: a build's 200,000 stacks
     * have 6 million frames, and an allocation per stack cost more than reading them. */
    ra__arena_t arena;
};

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

/* The interned copy of s (NULL stays NULL). Out of memory gives NULL and sets p->oom, so the
 * loaders need not check every string. */
static const char *intern(struct ra_pool *p, const char *s)
{
    if (!s)
        return NULL;
    if ((p->n + 1) * 2 > p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 1024;
        char **slots = calloc(cap, sizeof *slots);
        if (!slots) {
            p->oom = 1;
            return NULL;
        }
        for (size_t i = 0; i < p->cap; i++)
            if (p->slots[i]) {
                size_t j = hash_str(p->slots[i]) & (cap - 1);
                while (slots[j])
                    j = (j + 1) & (cap - 1);
                slots[j] = p->slots[i];
            }
        free(p->slots);
        p->slots = slots;
        p->cap = cap;
    }
    size_t j = hash_str(s) & (p->cap - 1);
    while (p->slots[j]) {
        if (!strcmp(p->slots[j], s))
            return p->slots[j];
        j = (j + 1) & (p->cap - 1);
    }
    p->slots[j] = strdup(s);
    if (!p->slots[j]) {
        p->oom = 1;
        return NULL;
    }
    p->n++;
    return p->slots[j];
}

static void pool_free(struct ra_pool *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->cap; i++)
        free(p->slots[i]);
    free(p->slots);
    ra__arena_free(&p->arena);
    free(p);
}

static const char *col_text(sqlite3_stmt *st, int i)
{
    return (const char *)sqlite3_column_text(st, i);
}

/* ---- A hash from three integers to an index into the caller's array ---- */

typedef struct {
    int64_t *keys; /* 3 per slot */
    size_t *idx;   /* index + 1; 0: empty slot */
    size_t cap, n;
} map3_t;

static uint64_t hash3(int64_t a, int64_t b, int64_t c)
{
    uint64_t h = (uint64_t)a * 0x9E3779B97F4A7C15ULL;
    h ^= (uint64_t)b + 0x632BE59BD9B4E019ULL + (h << 6) + (h >> 2);
    h ^= (uint64_t)c * 0xC2B2AE3D27D4EB4FULL + (h << 6) + (h >> 2);
    return h ^ (h >> 29);
}

/* The index stored for (a, b, c); when absent, stores `next` and sets *created. SIZE_MAX when
 * out of memory. */
static size_t map3_get(map3_t *m, int64_t a, int64_t b, int64_t c, size_t next, int *created)
{
    *created = 0;
    if ((m->n + 1) * 2 > m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 256;
        int64_t *keys = malloc(cap * 3 * sizeof *keys);
        size_t *idx = calloc(cap, sizeof *idx);
        if (!keys || !idx) {
            free(keys);
            free(idx);
            return SIZE_MAX;
        }
        for (size_t i = 0; i < m->cap; i++)
            if (m->idx[i]) {
                int64_t *k = &m->keys[3 * i];
                size_t j = hash3(k[0], k[1], k[2]) & (cap - 1);
                while (idx[j])
                    j = (j + 1) & (cap - 1);
                memcpy(&keys[3 * j], k, 3 * sizeof *k);
                idx[j] = m->idx[i];
            }
        free(m->keys);
        free(m->idx);
        m->keys = keys;
        m->idx = idx;
        m->cap = cap;
    }
    size_t j = hash3(a, b, c) & (m->cap - 1);
    while (m->idx[j]) {
        int64_t *k = &m->keys[3 * j];
        if (k[0] == a && k[1] == b && k[2] == c)
            return m->idx[j] - 1;
        j = (j + 1) & (m->cap - 1);
    }
    m->keys[3 * j] = a;
    m->keys[3 * j + 1] = b;
    m->keys[3 * j + 2] = c;
    m->idx[j] = next + 1;
    m->n++;
    *created = 1;
    return next;
}

static void map3_free(map3_t *m)
{
    free(m->keys);
    free(m->idx);
    memset(m, 0, sizeof *m);
}

/* ---- Statements ---- */

typedef struct {
    sqlite3 *db;
    ra_err_t *err;
    ra_status_t status; /* of the failure said in err */
    int64_t pid;
} ctx_t;

static sqlite3_stmt *prepare(ctx_t *c, const char *sql)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(c->db, sql, -1, &st, NULL) != SQLITE_OK) {
        c->status = ra__fail(c->err, RA_E_INPUT, "%s", sqlite3_errmsg(c->db));
        sqlite3_finalize(st);
        return NULL;
    }
    /* ?1 is the process, NULL for every one (the queries read it as coalesce(?1, pid)). */
    if (sqlite3_bind_parameter_count(st) >= 1) {
        if (c->pid >= 0)
            sqlite3_bind_int64(st, 1, c->pid);
        else
            sqlite3_bind_null(st, 1);
    }
    return st;
}

/* Finishes a statement's loop: 0 when it ran to the end, else -1 with the message. */
static int finish(ctx_t *c, sqlite3_stmt *st, int rc)
{
    if (rc != SQLITE_DONE) {
        c->status = rc == SQLITE_ROW ? ra__fail(c->err, RA_E_NOMEM, "out of memory")
                                     : ra__fail(c->err, RA_E_INPUT, "%s", sqlite3_errmsg(c->db));
        sqlite3_finalize(st);
        return -1;
    }
    sqlite3_finalize(st);
    return 0;
}

static int oom(ctx_t *c)
{
    c->status = ra__fail(c->err, RA_E_NOMEM, "out of memory");
    return -1;
}

/* ---- Processes, markers, windows, modules ---- */

static int load_procs(ctx_t *c, ra_model_t *pd)
{
    /* Databases of schema version 2 and before have no sample_interval: trace mode. */
    sqlite3_stmt *st = NULL;
    int sampled = sqlite3_prepare_v2(c->db, "SELECT sample_interval FROM processes", -1, &st,
                                     NULL) == SQLITE_OK;
    sqlite3_finalize(st);
    st = prepare(c, sampled ?
        "SELECT pid, recording, coalesce(ppid, -1), exe, cmdline, coalesce(start_wall_ns, 0),\n"
        "       coalesce(sample_interval, 0)\n"
        "FROM processes WHERE pid = coalesce(?1, pid) ORDER BY start_ns, pid, recording" :
        "SELECT pid, recording, coalesce(ppid, -1), exe, cmdline, coalesce(start_wall_ns, 0), 0\n"
        "FROM processes WHERE pid = coalesce(?1, pid) ORDER BY start_ns, pid, recording");
    if (!st)
        return -1;
    size_t cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (rheap_grow(&pd->procs, &cap, pd->nprocs, sizeof *pd->procs, 64) != 0)
            break;
        ra_proc_t *p = &pd->procs[pd->nprocs++];
        memset(p, 0, sizeof *p);
        p->pid = sqlite3_column_int64(st, 0);
        p->recording = sqlite3_column_int64(st, 1);
        p->ppid = sqlite3_column_int64(st, 2);
        p->exe = (char *)intern(pd->pool, col_text(st, 3));
        p->cmdline = (char *)intern(pd->pool, col_text(st, 4));
        p->start_wall_ns = sqlite3_column_int64(st, 5);
        p->sample_interval = sqlite3_column_int64(st, 6);
        p->peak_t = -1;
        p->until_exit = 1;
    }
    return finish(c, st, rc);
}

static int load_marks(ctx_t *c, ra_model_t *pd)
{
    sqlite3_stmt *st = prepare(c, "SELECT pid, recording, t, label FROM markers\n"
                                  "WHERE pid = coalesce(?1, pid) ORDER BY pid, recording, t");
    if (!st)
        return -1;
    size_t cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (rheap_grow(&pd->markers, &cap, pd->nmarkers, sizeof *pd->markers, 64) != 0)
            break;
        ra_marker_t *m = &pd->markers[pd->nmarkers++];
        m->pid = sqlite3_column_int64(st, 0);
        m->recording = sqlite3_column_int64(st, 1);
        m->t = sqlite3_column_int64(st, 2);
        m->label = (char *)intern(pd->pool, col_text(st, 3));
    }
    if (finish(c, st, rc) != 0)
        return -1;

    st = prepare(c, "SELECT pid, recording, on_t, coalesce(off_t, -1), on_how, off_how FROM windows\n"
                    "WHERE pid = coalesce(?1, pid) ORDER BY pid, recording, on_t");
    if (!st)
        return -1;
    cap = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (rheap_grow(&pd->windows, &cap, pd->nwindows, sizeof *pd->windows, 64) != 0)
            break;
        ra_window_t *w = &pd->windows[pd->nwindows++];
        w->pid = sqlite3_column_int64(st, 0);
        w->recording = sqlite3_column_int64(st, 1);
        w->on_t = sqlite3_column_int64(st, 2);
        w->off_t = sqlite3_column_int64(st, 3);
        w->on_how = (char *)intern(pd->pool, col_text(st, 4));
        w->off_how = (char *)intern(pd->pool, col_text(st, 5));
    }
    if (finish(c, st, rc) != 0)
        return -1;

    st = prepare(c, "SELECT path, max(build_id) FROM modules GROUP BY path ORDER BY path");
    if (!st)
        return -1;
    cap = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (rheap_grow(&pd->modules, &cap, pd->nmodules, sizeof *pd->modules, 64) != 0)
            break;
        ra_module_t *m = &pd->modules[pd->nmodules++];
        m->path = (char *)intern(pd->pool, col_text(st, 0));
        m->build_id = (char *)intern(pd->pool, col_text(st, 1));
    }
    return finish(c, st, rc);
}

/* The procs by (pid, recording, index), for ra_model_proc: a process tree has thousands of
 * recordings and millions of per-stack rows, each looking its recording up. */
struct ra_proc_key {
    int64_t pid, recording;
    size_t idx;
};

static int cmp_proc_key(const void *a, const void *b)
{
    const struct ra_proc_key *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->recording != y->recording)
        return x->recording < y->recording ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int order_procs(ra_model_t *pd)
{
    pd->proc_order = malloc((pd->nprocs + 1) * sizeof *pd->proc_order);
    if (!pd->proc_order)
        return -1;
    for (size_t i = 0; i < pd->nprocs; i++)
        pd->proc_order[i] = (struct ra_proc_key){pd->procs[i].pid, pd->procs[i].recording, i};
    if (pd->nprocs)
        qsort(pd->proc_order, pd->nprocs, sizeof *pd->proc_order, cmp_proc_key);
    return 0;
}

/* The first proc of (pid, recording) in the model's order, SIZE_MAX when none. */
static size_t proc_index(const ra_model_t *pd, int64_t pid, int64_t recording)
{
    if (!pd->proc_order) { /* a model put together by hand */
        for (size_t i = 0; i < pd->nprocs; i++)
            if (pd->procs[i].pid == pid && pd->procs[i].recording == recording)
                return i;
        return SIZE_MAX;
    }
    size_t lo = 0, hi = pd->nprocs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct ra_proc_key *k = &pd->proc_order[mid];
        if (k->pid < pid || (k->pid == pid && k->recording < recording))
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == pd->nprocs)
        return SIZE_MAX;
    const struct ra_proc_key *k = &pd->proc_order[lo];
    return k->pid == pid && k->recording == recording ? k->idx : SIZE_MAX;
}

const ra_proc_t *ra_model_proc(const ra_model_t *pd, int64_t pid, int64_t recording)
{
    size_t i = proc_index(pd, pid, recording);
    return i == SIZE_MAX ? NULL : &pd->procs[i];
}

/* Markers and windows end a recording too: a window that closes after the last event still
 * belongs on its timeline. */
static void extend_ends(ra_model_t *pd)
{
    for (size_t i = 0; i < pd->nmarkers; i++) {
        size_t p = proc_index(pd, pd->markers[i].pid, pd->markers[i].recording);
        if (p != SIZE_MAX && pd->markers[i].t > pd->procs[p].end_t)
            pd->procs[p].end_t = pd->markers[i].t;
    }
    for (size_t i = 0; i < pd->nwindows; i++) {
        size_t p = proc_index(pd, pd->windows[i].pid, pd->windows[i].recording);
        int64_t t = pd->windows[i].off_t >= 0 ? pd->windows[i].off_t : pd->windows[i].on_t;
        if (p != SIZE_MAX && t > pd->procs[p].end_t)
            pd->procs[p].end_t = t;
    }
}

static int cmp_stat(const void *a, const void *b)
{
    const ra_stat_t *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->recording != y->recording)
        return x->recording < y->recording ? -1 : 1;
    return x->bt < y->bt ? -1 : x->bt > y->bt;
}

/* A run of stats of one recording in bt order, as the converter writes a recording's. */
typedef struct {
    int64_t pid, recording;
    size_t from, n;
} run_t;

static int cmp_run(const void *a, const void *b)
{
    const run_t *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return x->recording < y->recording ? -1 : x->recording > y->recording;
}

/* Sorts stats[from, n) by pid, recording, bt, stats[0, from) being sorted already (0, or -1
 * when out of memory). */
static int sort_stats_from(ra_model_t *pd, size_t from)
{
    ra_stat_t *st = pd->stats + from;
    size_t n = pd->nstats - from;
    run_t *runs = NULL;
    size_t nruns = 0, cap = 0, sorted = 1;
    for (size_t i = 0; i < n && sorted; i++) {
        const ra_stat_t *s = &st[i];
        if (i && s[-1].pid == s->pid && s[-1].recording == s->recording) {
            sorted = s[-1].bt < s->bt;
            runs[nruns - 1].n++;
            continue;
        }
        if (rheap_grow(&runs, &cap, nruns, sizeof *runs, 64) != 0) {
            free(runs);
            return -1;
        }
        runs[nruns++] = (run_t){s->pid, s->recording, i, 1};
    }
    /* Already in order (the totals over the tree come so): nothing to move. */
    int in_order = sorted;
    for (size_t r = 1; r < nruns && in_order; r++)
        in_order = cmp_run(&runs[r - 1], &runs[r]) < 0;
    ra_stat_t *to = sorted && !in_order ? malloc(n * sizeof *to) : NULL;
    if (to) {
        qsort(runs, nruns, sizeof *runs, cmp_run);
        /* Two runs of one recording: not the converter's order after all. */
        for (size_t r = 1; r < nruns && sorted; r++)
            sorted = cmp_run(&runs[r - 1], &runs[r]) != 0;
    }
    if (in_order) {
        /* as read */
    } else if (to && sorted) {
        size_t k = 0;
        for (size_t r = 0; r < nruns; r++) {
            memcpy(to + k, st + runs[r].from, runs[r].n * sizeof *to);
            k += runs[r].n;
        }
        memcpy(st, to, n * sizeof *to);
    } else {
        qsort(st, n, sizeof *st, cmp_stat);
    }
    free(to);
    free(runs);
    /* The part before `from` was sorted; the whole is, unless the two overlap. */
    if (from && n && cmp_stat(&pd->stats[from - 1], st) > 0)
        qsort(pd->stats, pd->nstats, sizeof *pd->stats, cmp_stat);
    return 0;
}

/* Sorts the stats by pid, recording, bt. The converter writes each recording's rows together
 * in bt order, so putting the recordings in order is enough: a copy, where sorting a process
 * tree's millions of rows one by one took most of a second. Rows in any other order are
 * sorted one by one. 0, or -1 when out of memory. */
static int sort_stats(ra_model_t *pd)
{
    return sort_stats_from(pd, 0);
}

/* ---- Stacks from the allocation site outward ---- */

/* The distinct frames (unique_frames), read once, before the first stack: ids must run 1 .. n,
 * as the converter writes them, since the stacks' lists index them. */
static ra_status_t read_unique_frames(sqlite3 *db, ra_model_t *pd, ra_err_t *err)
{
    if (pd->frames)
        return RA_OK;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db,
                           "SELECT id, sym, file, coalesce(line, 0), module, offset, inlined\n"
                           "FROM unique_frames ORDER BY id",
                           -1, &st, NULL) != SQLITE_OK)
        return ra__fail(err, RA_E_INPUT, "%s", sqlite3_errmsg(db));
    size_t cap = 0;
    int rc;
    const char *last_module = NULL;
    ra_status_t status = RA_OK;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (sqlite3_column_int64(st, 0) != (int64_t)pd->nframes + 1) {
            status = ra__fail(err, RA_E_INPUT,
                              "table unique_frames: id %" PRId64 " where %zu was expected (ids "
                              "run from 1 without a gap); convert the recording again",
                              (int64_t)sqlite3_column_int64(st, 0), pd->nframes + 1);
            break;
        }
        if (rheap_grow(&pd->frames, &cap, pd->nframes, sizeof *pd->frames, 1024) != 0)
            break;
        ra_frame_t *f = &pd->frames[pd->nframes++];
        f->sym = intern(pd->pool, col_text(st, 1));
        f->file = intern(pd->pool, col_text(st, 2));
        f->line = sqlite3_column_int64(st, 3);
        /* Most frames of a module come together, in the order they were met. */
        const char *m = col_text(st, 4);
        if (m && (!last_module || strcmp(last_module, m)))
            last_module = intern(pd->pool, m);
        f->module = m ? last_module : NULL;
        f->offset = sqlite3_column_int64(st, 5);
        f->inlined = sqlite3_column_int(st, 6);
    }
    sqlite3_finalize(st);
    if (status != RA_OK)
        return status;
    if (rc == SQLITE_ROW || pd->pool->oom)
        return ra__fail(err, RA_E_NOMEM, "out of memory");
    if (rc != SQLITE_DONE)
        return ra__fail(err, RA_E_INPUT, "%s", sqlite3_errmsg(db));
    if (!pd->frames && !(pd->frames = malloc(sizeof *pd->frames)))
        return ra__fail(err, RA_E_NOMEM, "out of memory");
    return RA_OK;
}

static ra_status_t add_stack_of(ra_model_t *pd, int64_t id, int64_t site, const char *t, int len,
                                size_t *cap, ra_err_t *err);

/* The stack in the current row of st (STACK_COLS) appended to the model's stacks. */
static ra_status_t add_stack(ra_model_t *pd, sqlite3_stmt *st, size_t *cap, ra_err_t *err)
{
    const char *t = col_text(st, 2);
    return add_stack_of(pd, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1), t,
                        sqlite3_column_bytes(st, 2), cap, err);
}

/* The columns a stack is read from: its id, where its site is, its list of frames. */
#define STACK_COLS                                                                           \
    "SELECT k.id, k.site_frame, f.frames\n"                                                  \
    "FROM stacks AS k JOIN stack_frames AS f ON f.id = k.id\n"

/* The stack in the current row of st (STACK_COLS) appended to the model's stacks, its frames
 * from the site outward: the list is a JSON array of unique_frames ids, negative for a frame
 * of the same return address as the one before. RA_OK, or the failure in err. */
static ra_status_t add_stack_of(ra_model_t *pd, int64_t id, int64_t site, const char *t, int len,
                                size_t *cap, ra_err_t *err)
{
    if (rheap_grow(&pd->stacks, cap, pd->nstacks, sizeof *pd->stacks, 1024) != 0)
        return ra__fail(err, RA_E_NOMEM, "out of memory");
    /* A frame takes two characters at least ("1,"): room for every frame of the list. */
    size_t most = (size_t)len / 2 + 1;
    const ra_frame_t **frames = ra__arena_alloc(&pd->pool->arena, most * sizeof *frames);
    uint16_t *ip = ra__arena_alloc(&pd->pool->arena, most * sizeof *ip);
    if (!frames || !ip)
        return ra__fail(err, RA_E_NOMEM, "out of memory");
    size_t n = 0, at = 0;
    uint16_t addr = 0;
    const char *p = t ? t : "";
    if (*p++ != '[')
        goto bad;
    while (*p != ']') {
        int neg = *p == '-';
        p += neg;
        if (*p < '0' || *p > '9')
            goto bad;
        uint64_t v = 0;
        while (*p >= '0' && *p <= '9' && v <= pd->nframes)
            v = v * 10 + (uint64_t)(*p++ - '0');
        if (v == 0 || v > pd->nframes || (neg && at == 0) || (*p != ',' && *p != ']'))
            goto bad;
        if (at > 0 && !neg)
            addr++;
        if ((int64_t)at >= site) {
            frames[n] = &pd->frames[v - 1];
            ip[n++] = addr;
        }
        at++;
        if (*p == ',' && p[1] != ']')
            p++;
        else if (*p == ',')
            goto bad;
    }
    if (p[1] != 0)
        goto bad;
    ra_stack_t *s = &pd->stacks[pd->nstacks++];
    s->bt = id;
    s->nframes = n;
    s->frames = frames;
    s->ip = ip;
    return RA_OK;
bad:
    return ra__fail(err, RA_E_INPUT,
                    "table stack_frames: stack %" PRId64 ": expected a JSON array of ids of "
                    "unique_frames (1 to %zu), got '%.60s'; convert the recording again",
                    id, pd->nframes, t ? t : "NULL");
}

/* The stacks bts[0, n) (ascending; NULL: every stack), each above the last one the model
 * has, by one pass over stacks and stack_frames side by side in id order: a join sought each
 * stack's row of stack_frames by its id, a tenth of an export of every stack. */
static ra_status_t scan_stacks(sqlite3 *db, ra_model_t *pd, const int64_t *bts, size_t n,
                               ra_err_t *err)
{
    sqlite3_stmt *a = NULL, *b = NULL;
    if (sqlite3_prepare_v2(db, "SELECT id, site_frame FROM stacks ORDER BY id", -1, &a, NULL) !=
            SQLITE_OK ||
        sqlite3_prepare_v2(db, "SELECT id, frames FROM stack_frames ORDER BY id", -1, &b, NULL) !=
            SQLITE_OK) {
        ra_status_t rc = ra__fail(err, RA_E_INPUT, "%s", sqlite3_errmsg(db));
        sqlite3_finalize(a);
        sqlite3_finalize(b);
        return rc;
    }
    size_t cap = pd->nstacks, want = 0;
    int64_t floor = pd->nstacks ? pd->stacks[pd->nstacks - 1].bt : INT64_MIN;
    ra_status_t status = RA_OK;
    int ra = SQLITE_ROW, rb = sqlite3_step(b);
    while (status == RA_OK && rb == SQLITE_ROW && (ra = sqlite3_step(a)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(a, 0);
        if (bts) {
            while (want < n && bts[want] < id)
                want++;
            if (want == n)
                break;
            if (bts[want] != id)
                continue;
        }
        if (id <= floor)
            continue;
        while (rb == SQLITE_ROW && sqlite3_column_int64(b, 0) < id)
            rb = sqlite3_step(b);
        if (rb == SQLITE_ROW && sqlite3_column_int64(b, 0) == id)
            status = add_stack_of(pd, id, sqlite3_column_int64(a, 1), col_text(b, 1),
                                  sqlite3_column_bytes(b, 1), &cap, err);
    }
    if (status == RA_OK && ((ra != SQLITE_ROW && ra != SQLITE_DONE) ||
                            (rb != SQLITE_ROW && rb != SQLITE_DONE)))
        status = ra__fail(err, RA_E_INPUT, "%s", sqlite3_errmsg(db));
    sqlite3_finalize(a);
    sqlite3_finalize(b);
    if (status == RA_OK && pd->pool->oom)
        status = ra__fail(err, RA_E_NOMEM, "out of memory");
    return status;
}

static int load_stacks(ctx_t *c, ra_model_t *pd)
{
    ra_status_t rc = read_unique_frames(c->db, pd, c->err);
    if (rc == RA_OK)
        rc = scan_stacks(c->db, pd, NULL, 0, c->err);
    if (rc != RA_OK) {
        c->status = rc;
        return -1;
    }
    return 0;
}

ra_status_t ra_model_frames(sqlite3 *db, ra_model_t *pd, const int64_t *bts, size_t n,
                            ra_err_t *err)
{
    ra_status_t status = read_unique_frames(db, pd, err);
    if (status != RA_OK)
        return status;
    sqlite3_stmt *st;
    /* One seek per stack when the stacks a picture shows are a share of the database's; for
     * more than half of them, one pass over every stack's row in id order (scan_stacks), the
     * wanted ids met in step. The distinct ids count: a page's list has a stack once per
     * recording that shows it. */
    size_t distinct = 0;
    for (size_t i = 0; i < n; i++)
        distinct += i == 0 || bts[i] != bts[i - 1];
    int64_t all = 0;
    if (distinct > 1000 &&
        sqlite3_prepare_v2(db, "SELECT count(*) FROM stacks", -1, &st, NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW)
            all = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
    if (distinct > 1000 && (int64_t)distinct * 2 > all)
        return scan_stacks(db, pd, bts, n, err);
    if (sqlite3_prepare_v2(db, STACK_COLS "WHERE k.id = ?1", -1, &st, NULL) != SQLITE_OK)
        return ra__fail(err, RA_E_INPUT, "%s", sqlite3_errmsg(db));
    size_t cap = pd->nstacks; /* the array holds exactly what it has (none, after RA_MODEL_FRAMES_LATER) */
    int rc = SQLITE_DONE;
    int64_t prev = INT64_MIN;
    for (size_t i = 0; status == RA_OK && i < n && rc == SQLITE_DONE; i++) {
        /* In order, each once: the stacks stay sorted by id for ra_model_stack. */
        if (bts[i] <= prev || (pd->nstacks && bts[i] <= pd->stacks[pd->nstacks - 1].bt))
            continue;
        prev = bts[i];
        sqlite3_bind_int64(st, 1, bts[i]);
        while (status == RA_OK && (rc = sqlite3_step(st)) == SQLITE_ROW)
            status = add_stack(pd, st, &cap, err);
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    if (status != RA_OK)
        return status;
    if (pd->pool->oom || rc == SQLITE_ROW)
        return ra__fail(err, RA_E_NOMEM, "out of memory");
    if (rc != SQLITE_DONE)
        return ra__fail(err, RA_E_INPUT, "%s", sqlite3_errmsg(db));
    return RA_OK;
}

ra_status_t ra_model_skip(sqlite3 *db, ra_model_t *pd, const char *glob, ra_err_t *err)
{
    if (!glob)
        return RA_OK;
    /* The site with :skip, by the rule of the canned queries (leaks.sql's `site`), less the
     * site the stack was loaded from (load_stacks): how many frames to drop. */
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db,
            "WITH k(id, frame_no) AS (\n"
            "    SELECT id, coalesce(min(frame_no) FILTER (\n"
            "               WHERE NOT plumbing AND NOT coalesce(name GLOB ?1, 0)), 0)\n"
            "    FROM frames GROUP BY id)\n"
            "SELECT s.id, s.site_frame - o.site_frame FROM k\n"
            "JOIN frame_sites AS s ON s.id = k.id AND s.frame_no = k.frame_no\n"
            "JOIN stacks AS o ON o.id = k.id\n"
            "WHERE s.site_frame > o.site_frame",
            -1, &st, NULL) != SQLITE_OK) {
        ra_status_t rc = ra__fail(err, RA_E_INPUT, "%s", sqlite3_errmsg(db));
        sqlite3_finalize(st);
        return rc;
    }
    sqlite3_bind_text(st, 1, glob, -1, SQLITE_STATIC);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        ra_stack_t *s = (ra_stack_t *)ra_model_stack(pd, sqlite3_column_int64(st, 0));
        int64_t drop = sqlite3_column_int64(st, 1);
        if (!s || drop <= 0 || (size_t)drop >= s->nframes)
            continue;
        /* The arrays are the model's: the stack starts further in them. */
        s->frames += drop;
        s->ip += drop;
        s->nframes -= (size_t)drop;
    }
    ra_status_t status = rc == SQLITE_DONE ? RA_OK
                                           : ra__fail(err, RA_E_INPUT, "%s", sqlite3_errmsg(db));
    sqlite3_finalize(st);
    return status;
}

static int cmp_stack(const void *a, const void *b)
{
    const ra_stack_t *x = a, *y = b;
    return x->bt < y->bt ? -1 : x->bt > y->bt;
}

const ra_stack_t *ra_model_stack(const ra_model_t *pd, int64_t bt)
{
    ra_stack_t key = {.bt = bt};
    return bsearch(&key, pd->stacks, pd->nstacks, sizeof *pd->stacks, cmp_stack);
}

static int cmp_module(const void *a, const void *b)
{
    return strcmp(((const ra_module_t *)a)->path, ((const ra_module_t *)b)->path);
}

const char *ra_model_build_id(const ra_model_t *pd, const char *path)
{
    if (!path)
        return NULL;
    ra_module_t key = {.path = (char *)path};
    const ra_module_t *m =
        bsearch(&key, pd->modules, pd->nmodules, sizeof *pd->modules, cmp_module);
    return m ? m->build_id : NULL;
}

static int cmp_thread(const void *a, const void *b)
{
    const ra_thread_t *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->recording != y->recording)
        return x->recording < y->recording ? -1 : 1;
    return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static int cmp_size(const void *a, const void *b)
{
    const ra_sizeclass_t *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->recording != y->recording)
        return x->recording < y->recording ? -1 : 1;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* ---- The summary tables (schema.sql's "Summaries"), when the database has them ---- */

static int has_summaries(sqlite3 *db)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db,
                           "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name IN "
                           "('stacks', 'stack_stats', 'stack_sizes', 'thread_stats', 'timeline', "
                           "'recording_stats')", -1, &st, NULL) != SQLITE_OK)
        return 0;
    int n = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
    sqlite3_finalize(st);
    return n == 6;
}

static int sum_procs(ctx_t *c, ra_model_t *pd)
{
    sqlite3_stmt *st = prepare(c,
        "SELECT pid, recording, allocs, alloc_bytes, frees, leaked_blocks, leaked_bytes, end_ns,\n"
        "       peak_ns, peak_bytes, peak_blocks\n"
        "FROM recording_stats WHERE pid = coalesce(?1, pid)");
    if (!st)
        return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        size_t i = proc_index(pd, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1));
        if (i == SIZE_MAX)
            continue;
        ra_proc_t *p = &pd->procs[i];
        p->allocs = sqlite3_column_int64(st, 2);
        p->bytes = sqlite3_column_int64(st, 3);
        p->frees = sqlite3_column_int64(st, 4);
        p->leaked_blocks = sqlite3_column_int64(st, 5);
        p->leaked_bytes = sqlite3_column_int64(st, 6);
        p->end_t = sqlite3_column_int64(st, 7);
        /* A recording without a block has no peak. */
        p->peak_t = p->allocs ? sqlite3_column_int64(st, 8) : -1;
        p->peak_bytes = sqlite3_column_int64(st, 9);
        p->peak_blocks = sqlite3_column_int64(st, 10);
    }
    return finish(c, st, rc);
}

/* The stat in the current row of st, whose columns are pid, recording, bt, then blocks, bytes
 * and the leaked, stopped, peak and temporary blocks and bytes. */
static void read_stat(sqlite3_stmt *st, ra_stat_t *s)
{
    memset(s, 0, sizeof *s);
    s->pid = sqlite3_column_int64(st, 0);
    s->recording = sqlite3_column_int64(st, 1);
    s->bt = sqlite3_column_int64(st, 2);
    s->blocks = sqlite3_column_int64(st, 3);
    s->bytes = sqlite3_column_int64(st, 4);
    s->leaked_blocks = sqlite3_column_int64(st, 5);
    s->leaked_bytes = sqlite3_column_int64(st, 6);
    s->stopped_blocks = sqlite3_column_int64(st, 7);
    s->stopped_bytes = sqlite3_column_int64(st, 8);
    s->peak_blocks = sqlite3_column_int64(st, 9);
    s->peak_bytes = sqlite3_column_int64(st, 10);
    s->temporary_blocks = sqlite3_column_int64(st, 11);
    s->temporary_bytes = sqlite3_column_int64(st, 12);
}

/* Reads stats from sql, whose columns are those of read_stat. */
static int read_stats_of(ctx_t *c, ra_model_t *pd, const char *sql, const unsigned char *which)
{
    sqlite3_stmt *st = prepare(c, sql);
    if (!st)
        return -1;
    size_t cap = pd->nstats;
    int rc;
    /* which: only the rows of recordings p with which[p], looked up once per run of rows. */
    int64_t last_pid = INT64_MIN, last_rec = INT64_MIN;
    int wanted = 1;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t pid = sqlite3_column_int64(st, 0), rec = sqlite3_column_int64(st, 1);
        if (which && (pid != last_pid || rec != last_rec)) {
            size_t p = proc_index(pd, pid, rec);
            wanted = p != SIZE_MAX && which[p];
            last_pid = pid;
            last_rec = rec;
        }
        if (!wanted)
            continue;
        if (rheap_grow(&pd->stats, &cap, pd->nstats, sizeof *pd->stats, 64) != 0)
            break;
        read_stat(st, &pd->stats[pd->nstats++]);
    }
    return finish(c, st, rc);
}

static int read_stats(ctx_t *c, ra_model_t *pd, const char *sql)
{
    return read_stats_of(c, pd, sql, NULL);
}

/* Every recording's rows per stack (stack_stats); windows are split apart later. */
static int sum_stats(ctx_t *c, ra_model_t *pd)
{
    return read_stats(c, pd,
        "SELECT pid, recording, coalesce(bt, -1), blocks, bytes, leaked_blocks, leaked_bytes,\n"
        "       0, 0, peak_blocks, peak_bytes, temporary_blocks, temporary_bytes\n"
        "FROM stack_stats WHERE pid = coalesce(?1, pid)");
}

/* Every stack's rows over the recordings, as the converter added them up (stack_totals): one
 * stat per stack, pid and recording -1, leaked and stopped already apart. */
static int sum_totals(ctx_t *c, ra_model_t *pd)
{
    return read_stats(c, pd,
        "SELECT -1, -1, coalesce(bt, -1), blocks, bytes, leaked_blocks, leaked_bytes,\n"
        "       stopped_blocks, stopped_bytes, peak_blocks, peak_bytes, temporary_blocks,\n"
        "       temporary_bytes\n"
        "FROM stack_totals");
}

/* The per-recording stats added up per stack, as sum_totals reads them, for a database that
 * predates stack_totals. After split_windows. */
static void add_up_stats(ra_model_t *pd)
{
    for (size_t i = 0; i < pd->nstats; i++)
        pd->stats[i].pid = pd->stats[i].recording = -1;
    if (pd->nstats)
        qsort(pd->stats, pd->nstats, sizeof *pd->stats, cmp_stat);
    size_t n = 0;
    for (size_t i = 0; i < pd->nstats; i++) {
        const ra_stat_t *s = &pd->stats[i];
        ra_stat_t *t = n ? &pd->stats[n - 1] : NULL;
        if (!t || t->bt != s->bt) {
            pd->stats[n++] = *s;
            continue;
        }
        t->blocks += s->blocks;
        t->bytes += s->bytes;
        t->leaked_blocks += s->leaked_blocks;
        t->leaked_bytes += s->leaked_bytes;
        t->stopped_blocks += s->stopped_blocks;
        t->stopped_bytes += s->stopped_bytes;
        t->peak_blocks += s->peak_blocks;
        t->peak_bytes += s->peak_bytes;
        t->temporary_blocks += s->temporary_blocks;
        t->temporary_bytes += s->temporary_bytes;
        for (int d = 0; d < RA_LIFE_DECADES; d++) {
            t->life_blocks[d] += s->life_blocks[d];
            t->life_bytes[d] += s->life_bytes[d];
        }
    }
    pd->nstats = n;
}

/* Each stack's freed blocks by decade of lifetime, into the stats (sorted by then). The
 * converter writes a recording's rows in the stats' order, so each row's stat is found by
 * stepping on from the last one (no more steps in all than stats); a row behind is looked up. */
static int sum_lifetimes(ctx_t *c, ra_model_t *pd, int totals)
{
    size_t at = 0;
    /* With the stats of stack_totals, the lifetimes the converter added up the same way. */
    sqlite3_stmt *st = prepare(c, totals ?
        "SELECT -1, -1, coalesce(bt, -1), decade, blocks, bytes FROM stack_lifetime_totals" :
        "SELECT pid, recording, coalesce(bt, -1), decade, blocks, bytes\n"
        "FROM stack_lifetimes WHERE pid = coalesce(?1, pid)");
    if (!st)
        return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        ra_stat_t key = {.pid = sqlite3_column_int64(st, 0),
                         .recording = sqlite3_column_int64(st, 1),
                         .bt = sqlite3_column_int64(st, 2)};
        int64_t d = sqlite3_column_int64(st, 3);
        while (at < pd->nstats && cmp_stat(&pd->stats[at], &key) < 0)
            at++;
        ra_stat_t *s = NULL;
        if (at < pd->nstats && cmp_stat(&pd->stats[at], &key) == 0)
            s = &pd->stats[at];
        else if (pd->nstats)
            s = bsearch(&key, pd->stats, pd->nstats, sizeof *pd->stats, cmp_stat);
        /* A decade the converter does not write, or a stack without stats, is no figure of
         * any picture: skipped rather than misplaced. */
        if (!s || d < 0 || d >= RA_LIFE_DECADES)
            continue;
        s->life_blocks[d] += sqlite3_column_int64(st, 4);
        s->life_bytes[d] += sqlite3_column_int64(st, 5);
    }
    return finish(c, st, rc);
}

static int sum_tables(ctx_t *c, ra_model_t *pd)
{
    /* Every thread with a file, named, then the counts of those that allocated or freed. */
    map3_t thr = {0};
    size_t cap = 0;
    int rc, failed = 0;
    for (int pass = 0; pass < 2 && !failed; pass++) {
        sqlite3_stmt *st = prepare(c, pass == 0 ?
            "SELECT pid, recording, tid, max(name) FROM threads\n"
            "WHERE pid = coalesce(?1, pid) GROUP BY pid, recording, tid" :
            "SELECT pid, recording, tid, NULL, allocs, alloc_bytes, frees, leaked_blocks,\n"
            "       leaked_bytes\n"
            "FROM thread_stats WHERE pid = coalesce(?1, pid)");
        if (!st) {
            map3_free(&thr);
            return -1;
        }
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            int created;
            int64_t pid = sqlite3_column_int64(st, 0), rec = sqlite3_column_int64(st, 1);
            int64_t tid = sqlite3_column_int64(st, 2);
            size_t i = map3_get(&thr, pid, rec, tid, pd->nthreads, &created);
            if (i == SIZE_MAX || (created && rheap_grow(&pd->threads, &cap, pd->nthreads,
                                                         sizeof *pd->threads, 64) != 0)) {
                failed = 1;
                break;
            }
            if (created) {
                ra_thread_t *t = &pd->threads[pd->nthreads++];
                memset(t, 0, sizeof *t);
                t->pid = pid;
                t->recording = rec;
                t->tid = tid;
            }
            ra_thread_t *t = &pd->threads[i];
            if (pass == 0) {
                t->name = (char *)intern(pd->pool, col_text(st, 3));
            } else {
                t->allocs = sqlite3_column_int64(st, 4);
                t->bytes = sqlite3_column_int64(st, 5);
                t->frees = sqlite3_column_int64(st, 6);
                t->leaked_blocks = sqlite3_column_int64(st, 7);
                t->leaked_bytes = sqlite3_column_int64(st, 8);
            }
        }
        if (failed)
            rc = SQLITE_NOMEM;
        if (finish(c, st, rc) != 0) {
            map3_free(&thr);
            return -1;
        }
    }
    map3_free(&thr);

    /* The converter's sums over the stacks (recording_sizes) where the database has them:
     * adding up stack_sizes here took seconds on a process tree. */
    sqlite3_stmt *st = prepare(c, ra__has_table(c->db, "recording_sizes") > 0 ?
        "SELECT pid, recording, min_size, blocks, bytes, leaked_blocks, leaked_bytes\n"
        "FROM recording_sizes WHERE pid = coalesce(?1, pid)" :
        "SELECT pid, recording, min_size, sum(blocks), sum(bytes), sum(leaked_blocks),\n"
        "       sum(leaked_bytes)\n"
        "FROM stack_sizes WHERE pid = coalesce(?1, pid) GROUP BY pid, recording, min_size");
    if (!st)
        return -1;
    cap = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (rheap_grow(&pd->sizes, &cap, pd->nsizes, sizeof *pd->sizes, 64) != 0)
            break;
        ra_sizeclass_t *z = &pd->sizes[pd->nsizes++];
        z->pid = sqlite3_column_int64(st, 0);
        z->recording = sqlite3_column_int64(st, 1);
        z->lo = sqlite3_column_int64(st, 2);
        z->hi = z->lo ? 2 * z->lo - 1 : 0;
        z->blocks = sqlite3_column_int64(st, 3);
        z->bytes = sqlite3_column_int64(st, 4);
        z->leaked_blocks = sqlite3_column_int64(st, 5);
        z->leaked_bytes = sqlite3_column_int64(st, 6);
    }
    return finish(c, st, rc);
}

/* A timeline row as read: start_ns, end_ns, max_live_bytes, live_bytes, allocs, frees. */
typedef struct {
    int64_t pid, rec, b[6];
} slice_row_t;

/* The slices rows[0, n) of recording pr grouped by consecutive runs into at most nbuckets,
 * appended to pd->buckets (room for n more is there). */
static void group_slices(ra_model_t *pd, ra_proc_t *pr, const slice_row_t *rows, size_t n,
                         size_t nbuckets)
{
    size_t per = (n + nbuckets - 1) / nbuckets;
    pr->bucket0 = pd->nbuckets;
    pr->nbuckets = 0;
    int64_t before = 0;
    for (size_t k = 0; k < n; k += per) {
        ra_bucket_t *b = &pd->buckets[pd->nbuckets++];
        memset(b, 0, sizeof *b);
        pr->nbuckets++;
        size_t last = k + per < n ? k + per : n;
        b->t_from = rows[k].b[0];
        b->t_to = rows[last - 1].b[1];
        b->max_live = before; /* the level it starts at: the previous slice's end */
        for (size_t m = k; m < last; m++) {
            if (rows[m].b[2] > b->max_live)
                b->max_live = rows[m].b[2];
            b->allocs += rows[m].b[4];
            b->frees += rows[m].b[5];
        }
        b->end_live = before = rows[last - 1].b[3];
    }
}

static void read_slice(sqlite3_stmt *st, int first, slice_row_t *r)
{
    for (int k = 0; k < 6; k++)
        r->b[k] = sqlite3_column_int64(st, first + k);
}

/* The converter's slices (up to 1024 per recording, of equal width) grouped by consecutive
 * runs into at most nbuckets. */
static int sum_timeline(ctx_t *c, ra_model_t *pd, size_t nbuckets)
{
    sqlite3_stmt *st = prepare(c,
        "SELECT pid, recording, start_ns, end_ns, max_live_bytes, live_bytes, allocs, frees\n"
        "FROM timeline WHERE pid = coalesce(?1, pid) ORDER BY pid, recording, bucket");
    if (!st)
        return -1;
    slice_row_t *rows = NULL;
    size_t n = 0, cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (rheap_grow(&rows, &cap, n, sizeof *rows, 64) != 0)
            break;
        slice_row_t *r = &rows[n++];
        r->pid = sqlite3_column_int64(st, 0);
        r->rec = sqlite3_column_int64(st, 1);
        read_slice(st, 2, r);
    }
    if (finish(c, st, rc) != 0) {
        free(rows);
        return -1;
    }
    pd->buckets = calloc(n + 1, sizeof *pd->buckets);
    if (!pd->buckets) {
        free(rows);
        return oom(c);
    }
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && rows[j].pid == rows[i].pid && rows[j].rec == rows[i].rec)
            j++;
        size_t p = proc_index(pd, rows[i].pid, rows[i].rec);
        if (p != SIZE_MAX)
            group_slices(pd, &pd->procs[p], rows + i, j - i, nbuckets);
        i = j;
    }
    free(rows);
    return 0;
}

ra_status_t ra_model_timeline(sqlite3 *db, ra_model_t *pd, const unsigned char *which,
                              size_t nbuckets, ra_err_t *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db,
                           "SELECT start_ns, end_ns, max_live_bytes, live_bytes, allocs, frees\n"
                           "FROM timeline WHERE pid = ?1 AND recording = ?2 ORDER BY bucket",
                           -1, &st, NULL) != SQLITE_OK)
        return ra__fail(err, RA_E_INPUT, "%s", sqlite3_errmsg(db));
    if (nbuckets == 0)
        nbuckets = 1;
    slice_row_t *rows = NULL;
    size_t cap = 0, bcap = pd->nbuckets;
    int rc = SQLITE_DONE;
    for (size_t p = 0; p < pd->nprocs && rc == SQLITE_DONE; p++) {
        ra_proc_t *pr = &pd->procs[p];
        if (!which[p] || pr->nbuckets)
            continue;
        sqlite3_bind_int64(st, 1, pr->pid);
        sqlite3_bind_int64(st, 2, pr->recording);
        size_t n = 0;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            if (rheap_grow(&rows, &cap, n, sizeof *rows, 1024) != 0)
                break;
            read_slice(st, 0, &rows[n++]);
        }
        sqlite3_reset(st);
        if (rc != SQLITE_DONE)
            break;
        /* Room for n more buckets: a recording has no more buckets than slices. */
        if (pd->nbuckets + n > bcap) {
            size_t want = pd->nbuckets + n;
            ra_bucket_t *b = realloc(pd->buckets, (want + 1) * sizeof *b);
            if (!b) {
                rc = SQLITE_NOMEM;
                break;
            }
            pd->buckets = b;
            bcap = want;
        }
        if (n)
            group_slices(pd, pr, rows, n, nbuckets);
    }
    sqlite3_finalize(st);
    free(rows);
    if (rc == SQLITE_ROW || rc == SQLITE_NOMEM)
        return ra__fail(err, RA_E_NOMEM, "out of memory");
    if (rc != SQLITE_DONE)
        return ra__fail(err, RA_E_INPUT, "%s", sqlite3_errmsg(db));
    return RA_OK;
}

/* ---- A few recordings' rows of a per-recording table, found without a scan ----
 *
 * stack_stats and stack_lifetimes have no index by recording (building one cost 2.3 s of a
 * build's conversion), and a page charts a dozen of its 2,000 recordings: a scan of each table
 * filtered by pid was a third of the page. The converter writes a recording's rows of both
 * together, the recordings in the order of their recording_stats rows, so a recording's rows
 * are one run of rowids, found by a binary search over the rowids in that order. That order is
 * the converter's way of writing, not a rule of the schema, so what is read is checked: the
 * run's blocks add up to the recording's allocations (recording_stats.allocs) and its
 * lifetimes to its frees, exact in trace mode. A recording in profile mode (estimates, not
 * counts), an unknown recording met, or a check that fails sends the caller back to the scan. */

typedef struct {
    sqlite3_stmt *probe; /* pid, recording of the first row at or after rowid ?1 */
    sqlite3_stmt *rows;  /* the caller's columns, pid and recording first, from rowid ?1 on */
    int64_t top;         /* the largest rowid of the table */
    int64_t *ord;        /* per proc of the model: its place in recording_stats, -1: none */
} runs_t;

/* The place of the row at or after rowid `at` in the order (INT64_MAX past the end, -1 for a
 * recording the model does not know), its rowid in *row. */
static int64_t row_place(const ra_model_t *pd, const runs_t *r, int64_t at, int64_t *row)
{
    sqlite3_reset(r->probe);
    sqlite3_bind_int64(r->probe, 1, at);
    if (sqlite3_step(r->probe) != SQLITE_ROW)
        return INT64_MAX;
    *row = sqlite3_column_int64(r->probe, 2);
    size_t p = proc_index(pd, sqlite3_column_int64(r->probe, 0),
                          sqlite3_column_int64(r->probe, 1));
    return p == SIZE_MAX ? -1 : r->ord[p];
}

/* Steps r->rows to the first row of proc p's run: SQLITE_ROW on it, SQLITE_DONE when the run
 * is empty, 1 when the order does not hold, another SQLite code on an error. */
static int run_start(const ra_model_t *pd, const runs_t *r, size_t p)
{
    int64_t want = r->ord[p], lo = 0, hi = r->top + 1, row = 0;
    /* The smallest rowid whose row's place is want or beyond (rowids are positive). */
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        int64_t place = row_place(pd, r, mid, &row);
        if (place < 0)
            return 1;
        if (place < want)
            lo = row + 1;
        else
            hi = mid;
    }
    sqlite3_reset(r->rows);
    sqlite3_bind_int64(r->rows, 1, lo);
    int rc = sqlite3_step(r->rows);
    if (rc == SQLITE_ROW && (sqlite3_column_int64(r->rows, 0) != pd->procs[p].pid ||
                             sqlite3_column_int64(r->rows, 1) != pd->procs[p].recording))
        return SQLITE_DONE;
    return rc;
}

/* The stats (which = 1) or lifetimes (which = 2) of the recordings with want[p], each run read
 * by run_start. 0, 1 when the caller must scan instead (nothing kept), -1 on an error. */
static int read_runs(ctx_t *c, ra_model_t *pd, const unsigned char *want, int which)
{
    runs_t r = {0};
    int rc = 0;
    const char *table = which == 1 ? "stack_stats" : "stack_lifetimes";
    char sql[512];
    r.ord = malloc((pd->nprocs + 1) * sizeof *r.ord);
    if (!r.ord)
        return oom(c);
    for (size_t p = 0; p < pd->nprocs; p++) {
        r.ord[p] = -1;
        /* Estimates do not add up exactly: no check, so no runs. */
        if (want[p] && pd->procs[p].sample_interval)
            rc = 1;
    }
    sqlite3_stmt *ord = rc ? NULL : prepare(c, "SELECT pid, recording FROM recording_stats ORDER BY rowid");
    int step = SQLITE_DONE;
    for (int64_t k = 0; ord && (step = sqlite3_step(ord)) == SQLITE_ROW; k++) {
        size_t p = proc_index(pd, sqlite3_column_int64(ord, 0), sqlite3_column_int64(ord, 1));
        if (p != SIZE_MAX)
            r.ord[p] = k;
    }
    if (ord && finish(c, ord, step) != 0)
        rc = -1;
    snprintf(sql, sizeof sql, "SELECT coalesce(max(rowid), 0) FROM %s", table);
    sqlite3_stmt *top = rc ? NULL : prepare(c, sql);
    if (top && (step = sqlite3_step(top)) == SQLITE_ROW)
        r.top = sqlite3_column_int64(top, 0);
    if (top && finish(c, top, step == SQLITE_ROW ? sqlite3_step(top) : step) != 0)
        rc = -1;
    snprintf(sql, sizeof sql,
             "SELECT pid, recording, rowid FROM %s WHERE rowid >= ?1 ORDER BY rowid LIMIT 1",
             table);
    if (rc == 0 && !(r.probe = prepare(c, sql)))
        rc = -1;
    snprintf(sql, sizeof sql, which == 1 ?
             "SELECT pid, recording, coalesce(bt, -1), blocks, bytes, leaked_blocks,\n"
             "       leaked_bytes, 0, 0, peak_blocks, peak_bytes, temporary_blocks,\n"
             "       temporary_bytes\n"
             "FROM %s WHERE rowid >= ?1 ORDER BY rowid" :
             "SELECT pid, recording, coalesce(bt, -1), decade, blocks, bytes\n"
             "FROM %s WHERE rowid >= ?1 ORDER BY rowid", table);
    if (rc == 0 && !(r.rows = prepare(c, sql)))
        rc = -1;
    size_t cap = pd->nstats, first = pd->nstats;
    for (size_t p = 0; p < pd->nprocs && rc == 0; p++) {
        if (!want[p])
            continue;
        const ra_proc_t *pr = &pd->procs[p];
        if (r.ord[p] < 0) {
            rc = 1;
            break;
        }
        int s = run_start(pd, &r, p);
        int64_t sum = 0;
        for (; s == SQLITE_ROW && sqlite3_column_int64(r.rows, 0) == pr->pid &&
               sqlite3_column_int64(r.rows, 1) == pr->recording;
             s = sqlite3_step(r.rows)) {
            if (which == 1) {
                if (rheap_grow(&pd->stats, &cap, pd->nstats, sizeof *pd->stats, 64) != 0) {
                    s = SQLITE_NOMEM;
                    break;
                }
                read_stat(r.rows, &pd->stats[pd->nstats++]);
                sum += pd->stats[pd->nstats - 1].blocks;
                continue;
            }
            ra_stat_t key = {.pid = pr->pid, .recording = pr->recording,
                             .bt = sqlite3_column_int64(r.rows, 2)};
            int64_t d = sqlite3_column_int64(r.rows, 3), b = sqlite3_column_int64(r.rows, 4);
            sum += b;
            ra_stat_t *st = bsearch(&key, pd->stats, pd->nstats, sizeof *pd->stats, cmp_stat);
            if (st && d >= 0 && d < RA_LIFE_DECADES) {
                st->life_blocks[d] += b;
                st->life_bytes[d] += sqlite3_column_int64(r.rows, 5);
            }
        }
        if (s == 1 || sum != (which == 1 ? pr->allocs : pr->frees))
            rc = 1;
        else if (s == SQLITE_NOMEM)
            rc = oom(c);
        else if (s != SQLITE_ROW && s != SQLITE_DONE)
            rc = (c->status = ra__fail(c->err, RA_E_INPUT, "%s", sqlite3_errmsg(c->db)), -1);
    }
    sqlite3_finalize(r.probe);
    sqlite3_finalize(r.rows);
    free(r.ord);
    if (rc == 1 && which == 1) {
        pd->nstats = first;
    } else if (rc == 1) {
        /* Back to no lifetimes for the recordings' stats: the scan adds them all. */
        for (size_t i = 0; i < pd->nstats; i++)
            if (pd->stats[i].pid >= 0) {
                memset(pd->stats[i].life_blocks, 0, sizeof pd->stats[i].life_blocks);
                memset(pd->stats[i].life_bytes, 0, sizeof pd->stats[i].life_bytes);
            }
    }
    return rc;
}

/* "pid IN (...)" of the recordings p with which[p], for a pass over a per-recording table that
 * hands SQLite the filter: a page charts a dozen of a build's 2,000 recordings. NULL when out
 * of memory. */
static char *pid_list(const ra_model_t *pd, const unsigned char *which)
{
    size_t cap = 32 + 24 * pd->nprocs, len = 0;
    char *sql = malloc(cap);
    if (!sql)
        return NULL;
    len += (size_t)snprintf(sql, cap, "pid IN (");
    int n = 0;
    for (size_t p = 0; p < pd->nprocs; p++)
        if (which[p])
            len += (size_t)snprintf(sql + len, cap - len, "%s%" PRId64, n++ ? "," : "",
                                    pd->procs[p].pid);
    snprintf(sql + len, cap - len, "%s)", n ? "" : "NULL");
    return sql;
}

ra_status_t ra_model_detail(sqlite3 *db, ra_model_t *pd, const unsigned char *which,
                            ra_err_t *err)
{
    ctx_t c = {db, err, RA_OK, -1};
    char *in = pid_list(pd, which);
    char *sql = in ? malloc(strlen(in) + 512) : NULL;
    if (!sql) {
        free(in);
        return ra__fail(err, RA_E_NOMEM, "out of memory");
    }
    sprintf(sql,
            "SELECT pid, recording, coalesce(bt, -1), blocks, bytes, leaked_blocks, leaked_bytes,\n"
            "       0, 0, peak_blocks, peak_bytes, temporary_blocks, temporary_bytes\n"
            "FROM stack_stats WHERE %s", in);
    /* Each recording's run of rows, else a scan filtered by pid. */
    size_t first = pd->nstats;
    int rc = read_runs(&c, pd, which, 1);
    if (rc == 1)
        rc = read_stats_of(&c, pd, sql, which);
    /* The stats read before (the totals) are in order already. */
    if (rc == 0 && pd->nstats && sort_stats_from(pd, first) != 0)
        rc = oom(&c);
    if (rc == 0)
        rc = read_runs(&c, pd, which, 2) == 0 ? 2 : c.status != RA_OK ? -1 : 0;
    /* Lifetimes found by bsearch: rows of a recording not read find no stat and are skipped. */
    sqlite3_stmt *st = NULL;
    if (rc == 0) {
        sprintf(sql,
                "SELECT pid, recording, coalesce(bt, -1), decade, blocks, bytes\n"
                "FROM stack_lifetimes WHERE %s", in);
        st = prepare(&c, sql);
        rc = st ? 0 : -1;
    }
    int step = SQLITE_DONE;
    while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
        ra_stat_t key = {.pid = sqlite3_column_int64(st, 0),
                         .recording = sqlite3_column_int64(st, 1),
                         .bt = sqlite3_column_int64(st, 2)};
        int64_t d = sqlite3_column_int64(st, 3);
        ra_stat_t *s = bsearch(&key, pd->stats, pd->nstats, sizeof *pd->stats, cmp_stat);
        if (!s || d < 0 || d >= RA_LIFE_DECADES)
            continue;
        s->life_blocks[d] += sqlite3_column_int64(st, 4);
        s->life_bytes[d] += sqlite3_column_int64(st, 5);
    }
    if (rc == 0)
        rc = finish(&c, st, step);
    if (rc == 2)
        rc = 0;
    free(sql);
    free(in);
    if (rc != 0)
        return c.status != RA_OK ? c.status : ra__fail(err, RA_E_NOMEM, "out of memory");
    /* A window's never-freed blocks are stopped, as split_windows makes them at the load (the
     * stats split then have none left to move). */
    for (size_t i = 0; i < pd->nstats; i++) {
        ra_stat_t *s = &pd->stats[i];
        const ra_proc_t *p = s->pid < 0 ? NULL : ra_model_proc(pd, s->pid, s->recording);
        if (p && !p->until_exit && s->leaked_blocks) {
            s->stopped_blocks = s->leaked_blocks;
            s->stopped_bytes = s->leaked_bytes;
            s->leaked_blocks = s->leaked_bytes = 0;
        }
    }
    return RA_OK;
}

/* The recordings that stopped while their process went on (schema.sql's view recording_ends,
 * the one rule): their never-freed blocks move from leaked to stopped, in every table, so that
 * no picture calls them leaks. Both ways of reading (summaries, rows) count them the same
 * before this, so the move is made once, after either. */
static int split_windows(ctx_t *c, ra_model_t *pd)
{
    sqlite3_stmt *st = prepare(c, "SELECT pid, recording FROM recording_ends\n"
                                  "WHERE NOT until_exit AND pid = coalesce(?1, pid)");
    if (!st)
        return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        size_t i = proc_index(pd, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1));
        if (i != SIZE_MAX)
            pd->procs[i].until_exit = 0;
    }
    if (finish(c, st, rc) != 0)
        return -1;
/* Sets the stopped pair of x (the readers above leave it unset) from the leaked one in a
 * window, where leaked becomes 0. */
#define RA_SPLIT(x, window)                                                                \
    do {                                                                                   \
        (x)->stopped_blocks = (window) ? (x)->leaked_blocks : 0;                           \
        (x)->stopped_bytes = (window) ? (x)->leaked_bytes : 0;                             \
        if (window)                                                                        \
            (x)->leaked_blocks = (x)->leaked_bytes = 0;                                    \
    } while (0)
    for (size_t i = 0; i < pd->nprocs; i++)
        RA_SPLIT(&pd->procs[i], !pd->procs[i].until_exit);
    for (size_t i = 0; i < pd->nstats; i++) {
        /* Totals over the recordings (pid -1) come split already. */
        if (pd->stats[i].pid < 0)
            continue;
        const ra_proc_t *p = ra_model_proc(pd, pd->stats[i].pid, pd->stats[i].recording);
        RA_SPLIT(&pd->stats[i], p && !p->until_exit);
    }
    for (size_t i = 0; i < pd->nthreads; i++) {
        const ra_proc_t *p = ra_model_proc(pd, pd->threads[i].pid, pd->threads[i].recording);
        RA_SPLIT(&pd->threads[i], p && !p->until_exit);
    }
    for (size_t i = 0; i < pd->nsizes; i++) {
        const ra_proc_t *p = ra_model_proc(pd, pd->sizes[i].pid, pd->sizes[i].recording);
        RA_SPLIT(&pd->sizes[i], p && !p->until_exit);
    }
#undef RA_SPLIT
    return 0;
}

/* Each reading step returns 0, or -1 with c->status and the message set. */
static int load(ctx_t *c, ra_model_t *pd, unsigned what, size_t nbuckets)
{
    pd->pool = calloc(1, sizeof *pd->pool);
    if (!pd->pool)
        return oom(c);
    if (what & RA_MODEL_TIMELINE)
        what |= RA_MODEL_PEAK;
    if (what & RA_MODEL_LIFETIMES)
        what |= RA_MODEL_STACKS;
    if (nbuckets == 0)
        nbuckets = 1;
    if (!has_summaries(c->db)) {
        c->status = ra__fail(c->err, RA_E_INPUT,
                             "the database has no summary tables (stack_stats and the others of "
                             "schema.sql's \"Summaries\"); convert the recording again");
        return -1;
    }
    if (load_procs(c, pd) != 0 || load_marks(c, pd) != 0)
        return -1;
    if (order_procs(pd) != 0)
        return oom(c);
    /* Each summary is what a pass over the rows of `allocations` would give;
     * tests/visual/model_oracle.c computes that pass and checks it. */
    /* The totals over the recordings: the converter's, else added up after the split. */
    int totals = (what & RA_MODEL_TOTALS) && (what & RA_MODEL_STACKS) && c->pid < 0;
    /* A database without the converter's totals (or, for the lifetimes, without
     * stack_lifetime_totals) has them added up here from the per-recording rows. */
    int read_totals = totals && ra__has_table(c->db, "stack_totals") > 0 &&
                      (!(what & RA_MODEL_LIFETIMES) ||
                       ra__has_table(c->db, "stack_lifetime_totals") > 0);
    if (sum_procs(c, pd) != 0 ||
        ((what & RA_MODEL_STACKS) && (read_totals ? sum_totals(c, pd) : sum_stats(c, pd)) != 0) ||
        ((what & RA_MODEL_TABLES) && sum_tables(c, pd) != 0) ||
        ((what & RA_MODEL_TIMELINE) && sum_timeline(c, pd, nbuckets) != 0))
        return -1;
    extend_ends(pd);
    /* qsort's array may not be NULL, even when empty. */
    if (pd->nstats && sort_stats(pd) != 0)
        return oom(c);
    if (pd->nthreads)
        qsort(pd->threads, pd->nthreads, sizeof *pd->threads, cmp_thread);
    if (pd->nsizes)
        qsort(pd->sizes, pd->nsizes, sizeof *pd->sizes, cmp_size);
    if ((what & RA_MODEL_LIFETIMES) && sum_lifetimes(c, pd, read_totals) != 0)
        return -1;
    if ((what & RA_MODEL_STACKS) && !(what & RA_MODEL_FRAMES_LATER) && load_stacks(c, pd) != 0)
        return -1;
    if (split_windows(c, pd) != 0)
        return -1;
    if (totals && !read_totals)
        add_up_stats(pd);
    if (pd->pool->oom)
        return oom(c);
    return 0;
}

ra_status_t ra_model_load(sqlite3 *db, int64_t pid, unsigned what, size_t nbuckets,
                          ra_model_t *m, ra_err_t *err)
{
    memset(m, 0, sizeof *m);
    ctx_t c = {db, err, RA_OK, pid};
    if (load(&c, m, what, nbuckets) == 0)
        return RA_OK;
    /* A step that failed without a word failed to allocate. */
    return c.status != RA_OK ? c.status : ra__fail(err, RA_E_NOMEM, "out of memory");
}

void ra_model_free(ra_model_t *pd)
{
    free(pd->procs);
    free(pd->proc_order);
    free(pd->stats);
    free(pd->stacks);
    free(pd->frames);
    free(pd->buckets);
    free(pd->markers);
    free(pd->windows);
    free(pd->threads);
    free(pd->sizes);
    free(pd->modules);
    pool_free(pd->pool);
    memset(pd, 0, sizeof *pd);
}

int64_t ra_model_sample_interval(const ra_model_t *pd)
{
    int64_t v = 0;
    for (size_t i = 0; i < pd->nprocs; i++)
        if (pd->procs[i].sample_interval > v)
            v = pd->procs[i].sample_interval;
    return v;
}

/* ---- Weights and frame names, the same in every picture ---- */

int64_t ra_weight_of(const ra_stat_t *s, ra_weight_t w)
{
    switch (w) {
    case RA_W_LEAKED:
        return s->leaked_bytes;
    case RA_W_PEAK:
        return s->peak_bytes;
    case RA_W_ALLOCATED:
        return s->bytes;
    case RA_W_ALLOCATIONS:
        return s->blocks;
    case RA_W_TEMPORARY:
        return s->temporary_blocks;
    case RA_W_STOPPED:
        return s->stopped_bytes;
    }
    return 0;
}

const char *ra_frame_name(const ra_frame_t *f, char *buf, size_t len)
{
    if (f->sym)
        return f->sym;
    if (f->module) {
        const char *base = strrchr(f->module, '/');
        snprintf(buf, len, "%s+0x%" PRIx64, base ? base + 1 : f->module, (uint64_t)f->offset);
    } else {
        snprintf(buf, len, "0x%" PRIx64, (uint64_t)f->offset);
    }
    return buf;
}
