/*
 * spill.c: the oldest live blocks of the store, on disk; and the store's memory budget.
 *
 * A heap of a billion small blocks does not fit in the converter's memory at 41 bytes a block,
 * and `rheap run` must not take the machine down beside the program it records. Over its
 * budget, the store (pair.c) hands its oldest blocks here, all at once, as one run: their packed
 * entries sorted by address and appended to a temporary file. Blocks that live long are the
 * ones a big heap is made of, and they are the ones least likely to be freed soon; the blocks
 * a program churns through are young and stay in memory.
 *
 * - A run in memory is what a lookup needs to avoid reading the file: a blocked bloom filter
 *   (10 bits per entry, 6 probes within one 64-byte line: one cache miss, about 1% false
 *   positives), the address of every 128th entry (a sparse index: the one 4 KiB piece of the
 *   file that can hold an address) and a freed bit per entry. About 1.4 bytes per spilled
 *   block. A free whose address is not in memory costs one bloom test per run whose address
 *   range holds it and, rarely, one read of 4 KiB; a free of a young block is found in memory
 *   first and never comes here. So does every allocation (an address handed out again while
 *   its block is live means an unrecorded free), which the address range mostly answers.
 * - A run is never rewritten: a block freed from it gets its freed bit, and once every block of
 *   a run is freed the run's memory is let go (its bytes stay in the file until the end).
 * - Runs are written in time order and each holds blocks older than every block after it, so
 *   the end's drain reads them one at a time, oldest first, each sorted by time in memory
 *   (pair.c), and then what is left in memory: the order of a conversion that never spilled.
 * - The file is a scratch file without a name beside the database (tempfile.c): the disk the
 *   user chose for the output has room for its rows, which take about as many bytes as the
 *   spilled entries.
 *
 * Entries are opaque here: `esize` bytes each, the first 8 the address (never 0), in the
 * machine's byte order (the file lives as long as the process that wrote it).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "converter.h"

#define PAGE_ENTRIES 128
#define BLOOM_BITS 10 /* per entry */
#define BLOOM_PROBES 6
#define LINE_WORDS 8  /* a bloom block: 512 bits, one cache line */
#define WRITE_BUF (64 * 1024)

typedef struct {
    uint64_t base;    /* file offset of entry 0 */
    size_t n, live;
    uint64_t lo, hi;  /* its first and last address */
    uint64_t *keys;   /* the address of entry i * PAGE_ENTRIES; NULL once nothing is live */
    uint64_t *bloom;  /* nlines * LINE_WORDS words */
    size_t nlines;
    uint64_t *freed;  /* one bit per entry */
} run_t;

struct cv__spill {
    int fd;
    size_t esize;
    char name[4096];  /* how messages call the file */
    uint64_t end;     /* bytes written */
    run_t *runs;
    size_t nruns, capruns;
    size_t bytes;     /* memory held: the runs' filters, indexes and bitmaps, the buffer */
    uint64_t spilled; /* entries written, all runs */
    unsigned char *buf; /* WRITE_BUF bytes: the writes, and each lookup's piece of a run */
    int failed;
    char error[4352];
};

static void fail(cv__spill_t *s, const char *what, uint64_t offset, int err)
{
    if (s->failed)
        return;
    s->failed = 1;
    snprintf(s->error, sizeof s->error, "%.4096s: offset %llu: %s spilled live blocks: %s", s->name,
             (unsigned long long)offset, what, strerror(err));
}

/* ---- The file ---- */

cv__spill_t *cv__spill_create(const char *near, size_t esize)
{
    cv__spill_t *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->fd = -1;
    s->esize = esize;
    if (!(s->buf = malloc(WRITE_BUF))) {
        free(s);
        return NULL;
    }
    s->bytes = WRITE_BUF + sizeof *s;
    s->fd = cv__temp_open(near, "spill", s->name, sizeof s->name);
    if (s->fd < 0)
        fail(s, "creating the file for", 0, errno);
    return s;
}

void cv__spill_destroy(cv__spill_t *s)
{
    if (!s)
        return;
    if (s->fd >= 0)
        close(s->fd);
    for (size_t i = 0; i < s->nruns; i++) {
        free(s->runs[i].keys);
        free(s->runs[i].bloom);
        free(s->runs[i].freed);
    }
    free(s->runs);
    free(s->buf);
    free(s);
}

const char *cv__spill_error(const cv__spill_t *s)
{
    return s->failed ? s->error : NULL;
}

static int write_all(cv__spill_t *s, const void *data, size_t len)
{
    const unsigned char *p = data;
    while (len) {
        ssize_t w = pwrite(s->fd, p, len, (off_t)s->end);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            fail(s, "writing", s->end, w < 0 ? errno : ENOSPC);
            return -1;
        }
        p += w;
        len -= (size_t)w;
        s->end += (uint64_t)w;
    }
    return 0;
}

static int read_at(cv__spill_t *s, void *data, size_t len, uint64_t offset)
{
    unsigned char *p = data;
    while (len) {
        ssize_t r = pread(s->fd, p, len, (off_t)offset);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            fail(s, "reading", offset, r < 0 ? errno : EIO);
            return -1;
        }
        p += r;
        len -= (size_t)r;
        offset += (uint64_t)r;
    }
    return 0;
}

/* ---- Entries, keys and the bloom filter ---- */

static uint64_t key_of(const void *entry)
{
    uint64_t k;
    memcpy(&k, entry, sizeof k);
    return k;
}

static int key_cmp(const void *a, const void *b)
{
    uint64_t x = key_of(a), y = key_of(b);
    return x < y ? -1 : x > y;
}

/* Its own mix of the address (pair.c's picks the shard and the slot): the line from its low
 * half; the six 9-bit probes from a further mix (probes_of). */
static uint64_t bloom_hash(uint64_t addr)
{
    uint64_t h = addr * 0x9E3779B97F4A7C15ull;
    h ^= h >> 32;
    h *= 0xD6E8FEB86659FD93ull;
    return h ^ (h >> 32);
}

static uint64_t *bloom_line(const run_t *r, uint64_t h)
{
    return r->bloom + ((uint32_t)h * (uint64_t)r->nlines >> 32) * LINE_WORDS;
}

/* The probes' bits, drawn apart from the line's. */
static uint64_t probes_of(uint64_t h)
{
    return (h ^ (h >> 29)) * 0xBF58476D1CE4E5B9ull;
}

static void bloom_add(run_t *r, uint64_t addr)
{
    uint64_t h = bloom_hash(addr), *line = bloom_line(r, h), g = probes_of(h);
    for (int i = 0; i < BLOOM_PROBES; i++) {
        unsigned bit = (unsigned)(g >> (10 + 9 * i)) & 511;
        line[bit >> 6] |= 1ull << (bit & 63);
    }
}

static int bloom_has(const run_t *r, uint64_t addr)
{
    uint64_t h = bloom_hash(addr), g = probes_of(h);
    const uint64_t *line = bloom_line(r, h);
    for (int i = 0; i < BLOOM_PROBES; i++) {
        unsigned bit = (unsigned)(g >> (10 + 9 * i)) & 511;
        if (!(line[bit >> 6] >> (bit & 63) & 1))
            return 0;
    }
    return 1;
}

static size_t run_bytes(const run_t *r)
{
    if (!r->keys)
        return 0;
    return ((r->n + PAGE_ENTRIES - 1) / PAGE_ENTRIES + r->nlines * LINE_WORDS + (r->n + 63) / 64) *
           sizeof(uint64_t);
}

/* Moves heap[j] down the heap of n part indexes ordered by the address of each part's next
 * entry (part i's next is pv[i] + at[i] * esize). */
static void sift(unsigned *heap, unsigned n, unsigned j, const unsigned char *const *pv,
                 const size_t *at, size_t esize)
{
    for (;;) {
        unsigned l = 2 * j + 1, m = j;
        if (l < n && key_of(pv[heap[l]] + at[heap[l]] * esize) <
                         key_of(pv[heap[m]] + at[heap[m]] * esize))
            m = l;
        if (l + 1 < n && key_of(pv[heap[l + 1]] + at[heap[l + 1]] * esize) <
                             key_of(pv[heap[m]] + at[heap[m]] * esize))
            m = l + 1;
        if (m == j)
            return;
        unsigned t = heap[j];
        heap[j] = heap[m];
        heap[m] = t;
        j = m;
    }
}

/* Lets a run's memory go once nothing of it is live. */
static void run_release(cv__spill_t *s, run_t *r)
{
    s->bytes -= run_bytes(r);
    free(r->keys);
    free(r->bloom);
    free(r->freed);
    r->keys = r->bloom = r->freed = NULL;
}

/* ---- Writing a run ---- */

int cv__spill_run(cv__spill_t *s, void *const *parts, const size_t *nparts, unsigned k)
{
    if (s->failed)
        return -1;
    if (k > 256)
        return -1;
    size_t n = 0;
    for (unsigned i = 0; i < k; i++) {
        n += nparts[i];
        if (nparts[i] > 1)
            qsort(parts[i], nparts[i], s->esize, key_cmp);
    }
    if (!n)
        return 0;
    if (s->nruns == s->capruns && rheap_grow(&s->runs, &s->capruns, s->nruns, sizeof *s->runs, 16) != 0)
        return -1;
    run_t r = {.base = s->end, .n = n, .live = n};
    r.nlines = (n * BLOOM_BITS + LINE_WORDS * 64 - 1) / (LINE_WORDS * 64);
    r.keys = malloc((n + PAGE_ENTRIES - 1) / PAGE_ENTRIES * sizeof *r.keys);
    r.bloom = calloc(r.nlines * LINE_WORDS, sizeof *r.bloom);
    r.freed = calloc((n + 63) / 64, sizeof *r.freed);
    if (!r.keys || !r.bloom || !r.freed) {
        free(r.keys);
        free(r.bloom);
        free(r.freed);
        return -1;
    }
    /* The parts are merged by address through a small heap of their heads. */
    unsigned heap[256], nheap = 0;
    size_t at[256] = {0};
    const unsigned char *const *pv = (const unsigned char *const *)parts;
    for (unsigned i = 0; i < k; i++)
        if (nparts[i])
            heap[nheap++] = i;
    for (unsigned i = nheap / 2; i-- > 0;)
        sift(heap, nheap, i, pv, at, s->esize);
    size_t fill = 0, i = 0;
    int rc = 0;
    while (nheap) {
        unsigned top = heap[0];
        const unsigned char *e = pv[top] + at[top] * s->esize;
        uint64_t addr = key_of(e);
        if (i % PAGE_ENTRIES == 0)
            r.keys[i / PAGE_ENTRIES] = addr;
        r.lo = i ? r.lo : addr;
        r.hi = addr;
        bloom_add(&r, addr);
        memcpy(s->buf + fill, e, s->esize);
        fill += s->esize;
        i++;
        if (fill + s->esize > WRITE_BUF) {
            if ((rc = write_all(s, s->buf, fill)) != 0)
                break;
            fill = 0;
        }
        if (++at[top] == nparts[top])
            heap[0] = heap[--nheap];
        sift(heap, nheap, 0, pv, at, s->esize);
    }
    if (rc == 0 && fill)
        rc = write_all(s, s->buf, fill);
    if (rc != 0) {
        free(r.keys);
        free(r.bloom);
        free(r.freed);
        return -1;
    }
    s->runs[s->nruns++] = r;
    s->bytes += run_bytes(&r);
    s->spilled += n;
    return 0;
}

/* ---- Lookups ---- */

/* Reads the piece of run r that can hold addr into s->buf: 1 and *first, *count set; 0 when
 * the run holds no address at or below addr; -1 read error. */
static int read_piece(cv__spill_t *s, const run_t *r, uint64_t addr, size_t *first, size_t *count)
{
    size_t npages = (r->n + PAGE_ENTRIES - 1) / PAGE_ENTRIES;
    size_t p = cv__upper_bound(r->keys, npages, sizeof *r->keys, 0, addr);
    if (!p)
        return 0;
    *first = (p - 1) * PAGE_ENTRIES;
    *count = r->n - *first < PAGE_ENTRIES ? r->n - *first : PAGE_ENTRIES;
    if (read_at(s, s->buf, *count * s->esize, r->base + *first * s->esize) != 0)
        return -1;
    return 1;
}

static int is_freed(const run_t *r, size_t i)
{
    return (int)(r->freed[i / 64] >> (i % 64) & 1);
}

static void set_freed(cv__spill_t *s, run_t *r, size_t i)
{
    r->freed[i / 64] |= 1ull << (i % 64);
    if (--r->live == 0)
        run_release(s, r);
}

int cv__spill_take(cv__spill_t *s, uint64_t addr, void *out)
{
    if (s->failed)
        return -1;
    /* Newest first: a block that is freed soon after it went out is in one of the last runs. */
    for (size_t k = s->nruns; k-- > 0;) {
        run_t *r = &s->runs[k];
        /* A heap grows upwards mostly: the address range turns most new blocks away before the
         * bloom filter's cache miss. */
        if (!r->live || addr < r->lo || addr > r->hi || !bloom_has(r, addr))
            continue;
        size_t first, count;
        int got = read_piece(s, r, addr, &first, &count);
        if (got < 0)
            return -1;
        if (!got)
            continue;
        size_t lo = 0, hi = count;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            uint64_t key = key_of(s->buf + mid * s->esize);
            if (key == addr) {
                if (is_freed(r, first + mid))
                    break;
                memcpy(out, s->buf + mid * s->esize, s->esize);
                set_freed(s, r, first + mid);
                return 1;
            }
            if (key < addr)
                lo = mid + 1;
            else
                hi = mid;
        }
    }
    return 0;
}

size_t cv__spill_find_range(cv__spill_t *s, uint64_t lo, uint64_t hi, uint64_t *addrs, size_t max)
{
    size_t n = 0;
    for (size_t k = 0; k < s->nruns && n < max && !s->failed; k++) {
        const run_t *r = &s->runs[k];
        if (!r->live || r->hi < lo || r->lo >= hi)
            continue;
        size_t first, count;
        int got = read_piece(s, r, lo, &first, &count);
        if (got < 0)
            break;
        if (!got) {
            first = 0;
            count = 0;
        }
        for (;;) {
            for (size_t j = 0; j < count && n < max; j++) {
                uint64_t key = key_of(s->buf + j * s->esize);
                if (key >= hi)
                    goto next_run;
                if (key >= lo && !is_freed(r, first + j))
                    addrs[n++] = key;
            }
            if (n == max)
                break;
            first += count;
            if (first >= r->n)
                break;
            count = r->n - first < PAGE_ENTRIES ? r->n - first : PAGE_ENTRIES;
            if (read_at(s, s->buf, count * s->esize, r->base + first * s->esize) != 0)
                break;
        }
    next_run:;
    }
    return n;
}

/* ---- The drain ---- */

size_t cv__spill_runs(const cv__spill_t *s)
{
    return s->nruns;
}

size_t cv__spill_live(const cv__spill_t *s, size_t k)
{
    return s->runs[k].live;
}

int cv__spill_load(cv__spill_t *s, size_t k, void *out)
{
    run_t *r = &s->runs[k];
    unsigned char *o = out;
    size_t per = WRITE_BUF / s->esize;
    for (size_t first = 0; first < r->n && r->live; first += per) {
        size_t count = r->n - first < per ? r->n - first : per;
        if (read_at(s, s->buf, count * s->esize, r->base + first * s->esize) != 0)
            return -1;
        for (size_t j = 0; j < count; j++)
            if (!is_freed(r, first + j)) {
                memcpy(o, s->buf + j * s->esize, s->esize);
                o += s->esize;
            }
    }
    if (r->keys)
        run_release(s, r);
    r->live = 0;
    return 0;
}

size_t cv__spill_memory(const cv__spill_t *s)
{
    return s->bytes;
}

void cv__spill_figures(const cv__spill_t *s, uint64_t *entries, uint64_t *file_bytes)
{
    *entries = s->spilled;
    *file_bytes = s->end;
}

/* ---- The budget ---- */

int rheap_convert_parse_memory(const char *text, uint64_t *bytes)
{
    if (!text || !*text)
        return -1;
    if (!strcmp(text, "none") || !strcmp(text, "0")) {
        *bytes = RHEAP_CONVERT_MEMORY_NONE;
        return 0;
    }
    uint64_t v = 0;
    const char *p = text;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (v > (UINT64_MAX - 9) / 10)
            return -1;
        v = v * 10 + (uint64_t)(*p - '0');
    }
    if (p == text)
        return -1;
    static const struct {
        const char *suffix;
        unsigned shift;
    } units[] = {{"", 0},      {"K", 10},   {"KiB", 10}, {"M", 20}, {"MiB", 20},
                 {"G", 30},    {"GiB", 30}, {"T", 40},   {"TiB", 40}};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (strcmp(p, units[i].suffix))
            continue;
        if (!v || v > (UINT64_MAX >> 1) >> units[i].shift)
            return -1;
        *bytes = v << units[i].shift;
        return 0;
    }
    return -1;
}

uint64_t cv__spill_default_budget(void)
{
    /* A quarter of the memory available when the conversion starts. The store is most of a
     * big conversion's memory, but not all: SQLite's cache and the writer's queue take some
     * 64 MiB more, the page cache holds the database being written, and under `rheap run` the
     * program being recorded grows its own heap at least as fast as the store does (a block of
     * the program's is 16 bytes or more plus its allocator's header; the store's is 41 bytes). A
     * quarter leaves the rest to them. Without /proc/meminfo, no budget. */
    FILE *f = fopen("/proc/meminfo", "re");
    if (!f)
        return 0;
    char line[256];
    unsigned long long kb = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
            break;
    fclose(f);
    uint64_t b = (uint64_t)kb * 1024 / 4;
    return kb && b < ((uint64_t)64 << 20) ? (uint64_t)64 << 20 : b;
}
