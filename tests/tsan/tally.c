/*
 * tally.c: counting a recording's contents for the exact checks of threads.c.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tally.h"

/* A thread never holds more than a handful of blocks at once in these tests, so the live set
 * is a short array; overflowing it means addresses went missing and fails the test. */
#define MAX_LIVE 64

typedef struct {
    uint64_t addr[MAX_LIVE];
    unsigned n;
} live_t;

static void live_add(live_t *l, rheap_tsan_file_t *f, uint64_t addr, const char *path) {
    for (unsigned i = 0; i < l->n; i++)
        if (l->addr[i] == addr) {
            f->double_live++;
            return;
        }
    if (l->n == MAX_LIVE)
        rheap_tsan_fail("%s: more than %d blocks live at once", path, MAX_LIVE);
    l->addr[l->n++] = addr;
}

static void live_del(live_t *l, rheap_tsan_file_t *f, uint64_t addr) {
    for (unsigned i = 0; i < l->n; i++)
        if (l->addr[i] == addr) {
            l->addr[i] = l->addr[--l->n];
            return;
        }
    f->unmatched++;
}

static void copy_str(char *dst, size_t size, rip_str_t s) {
    size_t n = s.len < size - 1 ? s.len : size - 1;
    memcpy(dst, s.ptr, n);
    dst[n] = 0;
}

static rip_reader_t *open_or_fail(const char *path) {
    rip_reader_t *r;
    rip_error_t err;
    char msg[1024];
    if (rip_reader_open(path, &r, &err) != RIP_OK)
        rheap_tsan_fail("%s", rip_error_format(&err, msg, sizeof msg));
    return r;
}

static void end_or_fail(rip_status_t st, const rip_error_t *err) {
    char msg[1024];
    if (st != RIP_END)
        rheap_tsan_fail("%s", rip_error_format(err, msg, sizeof msg));
}

static void read_process(const char *path, rheap_tsan_rec_t *out) {
    rip_reader_t *r = open_or_fail(path);
    const rip_header_t *h = rip_reader_header(r);
    if (!h->is_process)
        rheap_tsan_fail("%s: header says thread file", path);
    out->pid = h->pid;
    rip_record_t rec;
    rip_error_t err;
    rip_status_t st;
    while ((st = rip_reader_next(r, &rec, &err)) == RIP_OK) {
        switch (rec.kind) {
        case RIP_REC_PROCESS:
            out->ppid = rec.u.process.ppid;
            break;
        case RIP_REC_ON:
            out->ons++;
            copy_str(out->on_how, sizeof out->on_how, rec.u.onoff.how);
            break;
        case RIP_REC_OFF:
            out->offs++;
            out->off_t = rec.t;
            copy_str(out->off_how, sizeof out->off_how, rec.u.onoff.how);
            break;
        case RIP_REC_LOST:
            out->lost += rec.u.lost.count;
            break;
        default:
            break;
        }
    }
    end_or_fail(st, &err);
    rip_reader_close(r);
}

static void read_thread(const char *path, rheap_tsan_file_t *f) {
    rip_reader_t *r = open_or_fail(path);
    const rip_header_t *h = rip_reader_header(r);
    if (h->is_process)
        rheap_tsan_fail("%s: header says process file", path);
    f->tid = h->tid;
    live_t live = {{0}, 0};
    uint64_t last_stack = 0;
    rip_record_t rec;
    rip_error_t err;
    rip_status_t st;
    while ((st = rip_reader_next(r, &rec, &err)) == RIP_OK) {
        if ((rec.kind == RIP_REC_ALLOC || rec.kind == RIP_REC_FREE || rec.kind == RIP_REC_MARK) &&
            rec.t > f->last_t)
            f->last_t = rec.t;
        switch (rec.kind) {
        case RIP_REC_ALLOC:
            if (rec.u.alloc.call < RIP_CALL_MALLOC || rec.u.alloc.call > RIP_CALL_PVALLOC)
                rheap_tsan_fail("%s: offset %llu: call %d out of range", path,
                                (unsigned long long)rec.offset, (int)rec.u.alloc.call);
            f->calls[rec.u.alloc.call]++;
            f->allocs++;
            /* Stack ids are handed out 1, 2, 3, ... per file and defined before first use. */
            if (rec.u.alloc.stack == 0)
                f->stackless++;
            else if (rec.u.alloc.stack > last_stack)
                rheap_tsan_fail("%s: offset %llu: stack %llu used before it is defined", path,
                                (unsigned long long)rec.offset,
                                (unsigned long long)rec.u.alloc.stack);
            if (rec.u.alloc.old_addr)
                live_del(&live, f, rec.u.alloc.old_addr);
            live_add(&live, f, rec.u.alloc.addr, path);
            break;
        case RIP_REC_FREE:
            f->frees++;
            live_del(&live, f, rec.u.free.addr);
            break;
        case RIP_REC_TOTALS:
            f->has_totals = 1;
            f->totals_allocs = rec.u.totals.allocs;
            f->totals_bytes = rec.u.totals.bytes;
            f->totals_frees = rec.u.totals.frees;
            break;
        case RIP_REC_STACK:
            if (rec.u.stack.id != last_stack + 1)
                rheap_tsan_fail("%s: offset %llu: stack id %llu after %llu", path,
                                (unsigned long long)rec.offset,
                                (unsigned long long)rec.u.stack.id,
                                (unsigned long long)last_stack);
            last_stack = rec.u.stack.id;
            f->stacks++;
            break;
        case RIP_REC_MARK:
            f->marks++;
            break;
        case RIP_REC_THREAD_NAME:
            copy_str(f->name, sizeof f->name, rec.u.name.text);
            break;
        default:
            break;
        }
    }
    end_or_fail(st, &err);
    f->live_end = live.n;
    rip_reader_close(r);
}

void rheap_tsan_read(const char *dir, rheap_tsan_rec_t *out) {
    rip_recording_t *rec;
    rip_error_t err;
    char msg[1024];
    if (rip_recording_open(dir, &rec, &err) != RIP_OK)
        rheap_tsan_fail("%s", rip_error_format(&err, msg, sizeof msg));
    snprintf(out->dir, sizeof out->dir, "%s", dir);
    read_process(rip_recording_process_path(rec), out);
    size_t n = rip_recording_thread_count(rec);
    if (n > RHEAP_TSAN_MAX_FILES)
        rheap_tsan_fail("%s: %zu thread files, more than %d", dir, n, RHEAP_TSAN_MAX_FILES);
    out->nfiles = (unsigned)n;
    for (size_t i = 0; i < n; i++)
        read_thread(rip_recording_thread_path(rec, i), &out->files[i]);
    rip_recording_close(rec);
}

const rheap_tsan_file_t *rheap_tsan_by_name(const rheap_tsan_rec_t *rec, const char *name) {
    for (unsigned i = 0; i < rec->nfiles; i++)
        if (strcmp(rec->files[i].name, name) == 0)
            return &rec->files[i];
    return NULL;
}
