/*
 * riptally: reads rip recordings back and prints exact counts, so the tracer tests can compare
 * what a program says it did with what librheap recorded.
 *
 *   riptally [--between BEGIN END] summary DIR...
 *       One block of lines per recording directory:
 *         recording NAME pid=P n=N threads=K
 *         process ppid=Q exe=BASENAME argc=A argv=ARG0 ARG1 ...
 *         config depth=D sample_ppm=S buffer_kb=B max_threads=M signal=G
 *         on how=HOW                      (one line per on record)
 *         off how=HOW                     (one line per off record)
 *         thread tid=T allocs=N frees=N bytes=N calls=malloc:N,calloc:N,...
 *         thread-info tid=T file=F serial=S name=NAME stacks=N nostack=N maxdepth=N marks=N lost=N
 *         total allocs=N frees=N bytes=N lost=N
 *       `allocs` counts allocation records (a realloc is one), `frees` free records, `bytes` the
 *       sizes of the allocation records. With --between, only the events after the marker BEGIN
 *       and before the marker END of each thread file count, and threads without BEGIN are left
 *       out. The total's `lost` counts the events the recording says it lost, in any file.
 *
 *   riptally [--between BEGIN END] list DIR...
 *       Every event of every thread in file order, without addresses or times:
 *         thread tid=T
 *         alloc call=C size=N [align=A] in=MODULE [old=CALL:SIZE|old=none|old=?]
 *         free of=CALL:SIZE|free of=?
 *         mark LABEL
 *       `in` is the module holding the innermost frame (`exe` for the program itself, `-` when
 *       the allocation has no backtrace); `of`/`old` name the block that was released, found by
 *       address among the earlier allocations of the same file.
 *
 *   riptally [--strict] [--live] check DIR...
 *       Replays every event of a recording in time order across its threads (a free before an
 *       allocation at the same time, since the tracer stamps frees before the real free and
 *       allocations after the real allocation) and prints
 *         check NAME on=HOW events=N unmatched_frees=N double_live=N lost=N live=N live_bytes=N
 *       An unmatched free is a free of an address that is not live (its allocation is missing);
 *       a double-live address is an allocation at an address that is still live (a free is
 *       missing). --live adds one line per group of blocks still live at the end:
 *         live call=C size=N in=MODULE count=K
 *       --strict exits 3 when a recording has a double-live address, lost events, or unmatched
 *       frees although it was recorded from the start of a fresh program (on how=env): a
 *       recording started later (api, signal, fork, exec) can see frees of older blocks.
 *
 * Exit status: 0, 1 for bad usage, 2 when a recording cannot be read, 3 for a failed --strict
 * check.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rip.h"

#define NCALLS (RIP_CALL_LAST + 1)

/* ---- Small helpers ---- */

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "riptally: out of memory\n");
        exit(2);
    }
    return p;
}

static void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p) {
        fprintf(stderr, "riptally: out of memory\n");
        exit(2);
    }
    return p;
}

static char *xstrndup(const char *s, size_t n)
{
    char *d = xmalloc(n + 1);
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

static const char *basename_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* Interned strings: modules and labels repeat a lot, and events keep only a small index. */
static char **interned;
static size_t ninterned;

static uint32_t intern(const char *s)
{
    for (size_t i = 0; i < ninterned; i++)
        if (strcmp(interned[i], s) == 0)
            return (uint32_t)i;
    interned = xrealloc(interned, (ninterned + 1) * sizeof *interned);
    interned[ninterned] = xstrndup(s, strlen(s));
    return (uint32_t)ninterned++;
}

/* ---- A uint64 -> uint64 hash map (open addressing). Key 0 is never stored: the tracer never
 * records address 0 and stack ids start at 1. ---- */

typedef struct {
    uint64_t *keys, *vals;
    size_t cap, used;
} map_t;

static uint64_t mix(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    return k;
}

static void map_init(map_t *m)
{
    m->cap = 1024;
    m->used = 0;
    m->keys = calloc(m->cap, sizeof *m->keys);
    m->vals = calloc(m->cap, sizeof *m->vals);
    if (!m->keys || !m->vals) {
        fprintf(stderr, "riptally: out of memory\n");
        exit(2);
    }
}

static void map_free(map_t *m)
{
    free(m->keys);
    free(m->vals);
}

static size_t map_slot(const map_t *m, uint64_t key)
{
    size_t i = mix(key) & (m->cap - 1);
    while (m->keys[i] && m->keys[i] != key)
        i = (i + 1) & (m->cap - 1);
    return i;
}

static void map_put(map_t *m, uint64_t key, uint64_t val);

static void map_grow(map_t *m)
{
    map_t bigger = {0};
    bigger.cap = m->cap * 2;
    bigger.keys = calloc(bigger.cap, sizeof *bigger.keys);
    bigger.vals = calloc(bigger.cap, sizeof *bigger.vals);
    if (!bigger.keys || !bigger.vals) {
        fprintf(stderr, "riptally: out of memory\n");
        exit(2);
    }
    for (size_t i = 0; i < m->cap; i++)
        if (m->keys[i])
            map_put(&bigger, m->keys[i], m->vals[i]);
    map_free(m);
    *m = bigger;
}

static void map_put(map_t *m, uint64_t key, uint64_t val)
{
    if ((m->used + 1) * 2 > m->cap)
        map_grow(m);
    size_t i = map_slot(m, key);
    if (!m->keys[i]) {
        m->keys[i] = key;
        m->used++;
    }
    m->vals[i] = val;
}

static int map_get(const map_t *m, uint64_t key, uint64_t *val)
{
    size_t i = map_slot(m, key);
    if (!m->keys[i])
        return 0;
    if (val)
        *val = m->vals[i];
    return 1;
}

/* Removal by backward shift keeps probe chains intact without tombstones. */
static void map_del(map_t *m, uint64_t key)
{
    size_t i = map_slot(m, key);
    if (!m->keys[i])
        return;
    m->keys[i] = 0;
    m->used--;
    size_t j = i;
    for (;;) {
        j = (j + 1) & (m->cap - 1);
        if (!m->keys[j])
            return;
        size_t home = mix(m->keys[j]) & (m->cap - 1);
        /* Move j back into the hole at i unless its home lies cyclically in (i, j]. */
        int stays = (i <= j) ? (i < home && home <= j) : (i < home || home <= j);
        if (!stays) {
            m->keys[i] = m->keys[j];
            m->vals[i] = m->vals[j];
            m->keys[j] = 0;
            i = j;
        }
    }
}

/* ---- Reading one recording ---- */

typedef struct {
    uint64_t t, addr, size;
    uint32_t seq;
    uint32_t module; /* interned name of the innermost frame's module */
    uint8_t is_alloc;
    uint8_t call;
} event_t;

typedef struct {
    char *path;    /* as loaded, "" for the main program */
    rip_segment_t *segs;
    uint32_t nseg;
} module_t;

typedef struct {
    char *file;
    uint32_t tid, serial;
    char *name;
    int seen_begin; /* --between: BEGIN marker found */
    uint64_t allocs, frees, bytes, calls[NCALLS];
    uint64_t stacks, nostack, maxdepth, marks, lost;
} thread_t;

typedef struct {
    char *name; /* directory basename */
    uint32_t pid, n, ppid, argc;
    char *exe, *argv;
    char config[256];
    char **on, **off;
    size_t non, noff;
    thread_t *threads;
    size_t nthreads;
    event_t *events;
    size_t nevents;
    uint64_t lost;
} recording_t;

static const char *opt_begin, *opt_end;
static int opt_strict, opt_live;
static enum { CMD_SUMMARY, CMD_LIST, CMD_CHECK } cmd;

static void die_reader(const rip_error_t *err)
{
    char buf[1024];
    fprintf(stderr, "riptally: %s\n", rip_error_format(err, buf, sizeof buf));
    exit(2);
}

static rip_status_t next_record(rip_reader_t *r, rip_record_t *rec)
{
    rip_error_t err;
    rip_status_t st = rip_reader_next(r, rec, &err);
    if (st != RIP_OK && st != RIP_END)
        die_reader(&err);
    return st;
}

static void read_process(recording_t *rec, const char *path)
{
    rip_reader_t *r;
    rip_error_t err;
    if (rip_reader_open(path, &r, &err) != RIP_OK)
        die_reader(&err);
    const rip_header_t *h = rip_reader_header(r);
    if (!h->is_process) {
        fprintf(stderr, "riptally: %s: not a process file\n", path);
        exit(2);
    }
    rec->pid = h->pid;
    rec->n = h->recording;
    rec->exe = xstrndup("?", 1);
    rec->argv = xstrndup("", 0);
    snprintf(rec->config, sizeof rec->config, "none");
    rip_record_t rr;
    while (next_record(r, &rr) == RIP_OK) {
        switch (rr.kind) {
        case RIP_REC_PROCESS: {
            free(rec->exe);
            free(rec->argv);
            char *exe = xstrndup(rr.u.process.exe.ptr, rr.u.process.exe.len);
            rec->exe = xstrndup(basename_of(exe), strlen(basename_of(exe)));
            free(exe);
            rec->ppid = rr.u.process.ppid;
            rec->argc = rr.u.process.argc;
            size_t len = 1;
            for (uint32_t i = 0; i < rr.u.process.argc; i++)
                len += rr.u.process.argv[i].len + 1;
            rec->argv = xmalloc(len);
            rec->argv[0] = '\0';
            size_t at = 0;
            for (uint32_t i = 0; i < rr.u.process.argc; i++) {
                if (i)
                    rec->argv[at++] = ' ';
                memcpy(rec->argv + at, rr.u.process.argv[i].ptr, rr.u.process.argv[i].len);
                at += rr.u.process.argv[i].len;
            }
            rec->argv[at] = '\0';
            break;
        }
        case RIP_REC_CONFIG:
            snprintf(rec->config, sizeof rec->config,
                     "depth=%u sample_ppm=%u buffer_kb=%u max_threads=%u signal=%u",
                     rr.u.config.depth, rr.u.config.sample_ppm, rr.u.config.buffer_kb,
                     rr.u.config.max_threads, rr.u.config.signal);
            break;
        case RIP_REC_ON:
            rec->on = xrealloc(rec->on, (rec->non + 1) * sizeof *rec->on);
            rec->on[rec->non++] = xstrndup(rr.u.onoff.how.ptr, rr.u.onoff.how.len);
            break;
        case RIP_REC_OFF:
            rec->off = xrealloc(rec->off, (rec->noff + 1) * sizeof *rec->off);
            rec->off[rec->noff++] = xstrndup(rr.u.onoff.how.ptr, rr.u.onoff.how.len);
            break;
        case RIP_REC_LOST:
            rec->lost += rr.u.lost.count;
            break;
        default:
            break;
        }
    }
    rip_reader_close(r);
}

/* The module of an address, by the current module list of the file: "exe" for the program
 * itself (the module whose path is empty or the process's executable), else the basename. */
static uint32_t module_of(const module_t *mods, size_t nmods, uint64_t ip, const char *exe)
{
    for (size_t i = 0; i < nmods; i++) {
        for (uint32_t s = 0; s < mods[i].nseg; s++) {
            const rip_segment_t *seg = &mods[i].segs[s];
            if (ip >= seg->start && ip < seg->start + seg->size) {
                const char *base = basename_of(mods[i].path);
                if (!*base || strcmp(base, exe) == 0)
                    return intern("exe");
                return intern(base);
            }
        }
    }
    return intern("?");
}

static void add_event(recording_t *rec, size_t *cap, const event_t *ev)
{
    if (rec->nevents == *cap) {
        *cap = *cap ? *cap * 2 : 4096;
        rec->events = xrealloc(rec->events, *cap * sizeof *rec->events);
    }
    rec->events[rec->nevents] = *ev;
    rec->events[rec->nevents].seq = (uint32_t)rec->nevents;
    rec->nevents++;
}

/* Describes a block as CALL:SIZE for the list output. */
static void describe(const map_t *blocks, uint64_t addr, char *buf, size_t size)
{
    uint64_t v;
    if (!map_get(blocks, addr, &v)) {
        snprintf(buf, size, "?");
        return;
    }
    snprintf(buf, size, "%s:%" PRIu64, rip_call_name((rip_call_t)(v >> 56)),
             (uint64_t)(v & ((UINT64_C(1) << 56) - 1)));
}

static void read_thread(recording_t *rec, const char *path, size_t *evcap)
{
    rip_reader_t *r;
    rip_error_t err;
    rip_status_t st = rip_reader_open(path, &r, &err);
    /* A file that ends before its header (a thread killed between creating its file and writing
     * to it) holds no event: the thread recorded nothing, as rheap convert reads it too. */
    if (st == RIP_E_TRUNCATED)
        return;
    if (st != RIP_OK)
        die_reader(&err);
    const rip_header_t *h = rip_reader_header(r);
    if (h->is_process || h->pid != rec->pid || h->recording != rec->n) {
        fprintf(stderr, "riptally: %s: header pid=%u recording=%u does not belong to %s\n",
                path, h->pid, h->recording, rec->name);
        exit(2);
    }
    rec->threads = xrealloc(rec->threads, (rec->nthreads + 1) * sizeof *rec->threads);
    thread_t *th = &rec->threads[rec->nthreads++];
    memset(th, 0, sizeof *th);
    th->file = xstrndup(basename_of(path), strlen(basename_of(path)));
    th->tid = h->tid;
    th->serial = h->serial;
    th->name = xstrndup("-", 1);

    module_t *mods = NULL;
    size_t nmods = 0, mods_expected = 0;
    map_t stacks, blocks;
    map_init(&stacks); /* id -> depth << 32 | interned module of ip[0] */
    map_init(&blocks); /* addr -> call << 56 | size, for the list output */
    int state = opt_begin ? 0 : 1; /* 0 before BEGIN, 1 counting, 2 after END */
    if (!opt_begin)
        th->seen_begin = 1;
    if (cmd == CMD_LIST && !opt_begin)
        printf("thread tid=%u\n", th->tid);

    rip_record_t rr;
    char d1[64];
    while (next_record(r, &rr) == RIP_OK) {
        switch (rr.kind) {
        case RIP_REC_MODULES:
            for (size_t i = 0; i < nmods; i++) {
                free(mods[i].path);
                free(mods[i].segs);
            }
            nmods = 0;
            mods_expected = rr.u.modules.count;
            mods = xrealloc(mods, (mods_expected ? mods_expected : 1) * sizeof *mods);
            break;
        case RIP_REC_MODULE:
            if (nmods < mods_expected) {
                module_t *m = &mods[nmods++];
                m->path = xstrndup(rr.u.module.path.ptr, rr.u.module.path.len);
                m->nseg = rr.u.module.nseg;
                m->segs = xmalloc(m->nseg * sizeof *m->segs);
                memcpy(m->segs, rr.u.module.segs, m->nseg * sizeof *m->segs);
            }
            break;
        case RIP_REC_STACK: {
            uint32_t mod = module_of(mods, nmods, rr.u.stack.ips[0], rec->exe);
            map_put(&stacks, rr.u.stack.id, ((uint64_t)rr.u.stack.depth << 32) | mod);
            break;
        }
        case RIP_REC_THREAD_NAME:
            free(th->name);
            th->name = xstrndup(rr.u.name.text.ptr, rr.u.name.text.len);
            break;
        case RIP_REC_MARK: {
            char *label = xstrndup(rr.u.name.text.ptr, rr.u.name.text.len);
            if (state == 0 && strcmp(label, opt_begin) == 0) {
                state = 1;
                th->seen_begin = 1;
                if (cmd == CMD_LIST)
                    printf("thread tid=%u\n", th->tid);
            } else if (state == 1 && opt_end && strcmp(label, opt_end) == 0) {
                state = 2;
            } else if (state == 1) {
                th->marks++;
                if (cmd == CMD_LIST)
                    printf("mark %s\n", label);
            }
            free(label);
            break;
        }
        case RIP_REC_LOST:
            rec->lost += rr.u.lost.count;
            if (state == 1)
                th->lost += rr.u.lost.count;
            break;
        case RIP_REC_ALLOC: {
            uint64_t sv = 0, depth = 0;
            uint32_t mod = intern("-");
            if (rr.u.alloc.stack) {
                if (!map_get(&stacks, rr.u.alloc.stack, &sv)) {
                    fprintf(stderr, "riptally: %s: allocation names undefined stack %" PRIu64
                                    "\n", path, rr.u.alloc.stack);
                    exit(2);
                }
                depth = sv >> 32;
                mod = (uint32_t)sv;
            }
            rip_call_t call = rr.u.alloc.call;
            int is_realloc = rip_call_resizes(call);
            if (state == 1) {
                th->allocs++;
                th->bytes += rr.u.alloc.size;
                if ((unsigned)call < NCALLS)
                    th->calls[call]++;
                if (rr.u.alloc.stack)
                    th->stacks++;
                else
                    th->nostack++;
                if (depth > th->maxdepth)
                    th->maxdepth = depth;
                if (cmd == CMD_LIST) {
                    printf("alloc call=%s size=%" PRIu64, rip_call_name(call), rr.u.alloc.size);
                    if (rr.u.alloc.align)
                        printf(" align=%" PRIu64, rr.u.alloc.align);
                    printf(" in=%s", interned[mod]);
                    if (is_realloc) {
                        if (rr.u.alloc.old_addr) {
                            describe(&blocks, rr.u.alloc.old_addr, d1, sizeof d1);
                            printf(" old=%s", d1);
                        } else {
                            printf(" old=none");
                        }
                    }
                    printf("\n");
                }
            }
            if (is_realloc && rr.u.alloc.old_addr) {
                map_del(&blocks, rr.u.alloc.old_addr);
                event_t ev = {.t = rr.u.alloc.old_t, .addr = rr.u.alloc.old_addr};
                add_event(rec, evcap, &ev);
            }
            map_put(&blocks, rr.u.alloc.addr,
                    ((uint64_t)call << 56) | (rr.u.alloc.size & ((UINT64_C(1) << 56) - 1)));
            event_t ev = {.t = rr.t, .addr = rr.u.alloc.addr, .size = rr.u.alloc.size,
                          .module = mod, .is_alloc = 1, .call = (uint8_t)call};
            add_event(rec, evcap, &ev);
            break;
        }
        case RIP_REC_FREE: {
            if (state == 1) {
                th->frees++;
                if (cmd == CMD_LIST) {
                    describe(&blocks, rr.u.free.addr, d1, sizeof d1);
                    printf("free of=%s\n", d1);
                }
            }
            map_del(&blocks, rr.u.free.addr);
            event_t ev = {.t = rr.t, .addr = rr.u.free.addr};
            add_event(rec, evcap, &ev);
            break;
        }
        default:
            break;
        }
    }
    for (size_t i = 0; i < nmods; i++) {
        free(mods[i].path);
        free(mods[i].segs);
    }
    free(mods);
    map_free(&stacks);
    map_free(&blocks);
    rip_reader_close(r);
}

static void read_recording(recording_t *rec, const char *dir)
{
    rip_recording_t *rr;
    rip_error_t err;
    if (rip_recording_open(dir, &rr, &err) != RIP_OK)
        die_reader(&err);
    char *copy = xstrndup(dir, strlen(dir));
    size_t len = strlen(copy);
    while (len > 1 && copy[len - 1] == '/')
        copy[--len] = '\0';
    rec->name = xstrndup(basename_of(copy), strlen(basename_of(copy)));
    free(copy);
    read_process(rec, rip_recording_process_path(rr));
    size_t evcap = 0;
    for (size_t i = 0; i < rip_recording_thread_count(rr); i++)
        read_thread(rec, rip_recording_thread_path(rr, i), &evcap);
    rip_recording_close(rr);
}

/* ---- Output ---- */

static int by_serial(const void *a, const void *b)
{
    const thread_t *x = a, *y = b;
    return (x->serial > y->serial) - (x->serial < y->serial);
}

static void print_summary(recording_t *rec)
{
    printf("recording %s pid=%u n=%u threads=%zu\n", rec->name, rec->pid, rec->n,
           rec->nthreads);
    printf("process ppid=%u exe=%s argc=%u argv=%s\n", rec->ppid, rec->exe, rec->argc,
           rec->argv);
    printf("config %s\n", rec->config);
    for (size_t i = 0; i < rec->non; i++)
        printf("on how=%s\n", rec->on[i]);
    for (size_t i = 0; i < rec->noff; i++)
        printf("off how=%s\n", rec->off[i]);
    if (rec->nthreads)
        qsort(rec->threads, rec->nthreads, sizeof *rec->threads, by_serial);
    uint64_t allocs = 0, frees = 0, bytes = 0;
    for (size_t i = 0; i < rec->nthreads; i++) {
        const thread_t *th = &rec->threads[i];
        if (!th->seen_begin)
            continue;
        printf("thread tid=%u allocs=%" PRIu64 " frees=%" PRIu64 " bytes=%" PRIu64 " calls=",
               th->tid, th->allocs, th->frees, th->bytes);
        int first = 1;
        for (int c = 1; c < NCALLS; c++) {
            if (!th->calls[c])
                continue;
            printf("%s%s:%" PRIu64, first ? "" : ",", rip_call_name((rip_call_t)c),
                   th->calls[c]);
            first = 0;
        }
        printf("%s\n", first ? "none" : "");
        printf("thread-info tid=%u file=%s serial=%u name=%s stacks=%" PRIu64
               " nostack=%" PRIu64 " maxdepth=%" PRIu64 " marks=%" PRIu64 " lost=%" PRIu64 "\n",
               th->tid, th->file, th->serial, th->name, th->stacks, th->nostack, th->maxdepth,
               th->marks, th->lost);
        allocs += th->allocs;
        frees += th->frees;
        bytes += th->bytes;
    }
    printf("total allocs=%" PRIu64 " frees=%" PRIu64 " bytes=%" PRIu64 " lost=%" PRIu64 "\n",
           allocs, frees, bytes, rec->lost);
}

static int by_time(const void *a, const void *b)
{
    const event_t *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    if (x->is_alloc != y->is_alloc)
        return x->is_alloc ? 1 : -1; /* frees first on ties */
    return (x->seq > y->seq) - (x->seq < y->seq);
}

typedef struct {
    uint8_t call;
    uint32_t module;
    uint64_t size, count;
} group_t;

static int by_group(const void *a, const void *b)
{
    const group_t *x = a, *y = b;
    if (x->size != y->size)
        return x->size < y->size ? -1 : 1;
    if (x->call != y->call)
        return x->call < y->call ? -1 : 1;
    return strcmp(interned[x->module], interned[y->module]);
}

/* Returns 1 when --strict finds a problem. */
static int check(recording_t *rec)
{
    if (rec->nevents)
        qsort(rec->events, rec->nevents, sizeof *rec->events, by_time);
    map_t live; /* addr -> index of the allocation event */
    map_init(&live);
    uint64_t unmatched = 0, doubles = 0;
    for (size_t i = 0; i < rec->nevents; i++) {
        const event_t *ev = &rec->events[i];
        if (ev->is_alloc) {
            if (map_get(&live, ev->addr, NULL)) {
                if (doubles++ < 5)
                    fprintf(stderr, "riptally: %s: allocation at t=%" PRIu64 " of 0x%" PRIx64
                                    " (%s, %" PRIu64 " bytes) while the address is live\n",
                            rec->name, ev->t, ev->addr, rip_call_name((rip_call_t)ev->call),
                            ev->size);
            }
            map_put(&live, ev->addr, i);
        } else if (map_get(&live, ev->addr, NULL)) {
            map_del(&live, ev->addr);
        } else if (unmatched++ < 5) {
            fprintf(stderr, "riptally: %s: free at t=%" PRIu64 " of 0x%" PRIx64
                            " that is not live\n", rec->name, ev->t, ev->addr);
        }
    }
    uint64_t nlive = 0, live_bytes = 0;
    group_t *groups = NULL;
    size_t ngroups = 0;
    for (size_t s = 0; s < live.cap; s++) {
        if (!live.keys[s])
            continue;
        const event_t *ev = &rec->events[live.vals[s]];
        nlive++;
        live_bytes += ev->size;
        size_t g = 0;
        while (g < ngroups && !(groups[g].call == ev->call && groups[g].size == ev->size &&
                                groups[g].module == ev->module))
            g++;
        if (g == ngroups) {
            groups = xrealloc(groups, (ngroups + 1) * sizeof *groups);
            groups[ngroups++] = (group_t){ev->call, ev->module, ev->size, 0};
        }
        groups[g].count++;
    }
    const char *on = rec->non ? rec->on[0] : "none";
    printf("check %s on=%s events=%zu unmatched_frees=%" PRIu64 " double_live=%" PRIu64
           " lost=%" PRIu64 " live=%" PRIu64 " live_bytes=%" PRIu64 "\n",
           rec->name, on, rec->nevents, unmatched, doubles, rec->lost, nlive, live_bytes);
    if (opt_live) {
        qsort(groups, ngroups, sizeof *groups, by_group);
        for (size_t g = 0; g < ngroups; g++)
            printf("live call=%s size=%" PRIu64 " in=%s count=%" PRIu64 "\n",
                   rip_call_name((rip_call_t)groups[g].call), groups[g].size,
                   interned[groups[g].module], groups[g].count);
    }
    free(groups);
    map_free(&live);
    int fresh = rec->non && strcmp(rec->on[0], "env") == 0;
    return doubles || rec->lost || (fresh && unmatched);
}

static void usage(void)
{
    fprintf(stderr, "usage: riptally [--between BEGIN END] summary|list DIR...\n"
                    "       riptally [--strict] [--live] check DIR...\n");
    exit(1);
}

int main(int argc, char **argv)
{
    int i = 1;
    for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
        if (strcmp(argv[i], "--between") == 0 && i + 2 < argc) {
            opt_begin = argv[++i];
            opt_end = argv[++i];
        } else if (strcmp(argv[i], "--strict") == 0) {
            opt_strict = 1;
        } else if (strcmp(argv[i], "--live") == 0) {
            opt_live = 1;
        } else {
            usage();
        }
    }
    if (i + 1 >= argc)
        usage();
    if (strcmp(argv[i], "summary") == 0)
        cmd = CMD_SUMMARY;
    else if (strcmp(argv[i], "list") == 0)
        cmd = CMD_LIST;
    else if (strcmp(argv[i], "check") == 0)
        cmd = CMD_CHECK;
    else
        usage();
    int failed = 0;
    for (i++; i < argc; i++) {
        recording_t rec;
        memset(&rec, 0, sizeof rec);
        read_recording(&rec, argv[i]);
        if (cmd == CMD_SUMMARY)
            print_summary(&rec);
        else if (cmd == CMD_CHECK)
            failed |= check(&rec);
        /* The process exits soon; the recording's memory is left to it. */
        free(rec.events);
    }
    return opt_strict && failed ? 3 : 0;
}
