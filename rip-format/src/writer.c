/*
 * writer.c: encodes records into blocks and writes them as one lz4 frame (FORMAT.md).
 *
 * This code runs inside the tracer's malloc wrappers, so it must never allocate, never call a
 * libc function that might, and never change errno except through a failing write. All memory
 * comes from the caller (rip_writer_footprint bytes) and is laid out as:
 *
 *     struct rip_writer | lz4 state | raw block | 4 column buffers | output buffer | recent
 *
 * Records go to the raw block; the time, address, size and stack fields of events go to their
 * columns (FORMAT.md section 3), each in its own buffer as large as the block, and the flush
 * copies the columns after the records, fills in the block's column directory and compresses
 * the whole. Grouping like values lets lz4 find repeats that interleaved records hide.
 *
 * The output buffer holds, in this order, room for the 7-byte frame header (used by the first
 * flush only), the 4-byte block size, the compressed block data, the 4-byte block checksum and
 * the 4-byte end mark.
 *
 * Blocks are always stored compressed, even the rare one that lz4 makes slightly larger: the
 * "stored uncompressed" flag sits in the size field, outside the block checksum, and a flipped
 * flag would turn compressed bytes into plausible records. With every block compressed, the
 * reader rejects the flag outright (FORMAT.md section 1). To keep the compressed size within the
 * block max size, a block holds at most `capacity` raw bytes, slightly less than the block max
 * size (65264 of 65536). Each flush writes the whole
 * run with one pwrite, so a block and the end mark after it land together, and the next block is
 * written over that end mark: after every successful flush the file is a complete frame.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <lz4.h>

#include "rip.h"
#include "codes.h"
#include "varint.h"

/* ck_cur ^ CK_OTHER is the other checkpoint's offset: no multiply or compare per record. */
#define CK_OTHER sizeof(struct checkpoint)
#define CK_AT(w, off) ((struct checkpoint *)(void *)((uint8_t *)(w)->ck + (off)))

/* The bytes of a writer's per-record state, `used` to `sum` (struct rip_writer). */
#define REC_STATE_BYTES (2 * sizeof(size_t) + RIP__COLUMNS * sizeof(size_t) + 4 * sizeof(uint64_t))

struct rip_writer {
    int fd;                   /* detached: the descriptor kept (placed high), or -1 */
    int failed;               /* a write failed: every later call returns RIP_E_IO */
    int frame_started;        /* the frame header is on disk */
    int end_mark_written;     /* the file ends with an end mark (a complete frame) */
    uint32_t block_size;      /* the frame's block max size: 64 KiB, 256 KiB, 1 MiB or 4 MiB */
    uint32_t capacity;        /* raw bytes per block, so that lz4's worst case fits block_size */
    uint8_t bd;               /* the frame's BD byte for that block size */
    size_t dir_at;            /* where the column directory goes in the raw block */
    uint8_t *col[RIP__COLUMNS];
    uint64_t block_first;     /* number of the current block's first event */
    struct recent {           /* the latest event at each address, by hash of the address */
        uint64_t addr, n;
    } *recent;
    uint64_t offset;          /* file offset of the next block (where the end mark is) */
    unsigned time_shift;      /* times are stored >> time_shift (the header says so) */
    void *lz4_state;
    uint8_t *raw;
    uint8_t *out;
    size_t out_cap;
    int detached;             /* rip_writer_detach was called: keep a descriptor of `path` */
    pid_t pid;                /* the process that detached it, the only one that writes */
    dev_t dev;                /* identity of the file created, checked at each open */
    ino_t ino;
    uint8_t *stage;           /* the staging area (a shared mapping of the file's start), or NULL */
    uint64_t blocks;          /* blocks written: the number of the block being staged */
    int stage_given;          /* the staging area's disk space is given back: allocate it again
                               * before the next store into it (rip_writer_give_back) */
    size_t ext_len;           /* the extended record being written (begin_ext, end_ext) */
    /* The state at the last committed record (publish), for rip_writer_rollback: a signal
     * handler may leave a record half written with siglongjmp. A record changes only the fields
     * from `used` to `sum`, kept together so that publish copies them as one run; the others
     * change at a block's start, whose publish copies them into both checkpoints. */
    size_t used;              /* bytes of the current block: header, directory, records, columns */
    size_t rec_used;          /* of which in the raw block: header, directory and records */
    size_t col_used[RIP__COLUMNS];
    uint64_t events;          /* events written, from 1 */
    uint64_t time_base;       /* delta bases, reset at each block start, in stored units */
    uint64_t addr_base;
    uint64_t sum;             /* the staged block's check state (codes.h) */
    struct checkpoint {
        uint8_t rec[REC_STATE_BYTES];
        size_t dir_at;
        uint64_t block_first, offset, blocks;
        int frame_started, end_mark_written;
    } ck[2];                  /* two, so that a jump while one is written leaves the other */
    size_t ck_cur;            /* the complete one, as its offset from ck[0]: 0 or CK_OTHER */
    int undo_set;             /* the record in progress changed recent[undo_at], which was undo */
    size_t undo_at;
    struct recent undo;
    char path[4096];
};

#define ALIGN_UP(x, a) (((x) + (size_t)(a) - 1) & ~((size_t)(a) - 1))

/* Output buffer: header + size + compressed data + checksum + end mark. */
#define OUT_DATA_AT (RIP__LZ4_FRAME_HEADER_LEN + 4)

static uint32_t round_block_size(uint32_t want, uint8_t *bd_id)
{
    uint32_t size = 64u << 10;
    uint8_t id = 4;
    while (size < want && id < 7) {
        size <<= 2;
        id++;
    }
    if (bd_id)
        *bd_id = id;
    return size;
}

static size_t state_bytes(void)
{
    return ALIGN_UP((size_t)LZ4_sizeofState(), 16);
}

static size_t out_bytes(uint32_t block_size)
{
    return OUT_DATA_AT + (size_t)LZ4_compressBound((int)block_size) + 4 + 4;
}

/* The part of a writer's memory that is never staged: the struct, the lz4 state, the output
 * buffer and the recent-address table. The raw block and the columns follow it, unless they
 * live in a staging area. */
static size_t private_bytes(uint32_t bs)
{
    return ALIGN_UP(sizeof(struct rip_writer), 16) + state_bytes() + ALIGN_UP(out_bytes(bs), 16) +
           RIP__RECENT * sizeof(struct recent);
}

size_t rip_writer_footprint(uint32_t block_size)
{
    uint32_t bs = round_block_size(block_size, NULL);
    return private_bytes(bs) + (1 + RIP__COLUMNS) * (size_t)bs;
}

size_t rip_writer_footprint_staged(uint32_t block_size)
{
    return private_bytes(round_block_size(block_size, NULL));
}

size_t rip_stage_size(uint32_t block_size)
{
    return RIP__STAGE_AREA + (1 + RIP__COLUMNS) * (size_t)round_block_size(block_size, NULL);
}

void rip_stage_header(void *out, uint32_t block_size)
{
    uint8_t *p = out;
    uint32_t bs = round_block_size(block_size, NULL);
    memset(p, 0, RIP_STAGE_HEADER_LEN);
    rip__put_le32(p, RIP__STAGE_MAGIC);
    rip__put_le32(p + 4, (uint32_t)(rip_stage_size(bs) - 8));
    memcpy(p + 8, RIP__MAGIC_STAGE, 4);
    rip__put_le32(p + 12, bs);
}

_Static_assert(offsetof(struct rip_writer, sum) + sizeof(uint64_t) - offsetof(struct rip_writer, used) ==
                   REC_STATE_BYTES,
               "a record's state, used to sum, must be one run of REC_STATE_BYTES");

/* Makes the staged block's records visible: one 8-byte store, ordered after every byte of the
 * records and columns before it, of the block's number and the end of its records. A reader
 * that sees the word sees those bytes (FORMAT.md section 6). Cost per record: one copy of
 * REC_STATE_BYTES, the two words; the signal fences only keep the compiler's order. */
static inline void publish(struct rip_writer *w)
{
    /* First the checkpoint of rip_writer_rollback, into the copy not in use, which then becomes
     * the one in use with one store: a jump out of the record before that store leaves the
     * state before the record, after it the state with the record, whose bytes are all there
     * even if the commit word below was not stored yet (the next commit covers them). */
    size_t other = w->ck_cur ^ CK_OTHER;
    memcpy(CK_AT(w, other)->rec, &w->used, REC_STATE_BYTES);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    w->ck_cur = other;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    uint8_t *stage = w->stage;
    if (stage) {
        /* The check word follows the commit word: a process killed between the two leaves a
         * check of the records but the last, and a reader verifies as far as it goes. Both are
         * made before the first store, which the compiler may not move the loads across. */
        uint64_t blocks = w->blocks, end = w->rec_used;
        uint64_t check = blocks << 48 | end << 24 | rip__check_sum(w->sum); /* end < 2^24 */
        __atomic_store_n((uint64_t *)(void *)(stage + RIP__STAGE_COMMIT), blocks << 32 | end,
                         __ATOMIC_RELEASE);
        __atomic_store_n((uint64_t *)(void *)(stage + RIP__STAGE_CHECK), check, __ATOMIC_RELEASE);
    }
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    w->undo_set = 0;
}

static void save_block(const struct rip_writer *w, struct checkpoint *c)
{
    c->dir_at = w->dir_at;
    c->block_first = w->block_first;
    c->offset = w->offset;
    c->blocks = w->blocks;
    c->frame_started = w->frame_started;
    c->end_mark_written = w->end_mark_written;
}

/* publish, after a change of the fields a record does not change (a block's start): they go
 * into the copy about to be in use before it is, and then into the other one, so that the
 * records' publish need not copy them. */
static void publish_block(struct rip_writer *w)
{
    save_block(w, CK_AT(w, w->ck_cur ^ CK_OTHER));
    publish(w);
    save_block(w, CK_AT(w, w->ck_cur ^ CK_OTHER));
}

void rip_writer_rollback(rip_writer_t *w)
{
    /* A record abandoned after its checkpoint but before undo_set was cleared is kept: the
     * recent entry it replaced comes back, which only makes a later address a delta instead of
     * a reference to it. */
    if (w->undo_set)
        w->recent[w->undo_at] = w->undo;
    w->undo_set = 0;
    const struct checkpoint *c = CK_AT(w, w->ck_cur);
    memcpy(&w->used, c->rec, REC_STATE_BYTES);
    w->dir_at = c->dir_at;
    w->block_first = c->block_first;
    w->offset = c->offset;
    w->blocks = c->blocks;
    w->frame_started = c->frame_started;
    w->end_mark_written = c->end_mark_written;
    /* The copy not in use must hold this block's fields too, since the next record's publish
     * copies only its own state into it before making it the one in use. A jump out of
     * publish_block leaves it with the fields of another block: the one before the flush (a
     * jump after the switch) or the one after (a jump before it, which the rollback undoes).
     * Left so, a later rollback would put the writer back to that block's offset, and the next
     * flush would write over a block already in the file, or write the same records twice: its
     * stack definitions gone, the events after it would name stacks the file does not define. */
    save_block(w, CK_AT(w, w->ck_cur ^ CK_OTHER));
}

/* Starts a block: the column directory first (after the stream header in the first block),
 * filled in at the flush. */
static void begin_block(struct rip_writer *w, size_t at)
{
    w->dir_at = at;
    w->rec_used = at + RIP__DIR_LEN;
    w->used = w->rec_used;
    for (int i = 0; i < RIP__COLUMNS; i++)
        w->col_used[i] = 0;
    w->time_base = 0;
    w->addr_base = 0;
    w->block_first = w->events;
    w->sum = RIP__CHECK_BASIS;
}

/* Lays the writer out in mem (and the raw block and columns in `stage` + RIP__STAGE_AREA when
 * staged) and encodes the stream header. */
static rip_writer_t *init(void *mem, uint32_t block_size, int fd, const rip_header_t *h,
                          uint8_t *stage)
{
    struct rip_writer *w = mem;
    uint8_t id;
    uint32_t bs = round_block_size(block_size, &id);
    uint8_t *base = mem;

    memset(w, 0, sizeof *w);
    w->fd = fd;
    w->block_size = bs;
    w->bd = (uint8_t)(id << 4);
    w->lz4_state = base + ALIGN_UP(sizeof(struct rip_writer), 16);
    w->out = (uint8_t *)w->lz4_state + state_bytes();
    w->out_cap = out_bytes(bs);
    w->recent = (struct recent *)(w->out + ALIGN_UP(w->out_cap, 16));
    memset(w->recent, 0, RIP__RECENT * sizeof *w->recent);
    w->raw = stage ? stage + RIP__STAGE_AREA : base + private_bytes(bs);
    for (int i = 0; i < RIP__COLUMNS; i++)
        w->col[i] = w->raw + (size_t)(1 + i) * bs;
    w->events = 1;   /* entries with n 0 are empty */
    uint32_t cap = bs - bs / 256 - 16;
    while ((uint32_t)LZ4_compressBound((int)cap) > bs)
        cap--;
    w->capacity = cap;

    /* The stream header opens the first block (FORMAT.md section 2). */
    uint8_t *p = w->raw;
    memcpy(p, h->is_process ? RIP__MAGIC_PROCESS : RIP__MAGIC_THREAD, 4);
    rip__put_le16(p + 4, RIP_FORMAT_MAJOR);
    rip__put_le16(p + 6, RIP_FORMAT_MINOR);
    int segment = !h->is_process && h->segment >= 2;
    rip__put_le32(p + 8, segment ? RIP_HEADER_LEN_SEGMENT : RIP_HEADER_LEN_2_0);
    rip__put_le32(p + 12, h->pid);
    rip__put_le32(p + 16, h->is_process ? 0 : h->tid);
    rip__put_le32(p + 20, h->recording);
    rip__put_le32(p + 24, h->is_process ? 0 : h->serial);
    rip__put_le64(p + 28, h->start_ns);
    w->time_shift = h->time_shift <= RIP_MAX_TIME_SHIFT ? h->time_shift : RIP_MAX_TIME_SHIFT;
    rip__put_le32(p + 36, w->time_shift);
    if (segment) {
        rip__put_le32(p + 40, h->segment);
        rip__put_le32(p + 44, h->first_serial);
    }
    begin_block(w, segment ? 12u + RIP_HEADER_LEN_SEGMENT : RIP__STREAM_HEADER_LEN);

    if (stage) {
        /* The staging area is a skippable lz4 frame: lz4 tools pass over it (FORMAT.md 6). */
        uint8_t head[RIP_STAGE_HEADER_LEN];
        rip_stage_header(head, bs);
        memcpy(stage, head, RIP__STAGE_COMMIT);
        w->stage = stage;
        w->offset = rip_stage_size(bs);   /* the frame follows the staging area */
    }
    publish_block(w);
    return w;
}

rip_writer_t *rip_writer_init(void *mem, uint32_t block_size, int fd, const rip_header_t *h)
{
    return init(mem, block_size, fd, h, NULL);
}

rip_writer_t *rip_writer_init_staged(void *mem, uint32_t block_size, int fd,
                                     const rip_header_t *h, void *stage)
{
    return init(mem, block_size, fd, h, stage);
}

/* Writes all of buf at off, retrying after signals and short writes. On failure errno is what
 * the failing pwrite left. */
static int write_all(int fd, const uint8_t *buf, size_t len, uint64_t off)
{
    while (len > 0) {
        /* Issued directly: libc's pwrite is a thread cancellation point, and the tracer calls
         * this while holding a lock a cancelled thread would never release. */
        ssize_t n = (ssize_t)syscall(SYS_pwrite64, fd, buf, len, (off_t)off);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (n == 0)
            return -1;   /* no progress and no error: give up rather than spin */
        buf += n;
        len -= (size_t)n;
        off += (uint64_t)n;
    }
    return 0;
}

int rip_fd_keep_high(int fd)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur < 4)
        return -1;
    rlim_t lim = rl.rlim_cur > (1u << 20) ? (1u << 20) : rl.rlim_cur;
    return (int)syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, (int)(lim - lim / 4));
}

uint64_t rip_file_size_limit(void)
{
    /* Read at each use: the program may lower it at any time (setrlimit), also to 0. */
    struct rlimit rl;
    if (syscall(SYS_prlimit64, 0, RLIMIT_FSIZE, NULL, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        return UINT64_MAX;
    return (uint64_t)rl.rlim_cur;
}

/* The descriptor a detached writer keeps for fd: a copy placed high, or where there is no room
 * up there, a copy at the lowest free number; `own` says fd is the writer's own (then it is
 * closed once copied high, or kept as it is). Returns the descriptor, or -1 with errno. */
static int keep(int fd, int own)
{
    int high = rip_fd_keep_high(fd);
    if (high < 0)
        return own ? fd : (int)syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, 0);
    if (own)
        syscall(SYS_close, fd);
    return high;
}

rip_status_t rip_writer_detach(rip_writer_t *w, const char *path)
{
    struct stat st;
    size_t n = strlen(path);
    if (n >= sizeof w->path || fstat(w->fd, &st) != 0) {
        if (n >= sizeof w->path)
            errno = ENAMETOOLONG;
        w->failed = 1;
        return RIP_E_IO;
    }
    int saved = errno;
    memcpy(w->path, path, n + 1);
    w->detached = 1;
    w->pid = (pid_t)syscall(SYS_getpid);
    w->dev = st.st_dev;
    w->ino = st.st_ino;
    int kept = keep(w->fd, 0);
    if (kept < 0) {
        w->failed = 1;
        return RIP_E_IO;
    }
    w->fd = kept;
    errno = saved;
    return RIP_OK;
}

/* Whether the kept descriptor still refers to the file created. The program may have closed
 * it (a daemon closing every descriptor) and reused the number: then it is not ours any more,
 * and is forgotten, never written to or closed. */
static int kept_fd_ok(struct rip_writer *w)
{
    struct stat st;
    if (w->fd < 0)
        return 0;
    if (fstat(w->fd, &st) == 0 && st.st_dev == w->dev && st.st_ino == w->ino)
        return 1;
    w->fd = -1;
    return 0;
}

/* Opens the file by path and checks that it is still the file created (not a file or link put
 * in its place). Returns the descriptor or -1 (errno set). */
static int open_detached(const struct rip_writer *w);

/* The kept descriptor, opened again by path (once, then kept) when the program took the old
 * one away. Returns it, or -1 with errno. */
static int kept_fd(struct rip_writer *w)
{
    if (kept_fd_ok(w))
        return w->fd;
    int fd = open_detached(w);
    if (fd < 0)
        return -1;
    w->fd = keep(fd, 1);
    return w->fd;
}

static int open_detached(const struct rip_writer *w)
{
    int fd = (int)syscall(SYS_openat, AT_FDCWD, w->path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat st;
    int ok = fstat(fd, &st) == 0;
    if (ok && (st.st_dev != w->dev || st.st_ino != w->ino)) {
        errno = ESTALE;
        ok = 0;
    }
    if (!ok) {
        int saved = errno;
        syscall(SYS_close, fd);
        errno = saved;
        return -1;
    }
    return fd;
}

/* A detached writer's write: through the kept descriptor while it is still the file's (so a
 * process that dropped its privileges, changed root or namespace keeps recording), else through
 * one opened again by path and kept in its place; never past the file size limit as it is now
 * (a write past it would raise SIGXFSZ, whose default action kills the program). The calls are raw
 * syscalls, not libc's cancellation points. Only the process that detached the writer writes:
 * a process copied from it without its knowledge (a raw clone or fork system call) holds a copy
 * of the writer whose offsets are the other process's, and gets ECHILD. */
static int write_detached(struct rip_writer *w, const uint8_t *buf, size_t len, uint64_t off)
{
    if ((pid_t)syscall(SYS_getpid) != w->pid) {
        errno = ECHILD;
        return -1;
    }
    if (off + len > rip_file_size_limit()) {
        errno = EFBIG;
        return -1;
    }
    if (kept_fd(w) < 0)
        return -1;
    return write_all(w->fd, buf, len, off);
}

/* The staging area's disk space after its first page (the commit word's), punched out
 * (`punch`) or allocated again, through the kept descriptor. Returns 0, or -1 with errno. */
static int stage_space(struct rip_writer *w, int punch)
{
    int fd = w->detached ? kept_fd(w) : w->fd;
    if (fd < 0)
        return -1;
    int mode = punch ? FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE : 0;
    int r = (int)syscall(SYS_fallocate, fd, mode, (off_t)RIP__STAGE_AREA,
                         (off_t)(rip_stage_size(w->block_size) - RIP__STAGE_AREA));
    return r == 0 ? 0 : -1;
}

void rip_writer_give_back(rip_writer_t *w)
{
    if (!w || !w->stage || w->failed || w->stage_given || w->used != RIP__DIR_LEN ||
        !w->end_mark_written)
        return;
    /* Everything staged is in blocks: the staged pages read as zeros from now on, and the
     * commit word, whose page stays, says the staged block is empty. */
    int saved = errno;
    if (stage_space(w, 1) == 0)
        w->stage_given = 1;
    errno = saved;
}

/* Before a record goes into a given-back staging area: its disk space allocated again, as
 * when the file was made, so that no store into the mapping can fault on a full disk. A
 * failure is a write failure. */
__attribute__((noinline, cold)) static rip_status_t take_back(struct rip_writer *w)
{
    if (w->failed)
        return RIP_E_IO;
    int saved = errno;
    if (w->pid && (pid_t)syscall(SYS_getpid) != w->pid) {
        errno = ECHILD;
        w->failed = 1;
        return RIP_E_IO;
    }
    if (stage_space(w, 0) != 0) {
        w->failed = 1;
        return RIP_E_IO;
    }
    w->stage_given = 0;
    errno = saved;
    return RIP_OK;
}

void rip_writer_close(rip_writer_t *w, int give_back)
{
    if (!w)
        return;
    int saved = errno;
    if (give_back)
        rip_writer_give_back(w);
    int fd = w->detached ? (kept_fd_ok(w) ? w->fd : -1) : w->fd;
    if (w->detached && fd >= 0)
        syscall(SYS_close, fd);
    w->fd = -1;
    w->failed = 1;
    errno = saved;
}

rip_status_t rip_writer_flush(rip_writer_t *w)
{
    if (w->failed)
        return RIP_E_IO;
    if (w->used == RIP__DIR_LEN && w->end_mark_written)
        return RIP_OK;

    /* The columns follow the records; the directory gives their lengths. */
    size_t end = w->rec_used;
    for (int i = 0; i < RIP__COLUMNS; i++) {
        rip__put_le32(w->raw + w->dir_at + 4 * (size_t)i, (uint32_t)w->col_used[i]);
        memcpy(w->raw + end, w->col[i], w->col_used[i]);
        end += w->col_used[i];
    }

    uint8_t *data = w->out + OUT_DATA_AT;
    int cap = (int)(w->out_cap - OUT_DATA_AT - 8);
    int n = LZ4_compress_fast_extState(w->lz4_state, (const char *)w->raw, (char *)data,
                                       (int)w->used, cap, 1);
    /* Cannot fail: the capacity is within LZ4_compressBound of the buffer. */
    size_t stored = n > 0 ? (size_t)n : 0;
    rip__put_le32(data - 4, (uint32_t)stored);
    rip__put_le32(data + stored, rip_xxh32(data, stored, 0));
    size_t block_len = 4 + stored + 4;   /* size field + data + checksum */
    rip__put_le32(data - 4 + block_len, 0);   /* end mark */

    uint8_t *start = data - 4;
    uint64_t at = w->offset;
    if (!w->frame_started) {
        start -= RIP__LZ4_FRAME_HEADER_LEN;
        rip__put_le32(start, RIP__LZ4_MAGIC);
        start[4] = RIP__LZ4_FLG;
        start[5] = w->bd;
        start[6] = (uint8_t)(rip_xxh32(start + 4, 2, 0) >> 8);
    }
    size_t total = (size_t)(data - 4 - start) + block_len + 4;
    if ((w->detached ? write_detached(w, start, total, at) : write_all(w->fd, start, total, at)) != 0) {
        w->failed = 1;
        return RIP_E_IO;
    }
    if (!w->frame_started) {
        w->frame_started = 1;
        w->offset += RIP__LZ4_FRAME_HEADER_LEN;
    }
    /* The next block goes over the end mark just written. */
    w->offset += block_len;
    w->end_mark_written = 1;
    w->blocks++;
    begin_block(w, 0);
    publish_block(w);
    return RIP_OK;
}

/* Makes room for a record of n bytes in the current block, flushing first if it does not fit.
 * Returns where to write it. Records never span blocks (FORMAT.md section 1). */
static inline __attribute__((always_inline)) rip_status_t reserve(struct rip_writer *w, size_t n,
                                                                  uint8_t **at)
{
    /* One test for both rare cases: a failed writer, a staging area given back. */
    if (__builtin_expect(w->failed | w->stage_given, 0) && take_back(w) != RIP_OK)
        return RIP_E_IO;
    if (n > w->capacity - RIP__DIR_LEN)
        return RIP_E_FULL;
    if (w->used + n > w->capacity) {
        rip_status_t st = rip_writer_flush(w);
        if (st != RIP_OK)
            return st;
    }
    *at = w->raw + w->rec_used;
    return RIP_OK;
}

/* Accounts for n bytes written at the reserved place in the records, the record's columns
 * written before (their values mixed into h, from w->sum): the record is complete, and visible
 * in a staging area. The check state takes the record's bytes (codes.h) 8 at a time; a block
 * always has 8 bytes of room after its records (capacity), so the last word is read whole and
 * cut to the record. */
static inline __attribute__((always_inline)) void commit(struct rip_writer *w, size_t n, uint64_t h)
{
    const uint8_t *p = w->raw + w->rec_used;
    h = rip__check_mix(h, n);
    size_t left = n;
    for (; left > 8; p += 8, left -= 8)
        h = rip__check_mix(h, rip__get_le64(p));
    h = rip__check_mix(h, rip__get_le64(p) & (~(uint64_t)0 >> (64 - 8 * left)));
    w->sum = h;
    w->rec_used += n;
    w->used += n;
    publish(w);
}

/* Appends a varint to a column, its value to the check state *h (a local of the caller, so that
 * it stays in a register while bytes are stored). The caller reserved room for the whole
 * event. */
static inline void put_col(struct rip_writer *w, int col, uint64_t v, uint64_t *h)
{
    size_t n = rip__put_varint(w->col[col] + w->col_used[col], v);
    *h = rip__check_mix(*h, v);
    w->col_used[col] += n;
    w->used += n;
}

/* An event's time and address go to their columns (FORMAT.md section 3). The address, best
 * first: as the distance back to a recent event of this block at the same address (a free of a
 * block allocated shortly before, an allocation reusing an address just freed), found through
 * a table indexed by a hash of the address; as a delta in 16-byte units when it is a multiple of
 * 16 (nearly always: allocators align to 16); otherwise as a delta in bytes, and the type code
 * gets RIP__T_EXACT. Returns the bit for the type code. */
static inline __attribute__((always_inline)) uint8_t put_time_addr(struct rip_writer *w, uint64_t dt,
                                                                    uint64_t addr, uint64_t *h)
{
    uint64_t n = w->events++;
    size_t at = (addr >> 4) & (RIP__RECENT - 1);
    struct recent *e = &w->recent[at];
    w->undo = *e;
    w->undo_at = at;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    w->undo_set = 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    int64_t d = (int64_t)(addr - w->addr_base);
    uint8_t exact = 0;
    uint64_t v;
    if (e->addr == addr && e->n >= w->block_first && n - e->n <= RIP__RECENT)
        v = (n - e->n) << 1 | 1;
    else if (d & 15)
        v = rip__zigzag(d), exact = RIP__T_EXACT;
    else
        v = rip__zigzag(d / 16) << 1;
    e->addr = addr;
    e->n = n;
    put_col(w, RIP__COL_DT, dt, h);
    put_col(w, RIP__COL_ADDR, v, h);
    w->addr_base = addr;
    return exact;
}

static size_t cut_len(const char *s)
{
    return s ? strnlen(s, RIP_MAX_STRING) : 0;
}

static size_t str_size(size_t len)
{
    return rip__varint_len(len) + len;
}

static uint8_t *put_str(uint8_t *p, const void *s, size_t len)
{
    p += rip__put_varint(p, len);
    if (len)
        memcpy(p, s, len);
    return p + len;
}

/* Time delta against the base. Thread events come in time order; should a caller ever pass an
 * earlier time, it is written as the base so the file stays valid (dt is never negative). */
static uint64_t time_delta(struct rip_writer *w, uint64_t *t)
{
    if (*t < w->time_base)
        *t = w->time_base;
    return *t - w->time_base;
}

rip_status_t rip_writer_alloc(rip_writer_t *w, rip_call_t call, uint64_t t, uint64_t addr,
                              uint64_t size, uint64_t stack, uint64_t align, uint64_t old_addr,
                              uint64_t old_t)
{
    t >>= w->time_shift;
    old_t >>= w->time_shift;
    if (w->failed)
        return RIP_E_IO;
    if (call < RIP_CALL_MALLOC || call > RIP_CALL_LAST)
        call = RIP_CALL_MALLOC;
    /* A call without a type code of its own (since 3.1) is named by a `call` record in front of
     * the allocation, in the same reservation so that a reader never sees one without the other,
     * and takes the shape of realloc, aligned_alloc or malloc. */
    rip_call_t shape = call;
    if (call >= RIP_CALL_NAMED_FIRST)
        shape = rip_call_resizes(call) ? RIP_CALL_REALLOC : align ? RIP_CALL_ALIGNED_ALLOC : RIP_CALL_MALLOC;
    int is_realloc = shape == RIP_CALL_REALLOC || shape == RIP_CALL_REALLOCARRAY;
    int is_aligned = shape >= RIP_CALL_POSIX_MEMALIGN;

    /* The bases may be reset by the flush inside reserve, so size with the worst case first. */
    size_t max = 3 + RIP__VARINT_MAX + 1 + 6 * RIP__VARINT_MAX;
    uint8_t *p;
    rip_status_t st = reserve(w, max, &p);
    if (st != RIP_OK)
        return st;

    uint8_t *start = p;
    if (shape != call) {
        *p++ = RIP__T_CALL;
        *p++ = (uint8_t)rip__varint_len((uint64_t)call);
        p += rip__put_varint(p, (uint64_t)call);
    }
    uint64_t dt = time_delta(w, &t);
    uint64_t h = w->sum;
    *p++ = (uint8_t)shape | put_time_addr(w, dt, addr, &h); /* code == enum value, see codes.h */
    put_col(w, RIP__COL_SIZE, size, &h);
    put_col(w, RIP__COL_STACK, stack, &h);
    if (is_aligned)
        p += rip__put_varint(p, align);
    if (is_realloc) {
        /* A realloc from NULL stores old 0 and dt_old 0. */
        uint64_t dt_old = 0;
        if (old_addr != 0 && old_t < t)
            dt_old = t - old_t;
        p += rip__put_varint(p, rip__zigzag((int64_t)(old_addr - addr)));
        p += rip__put_varint(p, old_addr ? dt_old : 0);
    }
    w->time_base = t;
    commit(w, (size_t)(p - start), h);
    return RIP_OK;
}

rip_status_t rip_writer_free(rip_writer_t *w, uint64_t t, uint64_t addr)
{
    t >>= w->time_shift;
    uint8_t *p;
    rip_status_t st = reserve(w, 1 + 2 * RIP__VARINT_MAX, &p);
    if (st != RIP_OK)
        return st;
    uint64_t dt = time_delta(w, &t);
    uint64_t h = w->sum;
    *p = RIP__T_FREE | put_time_addr(w, dt, addr, &h);
    w->time_base = t;
    commit(w, 1, h);
    return RIP_OK;
}

rip_status_t rip_writer_stack(rip_writer_t *w, uint64_t id, const uint64_t *ips, uint32_t depth)
{
    if (depth == 0)
        return RIP_E_FULL;   /* the format has no empty stacks; callers use stack id 0 */
    if (depth > RIP_MAX_DEPTH)
        depth = RIP_MAX_DEPTH;
    size_t n = 1 + rip__varint_len(id) + rip__varint_len(depth) + rip__varint_len(ips[0]);
    for (uint32_t i = 1; i < depth; i++)
        n += rip__varint_len(rip__zigzag((int64_t)(ips[i] - ips[i - 1])));
    uint8_t *p;
    rip_status_t st = reserve(w, n, &p);
    if (st != RIP_OK)
        return st;
    *p++ = RIP__T_STACK;
    p += rip__put_varint(p, id);
    p += rip__put_varint(p, depth);
    p += rip__put_varint(p, ips[0]);
    for (uint32_t i = 1; i < depth; i++)
        p += rip__put_varint(p, rip__zigzag((int64_t)(ips[i] - ips[i - 1])));
    commit(w, n, w->sum);
    return RIP_OK;
}

/* Reserves an extended record with a payload of exactly `len` bytes, writes type and length, and
 * returns where the payload goes. */
static rip_status_t begin_ext(struct rip_writer *w, uint8_t type, size_t len, uint8_t **payload)
{
    size_t n = 1 + rip__varint_len(len) + len;
    uint8_t *p;
    rip_status_t st = reserve(w, n, &p);
    if (st != RIP_OK)
        return st;
    *p++ = type;
    p += rip__put_varint(p, len);
    *payload = p;
    w->ext_len = n;
    return RIP_OK;
}

/* Commits the extended record begin_ext reserved, once its payload is written. */
static rip_status_t end_ext(struct rip_writer *w)
{
    commit(w, w->ext_len, w->sum);
    return RIP_OK;
}

/* The bytes of the varints v[0 .. n). */
static size_t varints_len(const uint64_t *v, size_t n)
{
    size_t len = 0;
    for (size_t i = 0; i < n; i++)
        len += rip__varint_len(v[i]);
    return len;
}

static uint8_t *put_varints(uint8_t *p, const uint64_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p += rip__put_varint(p, v[i]);
    return p;
}

/* Most extended records are a list of varints, some with a string after it (FORMAT.md's
 * table): the record of type made of v[0 .. n), then, when str is not NULL, str cut to the
 * format's longest string. Its length is counted from the same list it is written from, so
 * the two cannot disagree. */
static rip_status_t ext_record(struct rip_writer *w, uint8_t type, const uint64_t *v, size_t n,
                               const char *str)
{
    size_t sl = cut_len(str);
    uint8_t *p;
    rip_status_t st = begin_ext(w, type, varints_len(v, n) + (str ? str_size(sl) : 0), &p);
    if (st != RIP_OK)
        return st;
    p = put_varints(p, v, n);
    if (str)
        put_str(p, str, sl);
    return end_ext(w);
}

/* Records of the form `t` varint, `text` str (thread name, marker, on, off). A NULL text is
 * written empty. */
static rip_status_t t_str(struct rip_writer *w, uint8_t type, uint64_t t, const char *s)
{
    const uint64_t v[] = {t >> w->time_shift};
    return ext_record(w, type, v, 1, s ? s : "");
}

rip_status_t rip_writer_modules(rip_writer_t *w, uint64_t t, uint32_t count)
{
    const uint64_t v[] = {t >> w->time_shift, count};
    return ext_record(w, RIP__T_MODULES, v, 2, NULL);
}

rip_status_t rip_writer_module(rip_writer_t *w, uint64_t bias, const char *path,
                               const void *build_id, size_t build_id_len,
                               const rip_segment_t *segs, uint32_t nseg)
{
    size_t pl = cut_len(path);
    if (build_id_len > RIP_MAX_STRING)
        build_id_len = RIP_MAX_STRING;
    size_t len = rip__varint_len(bias) + str_size(pl) + str_size(build_id_len) + rip__varint_len(nseg);
    for (uint32_t i = 0; i < nseg; i++)
        len += rip__varint_len(segs[i].start) + rip__varint_len(segs[i].size) +
               rip__varint_len(segs[i].flags);
    uint8_t *p;
    rip_status_t st = begin_ext(w, RIP__T_MODULE, len, &p);
    if (st != RIP_OK)
        return st;
    p += rip__put_varint(p, bias);
    p = put_str(p, path, pl);
    p = put_str(p, build_id, build_id_len);
    p += rip__put_varint(p, nseg);
    for (uint32_t i = 0; i < nseg; i++) {
        p += rip__put_varint(p, segs[i].start);
        p += rip__put_varint(p, segs[i].size);
        p += rip__put_varint(p, segs[i].flags);
    }
    return end_ext(w);
}

rip_status_t rip_writer_thread_name(rip_writer_t *w, uint64_t t, const char *name)
{
    return t_str(w, RIP__T_THREAD_NAME, t, name);
}

rip_status_t rip_writer_mark(rip_writer_t *w, uint64_t t, const char *label)
{
    return t_str(w, RIP__T_MARK, t, label);
}

rip_status_t rip_writer_lost(rip_writer_t *w, uint64_t t, uint64_t count, const char *reason)
{
    const uint64_t v[] = {t >> w->time_shift, count};
    return ext_record(w, RIP__T_LOST, v, 2, reason ? reason : "");
}

rip_status_t rip_writer_process(rip_writer_t *w, uint32_t ppid, const char *exe, uint32_t argc,
                                const char *const *argv, uint64_t wall_ns, const char *clock,
                                uint32_t page_size)
{
    static const char more[] = "...";
    size_t el = cut_len(exe), cl = cut_len(clock);
    size_t fixed = rip__varint_len(ppid) + str_size(el) + rip__varint_len(wall_ns) +
                   str_size(cl) + rip__varint_len(page_size) + RIP__VARINT_MAX /* argc */;
    /* The record has to fit one block after its column directory: type byte, length varint,
     * payload. */
    size_t room = w->capacity - RIP__DIR_LEN - 1 - rip__varint_len(w->capacity) - fixed;

    size_t args = 0;
    uint32_t keep = 0;
    int cut = 0;
    for (uint32_t i = 0; i < argc; i++) {
        size_t a = str_size(cut_len(argv[i]));
        if (args + a > room) {
            cut = 1;
            break;
        }
        args += a;
        keep++;
    }
    if (cut) {
        /* Drop arguments from the end until "..." fits after the ones kept. */
        while (keep > 0 && args + str_size(3) > room) {
            keep--;
            args -= str_size(cut_len(argv[keep]));
        }
        args += str_size(3);
    }
    uint32_t written = keep + (uint32_t)cut;
    size_t len = fixed - RIP__VARINT_MAX + rip__varint_len(written) + args;

    uint8_t *p;
    rip_status_t st = begin_ext(w, RIP__T_PROCESS, len, &p);
    if (st != RIP_OK)
        return st;
    p += rip__put_varint(p, ppid);
    p = put_str(p, exe, el);
    p += rip__put_varint(p, written);
    for (uint32_t i = 0; i < keep; i++)
        p = put_str(p, argv[i], cut_len(argv[i]));
    if (cut)
        p = put_str(p, more, 3);
    p += rip__put_varint(p, wall_ns);
    p = put_str(p, clock, cl);
    rip__put_varint(p, page_size);
    return end_ext(w);
}

rip_status_t rip_writer_config(rip_writer_t *w, uint32_t depth, uint32_t sample_ppm,
                               uint32_t buffer_kb, uint32_t max_threads, uint32_t signal,
                               const char *dir)
{
    const uint64_t v[] = {depth, sample_ppm, buffer_kb, max_threads, signal};
    return ext_record(w, RIP__T_CONFIG, v, 5, dir ? dir : "");
}

rip_status_t rip_writer_totals(rip_writer_t *w, uint64_t t, uint64_t allocs, uint64_t bytes,
                               uint64_t frees)
{
    const uint64_t v[] = {t >> w->time_shift, allocs, bytes, frees};
    return ext_record(w, RIP__T_TOTALS, v, 4, NULL);
}

rip_status_t rip_writer_checkpoint(rip_writer_t *w, uint64_t t, uint64_t number,
                                   const rip_range_t *ranges, uint32_t n)
{
    const uint64_t head[] = {t >> w->time_shift, number, n};
    size_t len = varints_len(head, 3);
    for (uint32_t i = 0; i < n; i++)
        len += rip__varint_len(ranges[i].first - (i ? ranges[i - 1].last : 0)) +
               rip__varint_len(ranges[i].last - ranges[i].first);
    uint8_t *p;
    rip_status_t st = begin_ext(w, RIP__T_CHECKPOINT, len, &p);
    if (st != RIP_OK)
        return st;
    p = put_varints(p, head, 3);
    /* Ranges: a compaction replaces nearly every file before the open ones, so the list stays
     * about as long as the process has threads, however many files a week of segments makes. */
    for (uint32_t i = 0; i < n; i++) {
        p += rip__put_varint(p, ranges[i].first - (i ? ranges[i - 1].last : 0));
        p += rip__put_varint(p, ranges[i].last - ranges[i].first);
    }
    return end_ext(w);
}

rip_status_t rip_writer_sampling(rip_writer_t *w, uint64_t interval, uint64_t seed)
{
    const uint64_t v[] = {interval, seed};
    return ext_record(w, RIP__T_SAMPLING, v, 2, NULL);
}

rip_status_t rip_writer_unseen(rip_writer_t *w, const char *allocator, const char *module,
                               const char *symbol)
{
    size_t la = cut_len(allocator), lm = cut_len(module), ls = cut_len(symbol);
    uint8_t *p;
    rip_status_t st = begin_ext(w, RIP__T_UNSEEN, str_size(la) + str_size(lm) + str_size(ls), &p);
    if (st != RIP_OK)
        return st;
    p = put_str(p, allocator, la);
    p = put_str(p, module, lm);
    put_str(p, symbol, ls);
    return end_ext(w);
}

rip_status_t rip_writer_pool(rip_writer_t *w, rip_pool_op_t op, uint64_t t, uint64_t pool,
                             uint64_t addr, uint64_t size, uint64_t stack, const char *name)
{
    /* By op (FORMAT.md): alloc adds addr, size and stack; free addr; create the name. */
    uint64_t v[6] = {t >> w->time_shift, (uint64_t)op, pool};
    size_t n = 3;
    if (op == RIP_POOL_ALLOC || op == RIP_POOL_FREE)
        v[n++] = addr;
    if (op == RIP_POOL_ALLOC) {
        v[n++] = size;
        v[n++] = stack;
    }
    return ext_record(w, RIP__T_POOL, v, n,
                      op == RIP_POOL_CREATE ? (name ? name : "") : NULL);
}

rip_status_t rip_writer_rss(rip_writer_t *w, uint64_t t, uint64_t rss, uint64_t anon,
                            uint64_t file, uint64_t swap)
{
    const uint64_t v[] = {t >> w->time_shift, rss, anon, file, swap};
    return ext_record(w, RIP__T_RSS, v, 5, NULL);
}

rip_status_t rip_writer_map(rip_writer_t *w, rip_map_op_t op, uint64_t t, uint64_t addr,
                            uint64_t len, uint64_t stack, uint64_t old, uint64_t old_len)
{
    /* By op (FORMAT.md): map and remap add the stack, remap the old range too. */
    uint64_t v[7] = {t >> w->time_shift, (uint64_t)op, addr, len};
    size_t n = 4;
    if (op != RIP_MAP_UNMAP)
        v[n++] = stack;
    if (op == RIP_MAP_REMAP) {
        v[n++] = old;
        v[n++] = old_len;
    }
    return ext_record(w, RIP__T_MAP, v, n, NULL);
}

rip_status_t rip_writer_on(rip_writer_t *w, uint64_t t, const char *how)
{
    return t_str(w, RIP__T_ON, t, how);
}

rip_status_t rip_writer_off(rip_writer_t *w, uint64_t t, const char *how)
{
    return t_str(w, RIP__T_OFF, t, how);
}

uint64_t rip_writer_events(const rip_writer_t *w)
{
    return w->events - 1;
}

size_t rip_writer_pending(const rip_writer_t *w)
{
    return w->used - RIP__DIR_LEN;
}

uint64_t rip_writer_file_size(const rip_writer_t *w)
{
    return w->end_mark_written ? w->offset + 4 : w->offset;
}
