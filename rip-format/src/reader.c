/*
 * reader.c: decodes a .rip file block by block (FORMAT.md).
 *
 * The reader reads one block at a time with pread (or from a copy in memory), so its memory use
 * is bounded by the block size however large the file is. Every block's checksum is verified
 * before the block is decompressed: corrupted bytes are never decoded into events. All checks of
 * FORMAT.md section 4 happen here, and every failure names the file, the byte offset and what
 * was expected.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lz4.h>

#include "rip.h"
#include "codes.h"
#include "varint.h"

/* A bounded cursor: the first failure sticks, so a decoder reads all its fields and checks
 * once at the end. */
typedef struct {
    const uint8_t *p, *end;
    int err;   /* RIP__VARINT_OK, _SHORT or _LONG */
} cursor_t;

static const char *const column_names[RIP__COLUMNS] = {"time", "address", "size", "stack"};

struct rip_reader {
    int fd;                    /* -1 when reading from memory or detached */
    uint8_t *mem;
    size_t mem_size;
    uint64_t limit;            /* the file's size when opened (following: when last looked at);
                                * nothing after it is read */
    int detached;              /* rip_reader_detach: the file is opened for each read */
    int follow;                /* rip_reader_follow: the limit moves with the file */
    dev_t dev;                 /* the file opened, to recognize it when detached */
    ino_t ino;
    char path[512];
    rip_header_t header;
    uint32_t block_max;

    uint64_t pos;              /* file offset of the next block's size field */
    uint64_t block_off;        /* file offset of the current block */
    uint8_t *stored;           /* the current block as stored, plus its checksum */
    uint8_t *decoded;          /* the current block decompressed */
    const uint8_t *block;      /* start of the current block's records */
    const uint8_t *cur, *end;  /* next record, end of the current block's records */
    uint64_t time_base, addr_base;
    int columns;               /* format 2: event fields are in the block's columns */
    cursor_t col[RIP__COLUMNS];
    uint64_t events;           /* format 2: events decoded in the current block */
    uint64_t *recent;          /* format 2: their addresses, the last RIP__RECENT of them */

    uint64_t frame_at;         /* file offset of the lz4 frame: after the staging area, if any */
    uint64_t blocks;           /* blocks loaded from the frame */
    uint32_t stage_bs;         /* format 3: the staging area's block size; 0: none */
    int stage_state;           /* 0: not tried, 1: delivering the staged block, 2: done,
                                * 3: following, delivering records of the staged block */
    uint8_t *staged;           /* the staged block: raw records, then the four columns */
    /* Following a staged block (FORMAT.md section 6): the records already delivered from it. */
    uint64_t stage_block;      /* its number, UINT64_MAX when none was delivered from */
    size_t stage_end;          /* end of the records delivered, a byte offset into the raw block */
    size_t stage_col[RIP__COLUMNS]; /* bytes of each column those records used */
    uint64_t stage_time_base, stage_addr_base, stage_events; /* the block's state after them */
    /* Since 3.2: the staged records delivered are checked against the check word as they are
     * decoded (the column bytes each one uses are known only then): at its end, the running
     * check state (codes.h) must give its sum. */
    int stage_checking;
    size_t check_end;
    uint32_t check_sum;
    uint64_t check_state;

    rip_status_t status;       /* sticky: once not RIP_OK, every call returns it */
    rip_error_t error;

    /* Stack ids defined so far: an open-addressing set (0 marks a free slot; id 0 is never
     * defined). */
    uint64_t *ids;
    size_t ids_cap, ids_count;

    uint64_t ips[RIP_MAX_DEPTH];
    rip_segment_t *segs;
    size_t segs_cap;
    rip_str_t *argv;
    size_t argv_cap;
    rip_range_t *ranges;     /* a checkpoint record's list */
    size_t ranges_cap;
};

static rip_status_t fail(rip_reader_t *r, rip_error_t *err, rip_status_t code, uint64_t offset,
                         const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static rip_status_t fail(rip_reader_t *r, rip_error_t *err, rip_status_t code, uint64_t offset,
                         const char *fmt, ...)
{
    rip_error_t *e = &r->error;
    e->code = code;
    e->offset = offset;
    snprintf(e->path, sizeof e->path, "%s", r->path);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->detail, sizeof e->detail, fmt, ap);
    va_end(ap);
    r->status = code;
    if (err)
        *err = *e;
    return code;
}

static ssize_t detached_read(rip_reader_t *r, uint64_t off, void *buf, size_t n);

/* Reads up to n bytes at off. Returns the bytes read (fewer at the end of the file) or -1. */
static ssize_t src_read(rip_reader_t *r, uint64_t off, void *buf, size_t n)
{
    if (r->detached)
        return detached_read(r, off, buf, n);
    if (r->fd < 0) {
        if (off >= r->mem_size)
            return 0;
        size_t avail = r->mem_size - (size_t)off;
        if (n > avail)
            n = avail;
        memcpy(buf, r->mem + off, n);
        return (ssize_t)n;
    }
    /* Bytes appended after the open are not part of the file read (FORMAT.md section 4). */
    if (off >= r->limit)
        return 0;
    if (n > r->limit - off)
        n = (size_t)(r->limit - off);
    size_t got = 0;
    while (got < n) {
        ssize_t k = pread(r->fd, (uint8_t *)buf + got, n - got, (off_t)(off + got));
        if (k < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (k == 0)
            break;
        got += (size_t)k;
    }
    return (ssize_t)got;
}

/* Format 2: reads the column directory at r->cur and splits the rest of the block into the
 * records and the four columns that follow them. */
static rip_status_t open_columns(rip_reader_t *r, rip_error_t *err)
{
    size_t at = (size_t)(r->cur - r->block);
    if (r->end - r->cur < (ptrdiff_t)RIP__DIR_LEN)
        return fail(r, err, RIP_E_CORRUPT, r->block_off,
                    "block of %zu bytes ends inside its column directory (expected %u bytes at "
                    "byte %zu)",
                    (size_t)(r->end - r->block), RIP__DIR_LEN, at);
    uint64_t total = 0, len[RIP__COLUMNS];
    for (int i = 0; i < RIP__COLUMNS; i++) {
        len[i] = rip__get_le32(r->cur + 4 * i);
        total += len[i];
    }
    r->cur += RIP__DIR_LEN;
    if (total > (uint64_t)(r->end - r->cur))
        return fail(r, err, RIP_E_CORRUPT, r->block_off,
                    "column directory at byte %zu gives %llu bytes of columns, the block has "
                    "%zu after it",
                    at, (unsigned long long)total, (size_t)(r->end - r->cur));
    const uint8_t *p = r->end - total;
    r->end = p;
    for (int i = 0; i < RIP__COLUMNS; i++) {
        r->col[i] = (cursor_t){p, p + len[i], RIP__VARINT_OK};
        p += len[i];
    }
    return RIP_OK;
}

/* Format 2: at the end of a block's records, every column must be used up. */
static rip_status_t close_columns(rip_reader_t *r, rip_error_t *err)
{
    for (int i = 0; r->columns && i < RIP__COLUMNS; i++)
        if (r->col[i].p != r->col[i].end)
            return fail(r, err, RIP_E_CORRUPT, r->block_off,
                        "%s column has %zu bytes left after the block's last record",
                        column_names[i], (size_t)(r->col[i].end - r->col[i].p));
    return RIP_OK;
}

/* Loads the block at r->pos. RIP_OK with a block (possibly empty), RIP_END at the end mark, or
 * an error. */
static rip_status_t load_block(rip_reader_t *r, rip_error_t *err)
{
    uint8_t b[4];
    uint64_t at = r->pos;
    ssize_t n = src_read(r, at, b, 4);
    if (n < 0)
        return fail(r, err, RIP_E_IO, at, "read failed: %s", strerror(errno));
    if (n < 4)
        return fail(r, err, RIP_E_TRUNCATED, at,
                    n == 0 ? "file ends before the end mark (expected a block or the end mark)"
                           : "file ends inside a block size field");
    uint32_t field = rip__get_le32(b);
    if (field == 0) {
        uint8_t extra;
        n = src_read(r, at + 4, &extra, 1);
        if (n < 0)
            return fail(r, err, RIP_E_IO, at + 4, "read failed: %s", strerror(errno));
        if (n > 0)
            return fail(r, err, RIP_E_CORRUPT, at + 4,
                        "data after the end mark (expected the file to end)");
        return RIP_END;
    }
    /* The flag is outside the checksum: trusting it would let one flipped bit turn compressed
     * bytes into records. rip writers always compress (FORMAT.md section 1). */
    if (field & RIP__LZ4_UNCOMPRESSED)
        return fail(r, err, RIP_E_CORRUPT, at,
                    "block stored uncompressed (size field 0x%08x): rip blocks are always "
                    "compressed",
                    field);
    uint32_t len = field;
    if (len > r->block_max)
        return fail(r, err, RIP_E_CORRUPT, at,
                    "block of %u bytes is larger than the block max size %u", len, r->block_max);
    n = src_read(r, at + 4, r->stored, (size_t)len + 4);
    if (n < 0)
        return fail(r, err, RIP_E_IO, at, "read failed: %s", strerror(errno));
    if ((size_t)n < (size_t)len + 4)
        return fail(r, err, RIP_E_TRUNCATED, at,
                    "incomplete block: %u bytes and checksum expected, file ends after %zd",
                    len, n);
    if (rip_xxh32(r->stored, len, 0) != rip__get_le32(r->stored + len))
        return fail(r, err, RIP_E_CORRUPT, at, "block checksum mismatch");
    int d = LZ4_decompress_safe((const char *)r->stored, (char *)r->decoded, (int)len,
                                (int)r->block_max);
    if (d < 0)
        return fail(r, err, RIP_E_CORRUPT, at,
                    "block does not decompress (invalid lz4 data or larger than %u bytes)",
                    r->block_max);
    r->block = r->decoded;
    r->end = r->decoded + d;
    r->cur = r->block;
    r->block_off = at;
    r->blocks++;
    r->pos = at + 4 + len + 4;
    r->time_base = 0;
    r->addr_base = 0;
    r->events = 0;
    if (r->stage_state == 3)
        r->stage_state = 0;
    rip_status_t st = r->columns ? open_columns(r, err) : RIP_OK;
    if (st != RIP_OK || r->stage_block != r->blocks - 1)
        return st;
    /* Its first records were delivered from the staging area while it was being built: they
     * are the same bytes, so reading goes on after them, in the state they left. */
    r->stage_block = UINT64_MAX;
    if (r->stage_end > (size_t)(r->end - r->block))
        return fail(r, err, RIP_E_CORRUPT, at,
                    "block of %zu bytes of records, %zu were already read from the staging area",
                    (size_t)(r->end - r->block), r->stage_end);
    for (int i = 0; i < RIP__COLUMNS; i++) {
        if (r->stage_col[i] > (size_t)(r->col[i].end - r->col[i].p))
            return fail(r, err, RIP_E_CORRUPT, at,
                        "%s column shorter than what the staging area's records used",
                        column_names[i]);
        r->col[i].p += r->stage_col[i];
    }
    r->cur = r->block + r->stage_end;
    r->time_base = r->stage_time_base;
    r->addr_base = r->stage_addr_base;
    r->events = r->stage_events;
    return RIP_OK;
}

/* ---- Format 3: the staging area (FORMAT.md section 6) ---- */

/* A file that starts with a staging area: checks its header and notes where the frame starts.
 * Any other file is left to read_frame_header. */
static rip_status_t read_stage_header(rip_reader_t *r, rip_error_t *err)
{
    uint8_t h[16];
    ssize_t n = src_read(r, 0, h, sizeof h);
    if (n < 0)
        return fail(r, err, RIP_E_IO, 0, "read failed: %s", strerror(errno));
    if (n < 4 || rip__get_le32(h) != RIP__STAGE_MAGIC)
        return RIP_OK;
    if (n < 16)
        return fail(r, err, RIP_E_TRUNCATED, 0, "file ends inside the staging area's header");
    uint32_t bs = rip__get_le32(h + 12);
    if (memcmp(h + 8, RIP__MAGIC_STAGE, 4) != 0)
        return fail(r, err, RIP_E_NOT_RIP, 8,
                    "skippable lz4 frame without RIPS (not a rip staging area)");
    if (bs != 65536 && bs != 262144 && bs != 1048576 && bs != 4194304)
        return fail(r, err, RIP_E_CORRUPT, 12,
                    "staging area block size %u, expected 64, 256, 1024 or 4096 KiB", bs);
    uint64_t size = RIP__STAGE_AREA + (1 + RIP__COLUMNS) * (uint64_t)bs;
    if (rip__get_le32(h + 4) != size - 8)
        return fail(r, err, RIP_E_CORRUPT, 4,
                    "staging area of %u bytes, expected %llu for %u-byte blocks",
                    rip__get_le32(h + 4), (unsigned long long)(size - 8), bs);
    r->stage_bs = bs;
    r->frame_at = size;
    return RIP_OK;
}

/* The staging area's commit word: the number of the block being staged and the end of its
 * committed records. 0: cannot be read. */
static int read_commit(rip_reader_t *r, uint64_t *word)
{
    uint8_t b[8];
    if (src_read(r, RIP__STAGE_COMMIT, b, 8) != 8)
        return 0;
    *word = rip__get_le64(b);
    return 1;
}

/* The records of the staged block used up: notes how far they went, for stage_read or
 * load_block to go on from there. */
static void stage_save(rip_reader_t *r)
{
    size_t bs = r->stage_bs;
    r->stage_end = (size_t)(r->end - r->staged);
    for (int i = 0; i < RIP__COLUMNS; i++)
        r->stage_col[i] = (size_t)(r->col[i].p - (r->staged + (1 + (size_t)i) * bs));
    r->stage_time_base = r->time_base;
    r->stage_addr_base = r->addr_base;
    r->stage_events = r->events;
}

/* Makes current the staged block's records committed after those already delivered from it
 * (all of them, the first time), when the staging area holds the block that follows the
 * frame's complete ones. RIP_OK with records; RIP_AGAIN when it adds none: its number is not
 * that block's (already in the frame, or in a file still being written, a block after the ones
 * this reader saw), nothing new was committed, or the writer moved to another block while the
 * bytes were read (they may be a mix, and are dropped; bytes below `end` do not change while the
 * number stays). With `final`, a commit word past the block or records cut by the end of the
 * file are errors; while following they may be a write in progress: RIP_AGAIN. */
static rip_status_t stage_read(rip_reader_t *r, rip_error_t *err, int final)
{
    uint64_t word, again;
    if (!r->stage_bs || !read_commit(r, &word) || (word >> 32) != r->blocks)
        return RIP_AGAIN;
    int more = r->stage_block == r->blocks;
    size_t bs = r->stage_bs, end = (size_t)(word & 0xffffffffu);
    size_t from = more ? r->stage_end : RIP__DIR_LEN;
    if (end <= from)
        return RIP_AGAIN;
    if (end > bs)
        return final ? fail(r, err, RIP_E_CORRUPT, RIP__STAGE_COMMIT,
                            "staging area commit word gives %zu bytes of records, a block holds "
                            "%zu",
                            end, bs)
                     : RIP_AGAIN;
    if (!r->staged && !(r->staged = malloc((1 + RIP__COLUMNS) * bs)))
        return fail(r, err, RIP_E_NOMEM, RIP__STAGE_AREA, "out of memory for the staged block");
    /* Each event takes one byte of records at least and ten bytes of a column at most: the
     * new records need no more of each column than ten times their bytes (a big block's areas
     * are megabytes, read on every look of a follower). */
    size_t want_col[RIP__COLUMNS];
    for (size_t i = 0; i <= RIP__COLUMNS; i++) {
        size_t at = i == 0 ? from : (more ? r->stage_col[i - 1] : 0);
        size_t want = i == 0 ? end - at : bs - at;
        if (i > 0) {
            if (want / 10 > end - from)
                want = 10 * (end - from);
            want_col[i - 1] = want;
        }
        ssize_t n = src_read(r, RIP__STAGE_AREA + i * bs + at, r->staged + i * bs + at, want);
        if (n < 0)
            return fail(r, err, RIP_E_IO, RIP__STAGE_AREA + i * bs, "read failed: %s",
                        strerror(errno));
        if (i == 0 && (size_t)n < want)
            return final ? fail(r, err, RIP_E_TRUNCATED, RIP__STAGE_AREA,
                                "file ends inside the staged records (%zu bytes expected)", end)
                         : RIP_AGAIN;
        memset(r->staged + i * bs + at + n, 0, want - (size_t)n); /* pages never written */
    }
    if (!read_commit(r, &again) || (again >> 32) != (word >> 32))
        return RIP_AGAIN;
    /* The check word, read after the records (stored after the commit word): for a file no one
     * writes any more, it covers the records up to its end, which is the commit word's or, for
     * a process killed between the two stores, the one before. */
    r->stage_checking = 0;
    uint8_t cw[8];
    if (final && !more && r->header.major == 3 && r->header.minor >= 2 &&
        src_read(r, RIP__STAGE_CHECK, cw, 8) == 8) {
        uint64_t check = rip__get_le64(cw);
        size_t cend = (size_t)(check >> 24 & 0xFFFFFFu);
        /* A file read as finished while its process still writes (a snapshot of a running
         * process): the writer may have stored a newer commit word and its check word since
         * the commit word above was read. Then the commit word has moved, and the check word
         * describes records this look does not read: it is not a sign of damage. */
        uint64_t now;
        int moved = !read_commit(r, &now) || now != word;
        if (!moved && (check >> 48) == (r->blocks & 0xFFFFu) && cend > end)
            return fail(r, err, RIP_E_CORRUPT, RIP__STAGE_CHECK,
                        "staging area check word covers %zu bytes of records, the commit word "
                        "only %zu",
                        cend, end);
        if (!moved && (check >> 48) == (r->blocks & 0xFFFFu) && cend > RIP__DIR_LEN) {
            r->stage_checking = 1;
            r->check_end = cend;
            r->check_sum = (uint32_t)(check & 0xFFFFFFu);
            r->check_state = RIP__CHECK_BASIS;
        }
    }
    r->block = r->staged;
    r->cur = r->staged + from;
    r->end = r->staged + end;
    r->block_off = RIP__STAGE_AREA;
    r->time_base = more ? r->stage_time_base : 0;
    r->addr_base = more ? r->stage_addr_base : 0;
    r->events = more ? r->stage_events : 0;
    /* The columns run to the end of what was read: a staged block's records use a prefix of
     * each area. */
    for (size_t i = 0; i < RIP__COLUMNS; i++) {
        uint8_t *p = r->staged + (1 + i) * bs + (more ? r->stage_col[i] : 0);
        r->col[i] = (cursor_t){p, p + want_col[i], RIP__VARINT_OK};
    }
    r->stage_block = r->blocks;
    return RIP_OK;
}

/* After the frame's last complete block (`st`: RIP_END, or RIP_E_TRUNCATED for a block cut
 * short): makes the staged block current (what a follower has not delivered of it) and returns
 * RIP_OK, or returns `st` unchanged when the staging area adds nothing (stage_read). */
static rip_status_t staged_tail(rip_reader_t *r, rip_error_t *err, rip_status_t st)
{
    if (!r->stage_bs || r->stage_state == 1 || r->stage_state == 2)
        return st;
    r->stage_state = 2;
    rip_status_t saved = r->status;
    r->status = RIP_OK;
    rip_status_t got = stage_read(r, err, 1);
    if (got == RIP_AGAIN) {
        r->status = saved;
        return st;
    }
    if (got == RIP_OK)
        r->stage_state = 1;
    return got;
}

static rip_status_t read_frame_header(rip_reader_t *r, rip_error_t *err)
{
    static const uint8_t magic[4] = {0x04, 0x22, 0x4D, 0x18};
    uint8_t h[RIP__LZ4_FRAME_HEADER_LEN];
    ssize_t n = src_read(r, r->frame_at, h, sizeof h);
    if (n < 0)
        return fail(r, err, RIP_E_IO, 0, "read failed: %s", strerror(errno));
    size_t cmp = (size_t)n < 4 ? (size_t)n : 4;
    if (memcmp(h, magic, cmp) != 0)
        return fail(r, err, RIP_E_NOT_RIP, 0,
                    "not an lz4 frame (bytes %02x %02x %02x %02x, expected magic 04 22 4d 18)",
                    h[0], n > 1 ? h[1] : 0, n > 2 ? h[2] : 0, n > 3 ? h[3] : 0);
    if (n == 0)
        return fail(r, err, RIP_E_TRUNCATED, 0, "empty file (expected an lz4 frame)");
    if ((size_t)n < sizeof h)
        return fail(r, err, RIP_E_TRUNCATED, 0, "file ends inside the lz4 frame header");
    if (h[4] != RIP__LZ4_FLG)
        return fail(r, err, RIP_E_NOT_RIP, 4,
                    "lz4 frame flags 0x%02x, expected 0x70 (version 01, independent blocks, "
                    "block checksums, no content size, no content checksum, no dictionary)",
                    h[4]);
    uint8_t id = h[5] >> 4;
    if ((h[5] & 0x8F) != 0 || id < 4)
        return fail(r, err, RIP_E_NOT_RIP, 5,
                    "lz4 frame block descriptor 0x%02x, expected 0x40, 0x50, 0x60 or 0x70", h[5]);
    if (h[6] != (uint8_t)(rip_xxh32(h + 4, 2, 0) >> 8))
        return fail(r, err, RIP_E_CORRUPT, 6, "lz4 frame header checksum mismatch");
    r->block_max = 1u << (8 + 2 * id);
    r->pos = r->frame_at + RIP__LZ4_FRAME_HEADER_LEN;
    if (r->stage_bs && r->stage_bs != r->block_max)
        return fail(r, err, RIP_E_CORRUPT, 12,
                    "staging area for %u-byte blocks, the frame's blocks are %u bytes",
                    r->stage_bs, r->block_max);
    return RIP_OK;
}

static rip_status_t read_stream_header(rip_reader_t *r, rip_error_t *err)
{
    rip_status_t st = load_block(r, err);
    if (st == RIP_END)
        return fail(r, err, RIP_E_NOT_RIP, r->pos,
                    "lz4 frame holds no data (expected a RIPT or RIPP header)");
    if (st != RIP_OK)
        return st;
    const uint8_t *p = r->block;
    size_t len = (size_t)(r->end - p);
    rip_header_t *h = &r->header;
    if (len >= 4 && memcmp(p, RIP__MAGIC_THREAD, 4) == 0)
        h->is_process = 0;
    else if (len >= 4 && memcmp(p, RIP__MAGIC_PROCESS, 4) == 0)
        h->is_process = 1;
    else
        return fail(r, err, RIP_E_NOT_RIP, r->block_off,
                    "lz4 frame content does not start with RIPT or RIPP (not a rip file)");
    if (len < 12)
        return fail(r, err, RIP_E_CORRUPT, r->block_off,
                    "first block of %zu bytes ends inside the rip header", len);
    h->major = rip__get_le16(p + 4);
    h->minor = rip__get_le16(p + 6);
    if (h->major < 1 || h->major > RIP_FORMAT_MAJOR)
        return fail(r, err, RIP_E_VERSION, r->block_off,
                    "format version %u.%u, this reader reads versions 1.x to %d.x", h->major,
                    h->minor, RIP_FORMAT_MAJOR);
    uint32_t hlen = rip__get_le32(p + 8);
    uint32_t min_hlen = h->major >= 2 ? RIP_HEADER_LEN_2_0 : RIP_HEADER_LEN_1_0;
    if (hlen < min_hlen)
        return fail(r, err, RIP_E_CORRUPT, r->block_off,
                    "header_len %u, expected at least %u for version %u", hlen, min_hlen, h->major);
    if (hlen > len - 12)
        return fail(r, err, RIP_E_CORRUPT, r->block_off,
                    "header_len %u runs past the end of the first block (%zu bytes)", hlen, len);
    h->pid = rip__get_le32(p + 12);
    h->tid = rip__get_le32(p + 16);
    h->recording = rip__get_le32(p + 20);
    h->serial = rip__get_le32(p + 24);
    h->start_ns = rip__get_le64(p + 28);
    h->time_shift = h->major >= 2 ? rip__get_le32(p + 36) : 0;
    if (h->time_shift > RIP_MAX_TIME_SHIFT)
        return fail(r, err, RIP_E_CORRUPT, r->block_off,
                    "header time_shift %u, expected 0-%d", h->time_shift, RIP_MAX_TIME_SHIFT);
    h->segment = h->first_serial = 0;
    if (h->major >= 3 && hlen >= RIP_HEADER_LEN_SEGMENT && !h->is_process) {
        h->segment = rip__get_le32(p + 40);
        h->first_serial = rip__get_le32(p + 44);
        if (h->segment == 1 || (h->segment >= 2 && (!h->first_serial ||
                                                     h->first_serial >= h->serial)))
            return fail(r, err, RIP_E_CORRUPT, r->block_off,
                        "header segment %u of the thread whose first file is number %u, in file "
                        "number %u: expected 0, or 2 or more after an earlier file",
                        h->segment, h->first_serial, h->serial);
    }
    r->cur = p + 12 + hlen;   /* skips header fields of later minor versions */
    r->columns = h->major >= 2;
    return r->columns ? open_columns(r, err) : RIP_OK;
}

static rip_status_t open_common(rip_reader_t *r, rip_reader_t **out, rip_error_t *err)
{
    rip_status_t st = read_stage_header(r, err);
    if (st == RIP_OK)
        st = read_frame_header(r, err);
    if (st == RIP_OK) {
        r->stored = malloc((size_t)r->block_max + 4);
        r->decoded = malloc(r->block_max);
        r->recent = malloc(RIP__RECENT * sizeof *r->recent);
        if (!r->stored || !r->decoded || !r->recent)
            st = fail(r, err, RIP_E_NOMEM, 0, "out of memory for a %u-byte block", r->block_max);
    }
    if (st == RIP_OK)
        st = read_stream_header(r, err);
    if (st != RIP_OK) {
        rip_reader_close(r);
        *out = NULL;
        return st;
    }
    *out = r;
    return RIP_OK;
}

static rip_reader_t *new_reader(const char *name)
{
    rip_reader_t *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->fd = -1;
    r->stage_block = UINT64_MAX;
    snprintf(r->path, sizeof r->path, "%s", name ? name : "(memory)");
    return r;
}

static rip_status_t nomem(const char *name, rip_reader_t **out, rip_error_t *err)
{
    if (err) {
        memset(err, 0, sizeof *err);
        err->code = RIP_E_NOMEM;
        err->offset = RIP_NO_OFFSET;
        snprintf(err->path, sizeof err->path, "%s", name ? name : "(memory)");
        snprintf(err->detail, sizeof err->detail, "out of memory");
    }
    *out = NULL;
    return RIP_E_NOMEM;
}

static const char *file_kind(mode_t mode)
{
    switch (mode & S_IFMT) {
    case S_IFDIR: return "a directory";
    case S_IFIFO: return "a FIFO";
    case S_IFSOCK: return "a socket";
    case S_IFCHR: return "a character device";
    case S_IFBLK: return "a block device";
    default: return "not a regular file";
    }
}

/* Opens r->path for reading if it is a regular file. O_NONBLOCK keeps a FIFO planted under a
 * rip file's name from blocking the open (it has no effect on a regular file); O_NOFOLLOW keeps
 * a link planted there from reading a file its planter could not (another user's recording,
 * /etc/shadow). The first open
 * takes the file's identity and size, the snapshot the reader keeps to; a later open (detached
 * reader) must find the same file. The descriptor, or -1 with errno set and `why` filled. */
static int open_regular(rip_reader_t *r, char *why, size_t len)
{
    int fd = open(r->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
    if (fd < 0) {
        struct stat lb;
        int e = errno;
        if (e == ELOOP && lstat(r->path, &lb) == 0 && S_ISLNK(lb.st_mode))
            snprintf(why, len, "a symbolic link, expected a regular rip file (links are not "
                               "followed: the tracer never makes one)");
        else
            snprintf(why, len, "cannot open: %s", strerror(e));
        errno = e;
        return -1;
    }
    struct stat sb;
    int e = 0;
    if (fstat(fd, &sb) != 0) {
        e = errno;
        snprintf(why, len, "cannot examine: %s", strerror(e));
    } else if (!S_ISREG(sb.st_mode)) {
        e = EINVAL;
        snprintf(why, len, "%s, expected a regular rip file", file_kind(sb.st_mode));
    } else if (!r->detached) {
        r->dev = sb.st_dev;
        r->ino = sb.st_ino;
        r->limit = (uint64_t)sb.st_size;
        return fd;
    } else if (sb.st_dev != r->dev || sb.st_ino != r->ino) {
        e = ESTALE;
        snprintf(why, len, "replaced by another file while being read");
    } else {
        return fd;
    }
    close(fd);
    errno = e;
    return -1;
}

/* A detached reader's read: open the same file, read, close. -1 with errno set when the file
 * is gone or was replaced (ESTALE). */
static ssize_t detached_read(rip_reader_t *r, uint64_t off, void *buf, size_t n)
{
    char why[256];
    int fd = open_regular(r, why, sizeof why);
    if (fd < 0)
        return -1;
    r->fd = fd;
    r->detached = 0;
    ssize_t k = src_read(r, off, buf, n);
    int saved = errno;
    close(fd);
    r->fd = -1;
    r->detached = 1;
    errno = saved;
    return k;
}

void rip_reader_detach(rip_reader_t *r)
{
    if (!r || r->fd < 0)
        return;
    close(r->fd);
    r->fd = -1;
    r->detached = 1;
}

/* The file's size now becomes the limit of what is read. */
static void take_size(rip_reader_t *r)
{
    struct stat sb;
    if (r->mem)
        return;
    if (r->fd >= 0 ? fstat(r->fd, &sb) == 0 : stat(r->path, &sb) == 0)
        if ((uint64_t)sb.st_size > r->limit)
            r->limit = (uint64_t)sb.st_size;
}

void rip_reader_follow(rip_reader_t *r, int on)
{
    if (!r || r->mem)
        return;
    r->follow = on;
    take_size(r);
}

int rip_reader_staged(const rip_reader_t *r)
{
    return r->stage_bs != 0;
}

uint64_t rip_reader_size(const rip_reader_t *r)
{
    return r->mem ? (uint64_t)r->mem_size : r->limit;
}

rip_status_t rip_reader_open(const char *path, rip_reader_t **out, rip_error_t *err)
{
    rip_reader_t *r = new_reader(path);
    if (!r)
        return nomem(path, out, err);
    char why[256];
    r->fd = open_regular(r, why, sizeof why);
    if (r->fd < 0) {
        rip_status_t st = fail(r, err, RIP_E_IO, RIP_NO_OFFSET, "%s", why);
        rip_reader_close(r);
        *out = NULL;
        return st;
    }
    return open_common(r, out, err);
}

rip_status_t rip_reader_open_mem(const void *data, size_t size, const char *name,
                                 rip_reader_t **out, rip_error_t *err)
{
    rip_reader_t *r = new_reader(name);
    if (!r)
        return nomem(name, out, err);
    r->mem = malloc(size ? size : 1);
    if (!r->mem) {
        rip_reader_close(r);
        return nomem(name, out, err);
    }
    if (size)
        memcpy(r->mem, data, size);
    r->mem_size = size;
    return open_common(r, out, err);
}

const rip_header_t *rip_reader_header(const rip_reader_t *r)
{
    return &r->header;
}

void rip_reader_close(rip_reader_t *r)
{
    if (!r)
        return;
    if (r->fd >= 0)
        close(r->fd);
    free(r->mem);
    free(r->stored);
    free(r->decoded);
    free(r->recent);
    free(r->staged);
    free(r->ids);
    free(r->segs);
    free(r->argv);
    free(r->ranges);
    free(r);
}

/* ---- Stack id set ---- */

static size_t id_slot(uint64_t id, size_t cap)
{
    /* Fibonacci hashing spreads the small consecutive ids the tracer uses. */
    return (size_t)((id * 0x9E3779B97F4A7C15ull) >> 32) & (cap - 1);
}

static int id_defined(const rip_reader_t *r, uint64_t id)
{
    if (r->ids_cap == 0)
        return 0;
    for (size_t i = id_slot(id, r->ids_cap);; i = (i + 1) & (r->ids_cap - 1)) {
        if (r->ids[i] == id)
            return 1;
        if (r->ids[i] == 0)
            return 0;
    }
}

static int id_add(rip_reader_t *r, uint64_t id)
{
    if ((r->ids_count + 1) * 2 > r->ids_cap) {
        size_t cap = r->ids_cap ? r->ids_cap * 2 : 256;
        uint64_t *ids = calloc(cap, sizeof *ids);
        if (!ids)
            return -1;
        for (size_t i = 0; i < r->ids_cap; i++) {
            if (r->ids[i] == 0)
                continue;
            size_t j = id_slot(r->ids[i], cap);
            while (ids[j] != 0)
                j = (j + 1) & (cap - 1);
            ids[j] = r->ids[i];
        }
        free(r->ids);
        r->ids = ids;
        r->ids_cap = cap;
    }
    size_t i = id_slot(id, r->ids_cap);
    while (r->ids[i] != 0 && r->ids[i] != id)
        i = (i + 1) & (r->ids_cap - 1);
    if (r->ids[i] == 0) {
        r->ids[i] = id;
        r->ids_count++;
    }
    return 0;
}

/* ---- Record decoding ---- */

static uint64_t get_u_long(cursor_t *c)
{
    uint64_t v = 0;
    if (c->err == RIP__VARINT_OK)
        c->err = rip__get_varint(&c->p, c->end, &v);
    return c->err == RIP__VARINT_OK ? v : 0;
}

/* The next varint, or 0 once the cursor has failed. Most event fields take one or two bytes:
 * those cases are decoded here, the rest out of line. */
static inline uint64_t get_u(cursor_t *c)
{
    if (__builtin_expect(c->err == RIP__VARINT_OK && c->end - c->p >= 2, 1)) {
        const uint8_t *p = c->p;
        if (p[0] < 0x80) {
            c->p = p + 1;
            return p[0];
        }
        if (p[1] < 0x80) {
            c->p = p + 2;
            return (uint64_t)(p[0] & 0x7f) | (uint64_t)p[1] << 7;
        }
    }
    return get_u_long(c);
}

static int64_t get_z(cursor_t *c)
{
    return rip__unzigzag(get_u(c));
}

static rip_str_t get_s(cursor_t *c)
{
    rip_str_t s = {"", 0};
    uint64_t n = get_u(c);
    if (c->err != RIP__VARINT_OK)
        return s;
    if (n > (uint64_t)(c->end - c->p)) {
        c->err = RIP__VARINT_SHORT;
        return s;
    }
    s.ptr = (const char *)c->p;
    s.len = (size_t)n;
    c->p += n;
    return s;
}

static int grow(void **arr, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : 16;
    while (n < need)
        n *= 2;
    void *p = realloc(*arr, n * elem);
    if (!p)
        return -1;
    *arr = p;
    *cap = n;
    return 0;
}

static rip_status_t cursor_fail(rip_reader_t *r, rip_error_t *err, const cursor_t *c,
                                size_t rec_at, uint8_t type, int extended)
{
    if (c->err == RIP__VARINT_LONG)
        return fail(r, err, RIP_E_CORRUPT, r->block_off,
                    "varint longer than 10 bytes (record type 0x%02x at byte %zu of the block)",
                    type, rec_at);
    return fail(r, err, RIP_E_CORRUPT, r->block_off,
                extended ? "record runs past its length (record type 0x%02x at byte %zu of the block)"
                         : "record runs past end of block (record type 0x%02x at byte %zu of the block)",
                type, rec_at);
}

/* Format 2: a column that ran out or held a bad varint while decoding the record at rec_at. */
static rip_status_t column_error(rip_reader_t *r, rip_error_t *err, size_t rec_at, uint8_t type)
{
    for (int i = 0; i < RIP__COLUMNS; i++) {
        if (r->col[i].err == RIP__VARINT_OK)
            continue;
        return fail(r, err, RIP_E_CORRUPT, r->block_off,
                    r->col[i].err == RIP__VARINT_LONG
                        ? "varint longer than 10 bytes in the %s column (record type 0x%02x at "
                          "byte %zu of the block)"
                        : "%s column ends before the record that needs it (record type 0x%02x "
                          "at byte %zu of the block)",
                    column_names[i], type, rec_at);
    }
    return RIP_OK;
}

/* RIP_OK, or the error of the first column that failed. */
static inline rip_status_t column_fail(rip_reader_t *r, rip_error_t *err, size_t rec_at,
                                       uint8_t type)
{
    _Static_assert(RIP__COLUMNS == 4 && RIP__VARINT_OK == 0, "one test for the four columns");
    if (__builtin_expect((r->col[0].err | r->col[1].err | r->col[2].err | r->col[3].err) == 0, 1))
        return RIP_OK;
    return column_error(r, err, rec_at, type);
}

static rip_status_t decode_extended(rip_reader_t *r, rip_record_t *rec, rip_error_t *err,
                                    uint8_t type, cursor_t *c, size_t rec_at)
{
    switch (type) {
    case RIP__T_MODULES:
        rec->kind = RIP_REC_MODULES;
        rec->t = get_u(c);
        rec->u.modules.count = (uint32_t)get_u(c);
        break;
    case RIP__T_MODULE: {
        rec->kind = RIP_REC_MODULE;
        rec->u.module.bias = get_u(c);
        rec->u.module.path = get_s(c);
        rec->u.module.build_id = get_s(c);
        uint64_t nseg = get_u(c);
        /* Each segment takes at least 3 bytes: this bounds the allocation by the payload. */
        if (c->err == RIP__VARINT_OK && nseg > (uint64_t)(c->end - c->p) / 3)
            c->err = RIP__VARINT_SHORT;
        if (c->err != RIP__VARINT_OK)
            break;
        if (grow((void **)&r->segs, &r->segs_cap, (size_t)nseg, sizeof *r->segs) != 0)
            return fail(r, err, RIP_E_NOMEM, r->block_off, "out of memory for module segments");
        for (uint64_t i = 0; i < nseg; i++) {
            r->segs[i].start = get_u(c);
            r->segs[i].size = get_u(c);
            r->segs[i].flags = (uint32_t)get_u(c);
        }
        rec->u.module.nseg = (uint32_t)nseg;
        rec->u.module.segs = r->segs;
        break;
    }
    case RIP__T_THREAD_NAME:
    case RIP__T_MARK:
        rec->kind = type == RIP__T_MARK ? RIP_REC_MARK : RIP_REC_THREAD_NAME;
        rec->t = get_u(c);
        rec->u.name.text = get_s(c);
        break;
    case RIP__T_LOST:
        rec->kind = RIP_REC_LOST;
        rec->t = get_u(c);
        rec->u.lost.count = get_u(c);
        rec->u.lost.reason = get_s(c);
        break;
    case RIP__T_PROCESS: {
        rec->kind = RIP_REC_PROCESS;
        rec->u.process.ppid = (uint32_t)get_u(c);
        rec->u.process.exe = get_s(c);
        uint64_t argc = get_u(c);
        if (c->err == RIP__VARINT_OK && argc > (uint64_t)(c->end - c->p))
            c->err = RIP__VARINT_SHORT;
        if (c->err != RIP__VARINT_OK)
            break;
        if (grow((void **)&r->argv, &r->argv_cap, (size_t)argc, sizeof *r->argv) != 0)
            return fail(r, err, RIP_E_NOMEM, r->block_off, "out of memory for arguments");
        for (uint64_t i = 0; i < argc; i++)
            r->argv[i] = get_s(c);
        rec->u.process.argc = (uint32_t)argc;
        rec->u.process.argv = r->argv;
        rec->u.process.wall_ns = get_u(c);
        rec->u.process.clock = get_s(c);
        rec->u.process.page_size = (uint32_t)get_u(c);
        break;
    }
    case RIP__T_CONFIG:
        rec->kind = RIP_REC_CONFIG;
        rec->u.config.depth = (uint32_t)get_u(c);
        rec->u.config.sample_ppm = (uint32_t)get_u(c);
        rec->u.config.buffer_kb = (uint32_t)get_u(c);
        rec->u.config.max_threads = (uint32_t)get_u(c);
        rec->u.config.signal = (uint32_t)get_u(c);
        rec->u.config.dir = get_s(c);
        break;
    case RIP__T_TOTALS:
        rec->kind = RIP_REC_TOTALS;
        rec->t = get_u(c);
        rec->u.totals.allocs = get_u(c);
        rec->u.totals.bytes = get_u(c);
        rec->u.totals.frees = get_u(c);
        break;
    case RIP__T_SAMPLING:
        rec->kind = RIP_REC_SAMPLING;
        rec->u.sampling.interval = get_u(c);
        rec->u.sampling.seed = get_u(c);
        break;
    case RIP__T_UNSEEN:
        rec->kind = RIP_REC_UNSEEN;
        rec->u.unseen.allocator = get_s(c);
        rec->u.unseen.module = get_s(c);
        rec->u.unseen.symbol = get_s(c);
        break;
    case RIP__T_POOL: {
        rec->kind = RIP_REC_POOL;
        rec->t = get_u(c);
        uint64_t op = get_u(c);
        rec->u.pool.pool = get_u(c);
        rec->u.pool.addr = rec->u.pool.size = rec->u.pool.stack = 0;
        rec->u.pool.name.ptr = "";
        rec->u.pool.name.len = 0;
        if (c->err == RIP__VARINT_OK && op > RIP_POOL_DESTROY)
            return fail(r, err, RIP_E_CORRUPT, r->block_off,
                        "pool record at block offset %zu: op %llu, expected 0-3", rec_at,
                        (unsigned long long)op);
        rec->u.pool.op = (rip_pool_op_t)op;
        if (op == RIP_POOL_ALLOC || op == RIP_POOL_FREE)
            rec->u.pool.addr = get_u(c);
        if (op == RIP_POOL_ALLOC) {
            rec->u.pool.size = get_u(c);
            rec->u.pool.stack = get_u(c);
        }
        if (op == RIP_POOL_CREATE)
            rec->u.pool.name = get_s(c);
        break;
    }
    case RIP__T_CHECKPOINT: {
        rec->kind = RIP_REC_CHECKPOINT;
        rec->t = get_u(c);
        rec->u.checkpoint.number = get_u(c);
        uint64_t n = get_u(c);
        rec->u.checkpoint.nranges = 0;
        rec->u.checkpoint.nfiles = 0;
        rec->u.checkpoint.ranges = r->ranges;
        if (c->err == RIP__VARINT_OK && n > (uint64_t)(c->end - c->p) / 2)
            c->err = RIP__VARINT_SHORT;
        if (c->err != RIP__VARINT_OK || n == 0)
            break;
        if (grow((void **)&r->ranges, &r->ranges_cap, (size_t)n, sizeof *r->ranges) != 0)
            return fail(r, err, RIP_E_NOMEM, r->block_off, "out of memory for a checkpoint");
        uint64_t last = 0, files = 0;
        for (uint64_t i = 0; i < n && c->err == RIP__VARINT_OK; i++) {
            uint64_t gap = get_u(c), len = get_u(c);
            if (c->err != RIP__VARINT_OK)
                break;
            if (gap == 0 || (i && gap == 1) || last + gap > UINT32_MAX ||
                last + gap + len > UINT32_MAX)
                return fail(r, err, RIP_E_CORRUPT, r->block_off,
                            "checkpoint record at block offset %zu: range %llu of its list does "
                            "not start above the one before it or ends beyond 2^32",
                            rec_at, (unsigned long long)i);
            r->ranges[i].first = (uint32_t)(last + gap);
            r->ranges[i].last = (uint32_t)(last + gap + len);
            last = r->ranges[i].last;
            files += len + 1;
        }
        rec->u.checkpoint.ranges = r->ranges;
        rec->u.checkpoint.nranges = (uint32_t)n;
        rec->u.checkpoint.nfiles = files;
        break;
    }
    case RIP__T_RSS:
        rec->kind = RIP_REC_RSS;
        rec->t = get_u(c);
        rec->u.rss.rss = get_u(c);
        rec->u.rss.anon = get_u(c);
        rec->u.rss.file = get_u(c);
        rec->u.rss.swap = get_u(c);
        break;
    case RIP__T_MAP: {
        rec->kind = RIP_REC_MAP;
        rec->t = get_u(c);
        uint64_t op = get_u(c);
        if (c->err == RIP__VARINT_OK && op > RIP_MAP_REMAP)
            return fail(r, err, RIP_E_CORRUPT, r->block_off,
                        "map record at block offset %zu: op %llu, expected 0-2", rec_at,
                        (unsigned long long)op);
        rec->u.map.op = (rip_map_op_t)op;
        rec->u.map.addr = get_u(c);
        rec->u.map.len = get_u(c);
        rec->u.map.stack = rec->u.map.old = rec->u.map.old_len = 0;
        if (op != RIP_MAP_UNMAP)
            rec->u.map.stack = get_u(c);
        if (op == RIP_MAP_REMAP) {
            rec->u.map.old = get_u(c);
            rec->u.map.old_len = get_u(c);
        }
        break;
    }
    case RIP__T_ON:
    case RIP__T_OFF:
        rec->kind = type == RIP__T_ON ? RIP_REC_ON : RIP_REC_OFF;
        rec->t = get_u(c);
        rec->u.onoff.how = get_s(c);
        break;
    default:
        rec->kind = RIP_REC_UNKNOWN;
        rec->u.unknown.type = type;
        break;
    }
    if (c->err != RIP__VARINT_OK)
        return cursor_fail(r, err, c, rec_at, type, 1);
    return RIP_OK;
}

/* An event's address from its address-column value v (format 1: the record's zigzag delta).
 * Format 2 with a plain type code: the low bit says whether v is a distance back to an earlier
 * event of this block at the same address, or a delta in 16-byte units. Byte deltas: `exact`. */
static rip_status_t event_addr(rip_reader_t *r, rip_error_t *err, uint64_t v, int exact,
                               size_t rec_at, uint64_t *addr)
{
    if (exact) {
        *addr = r->addr_base + (uint64_t)rip__unzigzag(v);
    } else if (!(v & 1)) {
        *addr = r->addr_base + ((uint64_t)rip__unzigzag(v >> 1) << 4);
    } else {
        uint64_t back = v >> 1;
        if (back == 0 || back > RIP__RECENT || back > r->events)
            return fail(r, err, RIP_E_CORRUPT, r->block_off,
                        "address refers to the event %llu back, the block has %llu before it (at "
                        "most %u; record at byte %zu of the block)",
                        (unsigned long long)back, (unsigned long long)r->events, RIP__RECENT,
                        rec_at);
        *addr = r->recent[(r->events - back) & (RIP__RECENT - 1)];
    }
    if (r->columns)
        r->recent[r->events++ & (RIP__RECENT - 1)] = *addr;
    r->addr_base = *addr;
    return RIP_OK;
}

static rip_status_t decode(rip_reader_t *r, rip_record_t *rec, rip_error_t *err)
{
    size_t rec_at = (size_t)(r->cur - r->block);
    cursor_t c = {r->cur, r->end, RIP__VARINT_OK};
    uint8_t code = *c.p++;   /* as in the file, for messages */
    /* Since 3.1: a `call` record names the call of the allocation record that follows it, in the
     * same block (the writer puts both in one reservation). */
    rip_call_t named = 0;
    if (code == RIP__T_CALL) {
        uint64_t len = get_u(&c);
        const uint8_t *payload = c.p;
        uint64_t call = get_u(&c);
        if (c.err != RIP__VARINT_OK)
            return cursor_fail(r, err, &c, rec_at, code, 0);
        if (len > (uint64_t)(c.end - payload) || (uint64_t)(c.p - payload) > len)
            return fail(r, err, RIP_E_CORRUPT, r->block_off,
                        "call record runs past its length or the block (record at byte %zu of "
                        "the block)", rec_at);
        c.p = payload + len; /* fields of a later minor version are skipped */
        uint8_t next = c.p < c.end ? *c.p & (uint8_t)~RIP__T_EXACT : 0;
        if (c.p == c.end || next < RIP__T_ALLOC_FIRST || next > RIP__T_ALLOC_LAST)
            return fail(r, err, RIP_E_CORRUPT, r->block_off,
                        "call record not followed by an allocation record (record at byte %zu of "
                        "the block)", rec_at);
        if (call < RIP_CALL_NAMED_FIRST || call > UINT32_MAX)
            return fail(r, err, RIP_E_CORRUPT, r->block_off,
                        "call record names call %llu, expected %d or more (record at byte %zu of "
                        "the block)", (unsigned long long)call, RIP_CALL_NAMED_FIRST, rec_at);
        named = (rip_call_t)call;
        code = *c.p++;
    }
    uint8_t type = code;

    /* Events, nearly every record, fill in every field they have; the rest start from zero. */
    rec->offset = r->block_off;

    /* Format 1 keeps every field in the record. Format 2 keeps the time, address, size and stack
     * of events in the block's columns; RIP__T_EXACT in the type code marks a byte delta. */
    cursor_t *c_dt = &c, *c_addr = &c, *c_size = &c, *c_stack = &c;
    int exact = 1;
    if (r->columns) {
        uint8_t plain = type & (uint8_t)~RIP__T_EXACT;
        if ((plain >= RIP__T_ALLOC_FIRST && plain <= RIP__T_ALLOC_LAST) || plain == RIP__T_FREE) {
            exact = (type & RIP__T_EXACT) != 0;
            type = plain;
        }
        c_dt = &r->col[RIP__COL_DT];
        c_addr = &r->col[RIP__COL_ADDR];
        c_size = &r->col[RIP__COL_SIZE];
        c_stack = &r->col[RIP__COL_STACK];
    }

    if (type >= RIP__T_ALLOC_FIRST && type <= RIP__T_ALLOC_LAST) {
        uint64_t dt = get_u(c_dt);
        uint64_t av = get_u(c_addr);
        uint64_t size = get_u(c_size);
        uint64_t stack = get_u(c_stack);
        uint64_t align = type >= RIP__T_POSIX_MEMALIGN ? get_u(&c) : 0;
        int is_realloc = type == RIP__T_REALLOC || type == RIP__T_REALLOCARRAY;
        int64_t dold = is_realloc ? get_z(&c) : 0;
        uint64_t dt_old = is_realloc ? get_u(&c) : 0;
        if (c.err != RIP__VARINT_OK)
            return cursor_fail(r, err, &c, rec_at, code, 0);
        if (r->columns && column_fail(r, err, rec_at, code) != RIP_OK)
            return r->status;
        if (dt > UINT64_MAX - r->time_base)
            return fail(r, err, RIP_E_CORRUPT, r->block_off,
                        "time overflows 64 bits (record at byte %zu of the block)", rec_at);
        uint64_t t = r->time_base + dt;
        if (stack != 0 && !id_defined(r, stack))
            return fail(r, err, RIP_E_CORRUPT, r->block_off,
                        "allocation names undefined stack id %llu (record at byte %zu of the block)",
                        (unsigned long long)stack, rec_at);
        uint64_t addr;
        if (event_addr(r, err, av, exact, rec_at, &addr) != RIP_OK)
            return r->status;
        rec->kind = RIP_REC_ALLOC;
        rec->t = t;
        rec->u.alloc.call = named ? named : (rip_call_t)type;
        rec->u.alloc.addr = addr;
        rec->u.alloc.size = size;
        rec->u.alloc.stack = stack;
        rec->u.alloc.align = align;
        rec->u.alloc.old_addr = 0;
        rec->u.alloc.old_t = 0;
        if (is_realloc) {
            rec->u.alloc.old_addr = addr + (uint64_t)dold;
            if (rec->u.alloc.old_addr != 0) {
                if (dt_old > t)
                    return fail(r, err, RIP_E_CORRUPT, r->block_off,
                                "realloc dt_old %llu is larger than its time %llu (record at byte "
                                "%zu of the block)",
                                (unsigned long long)dt_old, (unsigned long long)t, rec_at);
                rec->u.alloc.old_t = t - dt_old;
            }
        }
        r->time_base = t;
    } else if (type == RIP__T_FREE) {
        uint64_t dt = get_u(c_dt);
        uint64_t av = get_u(c_addr);
        if (c.err != RIP__VARINT_OK)
            return cursor_fail(r, err, &c, rec_at, code, 0);
        if (r->columns && column_fail(r, err, rec_at, code) != RIP_OK)
            return r->status;
        if (dt > UINT64_MAX - r->time_base)
            return fail(r, err, RIP_E_CORRUPT, r->block_off,
                        "time overflows 64 bits (record at byte %zu of the block)", rec_at);
        if (event_addr(r, err, av, exact, rec_at, &rec->u.free.addr) != RIP_OK)
            return r->status;
        rec->kind = RIP_REC_FREE;
        rec->t = r->time_base + dt;
        r->time_base = rec->t;
    } else if (type == RIP__T_STACK) {
        memset(rec, 0, sizeof *rec);
        rec->offset = r->block_off;
        uint64_t id = get_u(&c);
        uint64_t depth = get_u(&c);
        if (c.err != RIP__VARINT_OK)
            return cursor_fail(r, err, &c, rec_at, code, 0);
        if (id == 0)
            return fail(r, err, RIP_E_CORRUPT, r->block_off,
                        "stack id 0 is reserved for no backtrace (record at byte %zu of the block)",
                        rec_at);
        if (depth == 0 || depth > RIP_MAX_DEPTH)
            return fail(r, err, RIP_E_CORRUPT, r->block_off,
                        "stack depth %llu, expected 1-%d (record at byte %zu of the block)",
                        (unsigned long long)depth, RIP_MAX_DEPTH, rec_at);
        r->ips[0] = get_u(&c);
        for (uint64_t i = 1; i < depth; i++)
            r->ips[i] = r->ips[i - 1] + (uint64_t)get_z(&c);
        if (c.err != RIP__VARINT_OK)
            return cursor_fail(r, err, &c, rec_at, code, 0);
        if (id_add(r, id) != 0)
            return fail(r, err, RIP_E_NOMEM, r->block_off, "out of memory for stack ids");
        rec->kind = RIP_REC_STACK;
        rec->u.stack.id = id;
        rec->u.stack.depth = (uint32_t)depth;
        rec->u.stack.ips = r->ips;
    } else if (type < RIP__T_EXTENDED_FIRST) {
        return fail(r, err, RIP_E_CORRUPT, r->block_off,
                    "record type 0x%02x unknown (a core record of a newer format or corrupted "
                    "data; record at byte %zu of the block)",
                    type, rec_at);
    } else {
        uint64_t len = get_u(&c);
        if (c.err != RIP__VARINT_OK)
            return cursor_fail(r, err, &c, rec_at, code, 0);
        if (len > (uint64_t)(c.end - c.p))
            return fail(r, err, RIP_E_CORRUPT, r->block_off,
                        "record runs past end of block (record type 0x%02x of %llu bytes at byte "
                        "%zu of the block)",
                        type, (unsigned long long)len, rec_at);
        memset(rec, 0, sizeof *rec);
        rec->offset = r->block_off;
        /* Fields beyond the ones known here (a later minor version) are skipped. */
        cursor_t pc = {c.p, c.p + len, RIP__VARINT_OK};
        rip_status_t st = decode_extended(r, rec, err, type, &pc, rec_at);
        if (st != RIP_OK)
            return st;
        c.p += len;
    }
    /* Times in the file count units of 2^time_shift ns; records carry ns. */
    unsigned ts = r->header.time_shift;
    if (ts && (rec->t > UINT64_MAX >> ts))
        return fail(r, err, RIP_E_CORRUPT, r->block_off,
                    "time overflows 64 bits in ns (record at byte %zu of the block)", rec_at);
    rec->t <<= ts;
    if (rec->kind == RIP_REC_ALLOC)
        rec->u.alloc.old_t <<= ts;
    r->cur = c.p;
    return RIP_OK;
}

/* decode, for a staged block under its check word (3.2): mixes the values the record took from
 * the columns and the record's bytes into the check state, as the writer did (codes.h), and at
 * the check word's end compares it with its sum. */
static rip_status_t decode_checked(rip_reader_t *r, rip_record_t *rec, rip_error_t *err)
{
    const uint8_t *from = r->cur, *col_from[RIP__COLUMNS];
    for (int i = 0; i < RIP__COLUMNS; i++)
        col_from[i] = r->col[i].p;
    rip_status_t st = decode(r, rec, err);
    if (st != RIP_OK)
        return st;
    uint64_t h = r->check_state;
    for (int i = 0; i < RIP__COLUMNS; i++) {
        /* The values decode has just read without error. */
        cursor_t c = {col_from[i], r->col[i].p, RIP__VARINT_OK};
        while (c.p < c.end && c.err == RIP__VARINT_OK)
            h = rip__check_mix(h, get_u(&c));
    }
    r->check_state = rip__check_bytes(h, from, (size_t)(r->cur - from));
    size_t at = (size_t)(r->cur - r->block);
    if (at < r->check_end)
        return RIP_OK;
    r->stage_checking = 0;
    if (at > r->check_end)
        return fail(r, err, RIP_E_CORRUPT, RIP__STAGE_CHECK,
                    "staging area check word ends at byte %zu of the staged records, inside a "
                    "record",
                    r->check_end);
    if (rip__check_sum(r->check_state) != r->check_sum)
        return fail(r, err, RIP_E_CORRUPT, RIP__STAGE_AREA,
                    "staged records (%zu bytes) do not match their checksum in the check word "
                    "(a changed byte in the staging area)",
                    r->check_end - RIP__DIR_LEN);
    return RIP_OK;
}

rip_status_t rip_reader_next(rip_reader_t *r, rip_record_t *rec, rip_error_t *err)
{
    if (r->status != RIP_OK) {
        if (err)
            *err = r->error;
        return r->status;
    }
    while (r->cur == r->end) {
        /* A staged block's columns are not used up: they are areas. The last one ends the
         * file; one being followed goes on, in the frame or in the staging area. */
        rip_status_t st = RIP_OK;
        if (r->stage_state == 3)
            stage_save(r); /* the staged block stays current until another block is */
        else
            st = r->stage_state == 1 ? RIP_END : close_columns(r, err);
        if (st == RIP_OK && r->follow) {
            /* What is after the last complete block may still be changing: its end mark being
             * overwritten, a block half written. Only a block that checks is taken, then the
             * records committed in the staging area since the last look. */
            take_size(r);
            st = load_block(r, err);
            if (st == RIP_OK)
                continue;
            if (st == RIP_E_NOMEM || st == RIP_E_IO)
                return st;
            r->status = RIP_OK;
            st = stage_read(r, err, 0);
            if (st == RIP_OK) {
                r->stage_state = 3;
                continue;
            }
            return st;
        }
        if (st == RIP_OK)
            st = load_block(r, err);
        if (st == RIP_END || st == RIP_E_TRUNCATED) {
            st = staged_tail(r, err, st);
            if (st == RIP_OK)
                continue;
        }
        if (st == RIP_END) {
            r->status = RIP_END;
            r->error.code = RIP_END;
            r->error.offset = r->pos;
            snprintf(r->error.path, sizeof r->error.path, "%s", r->path);
            snprintf(r->error.detail, sizeof r->error.detail, "end of file");
            if (err)
                *err = r->error;
            return RIP_END;
        }
        if (st != RIP_OK)
            return st;
    }
    if (__builtin_expect(r->stage_checking, 0) && r->block == r->staged)
        return decode_checked(r, rec, err);
    return decode(r, rec, err);
}
