/*
 * dump.c: the work behind `rheap dump`. The output is meant for people and for grep: one record
 * per line, `name key=value ...`, numbers in decimal except addresses in hex, and strings
 * escaped so that a line never breaks and a space inside a value that is followed by more fields
 * cannot be mistaken for a separator. The golden files in tests/data/ pin this text down, so
 * change it only together with them.
 */
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>

#include "rip.h"
#include "dump.h"
#include "message.h"

/* Writes s with backslash, control bytes, bytes >= 0x7f and (if `space`) spaces as \xHH. */
static void put_str(FILE *out, rip_str_t s, int space)
{
    for (size_t i = 0; i < s.len; i++) {
        unsigned char c = (unsigned char)s.ptr[i];
        if (c < 0x20 || c >= 0x7f || c == '\\' || (space && c == ' '))
            fprintf(out, "\\x%02x", c);
        else
            fputc(c, out);
    }
}

static void put_hex_bytes(FILE *out, rip_str_t s)
{
    for (size_t i = 0; i < s.len; i++)
        fprintf(out, "%02x", (unsigned char)s.ptr[i]);
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static void put_record(FILE *out, const rip_record_t *r)
{
    switch (r->kind) {
    case RIP_REC_ALLOC: {
        rip_call_t call = r->u.alloc.call;
        fprintf(out, "alloc t=%" PRIu64 " call=%s addr=0x%" PRIx64 " size=%" PRIu64
                     " stack=%" PRIu64,
                r->t, rip_call_name(call), r->u.alloc.addr, r->u.alloc.size, r->u.alloc.stack);
        if (rip_call_resizes(call))
            fprintf(out, " old=0x%" PRIx64 " old_t=%" PRIu64, r->u.alloc.old_addr,
                    r->u.alloc.old_t);
        /* The libc calls with an alignment show it always; the later ones when they had one. */
        if ((call >= RIP_CALL_POSIX_MEMALIGN && call <= RIP_CALL_PVALLOC) ||
            (call >= RIP_CALL_NAMED_FIRST && r->u.alloc.align))
            fprintf(out, " align=%" PRIu64, r->u.alloc.align);
        break;
    }
    case RIP_REC_FREE:
        fprintf(out, "free t=%" PRIu64 " addr=0x%" PRIx64, r->t, r->u.free.addr);
        break;
    case RIP_REC_STACK:
        fprintf(out, "stack id=%" PRIu64 " depth=%" PRIu32 " ips=", r->u.stack.id,
                r->u.stack.depth);
        for (uint32_t i = 0; i < r->u.stack.depth; i++)
            fprintf(out, "%s0x%" PRIx64, i ? "," : "", r->u.stack.ips[i]);
        break;
    case RIP_REC_MODULES:
        fprintf(out, "modules t=%" PRIu64 " count=%" PRIu32, r->t, r->u.modules.count);
        break;
    case RIP_REC_MODULE:
        fprintf(out, "module bias=0x%" PRIx64 " path=", r->u.module.bias);
        put_str(out, r->u.module.path, 1);
        fputs(" build_id=", out);
        put_hex_bytes(out, r->u.module.build_id);
        fputs(" segs=", out);
        for (uint32_t i = 0; i < r->u.module.nseg; i++) {
            const rip_segment_t *s = &r->u.module.segs[i];
            fprintf(out, "%s0x%" PRIx64 "+0x%" PRIx64 ":%c%c%c", i ? "," : "", s->start, s->size,
                    s->flags & 4 ? 'r' : '-', s->flags & 2 ? 'w' : '-', s->flags & 1 ? 'x' : '-');
        }
        break;
    case RIP_REC_THREAD_NAME:
        fprintf(out, "thread_name t=%" PRIu64 " name=", r->t);
        put_str(out, r->u.name.text, 0);
        break;
    case RIP_REC_MARK:
        fprintf(out, "mark t=%" PRIu64 " label=", r->t);
        put_str(out, r->u.name.text, 0);
        break;
    case RIP_REC_LOST:
        fprintf(out, "lost t=%" PRIu64 " count=%" PRIu64 " reason=", r->t, r->u.lost.count);
        put_str(out, r->u.lost.reason, 0);
        break;
    case RIP_REC_PROCESS:
        fprintf(out, "process ppid=%" PRIu32 " exe=", r->u.process.ppid);
        put_str(out, r->u.process.exe, 1);
        fprintf(out, " wall_ns=%" PRIu64 " clock=", r->u.process.wall_ns);
        put_str(out, r->u.process.clock, 1);
        fprintf(out, " page_size=%" PRIu32 " argc=%" PRIu32 " argv=", r->u.process.page_size,
                r->u.process.argc);
        for (uint32_t i = 0; i < r->u.process.argc; i++) {
            if (i)
                fputc(' ', out);
            put_str(out, r->u.process.argv[i], 1);
        }
        break;
    case RIP_REC_CONFIG:
        fprintf(out,
                "config depth=%" PRIu32 " sample_ppm=%" PRIu32 " buffer_kb=%" PRIu32
                " max_threads=%" PRIu32 " signal=%" PRIu32 " dir=",
                r->u.config.depth, r->u.config.sample_ppm, r->u.config.buffer_kb,
                r->u.config.max_threads, r->u.config.signal);
        put_str(out, r->u.config.dir, 0);
        break;
    case RIP_REC_ON:
    case RIP_REC_OFF:
        fprintf(out, "%s t=%" PRIu64 " how=", r->kind == RIP_REC_ON ? "on" : "off", r->t);
        put_str(out, r->u.onoff.how, 0);
        break;
    case RIP_REC_TOTALS:
        fprintf(out, "totals t=%" PRIu64 " allocs=%" PRIu64 " bytes=%" PRIu64 " frees=%" PRIu64,
                r->t, r->u.totals.allocs, r->u.totals.bytes, r->u.totals.frees);
        break;
    case RIP_REC_SAMPLING:
        fprintf(out, "sampling interval=%" PRIu64 " seed=%" PRIu64, r->u.sampling.interval,
                r->u.sampling.seed);
        break;
    case RIP_REC_UNSEEN:
        fprintf(out, "unseen allocator=");
        put_str(out, r->u.unseen.allocator, 1);
        fprintf(out, " module=");
        put_str(out, r->u.unseen.module, 1);
        fprintf(out, " symbol=");
        put_str(out, r->u.unseen.symbol, 1);
        break;
    case RIP_REC_POOL: {
        static const char *const ops[] = {"create", "alloc", "free", "destroy"};
        fprintf(out, "pool t=%" PRIu64 " op=%s pool=%" PRIu64, r->t, ops[r->u.pool.op],
                r->u.pool.pool);
        if (r->u.pool.op == RIP_POOL_CREATE) {
            fputs(" name=", out);
            put_str(out, r->u.pool.name, 1);
        }
        if (r->u.pool.op == RIP_POOL_ALLOC || r->u.pool.op == RIP_POOL_FREE)
            fprintf(out, " addr=0x%" PRIx64, r->u.pool.addr);
        if (r->u.pool.op == RIP_POOL_ALLOC)
            fprintf(out, " size=%" PRIu64 " stack=%" PRIu64, r->u.pool.size, r->u.pool.stack);
        break;
    }
    case RIP_REC_RSS:
        fprintf(out, "rss t=%" PRIu64 " rss=%" PRIu64 " anon=%" PRIu64 " file=%" PRIu64
                     " swap=%" PRIu64, r->t, r->u.rss.rss, r->u.rss.anon, r->u.rss.file,
                r->u.rss.swap);
        break;
    case RIP_REC_MAP: {
        static const char *const ops[] = {"map", "unmap", "remap"};
        fprintf(out, "map t=%" PRIu64 " op=%s addr=0x%" PRIx64 " len=%" PRIu64, r->t,
                ops[r->u.map.op], r->u.map.addr, r->u.map.len);
        if (r->u.map.op != RIP_MAP_UNMAP)
            fprintf(out, " stack=%" PRIu64, r->u.map.stack);
        if (r->u.map.op == RIP_MAP_REMAP)
            fprintf(out, " old=0x%" PRIx64 " old_len=%" PRIu64, r->u.map.old, r->u.map.old_len);
        break;
    }
    case RIP_REC_CHECKPOINT:
        fprintf(out, "checkpoint t=%" PRIu64 " number=%" PRIu64 " files=%" PRIu64, r->t,
                r->u.checkpoint.number, r->u.checkpoint.nfiles);
        for (uint32_t i = 0; i < r->u.checkpoint.nranges; i++) {
            const rip_range_t *g = &r->u.checkpoint.ranges[i];
            fprintf(out, "%c%" PRIu32, i ? ',' : ' ', g->first);
            if (g->last != g->first)
                fprintf(out, "-%" PRIu32, g->last);
        }
        break;
    case RIP_REC_UNKNOWN:
        fprintf(out, "unknown type=0x%02x", r->u.unknown.type);
        break;
    }
    fputc('\n', out);
}

/* Says what went wrong and returns the exit status for it: a truncated file is a warning (what
 * was before the cut has been printed), anything else an error. */
static int put_error(FILE *err, const rip_error_t *e)
{
    char buf[1024];
    rip_error_format(e, buf, sizeof buf);
    if (e->code == RIP_E_TRUNCATED) {
        cli__warning(err, "%s", buf);
        return RHEAP_EXIT_WARNINGS;
    }
    cli__error(err, "%s", buf);
    return RHEAP_EXIT_INPUT;
}

/* Dumps one file. Returns an RHEAP_EXIT_*: OK, WARNINGS (truncated) or INPUT (invalid). */
static int dump_file(const char *path, FILE *out, FILE *err)
{
    rip_reader_t *r;
    rip_error_t e;
    rip_status_t st = rip_reader_open(path, &r, &e);
    if (st != RIP_OK)
        return put_error(err, &e);
    const rip_header_t *h = rip_reader_header(r);
    fprintf(out,
            "# file %s type=%s version=%u.%u pid=%" PRIu32 " tid=%" PRIu32 " recording=%" PRIu32
            " serial=%" PRIu32 " start_ns=%" PRIu64 " time_shift=%" PRIu32 "\n",
            base_name(path), h->is_process ? "process" : "thread", h->major, h->minor, h->pid,
            h->tid, h->recording, h->serial, h->start_ns, h->time_shift);
    if (h->segment)
        fprintf(out, "# segment %" PRIu32 " of the thread whose first file is number %" PRIu32 "\n",
                h->segment, h->first_serial);
    rip_record_t rec;
    while ((st = rip_reader_next(r, &rec, &e)) == RIP_OK)
        put_record(out, &rec);
    rip_reader_close(r);
    if (st == RIP_END)
        return RHEAP_EXIT_OK;
    return put_error(err, &e);
}

int cli__dump(const char *path, FILE *out, FILE *err)
{
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        rip_recording_t *rec;
        rip_error_t e;
        if (rip_recording_open(path, &rec, &e) != RIP_OK)
            return put_error(err, &e);
        int rc = dump_file(rip_recording_process_path(rec), out, err);
        if (rc != RHEAP_EXIT_INPUT && rip_recording_checkpoint_path(rec)) {
            int t = dump_file(rip_recording_checkpoint_path(rec), out, err);
            if (t > rc)
                rc = t;
        }
        for (size_t i = 0; rc != RHEAP_EXIT_INPUT && i < rip_recording_thread_count(rec); i++) {
            int t = dump_file(rip_recording_thread_path(rec, i), out, err);
            if (t > rc)
                rc = t;
        }
        rip_recording_close(rec);
        return rc;
    }
    return dump_file(path, out, err);
}
