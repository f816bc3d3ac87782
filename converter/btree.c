/*
 * btree.c: a rowid table's b-tree laid out page by page, in SQLite's file format, for rows that
 * come in increasing rowid order.
 *
 * SQLite's own insert costs some 2,600 instructions per row (the VDBE's program, the record's
 * serialization, the cursor's seek to the end, the page's cell insert); a conversion writes a row
 * per event or two, and the writer thread took a third of its CPU time. Rows that arrive
 * sorted, small and made of numbers need none of that: each is a cell appended to the current
 * leaf page, and a full page is written once and never read again. This file does only that,
 * following SQLite's "Database File Format" document:
 *
 * - A leaf page of a table b-tree (type 0x0D) has an 8-byte header (type, first freeblock 0,
 *   the number of cells, the start of the cell content area, 0 fragmented bytes), the cell
 *   pointer array after it, and the cells packed down from the end of the usable space. A cell
 *   is the varint length of the payload, the varint rowid and the record: a varint header
 *   length, one serial type per column (0 NULL; 1, 2, 3, 4, 5, 6: a big-endian integer of 1, 2,
 *   3, 4, 6 or 8 bytes; 7 a big-endian IEEE double; 8 and 9 the integers 0 and 1, which take
 *   no byte), then the values. Each value gets the smallest serial type that holds it, as
 *   SQLite itself chooses, so a table built here holds the very records SQLite would have
 *   written.
 * - An interior page (type 0x05) has a 12-byte header ending with the right-most child's page
 *   number, and cells of a 4-byte child page number and the varint of the largest rowid under
 *   that child. When a page of one level fills, it is written out and its (page, largest rowid)
 *   goes up to the level above, which is made when first needed; the tree grows from the leaves
 *   up, and each page is as full as the next row allows.
 * - Rows whose record would not fit in a leaf cell (more than the usable size minus 35 bytes,
 *   where SQLite would use overflow pages) are refused with an error: the tables built here
 *   hold a few integers per row, a few dozen bytes at most.
 *
 * The pages go to an unnamed temporary file beside the database (cv__temp_open, tempfile.c),
 * where SQLite never writes. Page numbers in the file are provisional: the pages are numbered
 * from 0 in the order written, and the interior pages (whose indexes are kept) get their real
 * numbers once the database is finished and its size known. Then cv__btree_append appends the
 * pages at the end of the database file (while SQLite may still read its own pages: db.c's end
 * prints rheap run's summary meanwhile), and once SQLite has closed the file cv__btree_root puts
 * the root (kept in memory) in place of the empty root page SQLite allocated for the table at
 * CREATE TABLE, and the file header's page count is updated. So the whole table costs one
 * sequential write of its pages plus one in-kernel copy.
 *
 * Not thread-safe: one thread at a time per builder (db.c's writer holds the connection's turn).
 */
#define _GNU_SOURCE /* copy_file_range */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "converter.h"

/* Levels of the tree: at 512-byte pages, each interior page holds 30 children or more, so 14
 * levels hold more than 2^64 rows. */
#define MAX_LEVELS 14
/* Pages gathered before a write to the temporary file. */
#define WRITE_PAGES_BYTES (256u << 10)
#define LEAF_HEADER 8
#define INTERIOR_HEADER 12
/* Bytes past each page's end, so that cv__btree_add_ints may store 16 bytes at a cell's end
 * (and put them back) whatever the cell's place in the page. */
#define PAGE_SLACK 16
#define LEAF_TYPE 0x0D
#define INTERIOR_TYPE 0x05

typedef struct {
    uint8_t *page;
    uint32_t ncells;
    uint32_t content; /* offset of the lowest cell: the usable size while empty */
    int has_last;     /* interior: a child waits to become a cell or the right-most child */
    uint32_t last_child;
    int64_t last_key; /* interior: its largest rowid; leaf: the largest rowid of the page */
    uint32_t cell_child, cell_size; /* interior: the newest cell */
    int64_t cell_key;
} level_t;

struct cv__btree {
    int fd;
    char name[4200]; /* how messages call the temporary file */
    char table[64];
    uint32_t page_size, usable;
    level_t lv[MAX_LEVELS];
    int nlv;
    uint8_t *wbuf; /* pages waiting to be written */
    size_t wlen, wcap;
    uint64_t pages;     /* pages in the file and in wbuf */
    uint32_t *interior; /* the indexes of the interior pages among them */
    size_t ninterior, capinterior;
    uint64_t rows;
    int64_t last_rowid;
    int finished;
    int root_interior; /* after finish: the root (lv[nlv - 1].page) is an interior page */
    uint32_t base;     /* after cv__btree_append: the page number its first page took */
    int failed;
    char error[4608];
};

static void fail(cv__btree_t *b, const char *f, ...)
{
    if (b->failed)
        return;
    va_list ap;
    va_start(ap, f);
    vsnprintf(b->error, sizeof b->error, f, ap);
    va_end(ap);
    b->failed = 1;
}

const char *cv__btree_error(const cv__btree_t *b)
{
    return b->failed ? b->error : NULL;
}

uint64_t cv__btree_rows(const cv__btree_t *b)
{
    return b->rows;
}

int cv__btree_levels(const cv__btree_t *b)
{
    return b->nlv;
}

int64_t cv__btree_last(const cv__btree_t *b)
{
    return b->last_rowid;
}

static void put16(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* The 8 bytes of x, most significant first. */
static inline void put_be(uint8_t *p, uint64_t x)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    x = __builtin_bswap64(x);
#endif
    memcpy(p, &x, 8);
}

static uint32_t get16(const uint8_t *p)
{
    return (uint32_t)p[0] << 8 | p[1];
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The length of SQLite's varint of v: 7 bits a byte, big-endian, the ninth byte whole. */
static unsigned varint_len(uint64_t v)
{
    if (v <= 0x7f)
        return 1;
    if (v <= 0x3fff)
        return 2;
    if (v >> 56)
        return 9;
    unsigned n = 3;
    for (v >>= 21; v; v >>= 7)
        n++;
    return n;
}

/* Writes SQLite's varint of v at p; returns its length. */
static unsigned put_varint(uint8_t *p, uint64_t v)
{
    if (v <= 0x7f) {
        p[0] = (uint8_t)v;
        return 1;
    }
    if (v <= 0x3fff) {
        p[0] = (uint8_t)(0x80 | v >> 7);
        p[1] = (uint8_t)(v & 0x7f);
        return 2;
    }
    if (v >> 56) {
        p[8] = (uint8_t)v;
        v >>= 8;
        for (int i = 7; i >= 0; i--, v >>= 7)
            p[i] = (uint8_t)(0x80 | (v & 0x7f));
        return 9;
    }
    unsigned n = varint_len(v);
    p[n - 1] = (uint8_t)(v & 0x7f);
    v >>= 7;
    for (int i = (int)n - 2; i >= 0; i--, v >>= 7)
        p[i] = (uint8_t)(0x80 | (v & 0x7f));
    return n;
}

/* The serial type SQLite gives integer i (schema format 4: 0 and 1 as types 8 and 9). */
static unsigned int_type(int64_t i)
{
    uint64_t u = i < 0 ? ~(uint64_t)i : (uint64_t)i;
    if (u <= 127)
        return (uint64_t)i <= 1 ? 8 + (unsigned)i : 1;
    if (u <= 32767)
        return 2;
    if (u <= 8388607)
        return 3;
    if (u <= 2147483647)
        return 4;
    if (u <= 140737488355327)
        return 5;
    return 6;
}

/* Bytes of the value of each serial type up to 9. */
static const uint8_t type_bytes[10] = {0, 1, 2, 3, 4, 6, 8, 8, 0, 0};

/* int_type by the bit length of i (of ~i when negative), for those other than 0 and 1: a
 * lookup where int_type compares five times. */
static const uint8_t type_of_bits[65] = {
    1, 1, 1, 1, 1, 1, 1, 1,                                        /* up to 7 bits */
    2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 4, /* 15, 23, 31 */
    5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5,                /* 47 */
    6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6,             /* 64 */
};

static inline unsigned int_type_fast(int64_t i)
{
    uint64_t u = (uint64_t)(i ^ (i >> 63)); /* ~i when negative */
    unsigned t = type_of_bits[64 - __builtin_clzll(u | 1)];
    return (uint64_t)i <= 1 ? 8 + (unsigned)i : t;
}

cv__btree_t *cv__btree_create(const char *near, const char *table, uint32_t page_size,
                              uint32_t reserved)
{
    cv__btree_t *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->fd = -1;
    snprintf(b->table, sizeof b->table, "%s", table);
    b->page_size = page_size;
    b->usable = page_size - reserved;
    b->wcap = WRITE_PAGES_BYTES / page_size * page_size;
    if (b->wcap < page_size)
        b->wcap = page_size;
    if (page_size < 512 || page_size > 65536 || (page_size & (page_size - 1)) || reserved > 255 ||
        b->usable < 480) {
        fail(b, "%s: a page size of %u with %u reserved bytes is not SQLite's", table, page_size,
             reserved);
        return b;
    }
    b->wbuf = malloc(b->wcap);
    b->lv[0].page = calloc(1, page_size + PAGE_SLACK);
    if (!b->wbuf || !b->lv[0].page) {
        fail(b, "%s: out of memory for its pages", table);
        return b;
    }
    b->nlv = 1;
    b->lv[0].content = b->usable;
    char what[128];
    snprintf(what, sizeof what, "%s", table);
    b->fd = cv__temp_open(near, what, b->name, sizeof b->name);
    if (b->fd < 0)
        fail(b, "%s: creating the file for the pages of %s: %s", b->name, table, strerror(errno));
    return b;
}

void cv__btree_destroy(cv__btree_t *b)
{
    if (!b)
        return;
    if (b->fd >= 0)
        close(b->fd);
    for (int i = 0; i < MAX_LEVELS; i++)
        free(b->lv[i].page);
    free(b->wbuf);
    free(b->interior);
    free(b);
}

/* Writes len bytes at offset off of fd; name and what for the message. 0, or -1 (failed). */
static int write_at(cv__btree_t *b, int fd, const char *name, const void *data, size_t len,
                    uint64_t off, const char *what)
{
    const uint8_t *p = data;
    while (len) {
        ssize_t w = pwrite(fd, p, len, (off_t)off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            fail(b, "%s: offset %llu: %s %s: %s", name, (unsigned long long)off, what, b->table,
                 w < 0 ? strerror(errno) : strerror(ENOSPC));
            return -1;
        }
        p += w;
        len -= (size_t)w;
        off += (uint64_t)w;
    }
    return 0;
}

static int flush_wbuf(cv__btree_t *b)
{
    if (!b->wlen)
        return 0;
    uint64_t off = (b->pages * b->page_size) - b->wlen;
    int rc = write_at(b, b->fd, b->name, b->wbuf, b->wlen, off, "writing the pages of");
    b->wlen = 0;
    return rc;
}

/* Appends a finished page to the file; its index there in *index. */
static int emit(cv__btree_t *b, const uint8_t *page, uint32_t *index)
{
    if (b->pages >= UINT32_MAX - 1) {
        fail(b, "%s: more than 2^32 pages", b->table);
        return -1;
    }
    if (b->wlen + b->page_size > b->wcap && flush_wbuf(b) != 0)
        return -1;
    memcpy(b->wbuf + b->wlen, page, b->page_size);
    b->wlen += b->page_size;
    *index = (uint32_t)b->pages++;
    return 0;
}

/* Fills in the header of page lv (leaf or interior) and zeroes its free space, which would
 * otherwise hold the cells of the page before. */
static void seal(cv__btree_t *b, level_t *l, int leaf)
{
    uint8_t *p = l->page;
    uint32_t head = leaf ? LEAF_HEADER : INTERIOR_HEADER;
    uint32_t gap = head + 2 * l->ncells;
    memset(p + gap, 0, l->content - gap);
    memset(p + b->usable, 0, b->page_size - b->usable);
    p[0] = leaf ? LEAF_TYPE : INTERIOR_TYPE;
    put16(p + 1, 0);
    put16(p + 3, l->ncells);
    put16(p + 5, l->content == 65536 ? 0 : l->content);
    p[7] = 0;
    if (!leaf)
        put32(p + 8, l->last_child);
}

static void reset(cv__btree_t *b, level_t *l)
{
    l->ncells = 0;
    l->content = b->usable;
    l->has_last = 0;
}

/* Hands child page `child`, whose rows go up to `key`, to level k (made when first needed).
 * The level's newest child waits as its right-most one; the one before becomes a cell. `last`:
 * the level's last child, from the end of the rows (finish). */
static int push(cv__btree_t *b, int k, uint32_t child, int64_t key, int last)
{
    if (k == b->nlv) {
        if (k == MAX_LEVELS) {
            fail(b, "%s: more than %d levels", b->table, MAX_LEVELS);
            return -1;
        }
        if (!b->lv[k].page && !(b->lv[k].page = calloc(1, b->page_size + PAGE_SLACK))) {
            fail(b, "%s: out of memory for its pages", b->table);
            return -1;
        }
        reset(b, &b->lv[k]);
        b->nlv++;
    }
    level_t *l = &b->lv[k];
    if (!l->has_last) {
        l->has_last = 1;
        l->last_child = child;
        l->last_key = key;
        return 0;
    }
    uint32_t size = 4 + varint_len((uint64_t)l->last_key);
    if (INTERIOR_HEADER + 2 * (l->ncells + 1) + size > l->content) {
        /* Full: the waiting child becomes its right-most one and the new child opens the next
         * page. Unless the new child is the level's last: a page with a right-most child alone
         * would stay so, so the page's last cell moves over instead (its child becomes this
         * page's right-most one, its key goes up, and the waiting child becomes the next
         * page's cell). */
        uint32_t waiting = l->last_child;
        int64_t waiting_key = l->last_key, up = waiting_key;
        if (last) {
            l->ncells--;
            l->content += l->cell_size;
            up = l->cell_key;
            l->last_child = l->cell_child; /* seal writes it as the right-most child */
        }
        seal(b, l, 0);
        uint32_t index;
        if (emit(b, l->page, &index) != 0)
            return -1;
        if (rheap_grow(&b->interior, &b->capinterior, b->ninterior, sizeof *b->interior, 64) != 0) {
            fail(b, "%s: out of memory", b->table);
            return -1;
        }
        b->interior[b->ninterior++] = index;
        reset(b, l);
        l->has_last = 1;
        if (push(b, k + 1, index, up, 0) != 0)
            return -1;
        if (!last) {
            l->last_child = child;
            l->last_key = key;
            return 0;
        }
        l->last_child = waiting;
        l->last_key = waiting_key;
        return push(b, k, child, key, 1);
    }
    l->content -= size;
    uint8_t *c = l->page + l->content;
    put32(c, l->last_child);
    put_varint(c + 4, (uint64_t)l->last_key);
    put16(l->page + INTERIOR_HEADER + 2 * l->ncells, l->content);
    l->ncells++;
    l->cell_child = l->last_child;
    l->cell_key = l->last_key;
    l->cell_size = size;
    l->last_child = child;
    l->last_key = key;
    return 0;
}

/* Writes the full leaf and hands it up. */
static int leaf_full(cv__btree_t *b)
{
    level_t *l = &b->lv[0];
    seal(b, l, 1);
    uint32_t index;
    if (emit(b, l->page, &index) != 0)
        return -1;
    int64_t key = l->last_key;
    reset(b, l);
    return push(b, 1, index, key, 0);
}

/* Counts the cell just laid at l->content into the leaf l as row `rowid`. */
static void cell_added(cv__btree_t *b, level_t *l, int64_t rowid)
{
    put16(l->page + LEAF_HEADER + 2 * l->ncells, l->content);
    l->ncells++;
    l->last_key = rowid;
    b->last_rowid = rowid;
    b->rows++;
}

int cv__btree_add(cv__btree_t *b, int64_t rowid, const cv__bt_value_t *v, unsigned ncols)
{
    if (b->failed)
        return -1;
    if (b->finished) {
        fail(b, "%s: a row added after the table was finished", b->table);
        return -1;
    }
    if (b->rows && rowid <= b->last_rowid) {
        fail(b, "%s: rowid %lld after %lld: rows must come in increasing rowid order", b->table,
             (long long)rowid, (long long)b->last_rowid);
        return -1;
    }
    if (ncols > 120) {
        fail(b, "%s: %u columns: at most 120", b->table, ncols);
        return -1;
    }
    /* The record: the header (its length, a serial type per column: each below 128, one byte),
     * then the values. */
    uint8_t types[120];
    uint32_t body = 0;
    for (unsigned i = 0; i < ncols; i++) {
        unsigned t = v[i].kind == CV__BT_INT ? int_type(v[i].i) : v[i].kind == CV__BT_REAL ? 7 : 0;
        types[i] = (uint8_t)t;
        body += type_bytes[t];
    }
    uint32_t hlen = 1 + ncols; /* below 128: one byte of length */
    uint32_t payload = hlen + body;
    if (payload > b->usable - 35) {
        fail(b,
             "%s: row %lld: a record of %u bytes needs overflow pages (at most %u in a "
             "page of %u bytes); not written",
             b->table, (long long)rowid, payload, b->usable - 35, b->page_size);
        return -1;
    }
    /* The cell is made in rec, where a value may be stored as 8 bytes of which only its own
     * count, then copied into the page: the cell below it there must not be touched. */
    uint8_t rec[9 + 9 + 1 + 120 + 120 * 8 + 8];
    uint8_t *c = rec;
    c += put_varint(c, payload);
    c += put_varint(c, (uint64_t)rowid);
    *c++ = (uint8_t)hlen;
    memcpy(c, types, ncols);
    c += ncols;
    for (unsigned i = 0; i < ncols; i++) {
        unsigned n = type_bytes[types[i]];
        if (!n)
            continue;
        uint64_t x = (uint64_t)v[i].i;
        if (types[i] == 7)
            memcpy(&x, &v[i].r, 8);
        put_be(c, x << (64 - 8 * n));
        c += n;
    }
    uint32_t size = (uint32_t)(c - rec);
    level_t *l = &b->lv[0];
    if (LEAF_HEADER + 2 * (l->ncells + 1) + size > l->content && leaf_full(b) != 0)
        return -1;
    l->content -= size;
    memcpy(l->page + l->content, rec, size);
    cell_added(b, l, rowid);
    return 0;
}

/* The columns of cv__btree_add_ints at most: a record header of 15 bytes, below 128, so one
 * byte of length, and a payload of at most 127 bytes, one byte too. */
#define INTS_MAX 14

/* The varint of a rowid at p, its length given: rowids below 2^28 (four bytes) written
 * directly, as a conversion's allocation rows have them. */
static inline void put_rowid(uint8_t *p, uint64_t v, unsigned len)
{
    switch (len) {
    case 1:
        p[0] = (uint8_t)v;
        return;
    case 2:
        p[0] = (uint8_t)(0x80 | v >> 7);
        p[1] = (uint8_t)(v & 0x7f);
        return;
    case 3:
        p[0] = (uint8_t)(0x80 | v >> 14);
        p[1] = (uint8_t)(0x80 | (v >> 7 & 0x7f));
        p[2] = (uint8_t)(v & 0x7f);
        return;
    case 4:
        p[0] = (uint8_t)(0x80 | v >> 21);
        p[1] = (uint8_t)(0x80 | (v >> 14 & 0x7f));
        p[2] = (uint8_t)(0x80 | (v >> 7 & 0x7f));
        p[3] = (uint8_t)(v & 0x7f);
        return;
    default:
        put_varint(p, v);
    }
}

/* cv__btree_add_ints once its row is known to be valid. Inlined into each of its callers with
 * ncols a constant (always_inline: the compiler would not copy it three times by itself), so
 * that the loops over the columns unroll and the types stay in registers: 290 instructions a
 * row of allocation_rows, the page's write included, where the loops over an array of types
 * cost 345 (callgrind, bigheap 300000). */
__attribute__((always_inline)) static inline int add_ints(cv__btree_t *b, int64_t rowid,
                                                          const int64_t *v, unsigned ncols,
                                                          uint32_t nulls)
{
    /* The serial types, a byte each, in two words: the record's header after its length. */
    uint64_t head[2] = {0, 0};
    uint32_t body = 0;
#pragma GCC unroll 14
    for (unsigned i = 0; i < ncols; i++) {
        unsigned t = (nulls >> i & 1) ? 0 : int_type_fast(v[i]);
        head[i / 8] |= (uint64_t)t << (8 * (i % 8));
        body += type_bytes[t];
    }
    uint32_t payload = 1 + ncols + body;
    unsigned rlen = varint_len((uint64_t)rowid);
    uint32_t size = 1 + rlen + payload;
    level_t *l = &b->lv[0];
    if (LEAF_HEADER + 2 * (l->ncells + 1) + size > l->content && leaf_full(b) != 0)
        return -1;
    /* The cell is written in place, each value as 8 bytes of which only its own count: what
     * goes past the cell's end (the cell below it, or the page's slack) is put back after. */
    uint8_t *end = l->page + l->content, keep[16];
    memcpy(keep, end, sizeof keep);
    l->content -= size;
    uint8_t *c = l->page + l->content;
    *c++ = (uint8_t)payload;
    put_rowid(c, (uint64_t)rowid, rlen);
    c += rlen;
    *c++ = (uint8_t)(1 + ncols);
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
    head[0] = __builtin_bswap64(head[0]);
    head[1] = __builtin_bswap64(head[1]);
#endif
    memcpy(c, head, sizeof head);
    c += ncols;
#pragma GCC unroll 14
    for (unsigned i = 0; i < ncols; i++) {
        unsigned n = type_bytes[head[i / 8] >> (8 * (i % 8)) & 0xff];
        unsigned shift = 32 - 4 * n; /* twice: 64 - 8n, 0 to 64 */
        put_be(c, ((uint64_t)v[i] << shift) << shift);
        c += n;
    }
    memcpy(end, keep, sizeof keep);
    cell_added(b, l, rowid);
    return 0;
}

int cv__btree_add_ints(cv__btree_t *b, int64_t rowid, const int64_t *v, unsigned ncols,
                       uint32_t nulls)
{
    if (b->failed || b->finished || ncols > INTS_MAX || (b->rows && rowid <= b->last_rowid)) {
        /* The generic path says what is wrong. */
        cv__bt_value_t w[INTS_MAX + 1];
        unsigned n = ncols <= INTS_MAX ? ncols : INTS_MAX + 1;
        for (unsigned i = 0; i < n; i++)
            w[i] = (cv__bt_value_t){(nulls >> i & 1) ? CV__BT_NULL : CV__BT_INT, v[i], 0};
        return cv__btree_add(b, rowid, w, n);
    }
    /* allocation_rows (its id and six columns) and its side tables (an id and one column). */
    switch (ncols) {
    case 7:
        return add_ints(b, rowid, v, 7, nulls);
    case 2:
        return add_ints(b, rowid, v, 2, nulls);
    default:
        return add_ints(b, rowid, v, ncols, nulls);
    }
}

/* Writes every page but the root, which stays in lv[nlv - 1]. */
static int finish(cv__btree_t *b)
{
    if (b->finished)
        return b->failed ? -1 : 0;
    b->finished = 1;
    if (b->failed || !b->rows)
        return b->failed ? -1 : 0;
    for (int k = 0; k < b->nlv; k++) {
        level_t *l = &b->lv[k];
        seal(b, l, k == 0);
        if (k == b->nlv - 1) {
            b->root_interior = k > 0;
            break;
        }
        uint32_t index;
        if (emit(b, l->page, &index) != 0)
            return -1;
        if (k > 0) {
            if (rheap_grow(&b->interior, &b->capinterior, b->ninterior, sizeof *b->interior, 64) !=
                0) {
                fail(b, "%s: out of memory", b->table);
                return -1;
            }
            b->interior[b->ninterior++] = index;
        }
        if (push(b, k + 1, index, l->last_key, 1) != 0)
            return -1;
    }
    return flush_wbuf(b);
}

/* Child page numbers of an interior page: provisional indexes in the file, plus base. */
/* SQLite's lock-byte page: the page holding the file's byte 2^30, which SQLite never uses
 * (the byte range its file locks take) and PRAGMA integrity_check counts as taken. A table that
 * crosses 1 GiB of file goes on after it. */
#define LOCK_BYTE 0x40000000u

static uint64_t lock_page(uint32_t page_size)
{
    return LOCK_BYTE / page_size + 1;
}

/* The page number of the page index i of a table whose pages start at base, past the lock page. */
static uint32_t page_number(uint64_t base, uint64_t i, uint64_t lock)
{
    uint64_t n = base + i;
    return (uint32_t)(n + (base <= lock && n >= lock));
}

static void relocate(uint8_t *p, uint32_t base, uint64_t lock)
{
    uint32_t n = get16(p + 3);
    put32(p + 8, page_number(base, get32(p + 8), lock));
    for (uint32_t i = 0; i < n; i++) {
        uint8_t *c = p + get16(p + INTERIOR_HEADER + 2 * i);
        put32(c, page_number(base, get32(c), lock));
    }
}

static int read_at(cv__btree_t *b, int fd, const char *name, void *data, size_t len, uint64_t off)
{
    uint8_t *p = data;
    while (len) {
        ssize_t r = pread(fd, p, len, (off_t)off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            fail(b, "%s: offset %llu: reading back the pages of %s: %s", name,
                 (unsigned long long)off, b->table, r < 0 ? strerror(errno) : "end of file");
            return -1;
        }
        p += r;
        len -= (size_t)r;
        off += (uint64_t)r;
    }
    return 0;
}

/* Copies len bytes of the temporary file from offset `from` to offset `to` of fd: in the
 * kernel (copy_file_range), or through a buffer where it cannot. */
static int copy_pages(cv__btree_t *b, int fd, const char *name, uint64_t from, uint64_t len,
                      uint64_t to)
{
    uint64_t done = 0;
    while (done < len) {
        loff_t in = (loff_t)(from + done), out = (loff_t)(to + done);
        size_t want = len - done > (1u << 30) ? (1u << 30) : (size_t)(len - done);
        ssize_t n = copy_file_range(b->fd, &in, fd, &out, want, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 &&
            (errno == EXDEV || errno == ENOSYS || errno == EOPNOTSUPP || errno == EINVAL) &&
            done == 0)
            break; /* no copy in the kernel between these two: by hand */
        if (n <= 0) {
            fail(b, "%s: offset %llu: appending the pages of %s: %s", name,
                 (unsigned long long)(to + done), b->table,
                 n < 0 ? strerror(errno) : strerror(ENOSPC));
            return -1;
        }
        done += (uint64_t)n;
    }
    for (; done < len;) {
        size_t want = len - done > b->wcap ? b->wcap : (size_t)(len - done);
        if (read_at(b, b->fd, b->name, b->wbuf, want, from + done) != 0 ||
            write_at(b, fd, name, b->wbuf, want, to + done, "appending the pages of") != 0)
            return -1;
        done += want;
    }
    return 0;
}

int cv__btree_append(cv__btree_t *b, int fd, const char *name, uint32_t *next_page)
{
    if (finish(b) != 0)
        return -1;
    if (!b->rows)
        return 0; /* SQLite's root is the empty leaf such a table has */
    uint64_t base = *next_page, lock = lock_page(b->page_size);
    /* The pages before the lock page, when the table crosses it (all of them when not). */
    uint64_t before = base <= lock && lock < base + b->pages ? lock - base : b->pages;
    if (base + b->pages + (before < b->pages) >= UINT32_MAX) {
        fail(b, "%s: the database would pass 2^32 pages", b->table);
        return -1;
    }
    /* The interior pages' children get their real numbers, in the temporary file. */
    for (size_t i = 0; i < b->ninterior; i++) {
        uint64_t off = (uint64_t)b->interior[i] * b->page_size;
        if (read_at(b, b->fd, b->name, b->wbuf, b->page_size, off) != 0)
            return -1;
        relocate(b->wbuf, (uint32_t)base, lock);
        if (write_at(b, b->fd, b->name, b->wbuf, b->page_size, off, "renumbering the pages of") !=
            0)
            return -1;
    }
    uint64_t ps = b->page_size;
    if (copy_pages(b, fd, name, 0, before * ps, (base - 1) * ps) != 0 ||
        (before < b->pages &&
         copy_pages(b, fd, name, before * ps, (b->pages - before) * ps, lock * ps) != 0))
        return -1;
    /* Not read again: the kernel's freeing of its pages (a fifth of a second for 0.9 GB) is
     * done here, on the appending thread, rather than at the end. */
    close(b->fd);
    b->fd = -1;
    b->base = (uint32_t)base;
    *next_page = (uint32_t)(base + b->pages + (before < b->pages));
    return 0;
}

int cv__btree_root(cv__btree_t *b, int fd, const char *name, uint32_t root)
{
    if (b->failed)
        return -1;
    if (!b->rows)
        return 0;
    if (root < 2 || root >= b->base) {
        fail(b, "%s: root page %u: not a page of the table's", b->table, root);
        return -1;
    }
    uint8_t *top = b->lv[b->nlv - 1].page;
    if (b->root_interior)
        relocate(top, b->base, lock_page(b->page_size));
    return write_at(b, fd, name, top, b->page_size, (uint64_t)(root - 1) * b->page_size,
                    "writing the root page of");
}

/* ---- The database file ---- */

/* The 100-byte header of page 1: the page size at 16, the reserved bytes at 20, the change
 * counter at 24, the page count at 28, the schema format at 44, the largest root page of
 * auto-vacuum at 52 and the version-valid-for number at 92. */
static int open_db(const char *path, uint8_t h[100], const char *what, char *err, size_t errlen)
{
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "%s: opening to %s: %s", path, what, strerror(errno));
        return -1;
    }
    if (pread(fd, h, 100, 0) != 100) {
        snprintf(err, errlen, "%s: offset 0: %s: %s", path, what,
                 errno ? strerror(errno) : "a short file");
        close(fd);
        return -1;
    }
    return fd;
}

int cv__btree_put_pages(const char *path, cv__btree_t *const *trees, unsigned n,
                        uint32_t *pages, char *err, size_t errlen)
{
    uint8_t h[100];
    errno = 0;
    int fd = open_db(path, h, "put the tables in", err, errlen);
    if (fd < 0)
        return -1;
    struct stat sb;
    const char *bad = NULL;
    uint32_t ps = get16(h + 16) == 1 ? 65536 : get16(h + 16), count = get32(h + 28);
    if (fstat(fd, &sb) != 0)
        bad = strerror(errno);
    else if (memcmp(h, "SQLite format 3", 16) != 0)
        bad = "not an SQLite database";
    else if (get32(h + 24) != get32(h + 92))
        bad = "its page count is not valid (the change counter differs from version-valid-for)";
    else if (get32(h + 44) != 4)
        bad = "schema format 4 was expected (records with 0 and 1 in no byte)";
    else if (get32(h + 52) != 0)
        bad = "an auto-vacuum database: its pointer map would need the new pages";
    else if ((uint64_t)sb.st_size != (uint64_t)count * ps)
        bad = "its size is not its page count times its page size";
    for (unsigned i = 0; !bad && i < n; i++)
        if (trees[i]->page_size != ps || trees[i]->usable != ps - h[20])
            bad = "its page size or reserved bytes differ from the tables built beside it";
    if (bad) {
        snprintf(err, errlen, "%s: offset 0: putting the tables in: %s", path, bad);
        close(fd);
        return -1;
    }
    uint32_t next = count + 1;
    for (unsigned i = 0; i < n; i++) {
        if (cv__btree_append(trees[i], fd, path, &next) != 0) {
            snprintf(err, errlen, "%s", trees[i]->error);
            close(fd);
            return -1;
        }
    }
    *pages = next - 1;
    if (close(fd) != 0) {
        snprintf(err, errlen, "%s: closing after putting the tables in: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

int cv__btree_put_roots(const char *path, cv__btree_t *const *trees, const uint32_t *roots,
                        unsigned n, uint32_t pages, char *err, size_t errlen)
{
    uint8_t h[100];
    errno = 0;
    int fd = open_db(path, h, "link the tables in", err, errlen);
    if (fd < 0)
        return -1;
    for (unsigned i = 0; i < n; i++) {
        if (cv__btree_root(trees[i], fd, path, roots[i]) != 0) {
            snprintf(err, errlen, "%s", trees[i]->error);
            close(fd);
            return -1;
        }
    }
    /* The new page count, valid for the next change counter. */
    uint32_t change = get32(h + 24) + 1;
    put32(h + 24, change);
    put32(h + 28, pages);
    put32(h + 92, change);
    int rc = 0;
    if (pwrite(fd, h, sizeof h, 0) != (ssize_t)sizeof h) {
        snprintf(err, errlen, "%s: offset 0: writing the header: %s", path, strerror(errno));
        rc = -1;
    }
    if (close(fd) != 0 && rc == 0) {
        snprintf(err, errlen, "%s: closing after putting the tables in: %s", path, strerror(errno));
        rc = -1;
    }
    return rc;
}

int cv__btree_put(const char *path, cv__btree_t *const *trees, const uint32_t *roots, unsigned n,
                  char *err, size_t errlen)
{
    uint32_t pages;
    if (cv__btree_put_pages(path, trees, n, &pages, err, errlen) != 0)
        return -1;
    return cv__btree_put_roots(path, trees, roots, n, pages, err, errlen);
}
