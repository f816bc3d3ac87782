/*
 * rip.h: reader and writer of the rip recording format, version 3.3 (rip-format/FORMAT.md). The
 * reader also reads versions 1.0, 2.0 and 3.0.
 *
 * The writer is used inside the tracer's malloc wrappers, so it never allocates: the caller
 * gives it its memory (rip_writer_footprint bytes) and it does its I/O with pwrite on a file
 * descriptor the caller opened. The reader allocates with malloc and is used by the converter,
 * `rheap dump` and the tests.
 */
#ifndef RIP_H
#define RIP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RIP_FORMAT_MAJOR 3
#define RIP_FORMAT_MINOR 6

/* Limits the format sets (FORMAT.md). */
#define RIP_MAX_DEPTH 1024
#define RIP_HEADER_LEN_1_0 24
#define RIP_HEADER_LEN_2_0 28
/* Since 3.5, a thread file that continues its thread's previous one (a segment) has two more
 * header fields; every other file keeps the 28 bytes. */
#define RIP_HEADER_LEN_SEGMENT 36
#define RIP_MAX_TIME_SHIFT 16
/* Longest string (path, name, label, argument) the writer stores; longer ones are cut to this
 * many bytes. */
#define RIP_MAX_STRING 4096

/* ---- Status codes: one list makes both the enum and the message table. ---- */
#define RIP_STATUS_LIST(X)                                                     \
    X(RIP_OK, "ok")                                                            \
    X(RIP_END, "end of file")                                                  \
    X(RIP_E_IO, "I/O error")                                                   \
    X(RIP_E_NOMEM, "out of memory")                                            \
    X(RIP_E_NOT_RIP, "not a rip file")                                         \
    X(RIP_E_VERSION, "unsupported format version")                             \
    X(RIP_E_TRUNCATED, "truncated file")                                       \
    X(RIP_E_CORRUPT, "corrupted data")                                         \
    X(RIP_E_NOT_RECORDING, "not a recording directory")                        \
    X(RIP_E_FULL, "writer buffer too small for record")                        \
    X(RIP_AGAIN, "no complete block yet (file still being written)")

typedef enum {
#define RIP__ENUM(name, msg) name,
    RIP_STATUS_LIST(RIP__ENUM)
#undef RIP__ENUM
} rip_status_t;

/* The message of a status code ("truncated file"); never NULL. */
const char *rip_strerror(rip_status_t code);

/* Where and why reading failed. `offset` is a byte offset in the file (for a problem inside a
 * block: the offset of that block's size field), or RIP_NO_OFFSET when the problem is not at a
 * position in a file (a missing file, a directory that is not a recording). */
#define RIP_NO_OFFSET UINT64_MAX
typedef struct {
    rip_status_t code;
    uint64_t offset;
    char path[512];
    char detail[256];
} rip_error_t;

/* Formats "PATH: offset N: DETAIL" ("PATH: DETAIL" when offset is RIP_NO_OFFSET) into buf
 * (always NUL-terminated). Returns buf. */
char *rip_error_format(const rip_error_t *err, char *buf, size_t size);

/* ---- Values shared by writer and reader. ---- */

/* Which call made an allocation: id, name, and whether the call resizes a block it is given
 * (RIP_RESIZE: the record carries the block it replaced) or makes a new one (RIP_NEW). The ids
 * are frozen (FORMAT.md section 3, "Calls"; the database's `calls` table uses them too). Calls 1-9
 * have allocation type codes of their own, equal to their ids (codes.h); the later ones are
 * written as a `call` record (0x46) followed by an allocation record of the shape they share
 * with a libc call. When you add a call: append it here with the next id, describe it in
 * FORMAT.md, add its row to schema.sql's `calls` and, if librheap records it, its wrapper. */
#define RIP_CALL_LIST(X)                                                           \
    X(RIP_CALL_MALLOC, 1, "malloc", RIP_NEW)                                       \
    X(RIP_CALL_CALLOC, 2, "calloc", RIP_NEW)                                       \
    X(RIP_CALL_REALLOC, 3, "realloc", RIP_RESIZE)                                  \
    X(RIP_CALL_REALLOCARRAY, 4, "reallocarray", RIP_RESIZE)                        \
    X(RIP_CALL_POSIX_MEMALIGN, 5, "posix_memalign", RIP_NEW)                       \
    X(RIP_CALL_ALIGNED_ALLOC, 6, "aligned_alloc", RIP_NEW)                         \
    X(RIP_CALL_MEMALIGN, 7, "memalign", RIP_NEW)                                   \
    X(RIP_CALL_VALLOC, 8, "valloc", RIP_NEW)                                       \
    X(RIP_CALL_PVALLOC, 9, "pvalloc", RIP_NEW)                                     \
    X(RIP_CALL_NEW, 10, "operator new", RIP_NEW)                                   \
    X(RIP_CALL_NEW_ARRAY, 11, "operator new[]", RIP_NEW)                           \
    X(RIP_CALL_MALLOCX, 12, "mallocx", RIP_NEW)                                    \
    X(RIP_CALL_RALLOCX, 13, "rallocx", RIP_RESIZE)                                 \
    X(RIP_CALL_XALLOCX, 14, "xallocx", RIP_RESIZE)                                 \
    X(RIP_CALL_TC_MALLOC, 15, "tc_malloc", RIP_NEW)                                \
    X(RIP_CALL_TC_CALLOC, 16, "tc_calloc", RIP_NEW)                                \
    X(RIP_CALL_TC_REALLOC, 17, "tc_realloc", RIP_RESIZE)                           \
    X(RIP_CALL_TC_MEMALIGN, 18, "tc_memalign", RIP_NEW)                            \
    X(RIP_CALL_TC_POSIX_MEMALIGN, 19, "tc_posix_memalign", RIP_NEW)                \
    X(RIP_CALL_TC_VALLOC, 20, "tc_valloc", RIP_NEW)                                \
    X(RIP_CALL_TC_PVALLOC, 21, "tc_pvalloc", RIP_NEW)                              \
    X(RIP_CALL_TC_NEW, 22, "tc_new", RIP_NEW)                                      \
    X(RIP_CALL_TC_NEWARRAY, 23, "tc_newarray", RIP_NEW)                            \
    X(RIP_CALL_MI_MALLOC, 24, "mi_malloc", RIP_NEW)                                \
    X(RIP_CALL_MI_CALLOC, 25, "mi_calloc", RIP_NEW)                                \
    X(RIP_CALL_MI_ZALLOC, 26, "mi_zalloc", RIP_NEW)                                \
    X(RIP_CALL_MI_REALLOC, 27, "mi_realloc", RIP_RESIZE)                           \
    X(RIP_CALL_MI_MALLOC_ALIGNED, 28, "mi_malloc_aligned", RIP_NEW)                \
    X(RIP_CALL_MI_ZALLOC_ALIGNED, 29, "mi_zalloc_aligned", RIP_NEW)                \
    X(RIP_CALL_MI_CALLOC_ALIGNED, 30, "mi_calloc_aligned", RIP_NEW)                \
    X(RIP_CALL_MI_REALLOC_ALIGNED, 31, "mi_realloc_aligned", RIP_RESIZE)           \
    X(RIP_CALL_MI_NEW, 32, "mi_new", RIP_NEW)                                      \
    X(RIP_CALL_MI_HEAP_MALLOC, 33, "mi_heap_malloc", RIP_NEW)                      \
    X(RIP_CALL_MI_HEAP_ZALLOC, 34, "mi_heap_zalloc", RIP_NEW)                      \
    X(RIP_CALL_MI_HEAP_CALLOC, 35, "mi_heap_calloc", RIP_NEW)                      \
    X(RIP_CALL_MI_HEAP_REALLOC, 36, "mi_heap_realloc", RIP_RESIZE)                 \
    X(RIP_CALL_MI_HEAP_MALLOC_ALIGNED, 37, "mi_heap_malloc_aligned", RIP_NEW)      \
    X(RIP_CALL_MI_HEAP_ZALLOC_ALIGNED, 38, "mi_heap_zalloc_aligned", RIP_NEW)      \
    X(RIP_CALL_MI_HEAP_CALLOC_ALIGNED, 39, "mi_heap_calloc_aligned", RIP_NEW)      \
    X(RIP_CALL_MI_HEAP_REALLOC_ALIGNED, 40, "mi_heap_realloc_aligned", RIP_RESIZE) \
    X(RIP_CALL_MI_STRDUP, 41, "mi_strdup", RIP_NEW)                                \
    X(RIP_CALL_MI_STRNDUP, 42, "mi_strndup", RIP_NEW)                              \
    X(RIP_CALL_MI_REALPATH, 43, "mi_realpath", RIP_NEW)                            \
    X(RIP_CALL_POOL_ALLOC, 44, "pool_alloc", RIP_NEW)                              \
    X(RIP_CALL_POOL_FREE, 45, "pool_free", RIP_NEW)                                \
    X(RIP_CALL_MMAP, 46, "mmap", RIP_NEW)                                          \
    X(RIP_CALL_MREMAP, 47, "mremap", RIP_RESIZE)

enum { RIP_NEW, RIP_RESIZE };

typedef enum {
#define RIP__CALL_ENUM(name, id, text, kind) name = id,
    RIP_CALL_LIST(RIP__CALL_ENUM)
#undef RIP__CALL_ENUM
} rip_call_t;

/* The first call written with a `call` record, and the last call of this version. */
#define RIP_CALL_NAMED_FIRST RIP_CALL_NEW
#define RIP_CALL_LAST RIP_CALL_MREMAP

/* Whether `call` is RIP_RESIZE (0 for an unknown value). */
int rip_call_resizes(rip_call_t call);

/* "malloc", "calloc", "operator new", ...; "?" for an unknown value. */
const char *rip_call_name(rip_call_t call);

typedef struct {
    int is_process;          /* 1: process.rip ("RIPP"), 0: thread file ("RIPT") */
    uint16_t major, minor;   /* format version of the file */
    uint32_t pid;
    uint32_t tid;            /* 0 in the process file */
    uint32_t recording;      /* N of rip-<pid>-N */
    uint32_t serial;         /* thread files: 1, 2, ... in opening order */
    uint64_t start_ns;       /* CLOCK_MONOTONIC at recording start */
    uint32_t time_shift;     /* since 2.0: the file counts time in units of 2^time_shift ns
                              * (the writer divides, the reader multiplies back); 0 in 1.x.
                              * At most RIP_MAX_TIME_SHIFT: the writer uses that for more. */
    /* Since 3.5 (profile mode): the file's place among its thread's segments, 2, 3, ... for a
     * file that continues the thread's previous one, and the serial of the thread's first file
     * (which is segment 1). Both 0 in any other file (a thread's first or only file, the process
     * file, a file of an earlier version); the writer writes them when segment >= 2. */
    uint32_t segment;
    uint32_t first_serial;
} rip_header_t;

typedef struct {
    const char *ptr;         /* not NUL-terminated */
    size_t len;
} rip_str_t;

/* Serials first..last (a checkpoint's list of the files it replaces, since 3.5). */
typedef struct {
    uint32_t first, last;
} rip_range_t;

/* Whether v lies in one of the n increasing, disjoint ranges r (binary search). */
int rip_ranges_have(const rip_range_t *r, size_t n, uint32_t v);

typedef struct {
    uint64_t start;          /* run-time address */
    uint64_t size;
    uint32_t flags;          /* PF_R 4, PF_W 2, PF_X 1 */
} rip_segment_t;

typedef enum {
    RIP_REC_ALLOC,
    RIP_REC_FREE,
    RIP_REC_STACK,
    RIP_REC_MODULES,
    RIP_REC_MODULE,
    RIP_REC_THREAD_NAME,
    RIP_REC_MARK,
    RIP_REC_LOST,
    RIP_REC_PROCESS,
    RIP_REC_CONFIG,
    RIP_REC_ON,
    RIP_REC_OFF,
    RIP_REC_TOTALS,          /* since 3.0 */
    RIP_REC_SAMPLING,        /* since 3.0 */
    RIP_REC_UNSEEN,          /* since 3.1 */
    RIP_REC_POOL,            /* since 3.4 */
    RIP_REC_CHECKPOINT,      /* since 3.5 */
    RIP_REC_RSS,             /* since 3.6 */
    RIP_REC_MAP,             /* since 3.6 */
    RIP_REC_UNKNOWN,         /* an extended record this reader does not know: delivered with
                                only its type (u.unknown), its payload skipped */
} rip_rec_kind_t;

/* What a pool record (0x47, since 3.4) says happened. */
typedef enum {
    RIP_POOL_CREATE = 0,
    RIP_POOL_ALLOC = 1,
    RIP_POOL_FREE = 2,
    RIP_POOL_DESTROY = 3,
} rip_pool_op_t;

/* What a map record (0x49, since 3.6) says happened to the program's anonymous memory. */
typedef enum {
    RIP_MAP_MAP = 0,         /* mmap */
    RIP_MAP_UNMAP = 1,       /* munmap */
    RIP_MAP_REMAP = 2,       /* mremap */
} rip_map_op_t;

/* One decoded record. Pointers inside point into the reader and stay valid until the next
 * rip_reader_next call on the same reader. */
typedef struct {
    rip_rec_kind_t kind;
    uint64_t offset;         /* file offset of the block holding the record */
    uint64_t t;              /* ns since start_ns (0 for records without time) */
    union {
        struct {
            rip_call_t call;
            uint64_t addr, size;
            uint64_t stack;      /* 0: no backtrace */
            uint64_t align;      /* 0 unless an aligned call */
            uint64_t old_addr;   /* realloc: block replaced, 0 if none */
            uint64_t old_t;      /* realloc: when old_addr was released (<= t); 0 if none */
        } alloc;
        struct {
            uint64_t addr;
        } free;
        struct {
            uint64_t id;
            uint32_t depth;
            const uint64_t *ips;
        } stack;
        struct {
            uint32_t count;
        } modules;
        struct {
            uint64_t bias;
            rip_str_t path, build_id;
            uint32_t nseg;
            const rip_segment_t *segs;
        } module;
        struct {
            rip_str_t text;      /* thread name, marker label */
        } name;
        struct {
            uint64_t count;
            rip_str_t reason;
        } lost;
        struct {
            uint32_t ppid;
            rip_str_t exe;
            uint32_t argc;
            const rip_str_t *argv;
            uint64_t wall_ns;
            rip_str_t clock;
            uint32_t page_size;
        } process;
        struct {
            uint32_t depth, sample_ppm, buffer_kb, max_threads, signal;
            rip_str_t dir;
        } config;
        struct {
            rip_str_t how;       /* on/off */
        } onoff;
        struct {
            uint64_t allocs, bytes, frees; /* calls counted since the file began */
        } totals;
        struct {
            uint64_t interval, seed; /* profile mode: mean bytes between samples; seed */
        } sampling;
        struct {
            /* an allocator the tracer found but does not record: its name ("jemalloc", ...,
             * "unknown"), the module holding it, and the symbol it was found by */
            rip_str_t allocator, module, symbol;
        } unseen;
        struct {
            /* a program's pool (rheap_pool.h): created (with its name), a block allocated out
             * of it (addr, size, stack) or freed (addr), or the pool destroyed */
            rip_pool_op_t op;
            uint64_t pool;       /* the program's id of the pool */
            uint64_t addr, size, stack;
            rip_str_t name;
        } pool;
        struct {
            /* a checkpoint file (FORMAT.md section 3b): its number, and the serials of the
             * thread files it replaces as increasing, disjoint ranges (t: no event of theirs
             * is later); nfiles is how many serials the ranges hold */
            uint64_t number;
            uint32_t nranges;
            const rip_range_t *ranges;
            uint64_t nfiles;
        } checkpoint;
        struct {
            /* the process's resident memory, in bytes: all of it, anonymous, file-backed and
             * shared, and swapped out (rss = anon + file) */
            uint64_t rss, anon, file, swap;
        } rss;
        struct {
            /* anonymous memory the program mapped (addr, len, stack), unmapped (addr, len) or
             * remapped (old, old_len to addr, len, stack); lengths in whole pages */
            rip_map_op_t op;
            uint64_t addr, len, stack, old, old_len;
        } map;
        struct {
            uint8_t type;        /* unknown extended record's type byte */
        } unknown;
    } u;
} rip_record_t;

/* ---- Reader ---- */

typedef struct rip_reader rip_reader_t;

/* Opens a .rip file and reads its header (which needs the first block). On failure returns a
 * status other than RIP_OK, fills *err and sets *out to NULL: RIP_E_TRUNCATED when the file ends
 * before the header is complete (an empty file included, as left by a process killed before its
 * first flush), RIP_E_NOT_RIP, RIP_E_VERSION, RIP_E_CORRUPT, RIP_E_IO (offset RIP_NO_OFFSET
 * when the file cannot be opened or is not a regular file: a FIFO is refused without blocking).
 * The reader reads one block at a time, so its memory is bounded by the block size. It reads the
 * file as it was when opened: bytes a writer appends later are not read (rip_reader_size), so a
 * file still being written reads as a consistent snapshot, cut (RIP_E_TRUNCATED) if the cut
 * falls inside a block. Not thread-safe per reader; separate readers are independent. */
rip_status_t rip_reader_open(const char *path, rip_reader_t **out, rip_error_t *err);

/* The file's size when the reader opened it: the reader reads no byte after it. */
uint64_t rip_reader_size(const rip_reader_t *r);

/* From now on the reader holds no descriptor between reads: each block is read by opening the
 * file again (it must be the same file, else reading fails with RIP_E_IO), reading and closing,
 * so any number of readers can be open under a small descriptor limit. NULL, a reader over
 * memory or one already detached: no-op. */
void rip_reader_detach(rip_reader_t *r);

/* The same over bytes in memory (copied), named `name` in errors. For tests and fuzzing. */
rip_status_t rip_reader_open_mem(const void *data, size_t size, const char *name,
                                 rip_reader_t **out, rip_error_t *err);

const rip_header_t *rip_reader_header(const rip_reader_t *r);

/* Decodes the next record into *rec.
 * Returns RIP_OK with a record; RIP_END after the last record of a complete frame;
 * RIP_E_TRUNCATED once all complete blocks were delivered but the file ends early (err says
 * where); another error code for a corrupted or invalid file (err says where and what). After
 * anything but RIP_OK, further calls return the same status. */
rip_status_t rip_reader_next(rip_reader_t *r, rip_record_t *rec, rip_error_t *err);

/* Follow mode, for a file its writer is still appending to (on = 1). The reader then reads the
 * blocks written since it last looked, complete ones only, and after them the records committed
 * in the staging area since it last looked (FORMAT.md section 6; when the staged block later
 * reaches the frame, reading goes on after the records already delivered). Where there is
 * nothing new (an end mark, a block still being written, bytes that do not check yet, no new
 * commit), rip_reader_next returns RIP_AGAIN instead of RIP_END or an error, and the next call
 * looks again. on = 0 once the writer is gone: the reader takes the file as it is now and reads
 * the rest like a file opened at that moment (the staged block's last records and RIP_END, or
 * the error). A reader over memory ignores follow mode. */
void rip_reader_follow(rip_reader_t *r, int on);

/* 1 when the file has a staging area (format 3, as librheap writes thread files): a follower
 * then sees every record as soon as the writer commits it. */
int rip_reader_staged(const rip_reader_t *r);

/* Closes the reader; NULL is a no-op. */
void rip_reader_close(rip_reader_t *r);

/* ---- Recording directories ---- */

typedef struct rip_recording rip_recording_t;

/* Opens a recording directory: checks that it holds process.rip and lists its thread files
 * (t<tid>.rip, t<tid>-<n>.rip) sorted numerically by (tid, n), t<tid>.rip counting as n = 1,
 * each tid's segments (t<tid>-s<serial>.rip, since 3.5) after them by serial.
 * RIP_E_NOT_RECORDING when `dir` does not exist, is not a directory or has no process.rip.
 * Until rip_recording_close, the listed files stay: the handle holds a shared flock on the
 * directory, and a collector compacting the recording takes it exclusively before it deletes
 * the files a checkpoint replaces (FORMAT.md section 3b). Where no lock can be had (a directory
 * on a file system without flock), the list is made without it. */
rip_status_t rip_recording_open(const char *dir, rip_recording_t **out, rip_error_t *err);
const char *rip_recording_dir(const rip_recording_t *rec);
const char *rip_recording_process_path(const rip_recording_t *rec);
size_t rip_recording_thread_count(const rip_recording_t *rec);
const char *rip_recording_thread_path(const rip_recording_t *rec, size_t i);
/* The newest checkpoint of the recording (checkpoint-<K>.rip with the highest K, since 3.5;
 * FORMAT.md section 3b), or NULL when it has none. A reader reads it first and skips the thread
 * files its checkpoint record lists. */
const char *rip_recording_checkpoint_path(const rip_recording_t *rec);
/* Reads a checkpoint file's name: checkpoint-<K>.rip, K from 1 in decimal without a leading
 * zero. 0 with *k set, or -1. */
int rip_checkpoint_name_parse(const char *name, uint64_t *k);
void rip_recording_close(rip_recording_t *rec);

/* Reads a recording directory's name (the last part of its path alone): rip-<pid> or
 * rip-<pid>-<n>, as librheap makes them, the numbers in decimal with no sign and no leading zero,
 * pid from 1 to 4294967295 and n from 2 (rip-<pid> is n = 1). 0 with *pid and *n set, or -1
 * (nothing written) for any other name, "rip-+5", "rip-05" and "rip-5-1" included. The one
 * reader of these names: every tool that looks for recordings goes through it. */
int rip_recording_name_parse(const char *name, uint32_t *pid, uint32_t *n);

/* ---- Writer (allocation-free) ---- */

typedef struct rip_writer rip_writer_t;

/* Bytes of memory a writer with this block size needs (block size: 64 KiB, 256 KiB, 1 MiB or
 * 4 MiB; other values are rounded up to the next of these, at most 4 MiB). */
size_t rip_writer_footprint(uint32_t block_size);

/* Places a writer in `mem` (rip_writer_footprint bytes, 16-byte aligned), for the file open on
 * `fd` at offset 0, and encodes the header as the start of the first block. Nothing is written
 * to the file before the first flush. Returns the writer (== mem). */
rip_writer_t *rip_writer_init(void *mem, uint32_t block_size, int fd, const rip_header_t *h);

/* The same with a staging area (FORMAT.md section 6): `stage` is a shared, writable mapping of
 * the first rip_stage_size(block_size) bytes of the file open on `fd`, zero-filled (a new file
 * extended to that size, its blocks allocated so that stores into it cannot fail), and `mem`
 * holds rip_writer_footprint_staged bytes. Records are built in the staging area itself, and
 * each becomes visible there as it is complete (one 8-byte store with release order): a process
 * that dies keeps every record in the file, and a reader sees a live file's latest records at
 * once. Blocks are written after the staging area. */
size_t rip_stage_size(uint32_t block_size);
/* The staging area's first RIP_STAGE_HEADER_LEN bytes as a writer starts it (magic, length,
 * kind, block size, zeros, a commit word of 0): written into a new file before it is extended to
 * the area's size, a file never holds a zero-filled area without them (a process killed while
 * making it leaves a file that reads as empty). */
#define RIP_STAGE_HEADER_LEN 72u
void rip_stage_header(void *out, uint32_t block_size);
size_t rip_writer_footprint_staged(uint32_t block_size);
rip_writer_t *rip_writer_init_staged(void *mem, uint32_t block_size, int fd,
                                     const rip_header_t *h, void *stage);

/* Ends a writer: closes the descriptor a detached writer kept and, with `give_back`, for a
 * staged writer with nothing left unwritten, gives the staging area's disk space back (its first
 * page stays, saying the staged block is empty). Without `give_back` the file is not touched (a
 * fork child dropping the writer it inherited). The writer must not be used afterwards; its
 * memory and the staging mapping are the caller's to release. errno is kept. NULL is a no-op. */
void rip_writer_close(rip_writer_t *w, int give_back);

/* For a staged writer with nothing left unwritten (just flushed), gives the staging area's disk
 * space back as rip_writer_close does, but the writer stays open: the next record allocates the
 * space again (fallocate, as for a new file) before it stores anything there, and a failure to
 * do so is a failed write (RIP_E_IO, errno from fallocate). errno is kept; otherwise a no-op. */
void rip_writer_give_back(rip_writer_t *w);

/* Record appenders. Each returns RIP_OK, or RIP_E_IO if a block had to be flushed and the write
 * failed (errno is left as the write left it; the writer stays failed and later calls return
 * RIP_E_IO without doing anything), or RIP_E_FULL for a record that cannot fit one block (a
 * module with thousands of segments) or a stack of depth 0; nothing is written then. Strings
 * and arrays are copied; strings (NULL reads as "") are cut to RIP_MAX_STRING bytes, stacks to
 * RIP_MAX_DEPTH frames, and an argv too long for one block keeps its first arguments followed
 * by a last argument "...". Event times earlier than the previous event's are written as the
 * previous time; for a realloc from NULL (old_addr 0), old_t is ignored. */
rip_status_t rip_writer_alloc(rip_writer_t *w, rip_call_t call, uint64_t t, uint64_t addr,
                              uint64_t size, uint64_t stack, uint64_t align, uint64_t old_addr,
                              uint64_t old_t);
rip_status_t rip_writer_free(rip_writer_t *w, uint64_t t, uint64_t addr);
rip_status_t rip_writer_stack(rip_writer_t *w, uint64_t id, const uint64_t *ips, uint32_t depth);
rip_status_t rip_writer_modules(rip_writer_t *w, uint64_t t, uint32_t count);
rip_status_t rip_writer_module(rip_writer_t *w, uint64_t bias, const char *path,
                               const void *build_id, size_t build_id_len,
                               const rip_segment_t *segs, uint32_t nseg);
rip_status_t rip_writer_thread_name(rip_writer_t *w, uint64_t t, const char *name);
rip_status_t rip_writer_mark(rip_writer_t *w, uint64_t t, const char *label);
rip_status_t rip_writer_lost(rip_writer_t *w, uint64_t t, uint64_t count, const char *reason);
rip_status_t rip_writer_process(rip_writer_t *w, uint32_t ppid, const char *exe, uint32_t argc,
                                const char *const *argv, uint64_t wall_ns, const char *clock,
                                uint32_t page_size);
rip_status_t rip_writer_config(rip_writer_t *w, uint32_t depth, uint32_t sample_ppm,
                               uint32_t buffer_kb, uint32_t max_threads, uint32_t signal,
                               const char *dir);
rip_status_t rip_writer_on(rip_writer_t *w, uint64_t t, const char *how);
/* Since 3.0. A thread file's exact counts of the calls it made since the file began (profile
 * mode, where only a sample of them has records); the last one in the file counts. */
rip_status_t rip_writer_totals(rip_writer_t *w, uint64_t t, uint64_t allocs, uint64_t bytes,
                               uint64_t frees);
/* Since 3.0. The process file of a profile-mode recording: its sampling parameters. */
rip_status_t rip_writer_sampling(rip_writer_t *w, uint64_t interval, uint64_t seed);
/* Since 3.1, process file: an allocator in the process that the tracer does not record. */
rip_status_t rip_writer_unseen(rip_writer_t *w, const char *allocator, const char *module,
                               const char *symbol);
rip_status_t rip_writer_off(rip_writer_t *w, uint64_t t, const char *how);
/* Since 3.4, thread file: an event of a program's own pool. `name` for RIP_POOL_CREATE only,
 * `addr` for RIP_POOL_ALLOC and RIP_POOL_FREE, `size` and `stack` for RIP_POOL_ALLOC only; the
 * fields an op does not use are not written. */
rip_status_t rip_writer_pool(rip_writer_t *w, rip_pool_op_t op, uint64_t t, uint64_t pool,
                             uint64_t addr, uint64_t size, uint64_t stack, const char *name);
/* Since 3.6, thread file: a sample of the process's resident memory, in bytes. */
rip_status_t rip_writer_rss(rip_writer_t *w, uint64_t t, uint64_t rss, uint64_t anon,
                            uint64_t file, uint64_t swap);
/* Since 3.6, thread file: an mmap, munmap or mremap of anonymous memory. `stack` for
 * RIP_MAP_MAP and RIP_MAP_REMAP, `old` and `old_len` for RIP_MAP_REMAP only; the fields an op
 * does not use are not written. */
rip_status_t rip_writer_map(rip_writer_t *w, rip_map_op_t op, uint64_t t, uint64_t addr,
                            uint64_t len, uint64_t stack, uint64_t old, uint64_t old_len);

/* Since 3.5, a checkpoint file's first record (FORMAT.md section 3b): checkpoint `number`
 * replaces the thread files whose serials lie in ranges[0..n) (increasing, disjoint, not
 * adjacent), none of whose events is later than t. RIP_E_FULL when the list does not fit one
 * block. */
rip_status_t rip_writer_checkpoint(rip_writer_t *w, uint64_t t, uint64_t number,
                                   const rip_range_t *ranges, uint32_t n);

/* For a writer that shares its process with code it does not control (the tracer). The writer
 * keeps a copy of `fd`, close-on-exec, among the top quarter of the descriptor numbers the limit
 * allows (rip_fd_keep_high; when that range is full, at the lowest free number), for as long as
 * it lives: it never opens the file again for a write, which would take one of the program's
 * descriptors for a moment and make the program's own open() fail under a tight limit. Before
 * each write it checks that the copy still refers to the very file `fd` referred to at this call
 * (st_dev/st_ino): a program that closed it, or reused its number, never gets written to; the
 * writer then opens `path` (O_NOFOLLOW) once, with the same check (errno ESTALE if the file was
 * replaced), and keeps that descriptor instead.
 * Only the calling process writes: in any other (one made by a raw clone or fork system call,
 * which holds a copy of the writer) a write fails with errno ECHILD and the file is untouched.
 * The kept descriptor lets a process that drops privileges or changes its root keep recording. The
 * caller closes its own descriptor after this call; rip_writer_close closes the kept one. A
 * write that would pass the process's file size limit, read before each write (the program may
 * lower it at any time), fails with errno EFBIG instead of raising SIGXFSZ, which would kill the
 * program. RIP_OK, or RIP_E_IO (errno set) if fd cannot be examined or path is too long (4095
 * bytes at most). */
rip_status_t rip_writer_detach(rip_writer_t *w, const char *path);

/* Puts the writer back to its state after its last committed record, for a caller whose
 * record was abandoned halfway (a signal handler left it with siglongjmp): the half-written
 * record is dropped, the next one goes where it would have. Everything committed stays, in a
 * staging area too. A flush abandoned after its write and before its commit is written again
 * by the next flush, at the same place. Only the writer's own thread may call it, with no
 * record in progress any more. */
void rip_writer_rollback(rip_writer_t *w);
/* Events (allocation and free records) in the writer's file so far, committed or in progress:
 * after a rollback, the committed ones. */
uint64_t rip_writer_events(const rip_writer_t *w);

/* The process's file size limit (RLIMIT_FSIZE) in bytes as it is now: UINT64_MAX when there is
 * none; 0 allows no byte. A raw system call: no allocation, errno unchanged on success. */
uint64_t rip_file_size_limit(void);

/* Where every descriptor the tracer keeps in a program it does not control goes (the writer's
 * kept copy above, the recording directory's): a close-on-exec copy of fd among the top quarter
 * of the numbers the descriptor limit allows (capped at 2^20), where the program's own open()
 * calls, which take the lowest free number, do not reach it. Returns the copy, or -1 when there
 * is no room there (that range full, a limit below 4); fd stays open either way. No
 * allocation; errno may change. */
int rip_fd_keep_high(int fd);

/* Compresses what is pending into a block and writes it, followed by the end mark, so the file
 * is a complete lz4 frame afterwards. Nothing pending: writes the end mark only the first time.
 * RIP_OK or RIP_E_IO. */
rip_status_t rip_writer_flush(rip_writer_t *w);

/* Bytes of records pending (not yet flushed), and the size of the file so far (every flushed
 * block and the end mark after them). */
size_t rip_writer_pending(const rip_writer_t *w);
uint64_t rip_writer_file_size(const rip_writer_t *w);

/* XXH32 with the given seed (the lz4 frame checksum). */
uint32_t rip_xxh32(const void *data, size_t len, uint32_t seed);

#ifdef __cplusplus
}
#endif
#endif
