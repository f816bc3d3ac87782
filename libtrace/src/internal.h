/*
 * internal.h: what the files of librheap share, grouped by the file that defines it. Reading it
 * top to bottom is a map of the library.
 *
 * Rules for everything here: code reachable from a malloc wrapper never calls an allocating
 * libc function, keeps errno as the program left it, and never calls dl_iterate_phdr (or
 * anything else that may take the loader lock) while holding a tracer lock.
 */
#ifndef RHEAP_INTERNAL_H
#define RHEAP_INTERNAL_H

#include <elf.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "rip.h"

#define RHEAP_EXPORT __attribute__((visibility("default")))
#define RHEAP_TLS __thread __attribute__((tls_model("initial-exec")))
#define RHEAP_LIKELY(x) __builtin_expect(!!(x), 1)
#define RHEAP_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* ---- wrappers.c: the interposed allocator entry points and the bootstrap arena ---- */

/* The next allocator in the chain (normally glibc's), resolved with dlsym(RTLD_NEXT). */
typedef struct {
    void *(*malloc)(size_t);
    void (*free)(void *);
    void *(*calloc)(size_t, size_t);
    void *(*realloc)(void *, size_t);
    int (*posix_memalign)(void **, size_t, size_t);
    void *(*aligned_alloc)(size_t, size_t);
    void *(*memalign)(size_t, size_t);
    void *(*valloc)(size_t);
    void *(*pvalloc)(size_t);
    /* maps.c's: the next mmap, munmap and mremap (NULL: call the kernel directly) */
    void *(*mmap)(void *, size_t, int, int, int, off_t);
    int (*munmap)(void *, size_t);
    void *(*mremap)(void *, size_t, size_t, int, ...);
} rheap__real_t;

extern rheap__real_t rheap__real;


/* Resolves rheap__real once; safe to call from any wrapper, before libc is fully up. */
void rheap__resolve(void);
/* Whether rheap__real is resolved (an acquire load): until then a wrapper that must not
 * resolve it (maps.c's) does without. */
int rheap__resolved(void);
/* The next definition of a function this library also defines (dlsym RTLD_NEXT), looked up with
 * the guard held: dlsym may allocate. In exec.c. */
void *rheap__next(const char *name);

/* Profile mode: a thread's exact totals of calls, recorded or not, in its recorder. The owner
 * adds to them with relaxed loads and stores (no read-modify-write); whoever flushes the
 * thread's file writes them (a totals record) first. */
typedef struct {
    _Atomic uint64_t allocs, bytes, frees;
    _Atomic int open; /* the thread's file is open in the current recording, in profile mode */
} rheap__counts_t;

/* What the exported functions read on every call, per thread, in one place: a library's
 * thread-local variable costs a load of its offset before each first use in a function, one
 * struct costs it once. */
typedef struct {
    /* The recursion guard: nonzero while the thread runs tracer code, so allocations the tracer
     * itself causes (libunwind's caches, dlsym) pass straight to the real allocator. */
    int guard;
    /* Nonzero inside a wrapper while it runs tracer code that may allocate (start-up, a
     * thread's registration, libunwind, a failure): calls from there pass through, never
     * recorded. */
    int internal;
    /* The frame of the wrapper holding the guard (0 when tracer code outside a wrapper set it):
     * a call that finds the guard set by a wrapper whose frame is still live comes from a
     * signal handler and is recorded (rheap__record_nested); one whose frame is gone finds the
     * guard stale (a handler jumped out of the wrapper) and releases it
     * (rheap__threads_recover). */
    uintptr_t guard_frame;
    /* The thread's totals, or NULL before its first event (thread.c sets it). */
    rheap__counts_t *counts;
    /* Profile mode: bytes this thread may still allocate before its next sample point; 0
     * before the first draw (sample.h). */
    int64_t sample_left;
} rheap__tl_t;

extern RHEAP_TLS rheap__tl_t rheap__tl;

/* ---- The recorder's control: config.c, recording.c, toggle.c, fork.c, lifecycle.c, api.c ----
 *
 * config.c     settings from the environment, through settings.c
 * recording.c  one recording's life: its directory, process file, start, stop, failures
 * toggle.c     the toggle signal, its handler and its thread
 * fork.c       the fork handlers
 * lifecycle.c  initialization, the slow path, exec and exit
 * api.c        the public API (rheap.h)
 *
 * Everything here but rheap__word runs rarely and, where it changes a recording, under the
 * control lock. */

typedef struct {
    unsigned depth;          /* frames per backtrace, 1..RIP_MAX_DEPTH */
    unsigned max_threads;
    unsigned buffer_kb;      /* lz4 block size in KiB: 64, 256, 1024 or 4096 */
    uint32_t sample_ppm;     /* backtrace sampling, parts per million */
    int profile;             /* 1: profile mode (sample.c), 0: trace every event */
    uint64_t interval;       /* profile mode: mean bytes between samples */
    uint64_t seed;           /* profile mode: seed of the draws, 0 = pick one */
    uint64_t segment_kb;     /* profile mode: a thread file past this starts a segment; 0 never */
    int signal;              /* toggle signal, 0 = none */
    unsigned rss_ms;         /* ms between samples of resident memory, 0 = none (rss.c) */
    int maps;                /* 1: record the program's own mmap/munmap/mremap (maps.c) */
    char dir[PATH_MAX];      /* output directory */
} rheap__config_t;

/* -- config.c -- */

/* The settings in the environment, read once at initialization: an environment start, the
 * toggle signal and a fork child's recording use them. */
extern rheap__config_t rheap__env_cfg;
/* Reads them (a bad value: one stderr line, the default kept). */
void rheap__config_read_env(void);
/* RHEAP_ENABLE as 1 or 0, else `otherwise`. */
int rheap__config_env_enable(int otherwise);

/* -- recording.c -- */

/* The hot path reads one word: RHEAP__ON alone means "record every call" (trace mode),
 * RHEAP__ON | RHEAP__PROFILE "record a sample" (profile mode: the wrappers' fast paths ask
 * sample.h first, trace mode never does); 0 means "pass through"; any other bit sends the call
 * through rheap__slow_path first. */
enum {
    RHEAP__ON = 1,           /* a recording is open */
    RHEAP__TOGGLE = 2,       /* the toggle signal arrived; not yet acted on */
    RHEAP__EXITING = 4,      /* the process is exiting: its exit flush ran */
    RHEAP__UNINIT = 8,       /* the environment has not been read yet */
    RHEAP__PROFILE = 16,     /* with RHEAP__ON: the open recording is in profile mode */
};
extern _Atomic int rheap__word;
extern _Atomic unsigned rheap__gen;  /* increments at every new recording */

/* The current recording, as the recorders need it: valid while RHEAP__ON is set, written only
 * under the control lock while it is not. */
typedef struct {
    rheap__config_t cfg;     /* its settings */
    uint64_t start_ns;       /* CLOCK_MONOTONIC at its start */
    char path[PATH_MAX];     /* its directory, for naming thread files */
    uint32_t num;            /* N of rip-<pid>-N (1 for rip-<pid>) */
    pid_t pid;               /* the process it belongs to (a vfork child is not that one) */
} rheap__recording_t;
extern rheap__recording_t rheap__rec;

/* The control lock: serializes enable/disable/flush, thread registration and fork. Lock order:
 * control lock, then a thread's lock; never the other way round. */
void rheap__ctl_lock(void);
void rheap__ctl_unlock(void);
/* 0 if taken, else an error number: for exit() from a signal handler, which must not wait. */
int rheap__ctl_trylock(void);

/* Under the control lock: start a recording with settings c, `how` naming what started it (the
 * `on` record); stop it (`how`: the `off` record); flush everything now; at exit, flush and
 * write `off` but keep the recorders open for later frees. start and stop return 0, or -1 with
 * errno (EALREADY when already in that state); so does flush. */
int rheap__start(const rheap__config_t *c, const char *how);
int rheap__stop(const char *how);
int rheap__flush(void);
void rheap__flush_for_exit(void);

/* In a fork child, under no lock: reset the control lock, drop the parent's process file. */
void rheap__recording_after_fork(void);

/* Turns recording off after an internal failure: one line on stderr, files completed where
 * possible. Must be called without holding any tracer lock. */
void rheap__fail(const char *what, int err);

/* Prints the failure line unless one was printed in this recording already; returns whether
 * it printed. */
int rheap__report_failure(const char *what, int err);

/* Creates a new recording file (exclusive, no symlinks, 0600); returns its descriptor. */
int rheap__open_file(const char *path);
/* The same for the file `name` of the open recording (whose path is `path`): through the kept
 * descriptor of its directory while the program has not closed it, else by path. */
int rheap__create_in_recording(const char *name, const char *path);
/* Gives the open recording's directory to user uid (root is about to become that user). */
void rheap__recording_give_to(uid_t uid);

/* -- toggle.c -- */

/* Installs the handler of the toggle signal sig (at initialization). */
void rheap__toggle_install(int sig);
/* Starts the thread that acts on it (from the constructor, guard held). */
void rheap__toggle_start_thread(void);
/* Acts on the deliveries not yet acted on (takes the control lock). */
void rheap__toggle_apply(void);
/* In a fork child: the thread is gone; allocator calls act on the signal instead. */
void rheap__toggle_after_fork(void);

/* -- fork.c: handlers, also run around _Fork by exec.c -- */

void rheap__fork_prepare(void);
void rheap__fork_parent(void);
void rheap__fork_child(void);
/* The forking process's pid while a fork is under way, else 0. */
pid_t rheap__forking_pid(void);
/* Whether this process is not the one recording (a raw clone, a fork system call or a vfork
 * child); a copy made without fork handlers has its recording turned off, with one line. */
int rheap__foreign_process(void);
/* 1 in the process whose memory made the recorder's state; 0 in a copy made by any fork (a page
 * the kernel wipes in a child: MADV_WIPEONFORK), until the fork handlers or rheap__own_check
 * say the copy is the recording's. Read on every event before anything is stored: a copy made
 * without fork handlers shares its parent's staging areas (shared mappings of its files). */
extern _Atomic int *rheap__own_word;
static inline int rheap__own_process(void) {
    return atomic_load_explicit(rheap__own_word, memory_order_relaxed);
}
/* rheap__own_process() was 0: whether this process may record after all (1), or is a copy made
 * without fork handlers, whose recording is then off (0; rheap__foreign_process). */
int rheap__own_check(void);
/* Maps the page of rheap__own_word (at initialization). */
void rheap__own_init(void);

/* -- unseen.c -- */

/* An allocator in the process that librheap does not record (found is 0 when none was). */
typedef struct {
    int found;
    char allocator[32];      /* "jemalloc", "tcmalloc", "mimalloc" or "unknown" */
    char module[PATH_MAX];   /* the executable or library holding it */
    char symbol[64];         /* the symbol it was found by */
    char refused[256];       /* why it was not hooked, when patch.c tried and refused */
} rheap__unseen_t;
extern rheap__unseen_t rheap__unseen;
/* Looks for one (at initialization, under no tracer lock: it lists the modules); an allocator
 * linked into a module is hooked there (patch.c) when it can be, and is then not unseen. */
void rheap__unseen_scan(void);
/* Looks at the modules loaded since the scan for an allocator, unless one was found already (at
 * exit or exec, before the recording's end, under no tracer lock). Never hooks, never takes the
 * loader's locks. */
void rheap__unseen_rescan(void);
/* Says what the scan found, in one line, once per process (at the first recording's start, or
 * when a later look found it). */
void rheap__unseen_say(void);

/* -- symtab.c: a module's symbol tables, from its file -- */

/* The file mapped read-only, its headers checked against its size. */
typedef struct {
    const unsigned char *m;
    size_t size;
    const Elf64_Shdr *sh, *symtab, *dynsym; /* symtab, dynsym: NULL when absent */
    const Elf64_Phdr *ph;
    unsigned nsh, nph;
} rheap__elf_t;
/* Maps the ELF file at path (raw system calls, no allocation); 0, or -1 when it is not one. */
int rheap__elf_open(rheap__elf_t *e, const char *path);
void rheap__elf_close(rheap__elf_t *e);
/* The function `name` defined in the symbol table s (NULL: none, or no table). */
const Elf64_Sym *rheap__elf_func(const rheap__elf_t *e, const Elf64_Shdr *s, const char *name);
/* The loadable segment holding the address vaddr (NULL: none). */
const Elf64_Phdr *rheap__elf_segment(const rheap__elf_t *e, uint64_t vaddr);

/* -- patch.c: an allocator linked into a module, hooked at its entry points -- */

/* Hooks the allocator linked into the module of image e, loaded at bias, whose functions
 * carry the prefix `prefix` ("", "je_", "_rjem_"; NULL: unknown): every entry point of entries.h
 * the module defines gets a jump to a hook that records as librheap's exported wrappers do.
 * All or none: returns 1 when hooked, else 0 with the reason in why (nothing changed). Once per
 * process (a second allocator is refused); at initialization, under no tracer lock. */
int rheap__patch_module(const rheap__elf_t *e, uintptr_t bias, const char *prefix, char *why,
                        size_t whylen);

/* -- lifecycle.c -- */

/* Handles the rare states: first call (reads the environment, may start recording), a pending
 * toggle. Called from a wrapper with the guard held. */
void rheap__slow_path(void);

/* Initialization, if not done yet, with the control lock held (rheap_enable's way in). */
void rheap__init_locked(void);

/* Whether the existing directory `dir` was made since this program image started (recording.c
 * skips it; one it did not make itself is reported). */
int rheap__dir_planted(const char *dir);

/* For exec.c: complete the recording before an exec (returns whether one was open), resume
 * after an exec that failed, flush before _exit. */
int rheap__before_exec(void);
void rheap__after_failed_exec(int was_on);
void rheap__before_exit(void);

/* Events not recorded because their thread was refused a recorder (thread.c counts them, the
 * process file records them). */
extern _Atomic uint64_t rheap__lost_events;

/* exec.c: resolves the real exec/_exit/_Fork functions (from the constructor). */
void rheap__exec_init(void);

/* ---- got.c: recording a running process (rheap attach) ---- */

/* In a fork child, from the fork handler: when the parent was attached, puts the child's slots
 * back and returns 1 (the child is not recorded); else 0. */
int rheap__attach_forked(void);

/* ---- rss.c: samples of the process's resident memory ---- */

/* The process's resident memory, in bytes (rss = anon + file; file counts shared memory). */
typedef struct {
    uint64_t rss, anon, file, swap;
} rheap__rss_t;
/* At a recording's start (control lock held): a sample at most every interval_ms, the first at
 * the recording's first event; 0 takes none. Opens /proc/self/status and keeps it, unless this
 * process has it open already. */
void rheap__rss_start(unsigned interval_ms);
/* When the next sample is due (absolute ns; UINT64_MAX: never), for the inline check below. */
extern _Atomic uint64_t rheap__rss_next;
/* Whether the event stamped `now` (absolute ns) takes the sample that is due: 1 for one event
 * per interval in the whole process. Call it only when rheap__rss_due(now). */
int rheap__rss_claim(uint64_t now);
/* The check every event makes: a load and a compare. */
static inline int rheap__rss_due(uint64_t now) {
    return now >= atomic_load_explicit(&rheap__rss_next, memory_order_relaxed);
}
/* Reads the sample into *out, with buf[0..len) as working memory: 0, or -1 (no sample; when the
 * kept descriptor is no longer /proc/self/status, sampling stops). Raw system calls only. */
int rheap__rss_read(rheap__rss_t *out, char *buf, size_t len);

/* ---- maps.c: the program's own anonymous mappings ---- */

/* In wrappers.c, beside the other prologues: 1 when the calling mmap/munmap/mremap wrapper,
 * whose frame is `frame`, records its call (the guard is then held: end with rheap__map_leave),
 * 0 when it passes (recording off, or any guard set: the tracer's own call, an allocator's
 * inside a wrapper, a signal handler's). */
int rheap__map_enter(uintptr_t frame);
void rheap__map_leave(void);

/* ---- thread.c: per-thread recorder state ---- */

/* The frame that called an exported allocator function, where its backtrace starts: the return
 * address, the caller's stack pointer after the call returns, and its rbp. */
typedef struct {
    uintptr_t ip, sp, bp;
} rheap__frame_t;

/* The calling function's caller, taken in the exported function itself so that the walk does not
 * step through the tracer's own frames: a pointer to a frame that lives until the end of the
 * enclosing block. __builtin_frame_address(0) gives the function a frame pointer, with the saved
 * rbp at it and the return address above it, as long as the function does not realign its
 * stack: an exported function must have no locals aligned above 16 bytes, no VLA and no alloca
 * (gcc would then keep the frame elsewhere). A wrong frame here would give wrong backtraces,
 * never a bad read (the walk checks every load against the stack's bounds), and
 * RHEAP_CHECK_UNWIND=1 reports it. */
#define RHEAP__CALLER()                                                                            \
    (&(rheap__frame_t){(uintptr_t)__builtin_return_address(0),                                     \
                       (uintptr_t)__builtin_frame_address(0) + 16,                                 \
                       *(const uintptr_t *)__builtin_frame_address(0)})

/* ---- families.c: the C++ allocation operators and the allocators' own functions ----
 *
 * Their wrappers call the prologue and epilogue below (in wrappers.c, beside the libc ones');
 * `frame` is the wrapper's own frame address. enter returns 0 when the call passes straight
 * through, else a state that the matching end call takes; between the two, calls of the real
 * function into other wrapped entry points pass through (each block is recorded once). */

/* Looks up the real functions of every family (from rheap__resolve, inside dlsym's guard).
 * Returns 1 when an allocator that replaces malloc and has functions of its own (jemalloc,
 * tcmalloc, mimalloc) is loaded. */
int rheap__families_resolve(void);
/* The real function the wrapper of `symbol` calls, as resolved so far (NULL: not yet, or none).
 * No lookup: safe where the loader's locks may be held for good. */
void *rheap__families_real(const char *symbol);
int rheap__family_enter(uintptr_t frame);
/* Ends an allocating call: records p (NULL: the call failed) unless the state says pass. */
void rheap__family_alloc(int e, rip_call_t call, void *p, uint64_t size, uint64_t align,
                         const rheap__frame_t *from);
/* Ends a call that recorded nothing (an exception leaving an allocating call). */
void rheap__family_leave(int e);
/* Records the free of p (stamped before the real free); end with rheap__family_leave. */
int rheap__family_free_begin(uintptr_t frame, void *p);
typedef struct {
    int marked, was;
    uint64_t t0;
} rheap__resize_t;
/* A resizing call: old is released at t0, before the real call; p is its result, `freed` whether
 * it released old without returning a block. */
int rheap__family_resize_begin(uintptr_t frame, void *old, rheap__resize_t *r);
void rheap__family_resize_end(int e, rheap__resize_t *r, rip_call_t call, void *old, void *p,
                              uint64_t size, int freed, const rheap__frame_t *from);

/* mimalloc's mi_heap_visit_blocks: calls visitor(heap, area, block, size, arg) for each area
 * (block NULL) and each block in use, all of them when all is true. */
typedef _Bool (*rheap__visit_t)(const void *heap, _Bool all,
                                _Bool (*visitor)(const void *, const void *, void *, size_t, void *),
                                void *arg);
/* A call that frees every block of the mimalloc heap `heap` (mi_heap_destroy): each block
 * visit finds in it is recorded as freed now; end with rheap__family_leave. */
int rheap__family_destroy_begin(uintptr_t frame, void *heap, rheap__visit_t visit);

/* Event recorders; the caller holds the guard and passes the absolute time it stamped
 * (rheap__now_abs), old_t too, and where the backtrace starts. */
void rheap__record_alloc(rip_call_t call, void *p, uint64_t size, uint64_t align, void *old,
                         uint64_t old_t, uint64_t t, const rheap__frame_t *from);
void rheap__record_free(void *p, uint64_t t);
/* An event of a program's own pool (rheap_pool.h; op a rip_pool_op_t), stamped now; the
 * allocation of a block takes a backtrace from `from`. */
void rheap__record_pool(int op, uint64_t pool, const void *p, uint64_t size, const char *name,
                        const rheap__frame_t *from);
/* The slow half of rheap__counts: attaches the thread to the recording (its first event in it).
 * NULL when the thread cannot record. errno preserved. */
rheap__counts_t *rheap__counts_attach(void);

/* The calling thread's totals in the current recording (profile mode), or NULL. */
static inline rheap__counts_t *rheap__counts(void) {
    rheap__counts_t *c = rheap__tl.counts;
    if (RHEAP_LIKELY(c && atomic_load_explicit(&c->open, memory_order_relaxed)))
        return c;
    return rheap__counts_attach();
}

static inline void rheap__counts_add(_Atomic uint64_t *v, uint64_t n) {
    atomic_store_explicit(v, atomic_load_explicit(v, memory_order_relaxed) + n,
                          memory_order_relaxed);
}
int rheap__record_mark(const char *label);
/* An mmap, munmap or mremap of the program's anonymous memory (op a rip_map_op_t), stamped
 * `t`: addr and len (whole pages) the range mapped or unmapped; for a remap old and old_len the
 * range it came from. Map and remap take a backtrace from `from`. */
void rheap__record_map(int op, uintptr_t addr, uint64_t len, uintptr_t old, uint64_t old_len,
                       uint64_t t, const rheap__frame_t *from);

/* An event of a signal handler that interrupted a wrapper of this thread (call 0: a free of p;
 * else an allocation, a realloc of `old` when old is set), at absolute time t, without a
 * backtrace. Written at once if the interrupted wrapper is not inside the thread's writer, else
 * kept in a small side area that the wrapper writes out before it leaves the writer. Takes no
 * lock another thread may hold for long, allocates nothing. */
void rheap__record_nested(int call, void *p, uint64_t size, uint64_t align, void *old, uint64_t t);

/* The calling thread left a wrapper by a jump out of a signal handler, with whatever the wrapper
 * held: its recorder's lock (the file is then left as it was, consistent up to its last complete
 * record, and the thread's next event opens a new one), its loader and realloc marks. */
void rheap__threads_recover(void);

/* realloc and reallocarray, while recording: begin returns 1 if the thread is attached to the
 * recording and marked as inside a realloc (end clears the mark); stop() first waits, for a
 * bounded time, until no thread is so marked (thread.c explains why). */
int rheap__realloc_begin(void);
void rheap__realloc_end(void);
void rheap__threads_wait_reallocs(void);

/* Under the control lock: flush every thread's file; with RHEAP__FLUSH_CLOSE, also complete and
 * close them (recording ends); with RHEAP__FLUSH_EXIT, keep them open but give their staging
 * areas' disk space back until a later event needs it (the process's exit flush). */
enum { RHEAP__FLUSH_ONLY, RHEAP__FLUSH_CLOSE, RHEAP__FLUSH_EXIT };
void rheap__threads_flush_all(int how);

/* Creates the pthread key whose destructor flushes a thread's file when it exits. */
void rheap__threads_init(void);

/* (Re)registers for expedited membarrier; done at init and in a fork child. */
void rheap__threads_init_barrier(void);

/* fork: wait until no thread is inside dl_iterate_phdr for the tracer and keep them out
 * (before the control lock is taken), and let them in again. */
void rheap__threads_quiesce_loader(void);
void rheap__threads_release_loader(void);

/* fork handlers (control lock held by the caller in prepare, released in parent/child). */
void rheap__threads_lock_all(void);
void rheap__threads_unlock_all(void);
void rheap__threads_after_fork_child(void);

/* ---- unwind.c: backtraces ---- */

/* A thread's unwinding state: its stack's bounds and a cache of unwind rules by return
 * address. Lives in the thread's recorder mapping. */
typedef struct rheap__unwinder rheap__unwinder_t;
size_t rheap__unwinder_size(void);
/* Sets up for the calling thread (reads its stack bounds; may allocate through the guard). */
void rheap__unwinder_init(rheap__unwinder_t *u);
/* Tells the unwinder dl_iterate_phdr's unload count (dlpi_subs): when it moved, the cached
 * rules are dropped, as after a dlclose. This catches glibc's own unloads. */
void rheap__unwinder_unloaded(rheap__unwinder_t *u, unsigned long long subs);
/* A signal handler left a wrapper of this thread by longjmp, maybe in the middle of a walk: the
 * chain of the previous walk may be half written and is dropped. */
void rheap__unwinder_interrupted(rheap__unwinder_t *u);

/* Fills ips with up to `max` return addresses of the calling thread's program, from the frame
 * `from` (RHEAP__CALLER) outwards, the tracer's own frames removed, and *hash with a 64-bit
 * nonzero hash of them (equal stacks, equal hashes). Returns the count (0 if unwinding failed).
 * Cost once the rules are cached: a few ns per frame. */
unsigned rheap__unwind(rheap__unwinder_t *u, const rheap__frame_t *from, uint64_t *ips,
                       unsigned max, uint64_t *hash);

/* Records the address range of librheap's own code so rheap__unwind can drop its frames. */
void rheap__unwind_init(void);

/* ---- modules.c: loaded modules ---- */

/* Reads the executable's path once (from initialization). */
void rheap__modules_init(void);

/* dl_iterate_phdr's load and unload counters; cheap (one loader-lock round trip). */
void rheap__modules_counters(unsigned long long *adds, unsigned long long *subs);

/* Snapshot of the loaded modules, built without any tracer lock and written later. */
typedef struct rheap__modsnap rheap__modsnap_t;
size_t rheap__modsnap_size(void);
int rheap__modsnap_take(rheap__modsnap_t *s);
rip_status_t rheap__modsnap_write(const rheap__modsnap_t *s, rip_writer_t *w, uint64_t t);

/* Bumped after every dlclose (the wrapper is in modules.c): unwinders drop their rules. */
extern _Atomic unsigned rheap__unload_gen;

/* ---- clock.c ---- */

/* Times on disk count 4 ns units: the low bits of a ns delta are noise that lz4 cannot
 * compress (a byte per event), and 4 ns is far below what orders events across threads (a
 * cache line moving between CPUs takes tens of ns) or within one (each event takes longer). */
#define RHEAP__TIME_SHIFT 2

/* Monotonic time in ns (CLOCK_MONOTONIC). */
uint64_t rheap__now_abs(void);
/* ns since the current recording started. */
static inline uint64_t rheap__now(void) {
    uint64_t now = rheap__now_abs();
    return now > rheap__rec.start_ns ? now - rheap__rec.start_ns : 0;
}

/* ---- sys.c: system calls that are not cancellation points ---- */

/* The tracer holds its locks across these; through libc they are cancellation points, and a
 * thread cancelled inside one would leave a lock held forever. errno is set as usual. */
int rheap__sys_open(const char *path, int flags, int mode);
int rheap__sys_close(int fd);
long rheap__sys_read(int fd, void *buf, unsigned long len);
long rheap__sys_write(int fd, const void *buf, unsigned long len);

/* fd moved among the top quarter of the numbers the descriptor limit allows (as the writer keeps
 * its descriptors: a program's own open() takes the lowest free number), or -1 when there is no
 * room there; fd itself is closed either way. */
int rheap__sys_keep_high(int fd);

/* Around tracer code inside a wrapper that takes the control lock (a thread's registration,
 * start-up, a failure): no signal handler runs there, so none can jump out of it with the lock
 * held. errno is kept. */
void rheap__sys_block_signals(sigset_t *old);
void rheap__sys_restore_signals(const sigset_t *old);

/* ---- log.c: messages without malloc ---- */

/* Writes "rheap: " + the pieces (NULL-terminated list) + "\n" to stderr in one write. */
void rheap__log(const char *first, ...) __attribute__((sentinel));
/* Remembers which file descriptor 2 is at start-up: later messages go there only while it
 * still is (the constructor; idempotent). */
void rheap__log_init(void);
/* Decimal text of v into buf (at least 24 bytes); returns buf. */
char *rheap__utoa(uint64_t v, char *buf);

#endif
