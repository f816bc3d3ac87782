/*
 * converter.h: the converter's cross-file functions, grouped by the file that defines them.
 * Nothing here is a public API; tests link the converter's static library and call these.
 */
#ifndef RHEAP_CONVERTER_H
#define RHEAP_CONVERTER_H

#include <stddef.h>
#include <stdint.h>

#include <elfutils/libdw.h>

#include "hashmap.h"
#include "rheap_convert.h"
#include "rheap_version.h"
#include "sorted.h"
#define RHEAP_SCHEMA_VERSION 15

/* ---- errors.c: how every part says what went wrong ---- */

#define CV__NO_OFFSET UINT64_MAX

/* What went wrong, or a warning: `status` is from RHEAP_CONVERT_STATUS_LIST
 * (RHEAP_CONVERT_WARNINGS for a warning, the status the conversion ends with for an error);
 * `message` is the whole sentence, "FILE: offset N: what was expected" when it concerns a place
 * in a file, and `file` and `offset` repeat that place ("" and CV__NO_OFFSET when none). A part
 * that fails fills one and returns its status (or -1 where its comment says so); conversion.c
 * and resym.c hand it to the caller with cv__err_report. */
typedef struct {
    rheap_convert_status_t status;
    uint64_t offset;
    char file[4096];
    char message[4352]; /* a path and the longest reason */
} cv__err_t;

/* Fills *err (when not NULL) and returns status. */
rheap_convert_status_t cv__fail(cv__err_t *err, rheap_convert_status_t status, const char *file,
                                uint64_t offset, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* Hands err to diag (nothing when diag is NULL): a WARNING for RHEAP_CONVERT_WARNINGS, else an
 * ERROR. */
void cv__err_report(const cv__err_t *err, void (*diag)(void *user, const rheap_convert_diag_t *d),
                    void *user);

/* How the parts below report a warning to the conversion that uses them (status
 * RHEAP_CONVERT_WARNINGS). */
typedef void (*cv__warn_fn)(void *user, const cv__err_t *warning);

/* ---- array.c, hashmap.c, sorted.c: the shared containers, declared in array.h, hashmap.h
 * and sorted.h ---- */

/* ---- schema_sql.c (generated from schema.sql at build time) ---- */
extern const char cv__schema_sql[];

/* ---- merge.c: k-way merge of thread streams ----
 * A min-heap of stream indices keyed by (t, class, index). Class 0 is a release (free, or the
 * old block of a realloc), class 1 an allocation, so at equal times a free sorts before the
 * allocation that reuses its address. */
typedef struct cv__merge cv__merge_t;

cv__merge_t *cv__merge_create(size_t nstreams);
void cv__merge_destroy(cv__merge_t *m);
/* Sets or changes the key of stream i and (re)inserts it. */
void cv__merge_set(cv__merge_t *m, size_t i, uint64_t t, int cls);
/* Removes stream i (it has no more events). */
void cv__merge_remove(cv__merge_t *m, size_t i);
/* The stream with the smallest key, or -1 when every stream is exhausted. */
long cv__merge_top(const cv__merge_t *m);
/* 1 when key (t, cls) of stream a sorts before key (u, clu) of stream b: the merge's order. */
int cv__merge_before(uint64_t t, int cls, size_t a, uint64_t u, int clu, size_t b);

/* ---- ring.c: merged events from the reading thread to the converting thread ----
 * One producer (the thread that decodes and merges the thread files) and one consumer (the one
 * that pairs, counts and writes rows); cells are published and given back CV__RING_BATCH at a
 * time, and a side that finds the ring full (or empty) sleeps until the other has given back
 * half (or filled a quarter). Positions count cells from 0 and never wrap; cell `pos` is
 * cells[pos & (CV__RING_SIZE - 1)]. */
#define CV__RING_SIZE 4096u
#define CV__RING_BATCH 64u

/* One cell: an event as the merge hands it on, or another entry that must keep its place among
 * the events (conversion.c's `kind`s say which and how the fields are used). */
typedef struct {
    uint8_t kind;
    uint8_t call;        /* rip_call_t */
    uint16_t spare;
    uint32_t stream;     /* the index of the stream it came from */
    uint64_t t, addr, size, bt, align, old_addr, old_t;
} cv__merged_t;

typedef struct cv__ring cv__ring_t;

/* An empty ring (256 KiB of cells), or NULL without memory. */
cv__ring_t *cv__ring_create(void);
void cv__ring_destroy(cv__ring_t *r);
cv__merged_t *cv__ring_cells(cv__ring_t *r);
/* Producer: the next cell to fill, waiting while the ring is full; NULL once the consumer has
 * closed the ring (nothing more will be read). The cell is the consumer's once committed and
 * published (every CV__RING_BATCH commits, and at cv__ring_flush, which wakes the consumer: call
 * it at the end). */
cv__merged_t *cv__ring_put(cv__ring_t *r);
void cv__ring_commit(cv__ring_t *r);
void cv__ring_flush(cv__ring_t *r);
/* Consumer: waits until a cell past pos is published and returns the position after the last
 * one published; every cell before pos is given back first. */
uint64_t cv__ring_wait(cv__ring_t *r, uint64_t pos);
/* Consumer: the cells before pos are used up (a sleeping producer is woken once half the ring
 * is free, or at once with force). */
void cv__ring_release(cv__ring_t *r, uint64_t pos, int force);
/* Consumer: it reads no more; the producer's waits and puts end (NULL). */
void cv__ring_close(cv__ring_t *r);

/* ---- pair.c: live allocations of one process, by address ---- */
typedef struct {
    uint64_t addr;       /* key; never 0 */
    uint64_t t;          /* alloc_after */
    uint64_t size;
    uint64_t bt;         /* global backtrace id, 0 = none */
    uint64_t align;
    uint64_t realloc_of; /* allocation id replaced by this realloc, 0 = none */
    uint32_t tid;
    uint32_t thread;     /* threads.id of the allocating thread */
    uint8_t call;        /* rip_call_t */
} cv__live_t;

typedef struct cv__pairs cv__pairs_t;

cv__pairs_t *cv__pairs_create(void);
void cv__pairs_destroy(cv__pairs_t *p);
/* Inserts a live block. If a block at the same address is still live (its free was not
 * recorded), that block is moved to *evicted and 1 is returned; otherwise 0. -1: no memory. */
int cv__pairs_insert(cv__pairs_t *p, const cv__live_t *b, cv__live_t *evicted);
/* Removes the live block at addr into *out: 1 found, 0 not live. */
int cv__pairs_take(cv__pairs_t *p, uint64_t addr, cv__live_t *out);
size_t cv__pairs_count(const cv__pairs_t *p);
/* Puts into addrs up to max addresses of live blocks in [lo, hi) (0 is never one), in no
 * order, and returns how many. A scan of the whole store: for a pool's destruction, which is
 * rare, not for every event. */
size_t cv__pairs_find_range(const cv__pairs_t *p, uint64_t lo, uint64_t hi, uint64_t *addrs,
                            size_t max);
/* Start loading what a lookup of addr reads into the cache, in two steps some events apart:
 * the tags of its home group (cv__pairs_prefetch), then, once those are in, the slots they name
 * (cv__pairs_prefetch_slot). The map is larger than the caches and every lookup would otherwise
 * wait for memory twice. */
void cv__pairs_prefetch(const cv__pairs_t *p, uint64_t addr);
void cv__pairs_prefetch_slot(const cv__pairs_t *p, uint64_t addr);
/* The memory the store holds now and the most it held at any moment, growth included. */
void cv__pairs_memory(const cv__pairs_t *p, size_t *bytes, size_t *peak_bytes);
/* Readies the live blocks to come out in allocation order, (t, tid, addr), without a copy (the
 * store is sorted in place: no insert or take after this). 0, or -1 when out of memory or the
 * spill failed (cv__pairs_failure). Then cv__pairs_drain_next gives one block per call (1), and
 * 0 when none is left, at which the store is empty and usable again; -1 as drain_begin. */
int cv__pairs_drain_begin(cv__pairs_t *p);
int cv__pairs_drain_next(cv__pairs_t *p, cv__live_t *out);
/* Sets the store's memory budget (cv__pairs_memory's bytes; 0: none, the default): over it, the
 * oldest half of the packed blocks go to a temporary file beside `near` (the database's path,
 * kept by the caller while the store lives), spill.c. Before the first insert. */
void cv__pairs_spill(cv__pairs_t *p, uint64_t budget, const char *near);
/* Why the spill file failed (a sentence naming it, the offset and the system's reason), or
 * NULL. After a failure an insert returns -1 and a take or the drain may miss blocks: the
 * conversion must end with this error. */
const char *cv__pairs_failure(const cv__pairs_t *p);
/* Blocks written to the spill file and its bytes, so far (0 when nothing spilled). */
void cv__pairs_spilled(const cv__pairs_t *p, uint64_t *blocks, uint64_t *file_bytes);

/* ---- tempfile.c: scratch files ----
 * Opens a file without a name for reading and writing: in the directory of the path `near`, or
 * in TMPDIR (else /tmp) when near is NULL. Writes into name how messages call it. -1 and errno
 * when it cannot be made. */
int cv__temp_open(const char *near, const char *suffix, char *name, size_t namesz);

/* ---- spill.c: the store's oldest blocks on disk, and its memory budget ----
 * Runs of entries of `esize` bytes whose first 8 bytes are the address (nonzero, unique within
 * a run), each sorted by address in an unnamed temporary file, with a bloom filter, a sparse
 * index and a freed bit per entry in memory. On a write or read error every call after fails
 * and cv__spill_error says why. */
typedef struct cv__spill cv__spill_t;

/* A spill file in the directory of the path `near` (as `near`.spill, unnamed). NULL when out of
 * memory; when the file cannot be made, a spill whose cv__spill_error says why. */
cv__spill_t *cv__spill_create(const char *near, size_t esize);
void cv__spill_destroy(cv__spill_t *s);
const char *cv__spill_error(const cv__spill_t *s);
/* Writes one run: the k (at most 256) arrays parts[i] of nparts[i] entries, each sorted here
 * in place by address, merged. 0, or -1 (out of memory, or cv__spill_error). */
int cv__spill_run(cv__spill_t *s, void *const *parts, const size_t *nparts, unsigned k);
/* Finds the live entry at addr, copies it to out and marks it freed: 1; 0 none; -1 read error. */
int cv__spill_take(cv__spill_t *s, uint64_t addr, void *out);
/* Up to max addresses of live entries in [lo, hi), as cv__pairs_find_range. */
size_t cv__spill_find_range(cv__spill_t *s, uint64_t lo, uint64_t hi, uint64_t *addrs,
                            size_t max);
/* The runs, oldest first; run k's live entries (cv__spill_live) are read into out (room for
 * that many) in address order by cv__spill_load, after which the run is empty. 0, or -1. */
size_t cv__spill_runs(const cv__spill_t *s);
size_t cv__spill_live(const cv__spill_t *s, size_t k);
int cv__spill_load(cv__spill_t *s, size_t k, void *out);
/* The memory the spill holds (its runs' filters, indexes and bitmaps, its buffer). */
size_t cv__spill_memory(const cv__spill_t *s);
void cv__spill_figures(const cv__spill_t *s, uint64_t *entries, uint64_t *file_bytes);
/* The budget of a conversion that was given none: a quarter of MemAvailable (spill.c says why);
 * 0 (no budget) when /proc/meminfo cannot be read. */
uint64_t cv__spill_default_budget(void);

/* ---- btree.c: a rowid table's pages laid out directly, rows in increasing rowid order ----
 * Builds the table b-tree in an unnamed temporary file beside `near` as rows come, and puts it
 * into the finished database file (SQLite done with it) at the end. A failure (out of memory,
 * a write error, a row out of order or too large for a page) is kept: every later call returns
 * -1 and cv__btree_error says why, naming the file, the offset and what was being done. */
typedef struct cv__btree cv__btree_t;
typedef enum { CV__BT_NULL, CV__BT_INT, CV__BT_REAL } cv__bt_kind_t;
typedef struct {
    cv__bt_kind_t kind;
    int64_t i;  /* CV__BT_INT */
    double r;   /* CV__BT_REAL */
} cv__bt_value_t;

/* A builder of `table`'s b-tree for a database of page_size bytes a page, `reserved` of them
 * unused at each page's end (header byte 20). NULL when out of memory; else a builder, failed
 * if its file could not be made. */
cv__btree_t *cv__btree_create(const char *near, const char *table, uint32_t page_size,
                              uint32_t reserved);
void cv__btree_destroy(cv__btree_t *b);
/* Appends a row of ncols (at most 120) values, the record's columns in the table's order (the
 * rowid's own column, an INTEGER PRIMARY KEY, as NULL: SQLite keeps it so); rowid above the
 * last row's. 0, or -1. Costs about 420 instructions for a row of seven columns (callgrind),
 * plus a write per 16 pages. */
int cv__btree_add(cv__btree_t *b, int64_t rowid, const cv__bt_value_t *v, unsigned ncols);
/* The same for a row of ncols (at most 14) integers, the columns whose bit is set in `nulls`
 * NULL (their v ignored): the record is the one cv__btree_add makes of such values, laid
 * straight into the leaf page, without the values' kinds to dispatch on nor a copy of the
 * cell. For allocation_rows' millions of rows: about 290 instructions for its seven columns,
 * the page's write included (callgrind). 0, or -1. */
int cv__btree_add_ints(cv__btree_t *b, int64_t rowid, const int64_t *v, unsigned ncols,
                       uint32_t nulls);
uint64_t cv__btree_rows(const cv__btree_t *b);
/* The levels of the tree so far, leaves included (1 while every row fits in one page). */
int cv__btree_levels(const cv__btree_t *b);
/* The last row's rowid (when there is one). */
int64_t cv__btree_last(const cv__btree_t *b);
const char *cv__btree_error(const cv__btree_t *b);
/* Writes the rest of the pages and appends them to the database file open as fd (`name` for
 * messages) from page number *next_page on, whose number it advances. Nothing when the table
 * has no row. */
int cv__btree_append(cv__btree_t *b, int fd, const char *name, uint32_t *next_page);
/* Then writes its root over page `root`, the empty leaf SQLite made for the table. */
int cv__btree_root(cv__btree_t *b, int fd, const char *name, uint32_t root);
/* Puts n tables into the database file `path` (no journal, no auto-vacuum), in two steps.
 * First each is appended after the file's last page, *pages set to the file's new page count:
 * the file's own pages are not touched, so SQLite may go on reading them meanwhile (its header
 * still gives the old count, and it reads no page past it). Then, once SQLite has closed it,
 * each root is written over roots[i], and the header's page count, change counter and
 * version-valid-for are updated. 0, or -1 with err filled (naming the file, the offset and what
 * failed). The tables' builders are spent either way. */
int cv__btree_put_pages(const char *path, cv__btree_t *const *trees, unsigned n,
                        uint32_t *pages, char *err, size_t errlen);
int cv__btree_put_roots(const char *path, cv__btree_t *const *trees, const uint32_t *roots,
                        unsigned n, uint32_t pages, char *err, size_t errlen);
/* Both steps at once, for a file SQLite has closed. */
int cv__btree_put(const char *path, cv__btree_t *const *trees, const uint32_t *roots, unsigned n,
                  char *err, size_t errlen);

/* ---- symbolize.c: offline symbolization with libdwfl ---- */

/* One source-level frame of a resolved address. */
typedef struct {
    const char *sym;   /* demangled; NULL unknown */
    const char *file;  /* NULL unknown */
    uint32_t line;     /* 0 unknown */
    int inlined;       /* 1: inlined into the next row */
} cv__srcframe_t;

/* A resolved address: one or more frames, innermost first. */
typedef struct {
    uint32_t id;       /* dense location id, for stack deduplication */
    int file_id;       /* module file, -1 when the address is in no module */
    uint64_t offset;   /* address relative to the module bias (or the absolute address) */
    uint32_t nframes;  /* >= 1 */
    const cv__srcframe_t *frames;
} cv__loc_t;

typedef struct cv__sym cv__sym_t;

/* Creates a symbolizer that reports a module file that is gone or rebuilt to warn (NULL: not
 * at all). Separate debug files are looked up as debuginfo.c says (RHEAP_DEBUG_DIR,
 * /usr/lib/debug, and debuginfod only when DEBUGINFOD_URLS is set). */
cv__sym_t *cv__sym_create(cv__warn_fn warn, void *user);
void cv__sym_destroy(cv__sym_t *s);
/* Interns a module file by (path, build-id); returns its file id (>= 0) or -1 on no memory.
 * The file is opened lazily on the first lookup. */
int cv__sym_file(cv__sym_t *s, const char *path, size_t path_len, const uint8_t *build_id,
                    size_t build_id_len);
/* Resolves a return address `offset` (already relative to the bias) in file `file_id`
 * (-1: no module; offset is then the absolute address). Each distinct address is resolved once;
 * the result lives as long as the symbolizer. NULL only on no memory. */
const cv__loc_t *cv__sym_resolve(cv__sym_t *s, int file_id, uint64_t offset);
const char *cv__sym_file_path(const cv__sym_t *s, int file_id);
/* 'unused', 'ok', 'missing' or 'mismatch' for a file id. */
const char *cv__sym_file_status(const cv__sym_t *s, int file_id);
/* The ELF symbol name (not demangled) of the file address `addr` in file `file_id`, from the
 * sorted symbol index: the name dwfl_module_addrinfo would give. NULL when none. */
const char *cv__sym_elf_symbol(cv__sym_t *s, int file_id, uint64_t addr);
/* Demangles a symbol name (strips @VERSION first); returns a malloc'ed string. */
char *cv__demangle(const char *name);

/* ---- debuginfo.c: where separate debug files are looked for ---- */

/* The libdwfl debuginfo search path: the module's directory, its .debug/, the directories of
 * RHEAP_DEBUG_DIR (colon-separated), then /usr/lib/debug. malloc'ed; NULL on no memory. */
char *cv__debuginfo_path(void);

/* ---- scopes.c: the functions containing an address ---- */

/* One module's index of function DIEs, built per compile unit on its first lookup. */
typedef struct cv__scopes cv__scopes_t;

cv__scopes_t *cv__scopes_create(void);
void cv__scopes_destroy(cv__scopes_t *sc);
/* Fills chain (capacity max) with the functions containing the CU-relative address pc in the
 * compile unit `cu`, innermost first: each DW_TAG_inlined_subroutine, then the
 * DW_TAG_subprogram they were inlined into. Functions inside namespaces, classes and Rust
 * modules are found (dwarf_getscopes misses them). Returns how many, 0 when no function
 * contains pc, -1 on no memory. The DIEs live as long as the module's Dwarf. */
int cv__scopes_chain(cv__scopes_t *sc, Dwarf_Die *cu, uint64_t pc, Dwarf_Die *chain, int max);

/* ---- db.c: the SQLite writer ---- */
typedef struct cv__db cv__db_t;

/* An allocation row as the converting thread hands it to the writer thread: the block's own
 * numbers, copied from the live-block store without computing anything (the writer makes the
 * record of allocation_rows and its side rows from them, cv__db_rows). 64 bytes, one cache line;
 * the row's id is not in it: rows go in batches of consecutive ids. The converting thread wrote
 * a row three times over (a struct of 112 bytes, then LEB128 numbers into the queue, which the
 * writer unpacked into a struct again): 300 instructions a row on the converting thread and a
 * third of the writer's. */
typedef struct {
    uint64_t alloc_t;
    uint64_t dealloc_t;    /* valid when freed */
    uint64_t size;
    uint64_t addr;         /* the address XOR threads.addr_base of the allocating thread */
    uint64_t bt;           /* 0: NULL */
    uint64_t align;        /* 0: NULL */
    uint64_t back;         /* id - realloc_of; 0: no realloc_of */
    uint32_t who;          /* threads.id of the allocating thread << 8 | freed << 7 | call & 63 */
    uint32_t free_thread;  /* threads.id of the freeing thread; RHEAP_NO_THREAD: none recorded */
} cv__row_t;
_Static_assert(sizeof(cv__row_t) == 64, "a row is one cache line");
#define CV__ROW_FREED 0x80u
#define CV__ROW_THREAD_SHIFT 8

#define RHEAP_NO_THREAD UINT32_MAX
/* threads.id stays below this: allocation_rows.how holds it in 22 bits. */
#define RHEAP_MAX_THREADS ((uint32_t)1 << 22)

/* Creates `OUT.tmp-<pid>` beside `path`, creates the schema and opens the load transaction.
 * Refuses (RHEAP_CONVERT_E_REFUSED) when `path` exists and !force. With `background` the writer
 * thread runs at the lowest priority (nice 19): in a live conversion the program being
 * recorded, and the reading that the summary waits for, go first; and a full queue of rows is
 * written by the calling thread, at its own priority, instead of waiting for the writer.
 * Returns a status, with *err filled unless RHEAP_CONVERT_OK; *out set on RHEAP_CONVERT_OK. */
rheap_convert_status_t cv__db_create(const char *path, int force, int background, cv__db_t **out,
                                     cv__err_t *err);
/* For the tests: the writer's queue of rows of the databases created afterwards holds at most
 * `chunks` chunks of 64 KiB (at least 4; 0: the default, 32 MiB). Not thread-safe: call it
 * before any conversion starts. */
void cv__db_queue_limit(unsigned chunks);
/* For the tests that compare the tables laid into pages (btree.c) with SQLite's own inserts:
 * with on, the databases created afterwards get allocation_rows, allocation_frees and
 * allocation_extras through prepared INSERTs. Not thread-safe, as cv__db_queue_limit. */
void cv__db_rows_by_sqlite(int on);
/* Queues n allocation rows whose ids are first, first + 1, ... (above every id queued
 * before) for the writer thread: a copy into the queue's pending chunk, handed over whole when
 * full. 0, or -1 when a write failed (cv__db_error says why). */
int cv__db_rows(cv__db_t *db, uint64_t first, const cv__row_t *rows, size_t n);
int cv__db_frame(cv__db_t *db, uint64_t bt, uint32_t frame_no, const cv__srcframe_t *f,
                    const char *module, uint64_t offset, uint32_t ip_index);
/* A processes row (schema.sql): a 0 wall_ns, page_size or depth is written as NULL, and
 * sample_ppm too unless has_config (the process file had no config record). */
typedef struct {
    uint32_t pid, recording, ppid;
    const char *exe, *cmdline, *dir; /* NULL: unknown */
    uint64_t start_ns, wall_ns;
    uint32_t page_size, depth, sample_ppm;
    int has_config;
    uint64_t unmatched_frees, lost;
} cv__process_row_t;
int cv__db_process(cv__db_t *db, const cv__process_row_t *p);
/* In the per-recording tables, (pid, recording) names the processes row. */
int cv__db_thread(cv__db_t *db, uint32_t id, uint32_t pid, uint32_t recording, uint32_t tid,
                     const char *name, uint32_t serial, const char *file, uint64_t events,
                     uint64_t lost, uint64_t addr_base);
int cv__db_module(cv__db_t *db, uint32_t pid, uint32_t recording, const char *path,
                     uint64_t bias, const char *build_id_hex, const char *status);
int cv__db_marker(cv__db_t *db, uint32_t pid, uint32_t recording, uint32_t tid, uint64_t t,
                     const char *label, size_t label_len);
/* A pool of the program's (`pools`), and a block allocated out of one (`pool_blocks`). */
int cv__db_pool(cv__db_t *db, uint64_t id, uint32_t pid, uint32_t recording, uint64_t pool,
                uint64_t t, const char *name);
int cv__db_pool_block(cv__db_t *db, uint64_t id, uint64_t pool);
/* A piece of a mapping left by a partial unmap (`map_pieces`): row id, cut from row `of`. */
int cv__db_map_piece(cv__db_t *db, uint64_t id, uint64_t of);
/* A recording's mappings in all (`mapping_stats`). */
int cv__db_map_stats(cv__db_t *db, uint32_t pid, uint32_t recording, uint64_t maps,
                     uint64_t bytes, uint64_t peak_bytes, uint64_t peak_ns, uint64_t end_bytes);
/* A sample of a process's resident memory (`rss`), t in ns since its recording started. */
int cv__db_rss(cv__db_t *db, uint32_t pid, uint32_t recording, uint64_t t, uint64_t bytes,
               uint64_t anon, uint64_t file, uint64_t swap);
int cv__db_window(cv__db_t *db, uint32_t pid, uint32_t recording, uint64_t on_t,
                     const char *on_how, int has_off, uint64_t off_t, const char *off_how);
/* Sets columns of a process's row once it is written: `set` is the assignments (a fixed text of
 * the converter's, never input), with ?3 bound to text when not NULL, else to number; prepared
 * at use (once per recording). 0, or -1 on a database error. */
int cv__db_update_process(cv__db_t *db, uint32_t pid, uint32_t recording, const char *set,
                          const char *text, int64_t number);
int cv__db_unrecorded(cv__db_t *db, uint32_t pid, uint32_t recording, const char *what);
int cv__db_meta_int(cv__db_t *db, const char *key, int64_t value);
int cv__db_meta_text(cv__db_t *db, const char *key, const char *value);
/* The end, in two calls. cv__db_finish_start builds the after-load part of the schema,
 * commits, and starts appending the tables laid into pages to the file, on a thread of its own;
 * meanwhile the caller may read the database through cv__db_reader (every table but the
 * allocations' complete; write nothing). cv__db_finish_end waits for the pages, closes, links
 * them in and puts the temporary file in place of the requested path: without force, only if no
 * file has appeared there meanwhile (RHEAP_CONVERT_E_REFUSED otherwise). Each returns a status,
 * with *err filled unless RHEAP_CONVERT_OK; on a failure the temporary file is gone and db freed,
 * and cv__db_finish_end frees it either way. */
rheap_convert_status_t cv__db_finish_start(cv__db_t *db, cv__err_t *err);
struct sqlite3 *cv__db_reader(cv__db_t *db);
rheap_convert_status_t cv__db_finish_end(cv__db_t *db, cv__err_t *err);
/* Once every recording's summary rows are written (before the totals, which read them, and
 * the summary callback): puts the b-trees of the summary tables laid into pages (cv__db_tree)
 * into the file, through a commit, a close and a reopen of the database. Afterwards those
 * tables take rows through SQLite like any other. Returns a status, with *err filled unless
 * RHEAP_CONVERT_OK (then only cv__db_abort is left to call). */
rheap_convert_status_t cv__db_settle(cv__db_t *db, cv__err_t *err);
/* Between enter and leave: the builder of summary table `table` (stack_stats, stack_lifetimes,
 * stack_sizes, stack_leaks), whose rows are laid into pages (btree.c) until cv__db_settle, each
 * with the next rowid (the last plus one, from 1); NULL when the table takes SQLite's inserts. */
cv__btree_t *cv__db_tree(cv__db_t *db, const char *table);
/* Closes and removes the temporary file; NULL is a no-op. */
void cv__db_abort(cv__db_t *db);
/* Sizes are unsigned 64-bit numbers, and sums of them can pass 2^64 in a hostile recording:
 * cv__bind_wide stores them, a REAL from 2^63 on. */
typedef __int128 cv__wide_t;
struct sqlite3_stmt;
/* Binds v as an INTEGER when it fits in 64 signed bits, else as a REAL (rounded to 53 bits of
 * precision): never as a wrapped, negative number (schema.sql, "Sizes"). */
void cv__bind_wide(struct sqlite3_stmt *s, int i, cv__wide_t v);
/* The SQLite handle for this thread, for writers of tables of their own (summary.c) and readers
 * of what is written so far: the writer thread finishes its chunk of rows and waits, and the
 * kept stack rows are written first. NULL when a write failed. Every non-NULL return must be
 * followed by cv__db_leave, after which the writer thread goes on. */
struct sqlite3 *cv__db_enter(cv__db_t *db);
void cv__db_leave(cv__db_t *db);
/* Between enter and leave: `INSERT INTO table VALUES` with `rows` groups of `cols` parameters,
 * prepared on the first call for (table, rows) and kept until the database is finished (the
 * same table pointer names the same statement). NULL when it cannot be prepared (SQLite's
 * message for cv__db_failed) or too many are kept. */
struct sqlite3_stmt *cv__db_insert(cv__db_t *db, const char *table, int cols, int rows);
/* Between enter and leave, after a statement of the caller's failed: keeps SQLite's message (or
 * the failed builder's of cv__db_tree) for cv__db_error, before the writer thread's next chunk
 * can replace it. */
void cv__db_failed(cv__db_t *db);
/* A stacks row: the allocation site of stack `id` (schema.sql), numbered `site` (sites.c); and
 * its stack_frames row, `frame_ids` its text (cv__uframes_text), malloc'ed and the writer's from
 * the call on, whatever it returns. */
int cv__db_stack(cv__db_t *db, uint64_t id, uint32_t frames, uint32_t site_frame, uint32_t site,
                    const char *function, const char *location, char *frame_ids);
/* After a -1 of one of the functions above (a database error): fills *err with
 * RHEAP_CONVERT_E_OUTPUT and "writing the database (WHAT): SQLite's reason", the temporary
 * file as its file, and returns that status. */
rheap_convert_status_t cv__db_error(cv__db_t *db, const char *what, cv__err_t *err);

/* ---- stacks.c: stack deduplication into global backtrace ids ---- */
typedef struct cv__stacks cv__stacks_t;

cv__stacks_t *cv__stacks_create(void);
void cv__stacks_destroy(cv__stacks_t *st);
/* Returns the global id of the stack made of these resolved addresses, writing its rows to db
 * when it is new (module paths from sym). 0 on failure (no memory or a database error). */
uint64_t cv__stacks_intern(cv__stacks_t *st, cv__db_t *db, const cv__sym_t *sym,
                              const cv__loc_t *const *locs, uint32_t n);
uint64_t cv__stacks_count(const cv__stacks_t *st);
/* The sites of the stacks interned so far (sites.c). */
struct cv__sites *cv__stacks_sites(cv__stacks_t *st);
/* The distinct frames of the stacks interned so far (uframes.c). */
struct cv__uframes *cv__stacks_uframes(cv__stacks_t *st);
/* One frame of a stack, as the allocation-site rule reads it. */
typedef struct {
    const char *sym, *file, *module; /* NULL unknown */
    uint32_t line;                   /* 0 unknown */
    uint64_t offset;
} cv__siteframe_t;
/* The allocation site of a stack of n frames (innermost first), the rule of the stacks table
 * (schema.sql): sets *site_no, the site's function name ("module+0xoffset" for code without a
 * name, "??" outside any module, "(no backtrace)" when n is 0) and its location ("file:line",
 * or "module:0xoffset" without a line), each cut to its buffer's length. Used at conversion and
 * by `rheap resymbolize`. */
void cv__stack_site(const cv__siteframe_t *fr, uint32_t n, uint32_t *site_no,
                       char *function, size_t flen, char *location, size_t llen);
/* The allocator plumbing list (stacks.c), which the converter also writes into every database
 * (table plumbing_patterns): a frame whose module path or bare function name matches a pattern,
 * as SQLite's GLOB matches, is plumbing. */
typedef enum { RHEAP_PLUMBING_MODULE, RHEAP_PLUMBING_NAME } cv__plumbing_kind_t;
typedef struct {
    cv__plumbing_kind_t kind;
    const char *pattern;
} cv__plumbing_t;
extern const cv__plumbing_t cv__plumbing[];
extern const size_t cv__plumbing_count;

/* ---- sites.c: the allocation sites, numbered ----
 * A site is a distinct (function, location) pair of the stacks table; ids run from 1 in the
 * order the stacks bringing them were interned. */
typedef struct cv__sites cv__sites_t;

cv__sites_t *cv__sites_create(void);
void cv__sites_destroy(cv__sites_t *s);
/* Notes that stack bt (from 1) has the site (function, location); its id, 0 when out of memory. */
uint32_t cv__sites_add(cv__sites_t *s, uint64_t bt, const char *function, const char *location);
/* The site of stack bt; for bt 0 (no backtrace) the site "(no backtrace)" "??", made when first
 * asked for. 0 when unknown or out of memory. */
uint32_t cv__sites_of(cv__sites_t *s, uint64_t bt);
size_t cv__sites_count(const cv__sites_t *s);
/* Writes the rows of table `sites` not written yet, on a handle of cv__db_enter. 0 or -1. */
int cv__sites_write(cv__sites_t *s, struct sqlite3 *h);

/* ---- uframes.c: the frames without their repeats (unique_frames, stack_frames) ----
 * Ids run from 1 in the order the frames were first asked for. */
typedef struct cv__uframes cv__uframes_t;

cv__uframes_t *cv__uframes_create(void);
void cv__uframes_destroy(cv__uframes_t *u);
/* The id of the frame with these columns of backtraces (line -1: NULL; NULL texts are NULL),
 * a new one when not met before; 0 when out of memory. */
uint32_t cv__uframes_id(cv__uframes_t *u, const char *file, int64_t line, const char *sym,
                        const char *module, uint64_t offset, int inlined);
size_t cv__uframes_count(const cv__uframes_t *u);
/* A stack_frames.frames text: the ids of n frames from frame 0, each negative where cont[i]
 * (the frame comes from the same return address as the one before). malloc'ed; NULL when out of
 * memory. */
char *cv__uframes_text(const uint32_t *ids, const uint8_t *cont, size_t n);
/* Writes the rows of table `unique_frames` not written yet, on a handle of cv__db_enter (or any
 * handle in a transaction). 0 or -1. */
int cv__uframes_write(cv__uframes_t *u, struct sqlite3 *h);

/* ---- summary.c: the summary tables, computed during the merge ----
 * Calls for one recording: begin; then, in time order, alloc when a block starts and free when
 * it ends (freed, released by realloc, or its address reused: freer 0); marker whenever a
 * marker record is read (before any event later than it is applied); leaked for each block
 * still live at the end; then end, which writes the recording's rows. Out of memory makes the
 * later calls no-ops and end return 1. */
typedef struct cv__summary cv__summary_t;

cv__summary_t *cv__summary_create(void);
void cv__summary_destroy(cv__summary_t *s);
int cv__summary_begin(cv__summary_t *s, uint32_t pid, uint32_t recording);
void cv__summary_marker(cv__summary_t *s, uint64_t t);
void cv__summary_alloc(cv__summary_t *s, const cv__live_t *b);
/* id: the allocations.id the block's row gets (rows are numbered as blocks end, then the
 * blocks never freed in allocation order), which the checkpoints name ranges of. */
void cv__summary_free(cv__summary_t *s, const cv__live_t *b, uint64_t t, uint32_t freer,
                      uint64_t id);
void cv__summary_leaked(cv__summary_t *s, const cv__live_t *b, uint64_t id);
/* leaked for n blocks at once, b[0 .. n), whose rows get the ids id, id + 1, ...: the same
 * sums without a call per block (a drain of millions of never-freed blocks). */
void cv__summary_leaked_batch(cv__summary_t *s, const cv__live_t *b, size_t n, uint64_t id);
/* Writes the recording's rows; id_base is added to every row id the summaries name (the
 * recording's rows were numbered from 1, conversion.c's shared_t). 0; 1 out of memory; -1
 * database error (cv__db_error). */
int cv__summary_end(cv__summary_t *s, cv__db_t *db, cv__sites_t *sites, uint64_t id_base);
/* At the end of the conversion, inside the database (cv__db_enter): every stack's rows of
 * stack_stats over all the recordings the summary has written, into stack_totals. 0; 1 out of
 * memory; -1 database error. */
int cv__summary_totals_write(cv__summary_t *s, cv__db_t *db, struct sqlite3 *h);
/* Adds src's totals over its recordings to dst's (a conversion's two workers each have a
 * summary). 0, or -1 out of memory. */
int cv__summary_totals_merge(cv__summary_t *dst, const cv__summary_t *src);
/* Profile mode, after begin: blocks are weighed (profile.c) by this sampling interval. */
void cv__summary_sampling(cv__summary_t *s, uint64_t interval);
/* After begin: the recording's start in wall-clock ns (processes.start_wall_ns), where its
 * slices go on the timeline of every recording together (treeline.c). */
void cv__summary_wall(cv__summary_t *s, uint64_t wall_ns);
/* At the end of the conversion, inside the database: the timeline of every recording the
 * summary has written, into timeline_totals. 0; 1 out of memory; -1 database error. */
int cv__summary_treeline_write(cv__summary_t *s, struct sqlite3 *h);

/* ---- treeline.c: the timeline of every recording together (timeline_totals) ----
 * The figures a recording's slice adds to the tree's slice that holds its start, each as its
 * row of `timeline` has it; a recording's end adds what it left live and one ended. */
enum {
    CV_TL_ALLOCS, CV_TL_ALLOC_BYTES, CV_TL_FREES, CV_TL_FREED_BYTES,
    CV_TL_ENDED_BLOCKS, CV_TL_ENDED_BYTES, /* left live by recordings that ended */
    CV_TL_STARTED, CV_TL_ENDED,            /* recordings that started, ended */
    CV_TL_N
};
typedef struct cv__treeline cv__treeline_t;
cv__treeline_t *cv__treeline_create(void);
void cv__treeline_destroy(cv__treeline_t *t);
/* Adds v[CV_TL_N] at wall-clock time wall. 0, or -1 out of memory. */
int cv__treeline_add(cv__treeline_t *t, uint64_t wall, const double *v);
/* Adds src into dst (a conversion's two workers each have one). 0, or -1 out of memory. */
int cv__treeline_merge(cv__treeline_t *dst, const cv__treeline_t *src);
/* Writes the rows of timeline_totals. 0, or -1 database error. */
int cv__treeline_write(const cv__treeline_t *t, struct sqlite3 *h);
/* Profile mode, before end: the exact counts of a thread file's totals record, which replace
 * the estimates of allocations and their bytes in thread_stats and recording_stats. */
void cv__summary_counted(cv__summary_t *s, uint32_t tid, uint64_t allocs, uint64_t bytes);

/* ---- profile.c: recordings made in profile mode ---- */

/* The number of blocks a sampled block of `size` bytes stands for (1 when interval is 0, trace
 * mode); its bytes stand for size times as many. */
double cv__profile_weight(uint64_t size, uint64_t interval);
/* Marks the processes row as a profile-mode recording with this interval. 0, or -1 on a
 * database error. */
int cv__profile_process(cv__db_t *db, uint32_t pid, uint32_t recording, uint64_t interval);

/* ---- conversion.c: the whole conversion ----
 * rheap_convert() and its options are the public API, in include/rheap_convert.h. */

#endif
