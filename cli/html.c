/*
 * html.c: `rheap report --html -o FILE DB`, one self-contained page: per process, memory over
 * time with the peak, markers and recording windows; a flamegraph, top-down or bottom-up, of
 * leaked, peak, allocated or temporary bytes or of allocations, with a lifetime filter; the
 * callers and callees of a clicked function; the top sites and leaks with their stacks;
 * per-thread and size tables (docs/PAGE.md).
 *
 * The page is html/report.html with html/report.css and the scripts of html/ put inline (all
 * embedded into the binary at build time) and the data as one JSON object. The data are
 * summaries (per stack, per time slice, per thread, per size class), never rows of
 * `allocations`, so the page's size follows the number of distinct stacks, not of blocks, and
 * opens at once for any database. Nothing on the page loads anything from anywhere.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sqlite3.h>

#include "cli.h"

extern const char cli__html_report_html[], cli__html_report_css[];
/* The page's scripts, in the order they run (cli/pictures.cmake lists them); NULL ends it. */
extern const char *const cli__html_scripts[];

/* Slices of each recording's time on the memory chart. */
#define HTML_BUCKETS 400
/* Stacks kept per weight (leaked, peak, allocated); the rest of each recording is summed into
 * one "(other stacks)" entry, so the totals stay exact and the page small. */
#define HTML_TOP_STACKS 4000
/* The most per-stack rows of markers, and of checkpoint cuts, the page carries (each about 20
 * bytes): past it only every second, third, ... marker time or cut is kept, so the moments add
 * at most about 1 MB to a page of 2000 stacks. */
#define HTML_MOMENT_ROWS 40000
/* The recordings whose memory the page charts: those with the largest peaks (report.js draws
 * D.chart_max of them). Only theirs are read: slices, resident memory and checkpoint cuts of a
 * build's two thousand recordings were most of the page's reading, for charts not drawn. */
#define HTML_CHARTS 12

/* A JSON string; '<', '>' and '&' are escaped too, so no "</script>" can end the data early. */
static void json_str(FILE *f, const char *s)
{
    cli__json_string(f, s, 1);
}

static void json_i(FILE *f, const char *key, int64_t v, int comma)
{
    fprintf(f, "%s\"%s\":%" PRId64, comma ? "," : "", key, v);
}

typedef struct {
    const ra_model_t *pd;
    sqlite3 *db;          /* for the moments: marker_stacks, checkpoints, checkpoint_stacks */
    ra_memory_t *mem;     /* per recording (pd->procs[i]): its memory beyond the heap */
    char *suppressed;     /* the line naming what suppressions took out, or NULL */
    const ra_moment_t *mo; /* --at or --from/--to: the peak weight is the heap then */
    unsigned char *charted; /* per recording (pd->procs[i]): its memory is charted */
    int tree;             /* the stats are the tree's per stack (proc -1), and the charted
                             recordings' own (cli__cmd_report_html) */
    ra_smap_t frames; /* frame key -> index in the page's frame table */
    size_t nframes;
    int64_t *frame_of; /* per distinct frame of the model (pd->frames): its index in the
                          page's frame table + 1, 0 before its first use */
    ra_smap_t stacks; /* bt -> index in the page's stack table */
    size_t nstacks;
    unsigned char *keep;  /* per stat: shown on its own */
    int64_t *shown;       /* per bt + 1 up to nshown: its index in the page's stack table, -1
                             when not shown on its own (shown_stack) */
    size_t nshown;
} page_t;

/* The k-th largest of v[0, n) (k from 0), v reordered: a selection, not a sort, since a
 * process tree has millions of (recording, stack) figures and only the cut is wanted. */
static int64_t kth_largest(int64_t *v, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1;
    while (lo < hi) {
        /* The middle of three as the pivot: already ordered figures stay linear. */
        size_t mid = lo + (hi - lo) / 2;
        int64_t a = v[lo], b = v[mid], c = v[hi];
        int64_t pivot = (a < b) ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
        size_t i = lo, j = hi;
        while (i <= j) {
            while (v[i] > pivot)
                i++;
            while (v[j] < pivot)
                j--;
            if (i <= j) {
                int64_t t = v[i];
                v[i] = v[j];
                v[j] = t;
                i++;
                if (j == 0)
                    break;
                j--;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            return v[k];
    }
    return v[k];
}

/* The figures a stack is ranked by for the page: one per weight it can be drawn with. */
#define HTML_RANKS 6
static int64_t rank_of(const ra_stat_t *s, int k)
{
    switch (k) {
    case 0: return s->leaked_bytes;
    case 1: return s->peak_bytes;
    case 2: return s->bytes;
    case 3: return s->stopped_bytes;
    case 4: return s->blocks;
    default: return s->temporary_bytes;
    }
}

/* Marks the stats that are among the top HTML_TOP_STACKS of any weight. */
static int choose(page_t *pg)
{
    const ra_model_t *pd = pg->pd;
    pg->keep = calloc(pd->nstats + 1, 1);
    int64_t *v = malloc((pd->nstats + 1) * sizeof *v);
    if (!pg->keep || !v) {
        free(v);
        return -1;
    }
    for (int k = 0; k < HTML_RANKS; k++) {
        for (size_t i = 0; i < pd->nstats; i++)
            v[i] = rank_of(&pd->stats[i], k);
        int64_t cut = 1;
        if (pd->nstats > HTML_TOP_STACKS) {
            int64_t k = kth_largest(v, pd->nstats, HTML_TOP_STACKS - 1);
            cut = k > 1 ? k : 1;
        }
        for (size_t i = 0; i < pd->nstats; i++)
            if (rank_of(&pd->stats[i], k) >= cut)
                pg->keep[i] = 1;
    }
    free(v);
    return 0;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Reads the frames of the stacks the page shows on their own (choose): a few thousand of a
 * build's 200,000, whose frames were most of the page's reading. */
static ra_status_t read_frames(page_t *pg, ra_err_t *err)
{
    ra_model_t *pd = (ra_model_t *)pg->pd;
    int64_t *bts = malloc((pd->nstats + 1) * sizeof *bts);
    if (!bts) {
        snprintf(err->msg, sizeof err->msg, "out of memory");
        return RA_E_NOMEM;
    }
    size_t n = 0;
    for (size_t i = 0; i < pd->nstats; i++)
        if (pg->keep[i] && pd->stats[i].bt >= 0)
            bts[n++] = pd->stats[i].bt;
    if (n)
        qsort(bts, n, sizeof *bts, cmp_i64);
    ra_status_t rc = ra_model_frames(pg->db, pd, bts, n, err);
    free(bts);
    return rc;
}

/* Adds the figures of s into sum, for the entry of a recording's stacks not shown one by one. */
static void add_stat(ra_stat_t *sum, const ra_stat_t *s)
{
    sum->blocks += s->blocks;
    sum->bytes += s->bytes;
    sum->leaked_blocks += s->leaked_blocks;
    sum->leaked_bytes += s->leaked_bytes;
    sum->peak_blocks += s->peak_blocks;
    sum->peak_bytes += s->peak_bytes;
    sum->stopped_blocks += s->stopped_blocks;
    sum->stopped_bytes += s->stopped_bytes;
    sum->temporary_blocks += s->temporary_blocks;
    sum->temporary_bytes += s->temporary_bytes;
    for (int d = 0; d < RA_LIFE_DECADES; d++) {
        sum->life_blocks[d] += s->life_blocks[d];
        sum->life_bytes[d] += s->life_bytes[d];
    }
}

/* One entry of the stats: [proc, stack (-1: the recording's other stacks), blocks, bytes,
 * leaked_blocks, leaked_bytes, peak_blocks, peak_bytes, stopped_blocks, stopped_bytes,
 * temporary_blocks, temporary_bytes, lifetimes], lifetimes being [decade, blocks, bytes, ...]
 * for the decades that freed any block (report.js reads them). */
static void write_stat(FILE *f, int first, int64_t proc, int64_t stack, const ra_stat_t *s)
{
    fprintf(f, "%s[%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64
               ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",[",
            first ? "" : ",\n", proc, stack, s->blocks, s->bytes, s->leaked_blocks, s->leaked_bytes,
            s->peak_blocks, s->peak_bytes, s->stopped_blocks, s->stopped_bytes,
            s->temporary_blocks, s->temporary_bytes);
    int n = 0;
    for (int d = 0; d < RA_LIFE_DECADES; d++)
        if (s->life_blocks[d])
            fprintf(f, "%s%d,%" PRId64 ",%" PRId64, n++ ? "," : "", d, s->life_blocks[d],
                    s->life_bytes[d]);
    fputs("]]", f);
}

/* The page's index of a frame, appending it to the frame table on first sight. */
static int64_t frame_index(page_t *pg, const ra_frame_t *f, FILE *out)
{
    /* A frame of the model is keyed once: the stacks shown pass through the same frames. */
    int64_t *memo = NULL;
    if (pg->frame_of && f >= pg->pd->frames && f < pg->pd->frames + pg->pd->nframes) {
        memo = &pg->frame_of[f - pg->pd->frames];
        if (*memo)
            return *memo - 1;
    }
    char key[2048], buf[64];
    const char *name = ra_frame_name(f, buf, sizeof buf);
    /* The module is part of a frame: `_start` of perl is not `_start` of python3, and a frame
     * keeps the module of its own stack, whatever process first showed the name. */
    snprintf(key, sizeof key, "%s\x01%s\x01%" PRId64 "\x01%d\x01%s", name, f->file ? f->file : "",
             f->line, f->inlined, f->module ? f->module : "");
    uint64_t idx;
    int created;
    if (ra_smap_get(&pg->frames, key, pg->nframes, &idx, &created) != 0)
        return -1;
    if (created) {
        /* [name, file, line, inlined, module] */
        fputs(pg->nframes ? ",\n[" : "[", out);
        json_str(out, name);
        fputc(',', out);
        json_str(out, f->file);
        fprintf(out, ",%" PRId64 ",%d,", f->line, f->inlined);
        json_str(out, f->module);
        fputc(']', out);
        pg->nframes++;
    }
    if (memo)
        *memo = (int64_t)idx + 1;
    return (int64_t)idx;
}

/* The recording's resident memory and own mappings (cli/html/rss.js draws them): "rss" holds
 * at most HTML_BUCKETS samples {t, bytes}; "rss_peak" [t, bytes, heap live then at most];
 * "maps" [calls, bytes, peak bytes, peak t, bytes at the end]. Absent when it has none. */
static void write_memory(FILE *out, const ra_memory_t *m)
{
    if (!m)
        return;
    if (m->npoints) {
        fputs(",\"rss\":{\"t\":[", out);
        for (size_t i = 0; i < m->npoints; i++)
            fprintf(out, "%s%" PRId64, i ? "," : "", m->points[i].t);
        fputs("],\"bytes\":[", out);
        for (size_t i = 0; i < m->npoints; i++)
            fprintf(out, "%s%" PRId64, i ? "," : "", m->points[i].bytes);
        fprintf(out, "]},\"rss_peak\":[%" PRId64 ",%" PRId64 ",%" PRId64 "]", m->peak_t,
                m->peak_bytes, m->heap_at_peak);
    }
    if (m->maps)
        fprintf(out, ",\"maps\":[%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 "]",
                m->maps, m->map_bytes, m->map_peak_bytes, m->map_peak_t, m->map_end_bytes);
}

static void free_memory(ra_memory_t *mem, size_t n)
{
    for (size_t i = 0; mem && i < n; i++)
        ra_memory_free(&mem[i]);
    free(mem);
}

/* Each recording's memory beyond the heap, read while the database is open; NULL when out of
 * memory or unreadable (the page then goes without it). */
static ra_memory_t *load_memory(sqlite3 *db, const ra_model_t *pd, const unsigned char *charted)
{
    ra_memory_t *mem = calloc(pd->nprocs + 1, sizeof *mem);
    ra_err_t err;
    for (size_t i = 0; mem && i < pd->nprocs; i++) {
        if (charted[i] && ra_memory_load(db, pd->procs[i].pid, pd->procs[i].recording,
                                         HTML_BUCKETS, &mem[i], &err) != RA_OK) {
            free_memory(mem, i);
            return NULL;
        }
    }
    return mem;
}

/* The first of n elements of `size` bytes sorted by (pid, recording), int64_t fields at those
 * offsets, whose (pid, recording) is not below the one given: the model keeps its markers,
 * windows, threads and size classes in that order, and each recording's rows are found by this
 * search rather than by passing over every recording's (2,000 times 40,000 on a build). */
static size_t first_of(const void *base, size_t n, size_t size, size_t pid_at, size_t rec_at,
                       int64_t pid, int64_t rec)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const char *e = (const char *)base + mid * size;
        int64_t p, r;
        memcpy(&p, e + pid_at, sizeof p);
        memcpy(&r, e + rec_at, sizeof r);
        if (p < pid || (p == pid && r < rec))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}
#define FIRST_OF(arr, n, p, r)                                                                 \
    first_of((arr), (n), sizeof *(arr), offsetof(__typeof__(*(arr)), pid),                    \
             offsetof(__typeof__(*(arr)), recording), (p), (r))

static void write_proc(FILE *out, const ra_model_t *pd, const ra_memory_t *mem, size_t p,
                       int detail)
{
    const ra_proc_t *pr = &pd->procs[p];
    fputc('{', out);
    json_i(out, "pid", pr->pid, 0);
    json_i(out, "rec", pr->recording, 1);
    json_i(out, "ppid", pr->ppid, 1);
    fputs(",\"exe\":", out);
    json_str(out, pr->exe);
    fputs(",\"cmd\":", out);
    json_str(out, pr->cmdline);
    json_i(out, "start_wall", pr->start_wall_ns, 1);
    json_i(out, "end", pr->end_t, 1);
    json_i(out, "peak_t", pr->peak_t, 1);
    json_i(out, "peak_bytes", pr->peak_bytes, 1);
    json_i(out, "peak_blocks", pr->peak_blocks, 1);
    json_i(out, "allocs", pr->allocs, 1);
    json_i(out, "bytes", pr->bytes, 1);
    json_i(out, "frees", pr->frees, 1);
    json_i(out, "leaked_blocks", pr->leaked_blocks, 1);
    json_i(out, "leaked_bytes", pr->leaked_bytes, 1);
    /* A window (until_exit 0) has no leaks, only blocks still live when it stopped. */
    json_i(out, "until_exit", pr->until_exit, 1);
    json_i(out, "stopped_blocks", pr->stopped_blocks, 1);
    json_i(out, "stopped_bytes", pr->stopped_bytes, 1);
    json_i(out, "sample_interval", pr->sample_interval, 1);
    /* On a tree's page: the recording's own stacks are on it (it is charted). */
    if (detail)
        json_i(out, "detail", 1, 1);
    if (pr->moment) {
        json_i(out, "moment_from", pr->moment_from, 1);
        json_i(out, "moment_to", pr->moment_to, 1);
    }
    write_memory(out, mem ? &mem[p] : NULL);
    /* The chart: per slice its start, the most bytes live in it and the allocations in it. */
    static const char *const cols[] = {"t", "max", "allocs"};
    fputs(",\"buckets\":{", out);
    for (int c = 0; c < 3; c++) {
        fprintf(out, "%s\"%s\":[", c ? "," : "", cols[c]);
        for (size_t i = 0; i < pr->nbuckets; i++) {
            const ra_bucket_t *b = &pd->buckets[pr->bucket0 + i];
            int64_t v = c == 0 ? b->t_from : c == 1 ? b->max_live : b->allocs;
            fprintf(out, "%s%" PRId64, i ? "," : "", v);
        }
        fputc(']', out);
    }
    fputs("},\"markers\":[", out);
    int n = 0;
    for (size_t i = FIRST_OF(pd->markers, pd->nmarkers, pr->pid, pr->recording);
         i < pd->nmarkers; i++) {
        const ra_marker_t *m = &pd->markers[i];
        if (m->pid != pr->pid || m->recording != pr->recording)
            break;
        fprintf(out, "%s[%" PRId64 ",", n++ ? "," : "", m->t);
        json_str(out, m->label);
        fputc(']', out);
    }
    fputs("],\"windows\":[", out);
    n = 0;
    for (size_t i = FIRST_OF(pd->windows, pd->nwindows, pr->pid, pr->recording);
         i < pd->nwindows; i++) {
        const ra_window_t *w = &pd->windows[i];
        if (w->pid != pr->pid || w->recording != pr->recording)
            break;
        fprintf(out, "%s[%" PRId64 ",%" PRId64 ",", n++ ? "," : "", w->on_t,
                w->off_t >= 0 ? w->off_t : pr->end_t);
        json_str(out, w->on_how);
        fputc(',', out);
        json_str(out, w->off_t >= 0 ? w->off_how : "(still on)");
        fputc(']', out);
    }
    /* The threads' and size classes' last two columns: the leaks of a recording that lasted
     * until its process ended, or what a window left live when it stopped (the other pair is 0);
     * the page names the column after what its recordings hold. */
    fputs("],\"threads\":[", out);
    n = 0;
    for (size_t i = FIRST_OF(pd->threads, pd->nthreads, pr->pid, pr->recording);
         i < pd->nthreads; i++) {
        const ra_thread_t *t = &pd->threads[i];
        if (t->pid != pr->pid || t->recording != pr->recording)
            break;
        fprintf(out, "%s[%" PRId64 ",", n++ ? "," : "", t->tid);
        json_str(out, t->name);
        fprintf(out, ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 "]", t->allocs,
                t->bytes, t->frees, t->leaked_blocks + t->stopped_blocks,
                t->leaked_bytes + t->stopped_bytes);
    }
    fputs("],\"sizes\":[", out);
    n = 0;
    for (size_t i = FIRST_OF(pd->sizes, pd->nsizes, pr->pid, pr->recording); i < pd->nsizes;
         i++) {
        const ra_sizeclass_t *z = &pd->sizes[i];
        if (z->pid != pr->pid || z->recording != pr->recording)
            break;
        fprintf(out, "%s[%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 "]",
                n++ ? "," : "", z->lo, z->hi, z->blocks, z->bytes, z->leaked_blocks + z->stopped_blocks,
                z->leaked_bytes + z->stopped_bytes);
    }
    fputs("]}", out);
}

static int write_moments(page_t *pg, FILE *out);

/* The data object: {"db", "procs", "frames", "stacks", "stats", "moments"}. The frame and stack tables
 * are written as they are first used, so the stats come last but are built in the same pass:
 * they go to a memory stream first. */
static int index_shown(page_t *pg);
static int write_moments(page_t *pg, FILE *out);

static int write_data(page_t *pg, const char *db_path, FILE *out)
{
    const ra_model_t *pd = pg->pd;
    char *stacks_txt = NULL, *stats_txt = NULL;
    size_t stacks_len = 0, stats_len = 0;
    FILE *stacks = open_memstream(&stacks_txt, &stacks_len);
    FILE *stats = open_memstream(&stats_txt, &stats_len);
    if (!stacks || !stats) {
        if (stacks)
            fclose(stacks);
        if (stats)
            fclose(stats);
        free(stacks_txt);
        free(stats_txt);
        return -1;
    }
    fputs("{\"db\":", out);
    json_str(out, db_path);
    fprintf(out, ",\"version\":\"%s\",\"suppressed\":", RHEAP_VERSION_STRING);
    json_str(out, pg->suppressed);
    /* The moment the peak weight stands for, in the user's words: "at b_done". */
    fputs(",\"moment\":", out);
    char moment[512];
    if (pg->mo && pg->mo->at)
        snprintf(moment, sizeof moment, "at %s", pg->mo->at);
    else if (pg->mo)
        snprintf(moment, sizeof moment, "at the highest point from %s to %s", pg->mo->from,
                 pg->mo->to);
    json_str(out, pg->mo ? moment : NULL);
    fprintf(out, ",\"chart_max\":%d,\"tree\":%d,\"procs\":[\n", HTML_CHARTS, pg->tree);
    for (size_t p = 0; p < pd->nprocs; p++) {
        if (p)
            fputs(",\n", out);
        write_proc(out, pd, pg->mem, p, pg->tree && pg->charted[p]);
    }
    fputs("],\n\"frames\":[", out);
    int rc = 0;
    size_t nstats = 0;
    /* Per recording, the sum of the stacks not shown on their own; proc -1: the tree's stats,
     * every recording's added up. */
    ra_stat_t other = {0};
    int64_t other_proc = INT64_MIN;
    for (size_t i = 0; i <= pd->nstats && rc == 0; i++) {
        const ra_stat_t *s = i < pd->nstats ? &pd->stats[i] : NULL;
        int64_t p = !s ? INT64_MIN : s->pid < 0 ? -1
                  : (int64_t)(ra_model_proc(pd, s->pid, s->recording) - pd->procs);
        if (other_proc != INT64_MIN && p != other_proc) {
            if (other.blocks)
                write_stat(stats, nstats++ == 0, other_proc, -1, &other);
            memset(&other, 0, sizeof other);
        }
        other_proc = p;
        if (!s)
            break;
        if (!pg->keep[i]) {
            add_stat(&other, s);
            continue;
        }
        char key[32];
        snprintf(key, sizeof key, "%" PRId64, s->bt);
        uint64_t idx;
        int created;
        if (ra_smap_get(&pg->stacks, key, pg->nstacks, &idx, &created) != 0) {
            rc = -1;
            break;
        }
        if (created) {
            /* Frame indices from the outermost frame to the site. */
            const ra_stack_t *st = ra_model_stack(pd, s->bt);
            fputs(pg->nstacks++ ? ",\n[" : "[", stacks);
            if (!st || st->nframes == 0) {
                ra_frame_t none = {.sym = "(no backtrace)"};
                int64_t f = frame_index(pg, &none, out);
                rc |= f < 0;
                fprintf(stacks, "%" PRId64, f);
            } else {
                for (size_t k = st->nframes; k-- > 0;) {
                    int64_t f = frame_index(pg, st->frames[k], out);
                    rc |= f < 0;
                    fprintf(stacks, "%s%" PRId64, k + 1 < st->nframes ? "," : "", f);
                }
            }
            fputc(']', stacks);
        }
        write_stat(stats, nstats++ == 0, p, (int64_t)idx, s);
    }
    rc |= fclose(stacks) != 0;
    rc |= fclose(stats) != 0;
    if (rc == 0) {
        fputs("],\n\"stacks\":[", out);
        fwrite(stacks_txt, 1, stacks_len, out);
        fputs("],\n\"stats\":[", out);
        fwrite(stats_txt, 1, stats_len, out);
        fputc(']', out);
        rc = index_shown(pg) != 0 ? -1 : write_moments(pg, out);
        fputc('}', out);
    }
    free(stacks_txt);
    free(stats_txt);
    return rc ? -1 : 0;
}

/* Indexes the stacks the page shows by bt, once they are numbered (write_data): the moments
 * look a stack up for each of millions of rows. 0, or -1 when out of memory. */
static int index_shown(page_t *pg)
{
    const ra_model_t *pd = pg->pd;
    int64_t top = -1;
    for (size_t i = 0; i < pd->nstats; i++)
        if (pd->stats[i].bt > top)
            top = pd->stats[i].bt;
    pg->nshown = (size_t)(top + 2);
    pg->shown = malloc(pg->nshown * sizeof *pg->shown);
    if (!pg->shown)
        return -1;
    for (size_t b = 0; b < pg->nshown; b++)
        pg->shown[b] = -1;
    /* Only the stats kept are in the stack table: a few thousand lookups, not one per stack of
     * the database (a build's 200,000 keys printed and hashed). */
    for (size_t i = 0; i < pd->nstats; i++) {
        if (!pg->keep[i] || pd->stats[i].bt < -1 || pg->shown[pd->stats[i].bt + 1] >= 0)
            continue;
        char key[32];
        snprintf(key, sizeof key, "%" PRId64, pd->stats[i].bt);
        uint64_t idx;
        int created;
        if (ra_smap_get(&pg->stacks, key, UINT64_MAX, &idx, &created) != 0)
            return -1;
        pg->shown[pd->stats[i].bt + 1] = idx == UINT64_MAX ? -1 : (int64_t)idx;
    }
    return 0;
}

/* The page's index of stack bt, or -1 when the page shows it only in "(smaller stacks)". */
static int64_t shown_stack(const page_t *pg, int64_t bt)
{
    return bt >= -1 && (uint64_t)(bt + 1) < pg->nshown ? pg->shown[bt + 1] : -1;
}

/* One moment of a recording: [t, label (null: a checkpoint cut), blocks, bytes, [stack,
 * blocks, bytes, ...]]. A marker's rows are its whole heap; a cut's only the stacks that
 * changed since the cut before it on the page (report.js/moment.js carry the others over). */
static void moment_head(FILE *f, int *n, int64_t t, const char *label, int64_t blocks,
                        int64_t bytes)
{
    fprintf(f, "%s[%" PRId64 ",", (*n)++ ? ",\n" : "", t);
    json_str(f, label);
    fprintf(f, ",%" PRId64 ",%" PRId64 ",[", blocks, bytes);
}

/* The markers of recording p with their exact heap per shown stack (marker_stacks), stacks not
 * shown summed into one entry of stack -1: the markers at every `every`-th distinct time (the
 * others the page snaps to the moment before, and says so). One pass over the recording's rows
 * in time order: markers are in time order too (ra_model_load). */
static int write_marker_moments(page_t *pg, const ra_proc_t *pr, int64_t every, FILE *f, int *n)
{
    const ra_model_t *pd = pg->pd;
    /* A recording without markers has no moments of them: most of a build's recordings, each
     * of which cost a pass over marker_stacks. */
    size_t first = FIRST_OF(pd->markers, pd->nmarkers, pr->pid, pr->recording);
    if (first == pd->nmarkers || pd->markers[first].pid != pr->pid ||
        pd->markers[first].recording != pr->recording)
        return 0;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(pg->db,
                           "SELECT t, coalesce(bt, -1), blocks, bytes FROM marker_stacks "
                           "WHERE pid = ?1 AND recording = ?2 ORDER BY t",
                           -1, &st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_int64(st, 1, pr->pid);
    sqlite3_bind_int64(st, 2, pr->recording);
    int row = sqlite3_step(st), rc = 0;
    /* The rows of the last time read: markers of one time share them. */
    char *rows = NULL;
    size_t len = 0;
    int64_t last_t = -1, blocks = 0, bytes = 0, times = 0;
    for (size_t i = first; i < pd->nmarkers && rc == 0; i++) {
        const ra_marker_t *m = &pd->markers[i];
        if (m->pid != pr->pid || m->recording != pr->recording)
            break;
        if (m->t != last_t) {
            free(rows);
            rows = NULL;
            len = 0;
            blocks = bytes = 0;
            int kept = times++ % every == 0;
            last_t = m->t;
            FILE *r = kept ? open_memstream(&rows, &len) : NULL;
            if (kept && !r) {
                rc = -1;
                break;
            }
            int64_t oblocks = 0, obytes = 0;
            int k = 0;
            for (; row == SQLITE_ROW && sqlite3_column_int64(st, 0) <= m->t; row = sqlite3_step(st)) {
                if (!r || sqlite3_column_int64(st, 0) < m->t)
                    continue;
                int64_t s = shown_stack(pg, sqlite3_column_int64(st, 1));
                int64_t b = sqlite3_column_int64(st, 2), y = sqlite3_column_int64(st, 3);
                blocks += b;
                bytes += y;
                if (s < 0) {
                    oblocks += b;
                    obytes += y;
                } else {
                    fprintf(r, "%s%" PRId64 ",%" PRId64 ",%" PRId64, k++ ? "," : "", s, b, y);
                }
            }
            if (!r)
                continue;
            if (oblocks)
                fprintf(r, "%s-1,%" PRId64 ",%" PRId64, k ? "," : "", oblocks, obytes);
            rc |= fclose(r) != 0;
        }
        if (rows && rc == 0) {
            moment_head(f, n, m->t, m->label ? m->label : "", blocks, bytes);
            fwrite(rows, 1, len, f);
            fputs("]]", f);
        }
    }
    free(rows);
    rc |= row != SQLITE_DONE && row != SQLITE_ROW;
    sqlite3_finalize(st);
    return rc ? -1 : 0;
}

/* The checkpoint cuts of recording p, every `every`-th one and the last: the heap after every
 * event at or before the cut, exactly, per shown stack, as the changes since the cut before. */
static int cmp_size_t(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

/* A checkpoint_stacks row of a stack the page shows. */
typedef struct {
    int64_t ck, s, blocks, bytes;
} ckrow_t;

static int cmp_ckrow(const void *a, const void *b)
{
    const ckrow_t *x = a, *y = b;
    return x->ck < y->ck ? -1 : x->ck > y->ck;
}

/* Puts rows[0, n) in the order of their cut by counting them per cut: the cuts are numbered
 * from 0 up, and a charted compiler's hundred thousand rows (in stack order) took a tenth of
 * the page to sort by comparisons. 0, or -1 when the numbers are not small (or out of memory):
 * the caller sorts then. */
static int sort_by_cut(ckrow_t *rows, size_t n)
{
    int64_t top = 0;
    for (size_t i = 0; i < n; i++) {
        if (rows[i].ck < 0)
            return -1;
        if (rows[i].ck > top)
            top = rows[i].ck;
    }
    if ((uint64_t)top > 4 * (uint64_t)n + 4096)
        return -1;
    size_t *at = calloc((size_t)top + 2, sizeof *at);
    ckrow_t *to = malloc((n ? n : 1) * sizeof *to);
    if (!at || !to) {
        free(at);
        free(to);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        at[rows[i].ck + 1]++;
    for (int64_t c = 0; c <= top; c++)
        at[c + 1] += at[c];
    for (size_t i = 0; i < n; i++)
        to[at[rows[i].ck]++] = rows[i];
    memcpy(rows, to, n * sizeof *to);
    free(at);
    free(to);
    return 0;
}

/* The rows of recording pr's shown stacks, by ck: 0, or -1 when it cannot be read. A
 * recording's rows are written together, cut after cut: they are read as one range of rowids,
 * not through the index by stack, which visits the table out of order (0.5 s against 2.0 s
 * for 456,000 rows), and sorted by cut here, only the shown stacks' rows, rather than by
 * SQLite's sorter (seconds for a build's millions of rows). The range is only for speed; the WHERE keeps the answer exact. */
static int read_cut_rows(const page_t *pg, const ra_proc_t *pr, ckrow_t **rows, size_t *n)
{
    sqlite3_stmt *cs = NULL;
    *rows = NULL;
    *n = 0;
    if (sqlite3_prepare_v2(pg->db,
                           "SELECT ck, coalesce(bt, -1), blocks, bytes FROM checkpoint_stacks "
                           "NOT INDEXED WHERE rowid BETWEEN (SELECT min(rowid) FROM "
                           "checkpoint_stacks WHERE pid = ?1 AND recording = ?2) AND (SELECT "
                           "max(rowid) FROM checkpoint_stacks WHERE pid = ?1 AND recording = "
                           "?2) AND pid = ?1 AND recording = ?2",
                           -1, &cs, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_int64(cs, 1, pr->pid);
    sqlite3_bind_int64(cs, 2, pr->recording);
    size_t cap = 0;
    int sorted = 1, row;
    while ((row = sqlite3_step(cs)) == SQLITE_ROW) {
        int64_t s = shown_stack(pg, sqlite3_column_int64(cs, 1));
        if (s < 0)
            continue;
        if (rheap_grow(rows, &cap, *n, sizeof **rows, 256) != 0)
            break;
        ckrow_t *r = &(*rows)[(*n)++];
        r->ck = sqlite3_column_int64(cs, 0);
        r->s = s;
        r->blocks = sqlite3_column_int64(cs, 2);
        r->bytes = sqlite3_column_int64(cs, 3);
        sorted &= *n == 1 || r[-1].ck <= r->ck;
    }
    sqlite3_finalize(cs);
    if (row != SQLITE_DONE) {
        free(*rows);
        *rows = NULL;
        return -1;
    }
    /* A stack has one row per cut, so rows of one cut may come in any order. */
    if (!sorted && sort_by_cut(*rows, *n) != 0)
        qsort(*rows, *n, sizeof **rows, cmp_ckrow);
    return 0;
}

/* The checkpoint cuts of recording p, every `every`-th one and the last: the heap after every
 * event at or before the cut, exactly, per shown stack, as the changes since the cut before. */
static int write_cut_moments(page_t *pg, const ra_proc_t *pr, int64_t every, FILE *f, int *n)
{
    size_t ns = pg->nstacks + 1; /* the last: the stacks not shown */
    int64_t *cur = calloc(ns * 2, sizeof *cur);
    unsigned char *dirty = calloc(ns, 1);
    size_t *changed = malloc(ns * sizeof *changed); /* the dirty ones, in the order met */
    size_t nchanged = 0;
    int64_t shown_blocks = 0, shown_bytes = 0; /* cur's sums over the shown stacks */
    ckrow_t *rows = NULL;
    size_t nrows = 0, r = 0;
    sqlite3_stmt *ck = NULL;
    int rc = !cur || !dirty || !changed;
    if (!rc)
        rc = sqlite3_prepare_v2(pg->db,
                                "SELECT ck, t, blocks, bytes, (SELECT max(ck) FROM checkpoints "
                                "WHERE pid = ?1 AND recording = ?2) FROM checkpoints "
                                "WHERE pid = ?1 AND recording = ?2 AND ck > 0 ORDER BY ck",
                                -1, &ck, NULL) != SQLITE_OK ||
             read_cut_rows(pg, pr, &rows, &nrows) != 0;
    if (!rc) {
        sqlite3_bind_int64(ck, 1, pr->pid);
        sqlite3_bind_int64(ck, 2, pr->recording);
    }
    /* A stack's figures from the last row read; those not shown as one sum, kept per stack in
     * `others` would need a map: the cut's total less the shown stacks gives it instead. The
     * shown stacks' sum and the list of those that changed are kept as rows come, so a cut
     * costs its own rows, not one step per stack of the page. */
    int step = SQLITE_DONE;
    while (!rc && (step = sqlite3_step(ck)) == SQLITE_ROW) {
        int64_t c = sqlite3_column_int64(ck, 0), t = sqlite3_column_int64(ck, 1);
        int64_t blocks = sqlite3_column_int64(ck, 2), bytes = sqlite3_column_int64(ck, 3);
        int64_t last = sqlite3_column_int64(ck, 4);
        for (; r < nrows && rows[r].ck <= c; r++) {
            size_t s = (size_t)rows[r].s;
            shown_blocks += rows[r].blocks - cur[2 * s];
            shown_bytes += rows[r].bytes - cur[2 * s + 1];
            cur[2 * s] = rows[r].blocks;
            cur[2 * s + 1] = rows[r].bytes;
            if (!dirty[s]) {
                dirty[s] = 1;
                changed[nchanged++] = s;
            }
        }
        if (c % every != 0 && c != last)
            continue;
        moment_head(f, n, t, NULL, blocks, bytes);
        int k = 0;
        if (nchanged > 1)
            qsort(changed, nchanged, sizeof *changed, cmp_size_t);
        for (size_t i = 0; i < nchanged; i++) {
            size_t s = changed[i];
            fprintf(f, "%s%zu,%" PRId64 ",%" PRId64, k++ ? "," : "", s, cur[2 * s],
                    cur[2 * s + 1]);
            dirty[s] = 0;
        }
        nchanged = 0;
        int64_t oblocks = blocks - shown_blocks, obytes = bytes - shown_bytes;
        /* The stacks not shown: written whenever their sum moved. */
        if (oblocks != cur[2 * (ns - 1)] || obytes != cur[2 * (ns - 1) + 1]) {
            fprintf(f, "%s-1,%" PRId64 ",%" PRId64, k++ ? "," : "", oblocks, obytes);
            cur[2 * (ns - 1)] = oblocks;
            cur[2 * (ns - 1) + 1] = obytes;
        }
        fputs("]]", f);
    }
    rc |= step != SQLITE_DONE;
    sqlite3_finalize(ck);
    free(rows);
    free(cur);
    free(dirty);
    free(changed);
    return rc ? -1 : 0;
}

/* "moments": per recording (in the order of procs), its markers then its cuts, each in time
 * order (moment.js merges them). */
static int write_moments(page_t *pg, FILE *out)
{
    const ra_model_t *pd = pg->pd;
    /* Every `every`-th cut and marker time, so that the page carries at most about
     * HTML_MOMENT_ROWS stack rows of each. */
    int64_t every[2] = {1, 1};
    static const char *const counts[2] = {"SELECT count(*) FROM marker_stacks",
                                          "SELECT count(*) FROM checkpoint_stacks"};
    for (int k = 0; k < 2; k++) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(pg->db, counts[k], -1, &st, NULL) != SQLITE_OK)
            return -1;
        if (sqlite3_step(st) == SQLITE_ROW)
            every[k] = sqlite3_column_int64(st, 0) / HTML_MOMENT_ROWS + 1;
        sqlite3_finalize(st);
    }
    fputs(",\n\"moments\":[", out);
    for (size_t p = 0; p < pd->nprocs; p++) {
        fputs(p ? ",\n[" : "[", out);
        int n = 0;
        /* Markers are few and named, so every recording keeps its own; a checkpoint cut is a
         * point of a chart, kept for the recordings charted. */
        if (write_marker_moments(pg, &pd->procs[p], every[0], out, &n) != 0 ||
            (pg->charted[p] && write_cut_moments(pg, &pd->procs[p], every[1], out, &n) != 0))
            return -1;
        fputc(']', out);
    }
    fputc(']', out);
    return 0;
}

/* Copies the template to out, replacing each {{NAME}} by its part. */
static int write_page(page_t *pg, const char *db_path, FILE *out)
{
    const char *s = cli__html_report_html;
    while (*s) {
        const char *open = strstr(s, "{{");
        if (!open) {
            fputs(s, out);
            break;
        }
        fwrite(s, 1, (size_t)(open - s), out);
        const char *close = strstr(open, "}}");
        if (!close)
            return -1;
        size_t n = (size_t)(close - open - 2);
        if (n == 3 && !strncmp(open + 2, "CSS", 3)) {
            fputs(cli__html_report_css, out);
        } else if (n == 2 && !strncmp(open + 2, "JS", 2)) {
            for (const char *const *js = cli__html_scripts; *js; js++)
                fputs(*js, out);
        } else if (n == 4 && !strncmp(open + 2, "DATA", 4)) {
            if (write_data(pg, db_path, out) != 0)
                return -1;
        } else if (n == 5 && !strncmp(open + 2, "TITLE", 5)) {
            /* Text inside <title>: escape what HTML gives meaning to. */
            const char *base = strrchr(db_path, '/');
            for (const char *p = base ? base + 1 : db_path; *p; p++) {
                if (*p == '<')
                    fputs("&lt;", out);
                else if (*p == '&')
                    fputs("&amp;", out);
                else
                    fputc(*p, out);
            }
        } else {
            return -1;
        }
        s = close + 2;
    }
    return 0;
}

/* The recordings charted: the HTML_CHARTS largest peaks, the first of equal ones, as report.js
 * orders them. NULL when out of memory. */
static unsigned char *choose_charts(const ra_model_t *pd)
{
    unsigned char *charted = calloc(pd->nprocs + 1, 1);
    if (!charted)
        return NULL;
    for (int k = 0; k < HTML_CHARTS; k++) {
        size_t best = SIZE_MAX;
        for (size_t i = 0; i < pd->nprocs; i++)
            if (!charted[i] &&
                (best == SIZE_MAX || pd->procs[i].peak_bytes > pd->procs[best].peak_bytes))
                best = i;
        if (best == SIZE_MAX)
            break;
        charted[best] = 1;
    }
    return charted;
}

/* The number of recordings in the database, 0 when it cannot say. */
static int64_t count_recordings(sqlite3 *db)
{
    sqlite3_stmt *st;
    int64_t n = 0;
    if (sqlite3_prepare_v2(db, "SELECT count(*) FROM processes", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
}

/* Suppressions on a tree's page: the line's figures are the tree's stats' (one per stack, each
 * decided once); the charted recordings' own stats lose their suppressed leaks too, counted
 * apart so that nothing is counted twice. */
static void apply_supp(ra_supp_t *supp, ra_model_t *pd, int64_t *bl, int64_t *by,
                       int64_t *scratch_bl, int64_t *scratch_by)
{
    size_t ntree = 0;
    while (ntree < pd->nstats && pd->stats[ntree].pid < 0)
        ntree++;
    ra_model_t part = *pd;
    part.nstats = ntree;
    ra_supp_apply(supp, &part, bl, by);
    part.stats = pd->stats + ntree;
    part.nstats = pd->nstats - ntree;
    ra_supp_apply(supp, &part, scratch_bl, scratch_by);
}

static void usage_html(FILE *f)
{
    fprintf(f,
            "Usage: rheap report --html -o FILE DB [-f] [--pid P] [--skip GLOB]\n"
            "                    [--at TIME|MARKER | --from A --to B]\n"
            "                    [--suppress FILE]... [--no-default-suppressions]\n"
            "\n"
            "Writes one self-contained HTML page (no network, no external file): per process,\n"
            "memory over time with the peak, markers and recording windows; a flamegraph,\n"
            "top-down or bottom-up, of leaked, peak, allocated or temporary bytes or of\n"
            "allocations, with a lifetime filter (click to zoom and to see the function's\n"
            "callers and callees, search by name); the top sites and leaks with their stacks;\n"
            "per-thread and size tables (click a header to sort).\n"
            "\n"
            "Options:\n"
            "  -o, --output FILE   the page to write\n"
            "  -f, --force         replace FILE if it exists\n"
            "  --pid P             only process P\n"
            RHEAP_MOMENT_HELP
            "                      (the page opens on that heap: the peak weight, named\n"
            "                      after the moment)\n"
            RHEAP_SKIP_HELP
            RHEAP_SUPP_HELP
            "                      (the page names what was suppressed above the leaks)\n"
            "\n"
            "Exit status: 0 success, 1 usage error, 2 missing or bad database, 4 the page\n"
            "could not be written.\n");
}

/* Parses the page's options; argv[0] is the command's name (only for getopt). Returns -1 when
 * the page is to be written, else the exit status. */
static int html_options(int argc, char **argv, const char **db_path, const char **output,
                        int64_t *pid, cli__supp_opts_t *so, const char **skip, int *force,
                        ra_moment_t *mo)
{
    static const struct option longs[] = {
        {"html", no_argument, NULL, 'H'},
        {"output", required_argument, NULL, 'o'},
        {"pid", required_argument, NULL, 'P'},
        {"skip", required_argument, NULL, 'K'},
        {"force", no_argument, NULL, 'f'},
        {"help", no_argument, NULL, 'h'},
        RHEAP_SUPP_LONGS,
        RHEAP_MOMENT_LONGS,
        {NULL, 0, NULL, 0},
    };
    int c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:fh", longs, NULL)) != -1) {
        switch (c) {
        case 'h': usage_html(stdout); return RHEAP_EXIT_OK;
        case 'H': break;
        case 'o': *output = optarg; break;
        case 'f': *force = 1; break;
        case 'K':
            if (!*optarg) {
                cli__error(stderr, "--skip: expected a pattern; got ''");
                return RHEAP_EXIT_USAGE;
            }
            *skip = optarg;
            break;
        case 'P': {
            char *end;
            *pid = strtoll(optarg, &end, 10);
            if (*end || *pid < 0) {
                cli__error(stderr, "--pid wants a process id, not '%s'", optarg);
                return RHEAP_EXIT_USAGE;
            }
            break;
        }
        default: {
            if (cli__moment_option(mo, c, optarg))
                break;
            int sr = cli__supp_option(so, c, optarg);
            if (sr > 0)
                break;
            if (sr < 0)
                return RHEAP_EXIT_USAGE;
            return cli__option_error(c, argv, longs,
                                       optopt == 'P' ? "a process id" : optopt == 'K' ? "a pattern"
                                     : optopt == RHEAP_MOMENT_OPT_AT || optopt == RHEAP_MOMENT_OPT_FROM ||
                                               optopt == RHEAP_MOMENT_OPT_TO
                                           ? "a time or a marker label"
                                           : "a file name",
                                       "rheap report --help");
        }
        }
    }
    /* DB, wherever it was among the options. */
    if (argc - optind > 1) {
        cli__error(stderr, "one database at a time (try rheap report --help)");
        return RHEAP_EXIT_USAGE;
    }
    if (optind < argc)
        *db_path = argv[optind];
    if (!*db_path || !*output) {
        cli__error(stderr, "%s (rheap report --html -o FILE DB)",
                     *db_path ? "--html needs -o FILE" : "no database given");
        return RHEAP_EXIT_USAGE;
    }
    return -1;
}

/* report.c hands over its arguments after "report" (--html among them); getopt wants the
 * command's name in front, so it gets a copy with one. */
int cli__cmd_report_html(int argc, char **argv)
{
    const char *db_path = NULL, *output = NULL, *skip = NULL;
    int64_t pid = -1;
    int force = 0;
    cli__supp_opts_t so = {0};
    ra_moment_t mo = {0};
    char **av = malloc(((size_t)argc + 2) * sizeof *av);
    if (!av) {
        cli__error(stderr, "out of memory");
        return RHEAP_EXIT_OUTPUT;
    }
    av[0] = (char *)"report";
    memcpy(av + 1, argv, (size_t)argc * sizeof *av);
    av[argc + 1] = NULL;
    int st = html_options(argc + 1, av, &db_path, &output, &pid, &so, &skip, &force, &mo);
    free(av);
    if (st >= 0)
        return st;
    if ((st = cli__output_check(output, force, "page")) != RHEAP_EXIT_OK)
        return st;
    sqlite3 *db;
    ra_err_t open_err;
    int rc = cli__said(ra_open_read(db_path, &db, &open_err), &open_err, stderr);
    if (rc != RHEAP_EXIT_OK)
        return rc;
    /* One read transaction for the whole page: its thousands of statements each took and gave
     * back the file's lock, and it reads one state of the database. Closing ends it. */
    sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
    ra_model_t pd;
    ra_err_t err;
    /* A process tree's page (several recordings, no --pid, no moment) is drawn from a stat per
     * stack over every recording (the converter's stack_totals and stack_lifetime_totals), the
     * charted recordings with their own stats besides (ra_model_detail): reading each
     * recording's rows was most of a build's page. One recording is drawn from its own. */
    int tree = pid < 0 && !cli__moment_given(&mo) && count_recordings(db) > 1;
    /* The frames are read once the page has chosen the stacks it shows (read_frames). */
    /* The timeline only of the recordings charted, chosen by their peaks (at the moment). */
    ra_status_t loaded = ra_model_load(db, pid,
                                       RA_MODEL_STACKS | RA_MODEL_PEAK | RA_MODEL_TABLES |
                                           RA_MODEL_LIFETIMES | RA_MODEL_FRAMES_LATER |
                                           (tree ? RA_MODEL_TOTALS : 0),
                                       HTML_BUCKETS, &pd, &err);
    if (loaded == RA_OK)
        loaded = ra_model_moment(db, &pd, &mo, &err);
    unsigned char *charted = loaded == RA_OK ? choose_charts(&pd) : NULL;
    if (loaded == RA_OK && !charted) {
        snprintf(err.msg, sizeof err.msg, "out of memory");
        loaded = RA_E_NOMEM;
    }
    if (loaded == RA_OK)
        loaded = ra_model_timeline(db, &pd, charted, HTML_BUCKETS, &err);
    if (loaded == RA_OK && tree)
        loaded = ra_model_detail(db, &pd, charted, &err);
    if (loaded != RA_OK) {
        cli__error(stderr, "%s: %s", db_path, err.msg);
        free(charted);
        ra_model_free(&pd);
        sqlite3_close(db);
        return (int)loaded;
    }
    /* Suppressed stacks leave the leak table, the leaked flamegraph and the never-freed
     * totals; the page names them in a line of their own. */
    ra_supp_t *supp;
    rc = cli__supp_open(&so, db, &supp, stderr);
    ra_memory_t *mem = load_memory(db, &pd, charted);
    if (rc != RHEAP_EXIT_OK) {
        free(charted);
        sqlite3_close(db);
        free_memory(mem, pd.nprocs);
        ra_model_free(&pd);
        return rc;
    }
    /* The database stays open until the page is written: its moments are read then. */
    page_t pg = {.pd = &pd, .db = db, .mem = mem, .mo = cli__moment_given(&mo) ? &mo : NULL,
                 .charted = charted, .tree = tree};
    size_t nr = ra_supp_nrules(supp);
    int64_t *bl = calloc(2 * nr + 2, sizeof *bl), *by = calloc(2 * nr + 2, sizeof *by);
    size_t len = 0;
    FILE *line = bl && by ? open_memstream(&pg.suppressed, &len) : NULL;
    if (line) {
        if (tree)
            apply_supp(supp, &pd, bl, by, bl + nr + 1, by + nr + 1);
        else
            ra_supp_apply(supp, &pd, bl, by);
        cli__supp_print(supp, bl, by, "", "", 0, line);
        fclose(line);
        if (pg.suppressed && len && pg.suppressed[len - 1] == '\n')
            pg.suppressed[len - 1] = 0;
        if (pg.suppressed && !*pg.suppressed) {
            free(pg.suppressed);
            pg.suppressed = NULL;
        }
    }
    free(bl);
    free(by);
    ra_supp_destroy(supp);
    if (!line) {
        cli__error(stderr, "out of memory");
        sqlite3_close(db);
        free(charted);
        free_memory(mem, pd.nprocs);
        ra_model_free(&pd);
        return RHEAP_EXIT_OUTPUT;
    }
    FILE *out = fopen(output, "w");
    if (!out) {
        cli__error(stderr, "%s: %s", output, strerror(errno));
        sqlite3_close(db);
        free(charted);
        free_memory(mem, pd.nprocs);
        ra_model_free(&pd);
        return RHEAP_EXIT_OUTPUT;
    }
    int failed = choose(&pg) != 0;
    if (!failed && (read_frames(&pg, &err) != RA_OK || ra_model_skip(db, &pd, skip, &err) != RA_OK)) {
        cli__error(stderr, "%s: %s", db_path, err.msg);
        fclose(out);
        sqlite3_close(db);
        free(pg.keep);
        free(charted);
        free(pg.suppressed);
        free_memory(mem, pd.nprocs);
        ra_model_free(&pd);
        return RHEAP_EXIT_INPUT;
    }
    if (!failed && !(pg.frame_of = calloc(pd.nframes + 1, sizeof *pg.frame_of)))
        failed = 1;
    failed = failed || write_page(&pg, db_path, out) != 0;
    if (fclose(out) != 0)
        failed = 1;
    sqlite3_close(db);
    free(pg.keep);
    free(charted);
    free(pg.shown);
    free(pg.frame_of);
    free(pg.suppressed);
    free_memory(mem, pd.nprocs);
    ra_smap_free(&pg.frames);
    ra_smap_free(&pg.stacks);
    ra_model_free(&pd);
    if (failed) {
        cli__error(stderr, "%s: could not write the page (%s)", output,
                     errno ? strerror(errno) : "out of memory");
        return RHEAP_EXIT_OUTPUT;
    }
    return RHEAP_EXIT_OK;
}
