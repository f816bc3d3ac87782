/*
 * thread.c: one recorder per thread, so the allocation path shares no lock between threads.
 *
 * A recorder is one anonymous mapping: this struct, the rip writer (compressed block, lz4 state,
 * recent addresses), the table of stacks already defined in the current file, room for a module
 * snapshot, and the unwinder's rules. The writer builds its records in a second, shared mapping:
 * the staging area at the start of the thread's file (rip-format/FORMAT.md section 6), whose
 * pages the kernel keeps when the process dies however it dies, and which a reader sees at once. Its lock is taken by its
 * own thread for each event and by another thread only to flush or close the file
 * (rheap_flush, rheap_disable, exit, fork), so it is almost never contended.
 *
 * Life cycle: LIVE from the thread's first event; RETIRED when the thread's key destructor
 * runs (the file is flushed; events that still arrive from libc's own cleanup are staged like
 * any other); FREE once the kernel says the thread is gone, when its file is completed and the
 * mapping waits for a new thread to reuse it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/membarrier.h>

#include "internal.h"

enum { T_FREE, T_LIVE, T_RETIRED };

typedef struct {
    uint64_t hash; /* 0: empty */
    uint64_t id;
} stack_slot_t;

/* 64 Ki slots (1 MiB of address space, touched as it fills). When it is 3/4 full it is
 * cleared and stacks seen again are defined again under new ids: memory stays bounded. */
#define TAB_SLOTS (1u << 16)

typedef struct rheap__thread rheap__thread_t;

/* An event of a signal handler that interrupted its thread inside the writer, kept until the
 * interrupted event is written (call 0: a free). */
typedef struct {
    int call;
    uint64_t p, size, align, old, t;
} side_ev_t;

/* Enough for a storm of handlers during one block's compression and write (64 were not). */
#define SIDE_SLOTS 1024

struct rheap__thread {
    _Atomic int busy;            /* owner: inside an event */
    _Atomic int claim;           /* another thread (under the control lock) wants the recorder */
    _Atomic int in_loader;       /* owner: unwinding or reading module maps (dl_iterate_phdr) */
    _Atomic int in_realloc;      /* owner: inside a realloc it will record (rheap__realloc_begin) */
    _Atomic int status;
    unsigned depth;              /* settings of the recording the open file belongs to, copied */
    uint32_t sample_ppm;         /* at attach so the owner never reads the global ones */
    int profile;                 /* profile mode: only sampled events have records */
    rheap__counts_t counts;      /* profile mode: every call since the file began */
    uint64_t start_ns;           /* that recording's start (CLOCK_MONOTONIC) */
    _Atomic unsigned gen;        /* recording the open file belongs to; 0: no file */
    pid_t tid;
    rip_writer_t *w;
    void *stage;                 /* the file's staging area, mapped shared while w is set */
    size_t stage_size;
    size_t map_size;
    uint32_t block_size;
    void *wmem;
    stack_slot_t *tab;
    uint32_t tab_used;
    uint64_t next_stack;
    int have_mods;
    unsigned long long mod_adds, mod_subs;
    unsigned unload_gen;         /* rheap__unload_gen when the stack table was last valid */
    rheap__modsnap_t *snap;
    rheap__unwinder_t *unw;
    uint32_t rng;
    uint64_t last_t;             /* latest event time in the file: times never go backwards */
    uint64_t segment_bytes;      /* profile mode: a file past this size rolls (roll_segment) */
    uint32_t segment;            /* the open file's place among the thread's segments, from 1 */
    uint32_t first_serial;       /* the serial of the thread's first file in this recording */
    char name[17];
    rheap__thread_t *next;
    /* The side area: written by the owner's signal handlers, read by the owner (and by another
     * thread holding the recorder, when no handler can be writing: see rheap__record_nested).
     * volatile: a handler may move the tail while the owner drains. */
    volatile uint32_t side_head, side_tail;
    uint64_t side_lost;          /* handler events the side area had no room for */
    unsigned side_gen;           /* the recording whose events the side area holds across a
                                    jump out of an event (rheap__threads_recover), or 0 */
    int side_writing;            /* drain_side is writing the side area's event side_at, */
    uint32_t side_at;
    uint64_t side_before;        /* and the file had this many events before it */
    side_ev_t side[SIDE_SLOTS];
    char rss_buf[4096];          /* /proc/self/status, read for a sample of resident memory */
    uint64_t ips[RIP_MAX_DEPTH]; /* the backtrace being recorded: here, not on a stack that may
                                    be small */
};

/* An absolute CLOCK_MONOTONIC time as ns since the start of the recording this thread's file
 * belongs to. Events are stamped before the thread knows which recording that is (one may end
 * and another start in between), so the subtraction is done here, under the thread's lock. */
static inline uint64_t since_start(const rheap__thread_t *t, uint64_t abs_ns) {
    return abs_ns > t->start_ns ? abs_ns - t->start_ns : 0;
}

static RHEAP_TLS rheap__thread_t *tl_self;

/* Attaches t's file to recording gen, or detaches it (0). In profile mode the totals are open
 * for counting exactly while it is attached: profile mode's fast path reads that flag alone. */
static void set_gen(rheap__thread_t *t, unsigned gen) {
    atomic_store(&t->gen, gen);
    atomic_store_explicit(&t->counts.open, gen != 0 && t->profile, memory_order_relaxed);
}

static rip_status_t drain_side(rheap__thread_t *t);

/* Whether t (the calling thread's recorder, or NULL) has its file open in the current
 * recording. Owner-side read, without the lock. */
static inline int attached(const rheap__thread_t *t) {
    return t && atomic_load_explicit(&t->gen, memory_order_relaxed) ==
                    atomic_load_explicit(&rheap__gen, memory_order_relaxed);
}
/* The recording this thread was refused a recorder in (too many threads): its events in that
 * recording are only counted, in rheap__lost_events. */
static RHEAP_TLS unsigned tl_refused_gen;
_Atomic uint64_t rheap__lost_events;
static rheap__thread_t *all_threads;  /* every mapping ever made; under the control lock */
static unsigned n_active;             /* LIVE + RETIRED */
static unsigned serial_gen, serial;   /* thread files opened in the current recording */
static pthread_key_t exit_key;
static int exit_key_ok;
static _Atomic int warned_threads;

/* ---- The per-thread lock ----
 *
 * An owner-biased lock. The owner takes it for every event, so its side must be nearly free: a
 * plain store of `busy` and a check of `claim`, with no atomic read-modify-write and no fence.
 * Other threads take it rarely (flush, disable, fork, exit) and pay instead: they set `claim`,
 * then call membarrier(), which makes every running thread of the process execute a full
 * barrier, so either the owner sees the claim and steps back, or the claimer sees `busy` and
 * waits. Without membarrier (old kernels, seccomp at start-up) both sides use sequentially
 * consistent accesses, which order each side's store before its load (Dekker). ThreadSanitizer
 * cannot see the ordering membarrier gives, so a TSan build always uses that fallback.
 */

static int asym_ok;

static void claim_barrier(void) {
    /* If the expedited barrier fails (a seccomp filter installed later), the slow global one
     * gives the same guarantee. */
    if (asym_ok && syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0)
        syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0);
}

/* The owner side of the protocol, shared by the per-thread lock (busy/claim), the fork guard
 * (in_loader/fork_pending) and reallocs in flight (in_realloc/closing): raise `mine`; if `stop`
 * is set, lower it again and return 0. */
static inline int owner_try(_Atomic int *mine, _Atomic int *stop) {
    if (RHEAP_LIKELY(asym_ok)) {
        atomic_store_explicit(mine, 1, memory_order_relaxed);
        atomic_signal_fence(memory_order_seq_cst);
        if (RHEAP_LIKELY(!atomic_load_explicit(stop, memory_order_acquire)))
            return 1;
    } else {
        atomic_store_explicit(mine, 1, memory_order_seq_cst);
        if (!atomic_load_explicit(stop, memory_order_seq_cst))
            return 1;
    }
    atomic_store_explicit(mine, 0, memory_order_release);
    return 0;
}

/* Raises `mine`, stepping back while `stop` is set. */
static inline void owner_enter(_Atomic int *mine, _Atomic int *stop) {
    while (!owner_try(mine, stop))
        while (atomic_load_explicit(stop, memory_order_acquire))
            sched_yield();
}

static inline void owner_leave(_Atomic int *mine) {
    atomic_store_explicit(mine, 0, memory_order_release);
}

/* The other side, after setting its `stop` flag(s) and one claim_barrier(). */
static void wait_clear(_Atomic int *mine) {
    while (atomic_load_explicit(mine, memory_order_seq_cst))
        sched_yield();
}

static inline void t_lock(rheap__thread_t *t) {
    owner_enter(&t->busy, &t->claim);
}

static inline void t_unlock(rheap__thread_t *t) {
    owner_leave(&t->busy);
}

/* ---- Forks and the loader's lock ----
 *
 * glibc does not reset the lock dl_iterate_phdr takes in a fork child: if any thread is inside
 * dl_iterate_phdr when another forks, the child's first call blocks forever. The recorder calls
 * it (through libunwind and the module maps) for new call sites, so a fork waits until no
 * thread is inside those calls and keeps new ones out until it is done. The same owner-biased
 * protocol as the per-thread lock keeps the common path free of atomic read-modify-writes. */

static _Atomic int fork_pending;

static inline void loader_enter(rheap__thread_t *t) {
    owner_enter(&t->in_loader, &fork_pending);
}

static inline void loader_leave(rheap__thread_t *t) {
    owner_leave(&t->in_loader);
}

/* Called by fork_prepare before it takes the control lock: a thread inside dl_iterate_phdr may
 * be waiting for a loader lock whose holder (dlopen/dlclose) allocates and may need the control
 * lock. */
void rheap__threads_quiesce_loader(void) {
    atomic_store(&fork_pending, 1);
    claim_barrier();
    for (rheap__thread_t *t = __atomic_load_n(&all_threads, __ATOMIC_ACQUIRE); t; t = t->next)
        wait_clear(&t->in_loader);
}

void rheap__threads_release_loader(void) {
    atomic_store(&fork_pending, 0);
}

/* ---- Reallocs in flight when a recording stops ----
 *
 * A realloc that moves a block frees the old one inside the real call, before its record is
 * written. If the recording stopped in between, the record would be dropped while another
 * thread, still recording, got the old address back: the recording would show it allocated
 * twice. So stop() waits, for a bounded time, for reallocs of threads attached to the recording
 * to be written. The owner side is the same protocol as the per-thread lock, except that an
 * owner who sees the recording closing does not wait: its call starts after the stop began, so
 * no thread can record a reuse of its old block. */

static _Atomic int closing;

int rheap__realloc_begin(void) {
    rheap__thread_t *t = tl_self;
    return attached(t) && owner_try(&t->in_realloc, &closing);
}

void rheap__realloc_end(void) {
    owner_leave(&tl_self->in_realloc);
}

/* Bounded: a realloc's record may itself wait for the control lock our caller holds (to report
 * a write failure), or for the loader's lock held by a thread that waits for it. */
#define REALLOC_WAIT_NS 50000000ull

void rheap__threads_wait_reallocs(void) {
    atomic_store(&closing, 1);
    claim_barrier();
    uint64_t deadline = rheap__now_abs() + REALLOC_WAIT_NS;
    for (rheap__thread_t *t = all_threads; t; t = t->next) {
        if (t == tl_self || t->status == T_FREE)
            continue;
        while (atomic_load_explicit(&t->in_realloc, memory_order_seq_cst) &&
               rheap__now_abs() < deadline)
            sched_yield();
    }
    atomic_store(&closing, 0);
}

/* How long a claimer waits for a thread inside an event. An event takes microseconds; a thread
 * that stays inside one was left there by a signal handler's siglongjmp and only gets out at its
 * next allocation call, which may never come: exit, a fork or a disable must not wait for it. */
#define CLAIM_WAIT_NS 1000000000ull

/* Claimer side, under the control lock: announce, then one barrier for any number of claims.
 * Returns 0 once t is out of its event, -1 if it stayed inside past CLAIM_WAIT_NS (it is not
 * claimed then: the caller must leave its writer alone). */
static int claim_wait(rheap__thread_t *t) {
    if (!atomic_load_explicit(&t->busy, memory_order_seq_cst))
        return 0;
    uint64_t deadline = rheap__now_abs() + CLAIM_WAIT_NS;
    while (atomic_load_explicit(&t->busy, memory_order_seq_cst))
        if (rheap__now_abs() >= deadline)
            return -1;
        else
            sched_yield();
    return 0;
}

/* The one line for threads a claim gave up on: their records up to the abandoned event are in
 * their staging areas, which the converter reads as a killed process's. */
static void say_left_inside(unsigned n) {
    char num[24];
    rheap__log(rheap__utoa(n, num), n == 1 ? " thread" : " threads",
               " stayed inside an event for a second (left there by a signal handler's jump),"
               " not waited for: ", n == 1 ? "its" : "their",
               " records up to it are kept, unflushed", NULL);
}

static void claim_release(rheap__thread_t *t) {
    atomic_store_explicit(&t->claim, 0, memory_order_release);
}

/* Profile mode: a record of the thread's totals so far. */
static rip_status_t stage_totals(rheap__thread_t *t) {
    if (!t->profile)
        return RIP_OK;
    return rip_writer_totals(t->w, since_start(t, rheap__now_abs()),
                             atomic_load_explicit(&t->counts.allocs, memory_order_relaxed),
                             atomic_load_explicit(&t->counts.bytes, memory_order_relaxed),
                             atomic_load_explicit(&t->counts.frees, memory_order_relaxed));
}

/* Writes the thread's buffered records, preceded in profile mode by its totals so far. */
static rip_status_t flush_file(rheap__thread_t *t) {
    rip_status_t st = stage_totals(t);
    return st == RIP_OK ? rip_writer_flush(t->w) : st;
}

/* ---- Thread exit ---- */

static void read_name(rheap__thread_t *t, char out[17]) {
    memset(out, 0, 17);
    if (t == tl_self) {
        prctl(PR_GET_NAME, out, 0, 0, 0);
        return;
    }
    char path[64] = "/proc/self/task/", num[24];
    strcat(path, rheap__utoa((uint64_t)t->tid, num));
    strcat(path, "/comm");
    int fd = rheap__sys_open(path, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0)
        return;
    ssize_t n = rheap__sys_read(fd, out, 16);
    rheap__sys_close(fd);
    if (n > 0 && out[n - 1] == '\n')
        out[n - 1] = 0;
}

/* Writes a thread-name record when the name changed since the last one in this file. */
static rip_status_t update_name(rheap__thread_t *t) {
    char name[17];
    read_name(t, name);
    if (!name[0] || strcmp(name, t->name) == 0)
        return RIP_OK;
    memcpy(t->name, name, sizeof name);
    return rip_writer_thread_name(t->w, since_start(t, rheap__now_abs()), name);
}

/* The key destructor: the thread is exiting. Flush now; keep the recorder usable for the frees
 * libc makes after this point. */
static void on_thread_exit(void *arg) {
    rheap__thread_t *t = arg;
    int saved = errno, guard = rheap__tl.guard;
    rheap__tl.guard = 1;
    rip_status_t st = RIP_OK;
    t_lock(t);
    if (t->w && atomic_load(&t->gen) == atomic_load(&rheap__gen)) {
        st = drain_side(t);
        if (st == RIP_OK)
            st = update_name(t);
        if (st == RIP_OK)
            st = flush_file(t);
    }
    t->status = T_RETIRED;
    t_unlock(t);
    if (st != RIP_OK)
        rheap__fail("cannot write a thread file", errno);
    rheap__tl.guard = guard;
    errno = saved;
}

/* Registers the process for expedited membarrier (again in a fork child: the registration
 * belongs to the address space). */
void rheap__threads_init_barrier(void) {
#if defined(__SANITIZE_THREAD__)
    asym_ok = 0;
#else
    asym_ok = syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
#endif
}

void rheap__threads_init(void) {
    exit_key_ok = pthread_key_create(&exit_key, on_thread_exit) == 0;
    rheap__threads_init_barrier();
}

/* ---- Registration (control lock held) ---- */

/* Layout of a recorder's mapping: the struct, the writer, the stack table, the module
 * snapshot, the unwinder. The table starts on a page so it can be given back with madvise. */
typedef struct {
    size_t writer, table, snap, unw, size;
} layout_t;

static layout_t layout_for(uint32_t block) {
    layout_t l;
    l.writer = (sizeof(rheap__thread_t) + 63) & ~(size_t)63;
    l.table = (l.writer + rip_writer_footprint_staged(block) + 4095) & ~(size_t)4095;
    l.snap = l.table + TAB_SLOTS * sizeof(stack_slot_t);
    l.unw = (l.snap + rheap__modsnap_size() + 63) & ~(size_t)63;
    l.size = l.unw + rheap__unwinder_size();
    return l;
}

/* Empties the stack table. Its pages go back to the kernel rather than being zeroed by hand:
 * a thread that defines a few stacks keeps a few pages resident, not the whole table. */
static void clear_stacks(rheap__thread_t *t) {
    if (t->tab_used)
        madvise(t->tab, TAB_SLOTS * sizeof(stack_slot_t), MADV_DONTNEED);
    t->tab_used = 0;
}

/* Ends the thread's writer: its kept descriptor closed, its staging area unmapped. With
 * `give_back`, a staging area whose records are all in blocks gives its disk space back; a fork
 * child passes 0, as the file and its staging area are its parent's. */
static void drop_writer(rheap__thread_t *t, int give_back) {
    rip_writer_t *w = t->w;
    void *stage = t->stage;
    if (!w)
        return;
    /* Out of the recorder first: a signal handler's jump from the middle of this leaves no
     * closed writer behind for the next event to use. */
    t->w = NULL;
    t->stage = NULL;
    atomic_signal_fence(memory_order_seq_cst);
    rip_writer_close(w, give_back);
    munmap(stage, t->stage_size);
}

/* Closes the files of retired threads that the kernel reports gone, making their mappings
 * reusable. A tid that was reused by a new thread simply waits for the next pass. */
static void reclaim_dead(void) {
    pid_t pid = getpid();
    for (rheap__thread_t *t = all_threads; t; t = t->next) {
        /* Also LIVE ones: a thread whose first event came after its key destructors, or one
         * made by a raw clone, never retires. */
        if (t->status == T_FREE || t == tl_self)
            continue;
        if (syscall(SYS_tgkill, pid, t->tid, 0) == 0 || errno != ESRCH)
            continue;
        /* Take over what the dead owner wrote: its last unlock was a release of busy. */
        (void)atomic_load_explicit(&t->busy, memory_order_acquire);
        /* A dead thread cannot be inside an event: events contain no cancellation point. */
        if (t->w)
            flush_file(t);
        drop_writer(t, 1);
        set_gen(t, 0);
        t->status = T_FREE;
        n_active--;
    }
}

/* A new recorder for the calling thread, or NULL: *over_limit says whether the thread limit was
 * the reason (else the mapping failed, errno set). */
static rheap__thread_t *register_thread(int *over_limit) {
    uint32_t block = rheap__rec.cfg.buffer_kb * 1024u;
    layout_t l = layout_for(block);
    size_t size = l.size;
    int saved = errno;
    reclaim_dead();
    errno = saved;
    *over_limit = n_active >= rheap__rec.cfg.max_threads;
    if (*over_limit) {
        if (!atomic_exchange(&warned_threads, 1)) {
            char num[24];
            rheap__log("more than ", rheap__utoa(rheap__rec.cfg.max_threads, num),
                       " threads at once; events of further threads are not recorded", NULL);
        }
        return NULL;
    }
    rheap__thread_t *t = NULL;
    for (rheap__thread_t *c = all_threads; c; c = c->next)
        if (c->status == T_FREE && c->map_size == size) {
            t = c;
            break;
        }
    if (!t) {
        void *mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (mem == MAP_FAILED)
            return NULL;
        t = mem;
        t->map_size = size;
        t->block_size = block;
        t->wmem = (char *)mem + l.writer;
        t->tab = (stack_slot_t *)((char *)mem + l.table);
        t->snap = (rheap__modsnap_t *)((char *)mem + l.snap);
        t->unw = (rheap__unwinder_t *)((char *)mem + l.unw);
        t->next = all_threads;
        /* Published with release: fork_prepare walks the list without the control lock. */
        __atomic_store_n(&all_threads, t, __ATOMIC_RELEASE);
    }
    t->status = T_LIVE;
    t->tid = (pid_t)syscall(SYS_gettid);
    t->w = NULL;
    set_gen(t, 0);
    t->rng = (uint32_t)t->tid * 2654435761u | 1u;
    rheap__unwinder_init(t->unw);
    n_active++;
    return t;
}

/* Gives a new thread file its staging area: the file extended to the area's size with its
 * blocks allocated (stores into a shared mapping of a hole would raise SIGBUS on a full disk),
 * then mapped shared. The blocks are allocated first, the area's header written next, and only
 * then is the file extended: a process that ends at any point of this (exit from another
 * thread) leaves an empty file or a header without records, which read as a file holding
 * nothing, never a zero-filled area. Returns 0, or -1 with errno. */
static int map_stage(rheap__thread_t *t, int fd) {
    size_t size = rip_stage_size(t->block_size);
    if (size > rip_file_size_limit()) {
        errno = EFBIG; /* rather than SIGXFSZ, which would kill the program */
        return -1;
    }
    uint8_t head[RIP_STAGE_HEADER_LEN];
    rip_stage_header(head, t->block_size);
    if (syscall(SYS_fallocate, fd, FALLOC_FL_KEEP_SIZE, (off_t)0, (off_t)size) != 0 &&
        errno != EOPNOTSUPP)
        return -1;
    /* A file system without fallocate gets a sparse area (where a full disk can still fault a
     * store; none of the usual ones lacks fallocate). */
    long n = syscall(SYS_pwrite64, fd, head, sizeof head, (off_t)0);
    if (n != (long)sizeof head) {
        if (n >= 0)
            errno = EIO; /* a short write of one small block: the disk is full */
        return -1;
    }
    if (syscall(SYS_ftruncate, fd, (off_t)size) != 0)
        return -1;
    void *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED)
        return -1;
    t->stage = m;
    t->stage_size = size;
    return 0;
}

/* Creates this thread's file in the current recording, t<tid>.rip, or t<tid>-N.rip when a
 * previous thread with the same tid already has one, or t<tid>-s<serial>.rip for a segment;
 * maps its staging area and starts its writer, which keeps a descriptor of its own, checked
 * before each write (rip_writer_detach). */
static int open_thread_file(rheap__thread_t *t, const rip_header_t *h) {
    /* Static, under the control lock: a thread's first event may come with little stack left. */
    static char path[PATH_MAX + 64];
    char num[24];
    size_t base = strlen(rheap__rec.path);
    if (base + 64 > sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    /* A segment is named by its serial, unique in the recording: t<tid>-s<serial>.rip. */
    unsigned last = h->segment >= 2 ? 2 : 1000;
    for (unsigned n = 1; n < last; n++) {
        memcpy(path, rheap__rec.path, base);
        path[base] = 0;
        strcat(path, "/t");
        strcat(path, rheap__utoa((uint64_t)t->tid, num));
        if (h->segment >= 2) {
            strcat(path, "-s");
            strcat(path, rheap__utoa(h->serial, num));
        } else if (n > 1) {
            strcat(path, "-");
            strcat(path, rheap__utoa(n, num));
        }
        strcat(path, ".rip");
        int fd = rheap__create_in_recording(path + base + 1, path);
        if (fd < 0 && errno == EEXIST && h->segment < 2)
            continue;
        if (fd < 0)
            return -1;
        if (map_stage(t, fd) != 0) {
            int err = errno;
            rheap__sys_close(fd);
            errno = err;
            return -1;
        }
        t->w = rip_writer_init_staged(t->wmem, t->block_size, fd, h, t->stage);
        rip_status_t st = rip_writer_detach(t->w, path);
        int err = errno;
        rheap__sys_close(fd);
        if (st != RIP_OK)
            drop_writer(t, 0);
        errno = err;
        return st == RIP_OK ? 0 : -1;
    }
    errno = EEXIST;
    return -1;
}

/* Whether the thread's file holds its segment size of blocks (the staging area in front of
 * them does not count: its size is fixed). Writer open, lock held. */
static inline int over_segment(const rheap__thread_t *t) {
    return rip_writer_file_size(t->w) >= t->stage_size + t->segment_bytes;
}

/* What a new file of the thread starts with (its first in a recording, or a segment): an
 * empty stack table (ids are per file), a module list before its first stack, the thread's
 * name, totals counted from zero; and the file written at once, so that a killed process
 * leaves a valid (if short) file, never an empty one. Thread lock held. */
static rip_status_t begin_file(rheap__thread_t *t) {
    clear_stacks(t);
    t->next_stack = 1;
    t->have_mods = 0;
    t->unload_gen = atomic_load(&rheap__unload_gen);
    t->name[0] = 0;
    atomic_store_explicit(&t->counts.allocs, 0, memory_order_relaxed);
    atomic_store_explicit(&t->counts.bytes, 0, memory_order_relaxed);
    atomic_store_explicit(&t->counts.frees, 0, memory_order_relaxed);
    rip_status_t st = update_name(t);
    return st == RIP_OK ? rip_writer_flush(t->w) : st;
}

/* Profile mode: the thread's file passed its segment size (rip-format/FORMAT.md section 3a):
 * the file is completed (its totals, a flush, its staging area given back) and never written
 * again, and the thread goes on in a new segment, t<tid>-s<serial>.rip. Called by the owner
 * after an event, from a wrapper, with no tracer lock held: it takes the control lock (the
 * serial and the file's name are the recording's), with signals blocked as attach does. The
 * old file is complete before the new one exists, so a reader that sees the new one may read
 * the old one to its end. A file that cannot be made turns recording off (one line). */
static void roll_segment(rheap__thread_t *t) {
    sigset_t old;
    int saved = errno, failed = 0, err = 0;
    rheap__sys_block_signals(&old);
    rheap__tl.internal++;
    rheap__ctl_lock();
    unsigned gen = atomic_load(&rheap__gen);
    t_lock(t);
    if ((atomic_load(&rheap__word) & RHEAP__ON) && t->w && atomic_load(&t->gen) == gen &&
        serial_gen == gen && t->segment_bytes && over_segment(t)) {
        rip_status_t st = drain_side(t);
        if (st == RIP_OK)
            st = update_name(t);
        if (st == RIP_OK)
            st = flush_file(t);
        if (st == RIP_OK) {
            drop_writer(t, 1);
            rip_header_t h = {0, RIP_FORMAT_MAJOR, RIP_FORMAT_MINOR, (uint32_t)getpid(),
                              (uint32_t)t->tid, rheap__rec.num, ++serial, rheap__rec.start_ns,
                              RHEAP__TIME_SHIFT, t->segment + 1, t->first_serial};
            if (open_thread_file(t, &h) != 0) {
                st = RIP_E_IO;
            } else {
                t->segment++;
                st = begin_file(t);
            }
        }
        if (st != RIP_OK) {
            failed = 1;
            err = errno;
            if (!t->w)
                set_gen(t, 0);
        }
    }
    t_unlock(t);
    rheap__ctl_unlock();
    rheap__tl.internal--;
    rheap__sys_restore_signals(&old);
    if (failed)
        rheap__fail("cannot start a thread file's next segment", err);
    errno = saved;
}

/* Slow path of self(): register the thread and/or open its file for the current
 * recording. Takes the control lock, so it is only called with no tracer lock held. */
static rheap__thread_t *attach_locked(rheap__thread_t *t) {
    int failed = 0, err = 0;
    if (rheap__foreign_process())
        return NULL; /* the control lock may be a copy of one held in another process */
    rheap__ctl_lock();
    if (!(atomic_load(&rheap__word) & RHEAP__ON)) {
        rheap__ctl_unlock();
        return NULL;
    }
    if (!t) {
        int over_limit;
        t = register_thread(&over_limit);
        if (!t) {
            err = errno;
            tl_refused_gen = atomic_load(&rheap__gen);
            atomic_fetch_add(&rheap__lost_events, 1);
            rheap__ctl_unlock();
            if (!over_limit)
                rheap__fail("cannot map a thread's buffer", err);
            return NULL;
        }
        tl_self = t;
        rheap__tl.counts = &t->counts;
        if (exit_key_ok)
            pthread_setspecific(exit_key, t);
    }
    unsigned gen = atomic_load(&rheap__gen);
    t_lock(t);
    if (atomic_load(&t->gen) != gen) {
        drop_writer(t, 0);
        if (serial_gen != gen) {
            serial_gen = gen;
            serial = 0;
        }
        rip_header_t h = {0, RIP_FORMAT_MAJOR, RIP_FORMAT_MINOR, (uint32_t)getpid(),
                          (uint32_t)t->tid, rheap__rec.num, ++serial, rheap__rec.start_ns,
                          RHEAP__TIME_SHIFT, 0, 0};
        if (open_thread_file(t, &h) != 0) {
            failed = 1;
            err = errno;
        } else {
            if (t->side_gen != gen) { /* a handler's events of an earlier recording */
                t->side_head = t->side_tail;
                t->side_lost = 0;
            }
            t->side_gen = 0; /* those of this one, left by a jump, go into the new file */
            t->last_t = 0;
            t->depth = rheap__rec.cfg.depth;
            t->profile = rheap__rec.cfg.profile;
            t->sample_ppm = t->profile ? 1000000 : rheap__rec.cfg.sample_ppm;
            t->segment_bytes = t->profile ? rheap__rec.cfg.segment_kb * 1024 : 0;
            t->segment = 1;
            t->first_serial = h.serial;
            t->start_ns = rheap__rec.start_ns;
            set_gen(t, gen);
            if (begin_file(t) != RIP_OK) {
                failed = 1;
                err = errno;
            }
        }
    }
    t_unlock(t);
    rheap__ctl_unlock();
    if (failed) {
        rheap__fail("cannot write a thread file", err);
        return NULL;
    }
    return t;
}

/* attach_locked with signals blocked (a handler's jump must not leave the control lock held)
 * and the tracer's own allocations passing through. */
static rheap__thread_t *attach(rheap__thread_t *t) {
    sigset_t old;
    int saved = errno;
    rheap__sys_block_signals(&old);
    errno = saved;
    rheap__tl.internal++; /* pthread_setspecific and the unwinder's set-up may allocate */
    t = attach_locked(t);
    rheap__tl.internal--;
    saved = errno;
    rheap__sys_restore_signals(&old);
    errno = saved;
    return t;
}

/* The calling thread's recorder, attached to the current recording (its file open), or NULL if
 * it cannot record (out of threads, failure, or recording just stopped). */
static inline rheap__thread_t *self(void) {
    rheap__thread_t *t = tl_self;
    if (RHEAP_UNLIKELY(!rheap__own_process()) && !rheap__own_check())
        return NULL; /* a copy made without fork handlers: its stores would land in the
                        parent's staging areas */
    if (RHEAP_LIKELY(attached(t)))
        return t;
    if (RHEAP_UNLIKELY(!t && tl_refused_gen == atomic_load(&rheap__gen))) {
        atomic_fetch_add_explicit(&rheap__lost_events, 1, memory_order_relaxed);
        return NULL;
    }
    return attach(t);
}

/* ---- Stacks ---- */

/* The id of a stack already defined in this file, or 0. Owner-only: no lock needed. Two
 * different stacks with the same 64-bit hash would share an id; at the rates here that is
 * about one chance in 10^9 per million distinct stacks. */
static uint64_t find_stack(rheap__thread_t *t, uint64_t h) {
    for (uint32_t i = (uint32_t)h & (TAB_SLOTS - 1);; i = (i + 1) & (TAB_SLOTS - 1)) {
        if (t->tab[i].hash == h)
            return t->tab[i].id;
        if (t->tab[i].hash == 0)
            return 0;
    }
}

static void add_stack(rheap__thread_t *t, uint64_t h, uint64_t id) {
    if (t->tab_used >= TAB_SLOTS / 4 * 3)
        clear_stacks(t);
    uint32_t i = (uint32_t)h & (TAB_SLOTS - 1);
    while (t->tab[i].hash != 0)
        i = (i + 1) & (TAB_SLOTS - 1);
    /* The id before the hash that finds it: a jump out of the event between the two stores
     * leaves a free slot, never a slot whose id is an older stack's. */
    t->tab[i].id = id;
    atomic_signal_fence(memory_order_seq_cst);
    t->tab[i].hash = h;
    t->tab_used++;
}

static inline int sampled(rheap__thread_t *t) {
    uint32_t ppm = t->sample_ppm;
    if (ppm >= 1000000)
        return 1;
    if (ppm == 0)
        return 0;
    t->rng ^= t->rng << 13;
    t->rng ^= t->rng >> 17;
    t->rng ^= t->rng << 5;
    return t->rng % 1000000u < ppm;
}

/* ---- Events ---- */

/* Per-thread event times must not decrease (the format stores deltas). Two reads of the clock
 * around the switch from clock_gettime to the TSC can differ by a few ns the wrong way. */
static inline uint64_t monotonic_time(rheap__thread_t *t, uint64_t t_now) {
    if (t_now < t->last_t)
        t_now = t->last_t;
    t->last_t = t_now;
    return t_now;
}


/* Writes a signal handler's event (side_ev_t), without a backtrace. Lock held. */
static rip_status_t write_side(rheap__thread_t *t, const side_ev_t *e) {
    uint64_t when = monotonic_time(t, since_start(t, e->t));
    if (!e->call)
        return rip_writer_free(t->w, when, e->p);
    return rip_writer_alloc(t->w, (rip_call_t)e->call, when, e->p, e->size, 0, e->align, e->old,
                            e->old ? when : 0);
}

/* Writes out the side area (lock held): the events of handlers that interrupted this thread
 * inside the writer, and the count of those it had no room for. */
static rip_status_t drain_side(rheap__thread_t *t) {
    rip_status_t st = RIP_OK;
    while (st == RIP_OK && t->side_head != t->side_tail) {
        /* A jump out of the write below: rheap__threads_recover tells from the writer's event
         * count whether the event was committed, so it is written once, never twice. */
        t->side_before = rip_writer_events(t->w);
        t->side_at = t->side_head;
        atomic_signal_fence(memory_order_seq_cst);
        t->side_writing = 1;
        atomic_signal_fence(memory_order_seq_cst);
        st = write_side(t, &t->side[t->side_head % SIDE_SLOTS]);
        t->side_head++;
        atomic_signal_fence(memory_order_seq_cst);
        t->side_writing = 0;
    }
    if (st == RIP_OK && t->side_lost) {
        st = rip_writer_lost(t->w, t->last_t, t->side_lost,
                             "signal handler events beyond the side area");
        t->side_lost = 0;
    }
    return st;
}

/* Before an event (lock held): the side area's events happened before this event began (a
 * handler that interrupted the end of the previous one), so they go first; the address of a
 * block a handler freed may come back from this very call. */
static inline rip_status_t drain_earlier(rheap__thread_t *t) {
    if (RHEAP_LIKELY(t->side_head == t->side_tail && !t->side_lost))
        return RIP_OK;
    return drain_side(t);
}

/* After an event: report a failure (outside the lock). Nothing needs writing through, not even
 * at exit or after the thread's exit: the event is in the staging area, which outlives the
 * process. */
static inline void finish_event_at(rheap__thread_t *t, rip_status_t st, int may_roll) {
    if (RHEAP_UNLIKELY(t->side_head != t->side_tail || t->side_lost) && st == RIP_OK)
        st = drain_side(t);
    /* Profile mode: after the thread's or the process's exit flush, the totals are staged again
     * with each event, so that the last ones stand. */
    if (RHEAP_UNLIKELY(t->profile) && st == RIP_OK &&
        (t->status == T_RETIRED ||
         (atomic_load_explicit(&rheap__word, memory_order_relaxed) & RHEAP__EXITING)))
        st = stage_totals(t);
    int err = errno;
    int roll = RHEAP_UNLIKELY(t->segment_bytes != 0) && may_roll && st == RIP_OK &&
               over_segment(t);
    t_unlock(t);
    if (st != RIP_OK)
        rheap__fail("cannot write a thread file", err);
    else if (RHEAP_UNLIKELY(roll))
        roll_segment(t);
}

/* The end of an event of the thread's own: its file may roll into a new segment then. A signal
 * handler's event never rolls (the control lock may be held by the code it interrupted). */
static inline void finish_event(rheap__thread_t *t, rip_status_t st) {
    finish_event_at(t, st, 1);
}

/* A pool event's op, pool and name (rheap_pool.h); an allocation's pool is NULL. */
typedef struct {
    rip_pool_op_t op;
    uint64_t pool;
    const char *name;
} pool_ev_t;

/* A map event's op and, for a remap, the range it came from (rheap__record_map). */
typedef struct {
    rip_map_op_t op;
    uintptr_t old;
    uint64_t old_len;
} map_ev_t;

/* Takes the sample of resident memory if this event, stamped t_now (absolute), is the one due
 * to (rss.c): before the thread's lock, since reading /proc is a few system calls. */
static inline int take_rss(rheap__thread_t *t, uint64_t t_now, rheap__rss_t *out) {
    return RHEAP_UNLIKELY(rheap__rss_due(t_now)) && rheap__rss_claim(t_now) &&
           rheap__rss_read(out, t->rss_buf, sizeof t->rss_buf) == 0;
}

static inline rip_status_t write_rss(rheap__thread_t *t, uint64_t t_rel, const rheap__rss_t *r) {
    return rip_writer_rss(t->w, t_rel, r->rss, r->anon, r->file, r->swap);
}

/* An allocation (pool and map NULL) or a pool's allocation with its backtrace, or another pool
 * event (written without one), or a map event (a map or remap with its backtrace). */
static inline __attribute__((always_inline)) void
record_event(rip_call_t call, void *p, uint64_t size, uint64_t align, void *old, uint64_t old_t,
             uint64_t t_now, const rheap__frame_t *from, const pool_ev_t *pool,
             const map_ev_t *map) {
    rheap__thread_t *t = self();
    if (!t)
        return;
    rheap__rss_t rss;
    int has_rss = take_rss(t, t_now, &rss);
    unsigned depth = t->depth, n = 0;
    uint64_t *ips = t->ips;
    uint64_t stack = 0, h = 0;
    int snapshot = 0;
    unsigned long long adds = 0, subs = 0;
    if ((!pool || pool->op == RIP_POOL_ALLOC) && (!map || map->op != RIP_MAP_UNMAP) &&
        sampled(t)) {
        /* After an unload, another object may sit at the same addresses: the same return
         * addresses are then another stack, defined anew after a new module snapshot. */
        unsigned unload_gen = atomic_load_explicit(&rheap__unload_gen, memory_order_relaxed);
        if (RHEAP_UNLIKELY(unload_gen != t->unload_gen)) {
            t->unload_gen = unload_gen;
            clear_stacks(t);
            t->have_mods = 0;
        }
        loader_enter(t);
        n = rheap__unwind(t->unw, from, ips, depth, &h);
        if (n) {
            stack = find_stack(t, h);
            if (!stack) {
                rheap__modules_counters(&adds, &subs);
                rheap__unwinder_unloaded(t->unw, subs);
                if (t->have_mods && subs != t->mod_subs)
                    clear_stacks(t); /* an unload that bypassed dlclose (glibc's own) */
                if (!t->have_mods || adds != t->mod_adds || subs != t->mod_subs)
                    snapshot = rheap__modsnap_take(t->snap) == 0;
            }
        }
        loader_leave(t);
    }
    t_lock(t);
    if (!t->w || atomic_load(&t->gen) != atomic_load(&rheap__gen)) {
        t_unlock(t); /* the recording ended while this event was on its way */
        return;
    }
    rip_status_t st = drain_earlier(t);
    t_now = monotonic_time(t, since_start(t, t_now));
    old_t = since_start(t, old_t);
    if (old && old_t > t_now)
        old_t = t_now;
    if (snapshot && st == RIP_OK) {
        st = rheap__modsnap_write(t->snap, t->w, t_now);
        t->have_mods = 1;
        t->mod_adds = adds;
        t->mod_subs = subs;
    }
    if (n && !stack && st == RIP_OK) {
        stack = t->next_stack++;
        st = rip_writer_stack(t->w, stack, ips, n);
        add_stack(t, h, stack);
    }
    if (st == RIP_OK && pool)
        st = rip_writer_pool(t->w, pool->op, t_now, pool->pool, (uintptr_t)p, size, stack,
                             pool->name);
    else if (st == RIP_OK && map)
        st = rip_writer_map(t->w, map->op, t_now, (uintptr_t)p, size, stack, map->old,
                            map->old_len);
    else if (st == RIP_OK)
        st = rip_writer_alloc(t->w, call, t_now, (uintptr_t)p, size, stack, align, (uintptr_t)old,
                              old ? old_t : 0);
    if (st == RIP_OK && has_rss)
        st = write_rss(t, t_now, &rss);
    finish_event(t, st);
}

void rheap__record_alloc(rip_call_t call, void *p, uint64_t size, uint64_t align, void *old,
                         uint64_t old_t, uint64_t t_now, const rheap__frame_t *from) {
    record_event(call, p, size, align, old, old_t, t_now, from, NULL, NULL);
}

void rheap__record_map(int op, uintptr_t addr, uint64_t len, uintptr_t old, uint64_t old_len,
                       uint64_t t_now, const rheap__frame_t *from) {
    map_ev_t ev = {(rip_map_op_t)op, old, old_len};
    record_event(RIP_CALL_MMAP, (void *)addr, len, 0, NULL, 0, t_now, from, NULL, &ev);
}

void rheap__record_pool(int op, uint64_t pool, const void *p, uint64_t size, const char *name,
                        const rheap__frame_t *from) {
    /* The name is copied here, off the program's memory, as rheap_mark's label is. */
    char text[256];
    size_t n = name ? strnlen(name, sizeof text - 1) : 0;
    if (n)
        memcpy(text, name, n);
    text[n] = 0;
    pool_ev_t ev = {(rip_pool_op_t)op, pool, text};
    record_event(RIP_CALL_POOL_ALLOC, (void *)p, size, 0, NULL, 0, rheap__now_abs(), from, &ev,
                 NULL);
}

void rheap__record_free(void *p, uint64_t t_now) {
    rheap__thread_t *t = self();
    if (!t)
        return;
    rheap__rss_t rss;
    int has_rss = take_rss(t, t_now, &rss);
    t_lock(t);
    if (!t->w || atomic_load(&t->gen) != atomic_load(&rheap__gen)) {
        t_unlock(t);
        return;
    }
    rip_status_t st = drain_earlier(t);
    t_now = monotonic_time(t, since_start(t, t_now));
    if (st == RIP_OK)
        st = rip_writer_free(t->w, t_now, (uintptr_t)p);
    if (st == RIP_OK && has_rss)
        st = write_rss(t, t_now, &rss);
    finish_event(t, st);
}

void rheap__record_nested(int call, void *p, uint64_t size, uint64_t align, void *old,
                          uint64_t t_now) {
    rheap__thread_t *t = tl_self;
    if (!rheap__own_process())
        return; /* a copy made without fork handlers (self()); not checked from a handler */
    if (!attached(t)) {
        if (!t && tl_refused_gen == atomic_load(&rheap__gen))
            atomic_fetch_add_explicit(&rheap__lost_events, 1, memory_order_relaxed);
        return;
    }
    side_ev_t e = {call, (uintptr_t)p, size, align, (uintptr_t)old, t_now};
    if (atomic_load_explicit(&t->busy, memory_order_relaxed)) {
        /* Only the owner raises busy: the interrupted wrapper is inside the writer, and will
         * write the side area before it leaves. */
        uint32_t tail = t->side_tail;
        if (tail - t->side_head >= SIDE_SLOTS) {
            t->side_lost++;
            return;
        }
        t->side[tail % SIDE_SLOTS] = e;
        atomic_signal_fence(memory_order_release);
        t->side_tail = tail + 1;
        return;
    }
    /* The interrupted wrapper is outside the writer (in the real allocator, or unwinding: the
     * backtrace buffers are its own, so this event has none): write it now. */
    t_lock(t);
    if (!t->w || atomic_load(&t->gen) != atomic_load(&rheap__gen)) {
        t_unlock(t);
        return;
    }
    rip_status_t st = drain_earlier(t);
    finish_event_at(t, st == RIP_OK ? write_side(t, &e) : st, 0);
}

void rheap__threads_recover(void) {
    rheap__thread_t *t = tl_self;
    if (!t)
        return;
    atomic_store(&t->in_loader, 0);
    atomic_store(&t->in_realloc, 0);
    if (t->unw)
        rheap__unwinder_interrupted(t->unw);
    if (!atomic_load(&t->busy))
        return;
    /* Left in the middle of an event: the writer goes back to its last committed record (the
     * abandoned one, half written, is dropped) and the file goes on. The side area holds
     * complete events of handlers that interrupted the abandoned one (the handler that jumped
     * among them): the next event writes them first, so the jump loses none. */
    if (t->w) {
        rip_writer_rollback(t->w);
        if (t->side_writing && rip_writer_events(t->w) > t->side_before &&
            t->side_head == t->side_at)
            t->side_head++; /* committed before the jump: the head event is in the file */
        t->side_writing = 0;
        atomic_store_explicit(&t->busy, 0, memory_order_release);
        return;
    }
    /* Left while the writer was being dropped: the next event opens a new file, and the side
     * area's events go there if it is in the same recording. */
    t->side_gen = atomic_load(&t->gen);
    atomic_store(&t->gen, 0);
    atomic_store_explicit(&t->busy, 0, memory_order_release);
}

rheap__counts_t *rheap__counts_attach(void) {
    int saved = errno; /* attaching makes system calls */
    rheap__thread_t *t = self();
    errno = saved;
    return t ? &t->counts : NULL;
}

int rheap__record_mark(const char *label) {
    rheap__thread_t *t = self();
    if (!t)
        return -1;
    t_lock(t);
    if (!t->w || atomic_load(&t->gen) != atomic_load(&rheap__gen)) {
        t_unlock(t);
        return -1;
    }
    char text[256];
    size_t n = strnlen(label, sizeof text - 1);
    memcpy(text, label, n);
    text[n] = 0;
    finish_event(t, rip_writer_mark(t->w, since_start(t, rheap__now_abs()), text));
    return 0;
}

/* ---- Whole-process operations (control lock held) ---- */

/* Whether t is the calling thread's recorder, held by the calling thread itself: exit() from a
 * signal handler that interrupted it inside an event. It cannot be waited for; its records up to
 * the interrupted one are in its staging area. */
static int held_by_me(rheap__thread_t *t) {
    return t == tl_self && atomic_load_explicit(&t->busy, memory_order_relaxed);
}

void rheap__threads_flush_all(int how) {
    int close_files = how == RHEAP__FLUSH_CLOSE;
    unsigned gen = atomic_load(&rheap__gen);
    int failed = 0, err = 0;
    for (rheap__thread_t *t = all_threads; t; t = t->next)
        if (t->status != T_FREE && !held_by_me(t))
            atomic_store(&t->claim, 1);
    claim_barrier();
    unsigned left_inside = 0;
    for (rheap__thread_t *t = all_threads; t; t = t->next) {
        if (t->status == T_FREE || held_by_me(t))
            continue;
        if (claim_wait(t) != 0) {
            left_inside++;
            claim_release(t);
            continue;
        }
        if (t->w && atomic_load(&t->gen) == gen) {
            rip_status_t st = drain_side(t);
            if (st == RIP_OK && close_files)
                st = update_name(t);
            if (st == RIP_OK)
                st = flush_file(t);
            if (st != RIP_OK && !failed) {
                failed = 1;
                err = errno;
            }
            if (close_files) {
                drop_writer(t, st == RIP_OK);
                set_gen(t, 0);
            } else if (how == RHEAP__FLUSH_EXIT && st == RIP_OK) {
                /* The area's records are all in blocks: its space is given back until the
                 * thread's next record (an atexit handler, a destructor) takes it again. */
                rip_writer_give_back(t->w);
            }
        }
        claim_release(t);
    }
    if (left_inside)
        say_left_inside(left_inside);
    if (failed)
        rheap__report_failure("cannot write a thread file", err);
}

void rheap__threads_lock_all(void) {
    for (rheap__thread_t *t = all_threads; t; t = t->next)
        atomic_store(&t->claim, 1);
    claim_barrier();
    /* A thread left inside an event is not waited for: the fork child drops every other
     * thread's writer without writing, and this thread's stays as the jump left it. */
    for (rheap__thread_t *t = all_threads; t; t = t->next)
        (void)claim_wait(t);
}

void rheap__threads_unlock_all(void) {
    for (rheap__thread_t *t = all_threads; t; t = t->next)
        claim_release(t);
}

/* In a forked child only the forking thread exists. The other recorders' buffers hold the
 * parent's events, which the parent writes itself: drop them, close the inherited files, and
 * free the mappings for reuse. */
void rheap__threads_after_fork_child(void) {
    n_active = 0;
    for (rheap__thread_t *t = all_threads; t; t = t->next) {
        drop_writer(t, 0);
        set_gen(t, 0);
        if (t == tl_self) {
            t->tid = (pid_t)syscall(SYS_gettid);
            t->status = T_LIVE;
            n_active++;
        } else {
            t->status = T_FREE;
        }
        atomic_store(&t->busy, 0);
        atomic_store(&t->claim, 0);
        atomic_store(&t->in_loader, 0);
        atomic_store(&t->in_realloc, 0);
    }
    atomic_store(&fork_pending, 0);
    rheap__threads_init_barrier();
}
