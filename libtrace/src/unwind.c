/*
 * unwind.c: backtraces: the thread's stack bounds, the per-thread rule cache, the walk, and
 * libunwind for the stacks the rules cannot walk.
 *
 * Frame pointers are no option (Debian's libraries are built without them), so frames are
 * walked with the DWARF call-frame information every x86-64 object carries in .eh_frame. A
 * full CFI interpreter per frame is slow, and libunwind's fast path (unw_backtrace) still pays
 * about 60 ns per call to set up its cursor. Here, instead, each return address is looked up
 * once in the object's .eh_frame_hdr, its CFI program is run once, and the result is reduced to
 * a rule of four numbers (all of that is cfi.c's, a decoder with no state of its own) kept in a
 * per-thread cache:
 *
 *   CFA = rsp + k | rbp + k | *(rbp + k)       (the caller's stack pointer)
 *   return address at CFA - 8
 *   caller's rbp = unchanged | *(CFA + k) | *(rbp + k)
 *
 * That is all gcc and clang emit outside of signal frames and hand-written assembly. A walk is
 * then a hash probe and two or three loads per frame. Every load is checked to lie within the
 * thread's stack, between the walk's first frame and the stack's top, so a stale or wrong rule
 * yields a wrong frame, never a fault. And most walks repeat much of the one before: the outer
 * frames of an allocation's stack are those of the previous allocation. The previous walk's
 * frames are kept as a chain, with the stack slots each step read; a walk that reaches one of
 * its frames (the same return address at the same stack address) with the same registers
 * checks those slots, one load and compare per frame, and takes the rest of the frames, and
 * their hash, from the chain (see chain_t). Frames the rules cannot express (signal trampolines,
 * unusual CFI, code outside any loaded object, a stack that is not the thread's own such as a
 * coroutine's or a signal stack) send the whole backtrace to libunwind's unw_backtrace, so the
 * result is the same as libunwind's everywhere.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <libunwind.h>

#include "cfi.h"
#include "internal.h"

/* librheap's own code: leading frames in this range are the tracer's and are dropped. */
static uintptr_t self_lo, self_hi;

static int find_self(struct dl_phdr_info *info, size_t size, void *arg) {
    (void)size;
    uintptr_t probe = (uintptr_t)arg;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    int mine = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        uintptr_t start = info->dlpi_addr + ph->p_vaddr, end = start + ph->p_memsz;
        if (start < lo)
            lo = start;
        if (end > hi)
            hi = end;
        if (probe >= start && probe < end)
            mine = 1;
    }
    if (!mine)
        return 0;
    self_lo = lo;
    self_hi = hi;
    return 1;
}

/* RHEAP_CHECK_UNWIND=1: every walk by the rules is repeated with libunwind and compared; the
 * counts are printed at exit. A self-test for the tests, not for production use. */
static int check;
static _Atomic uint64_t n_rules, n_slow, n_mismatch;

void rheap__unwind_init(void) {
    static _Atomic int done;
    if (atomic_load(&done))
        return;
    dl_iterate_phdr(find_self, (void *)(uintptr_t)&rheap__unwind_init);
    const char *v = getenv("RHEAP_CHECK_UNWIND");
    check = v && strcmp(v, "1") == 0;
    atomic_store(&done, 1);
}

__attribute__((destructor)) static void report_check(void) {
    if (!check)
        return;
    char a[24], b[24], c[24];
    rheap__log("unwind check: ", rheap__utoa(atomic_load(&n_rules), a), " by rules, ",
               rheap__utoa(atomic_load(&n_slow), b), " by libunwind, ",
               rheap__utoa(atomic_load(&n_mismatch), c), " mismatches", NULL);
}

/* ---- Rules ---- */

/* A rule (cfi.h) and the return address it is for; kind 0 is an empty entry. The fields are
 * rheap__cfi_rule_t's, flat, so the walk reads them at fixed offsets from the entry. */
typedef struct {
    uintptr_t ip;     /* the return address the rule is for */
    int32_t cfa_off;
    int16_t bp_off;
    uint8_t kind, bp; /* plain bytes: no bit-field masking in the walk */
} rule_t;

/* One word of the stack a step read, and what it held. */
typedef struct {
    uintptr_t addr, val;
} slot_t;

/* The previous walk's chain of frames, by frame number i: the registers each frame was
 * stepped from (state i; state n is the one after the last step) and, for frames i..n-1, the
 * slots their steps read whose values the rest of the walk depends on (return addresses, a
 * saved rbp that a later rule reads, a realigned frame's CFA). A walk that reaches a frame with
 * the ip and sp of state i (and its rbp, if frames i.. read it), and finds each of those slots
 * still holding its value, would step through exactly the same frames: it takes them from here
 * after one load and compare per slot, whatever its own frame number there, as long as they
 * fit in its limit. */
typedef struct {
    unsigned n;                       /* frames held, 0: none */
    unsigned max;                     /* the limit of the walk that made them */
    int ended;                        /* that walk reached the outermost frame */
    uintptr_t ip[RIP_MAX_DEPTH + 1];  /* [n]: the return address the last step loaded */
    uintptr_t sp[RIP_MAX_DEPTH + 1];
    uintptr_t bp[RIP_MAX_DEPTH + 1];
    uint64_t sum[RIP_MAX_DEPTH + 1];  /* the hash terms of frames i..n-1, added */
    uintptr_t low[RIP_MAX_DEPTH + 1]; /* the lowest address the steps of frames i.. read */
    uint16_t end[RIP_MAX_DEPTH + 1];  /* their slots: slot[0 .. end[i]), outermost first */
    uint8_t need_bp[RIP_MAX_DEPTH + 1]; /* whether frames i.. read the rbp of state i */
    slot_t slot[3 * RIP_MAX_DEPTH];
} chain_t;

#define RULES (1u << 12)
/* Frames of the tracer itself that a walk may meet before the program's: an exported function,
 * its helpers, the recorder and the unwinder. */
#define OWN 8

struct rheap__unwinder {
    uintptr_t stack_lo, stack_hi; /* mapped memory the walk may read; 0, 0: none */
    int main_thread;              /* on the process's [stack], which grows: see main_stack */
    unsigned refreshes;           /* main_stack calls left after registration */
    unsigned unload_gen;          /* rheap__unload_gen when the rules were last checked */
    unsigned long long subs;      /* dlpi_subs when the rules were last checked */
    rule_t rule[RULES];           /* by a hash of the return address */
    rule_t last[RIP_MAX_DEPTH];   /* by frame number: the rules of the previous walk */
    uint64_t term[RIP_MAX_DEPTH]; /* and each frame's term of the stack hash (see term()) */
    /* Buffers of the libunwind walk and of RHEAP_CHECK_UNWIND's comparison, here rather than on
     * a stack that may be small (a thread's, a signal handler's). */
    void *slow[RIP_MAX_DEPTH + OWN];
    uint64_t ref[RIP_MAX_DEPTH];
    /* main_stack's read buffer: it runs when the main thread's stack has just grown, where
     * the program may have little room left below. */
    char maps[4096];
    /* make_rule's object and the decoder's working memory: a new return address is met inside
     * the program's allocation, wherever its stack ends. */
    struct dl_find_object found;
    rheap__cfi_work_t cfi;
    /* Last, and not cleared at a thread's registration beyond chain.n (nothing else of them is
     * read before it is written): a thread keeps resident only the frames it walks. */
    chain_t chain;                /* the previous walk's frames and the slots they read */
    uintptr_t wsp[RIP_MAX_DEPTH], wbp[RIP_MAX_DEPTH]; /* the states of this walk's steps */
};

size_t rheap__unwinder_size(void) {
    return sizeof(rheap__unwinder_t);
}

/* The main thread's stack is the [stack] mapping, which the kernel extends downwards as it is
 * used; pthread_getattr_np describes it by the stack size limit instead, a range that may hold
 * unmapped holes (with an unlimited limit, most of the address space). So its bounds are read
 * from /proc/self/maps: the [stack] mapping, if it contains `sp`. Raw system calls, no malloc. */
static int main_stack(rheap__unwinder_t *u, uintptr_t sp) {
    int fd = rheap__sys_open("/proc/self/maps", O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0)
        return 0;
    char *buf = u->maps;
    const size_t cap = sizeof u->maps;
    size_t have = 0;
    int found = 0;
    for (;;) {
        long n = rheap__sys_read(fd, buf + have, cap - 1 - have);
        if (n <= 0)
            break;
        have += (size_t)n;
        buf[have] = 0;
        char *line = buf, *nl;
        while ((nl = strchr(line, '\n'))) {
            *nl = 0;
            char *end;
            uintptr_t lo = (uintptr_t)strtoull(line, &end, 16);
            uintptr_t hi = *end == '-' ? (uintptr_t)strtoull(end + 1, NULL, 16) : 0;
            size_t len = (size_t)(nl - line);
            if (sp >= lo && sp < hi && len >= 7 && memcmp(nl - 7, "[stack]", 7) == 0) {
                u->stack_lo = lo;
                u->stack_hi = hi;
                found = 1;
            }
            line = nl + 1;
        }
        have = (size_t)(buf + have - line);
        memmove(buf, line, have);
        if (have == cap - 1)
            have = 0; /* a line longer than the buffer: not one we need */
    }
    rheap__sys_close(fd);
    return found;
}

void rheap__unwinder_init(rheap__unwinder_t *u) {
    int saved = errno;
    memset(u, 0, offsetof(rheap__unwinder_t, chain));
    u->chain.n = 0;
    u->unload_gen = atomic_load(&rheap__unload_gen);
    if (getpid() == (pid_t)syscall(SYS_gettid)) {
        u->main_thread = 1;
        u->refreshes = 64;
        main_stack(u, (uintptr_t)__builtin_frame_address(0));
    } else {
        pthread_attr_t a;
        if (pthread_getattr_np(pthread_self(), &a) == 0) {
            void *addr;
            size_t size;
            if (pthread_attr_getstack(&a, &addr, &size) == 0) {
                u->stack_lo = (uintptr_t)addr;
                u->stack_hi = (uintptr_t)addr + size;
            }
            pthread_attr_destroy(&a);
        }
    }
    errno = saved;
}

/* Drops the cached rules: code was unloaded, its addresses may now hold other code. */
static void forget(rheap__unwinder_t *u) {
    memset(u->rule, 0, sizeof u->rule);
    memset(u->last, 0, sizeof u->last);
    u->chain.n = 0;
}

void rheap__unwinder_interrupted(rheap__unwinder_t *u) {
    u->chain.n = 0;
}

void rheap__unwinder_unloaded(rheap__unwinder_t *u, unsigned long long subs) {
    if (subs != u->subs) {
        forget(u);
        u->subs = subs;
    }
}

/* A walk that starts outside the known bounds: on the main thread the stack may have grown
 * since they were read (a few times in a process's life; a program that keeps allocating from
 * elsewhere, like a coroutine on the heap, stops asking after 64 tries). */
static int in_stack(rheap__unwinder_t *u, uintptr_t fp) {
    if (fp >= u->stack_lo && fp < u->stack_hi)
        return 1;
    if (!u->main_thread || !u->refreshes)
        return 0;
    u->refreshes--;
    u->chain.n = 0; /* its slots were checked against the old bounds */
    int saved = errno;
    int ok = main_stack(u, fp) && fp >= u->stack_lo && fp < u->stack_hi;
    errno = saved;
    return ok;
}

/* Finds the rule for the return address `ra` (the call is at ra - 1) in the CFI of the object
 * that holds it (cfi.c); every byte the decoder reads lies within that object's mapping. */
static __attribute__((noinline)) rule_t make_rule(rheap__unwinder_t *u, uintptr_t ra) {
    rule_t r = {ra, 0, 0, RHEAP__CFI_SLOW, RHEAP__BP_SAME};
    uintptr_t pc = ra - 1;
    struct dl_find_object *fo = &u->found;
    if (_dl_find_object((void *)pc, fo) != 0 || !fo->dlfo_eh_frame)
        return r;
    rheap__cfi_rule_t c =
        rheap__cfi_rule((const uint8_t *)fo->dlfo_map_start, (const uint8_t *)fo->dlfo_map_end,
                        (const uint8_t *)fo->dlfo_eh_frame, pc, &u->cfi);
    r.cfa_off = c.cfa_off;
    r.bp_off = c.bp_off;
    r.kind = c.kind;
    r.bp = c.bp;
    return r;
}

/* ---- Walking ---- */

/* Stack that libunwind may need below its caller: about 5 KiB measured on x86-64 (8 KiB on a
 * process's first call), with room to spare. */
#define SLOW_HEADROOM (12u << 10)

/* Whether libunwind fits below the caller. On a thread's own stack with less than SLOW_HEADROOM
 * left (a small thread stack, a signal handler deep in one) it does not, and the event goes
 * without a backtrace rather than overflowing the stack. The main thread's bounds are those of
 * its mapping so far, which grows on demand: the check does not apply to it. */
static inline int slow_fits(const rheap__unwinder_t *u) {
    uintptr_t here = (uintptr_t)__builtin_frame_address(0);
    return u->main_thread || here < u->stack_lo || here >= u->stack_hi ||
           here - u->stack_lo >= SLOW_HEADROOM;
}

static unsigned unwind_slow(rheap__unwinder_t *u, uint64_t *ips, unsigned max) {
    void **buf = u->slow;
    rheap__tl.internal++; /* libunwind allocates its caches */
    int n = unw_backtrace(buf, (int)(max + OWN));
    rheap__tl.internal--;
    if (n <= 0)
        return 0;
    int skip = 0;
    while (skip < n && (uintptr_t)buf[skip] >= self_lo && (uintptr_t)buf[skip] < self_hi)
        skip++;
    unsigned out = 0;
    for (int i = skip; i < n && out < max; i++)
        ips[out++] = (uint64_t)(uintptr_t)buf[i];
    return out;
}

static char *hex(uint64_t v, char *buf) {
    char *p = buf + 19;
    *p = 0;
    do {
        *--p = "0123456789abcdef"[v & 15];
        v >>= 4;
    } while (v);
    *--p = 'x';
    *--p = '0';
    return p;
}

/* The stack hash: the sum of one well-mixed term per frame, of its address and position (the
 * same frames in another order hash differently), then mixed again with the depth. Two
 * different stacks share a hash about once in 2^64 pairs. A term depends on nothing but its
 * frame, so a walk reuses the terms of frames that the previous walk had at the same position
 * and hashes only the frames that changed; and terms are independent, so they are computed in
 * parallel rather than as one chain of dependent multiplies. */
static inline uint64_t mix(uint64_t x) {
    x ^= x >> 31;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 29;
    return x;
}

static inline uint64_t term(uintptr_t ip, unsigned i) {
    return mix(ip + (uint64_t)i * 0xC2B2AE3D27D4EB4Full);
}

static inline uint64_t stack_hash(uint64_t sum, unsigned n) {
    uint64_t h = mix(0x9E3779B97F4A7C15ull * n + sum) * 0xc4ceb9fe1a85ec53ull;
    return h ? h : 1;
}

/* RHEAP_CHECK_UNWIND: the same walk by libunwind, and the sum of the hash terms made again
 * from the frames; the first few differences are printed. */
static __attribute__((noinline)) void compare(rheap__unwinder_t *u, const uint64_t *ips,
                                             unsigned n, unsigned max, uint64_t sum) {
    if (!slow_fits(u))
        return;
    uint64_t *ref = u->ref;
    unsigned m = unwind_slow(u, ref, max);
    atomic_fetch_add(&n_rules, 1);
    unsigned i = 0;
    while (i < n && i < m && ips[i] == ref[i])
        i++;
    uint64_t want = 0;
    for (unsigned k = 0; k < n; k++)
        want += term(ips[k], k);
    if (want != sum) {
        if (atomic_fetch_add(&n_mismatch, 1) < 5)
            rheap__log("unwind check: the hash terms of a walk do not add up", NULL);
        return;
    }
    if (i == n && n == m)
        return;
    if (atomic_fetch_add(&n_mismatch, 1) < 5) {
        char a[24], b[24], c[24], d[24], e[24];
        rheap__log("unwind check: frame ", rheap__utoa(i, a), ": rules ",
                   hex(i < n ? ips[i] : 0, b), ", libunwind ", hex(i < m ? ref[i] : 0, c),
                   " (", rheap__utoa(n, d), " and ", rheap__utoa(m, e), " frames)", NULL);
    }
}

/* The rule for ip from the table, made on a miss. */
static __attribute__((noinline)) const rule_t *table_rule(rheap__unwinder_t *u, uintptr_t ip) {
    rule_t *r = &u->rule[(ip * 0x9E3779B97F4A7C15ull) >> (64 - 12)];
    if (RHEAP_UNLIKELY(r->ip != ip))
        *r = make_rule(u, ip);
    return r;
}

/* Frame number i has a return address the previous walk did not have there: its rule from the
 * table becomes the guess for the next walk. Out of line, so that the walk's loop keeps its
 * values in registers. */
static __attribute__((noinline)) const rule_t *other_rule(rheap__unwinder_t *u, unsigned i,
                                                           uintptr_t ip) {
    const rule_t *r = table_rule(u, ip);
    u->last[i] = *r;
    u->term[i] = term(ip, i);
    return r;
}

/* The rule for frame number i, return address ip, and adds the frame's term to *sum. Most
 * allocations come from call paths seen just before, so the previous walk's rule for the same
 * frame number is tried first: that guess does not depend on the value just loaded from the
 * stack, so the processor follows it ahead of the loads instead of waiting for each return
 * address to hash it. */
static inline const rule_t *find_rule(rheap__unwinder_t *u, unsigned i, uintptr_t ip,
                                      uint64_t *sum) {
    if (RHEAP_LIKELY(u->last[i].ip == ip)) { /* ip is never 0, an empty entry's */
        *sum += u->term[i];
        return &u->last[i];
    }
    const rule_t *r = other_rule(u, i, ip);
    *sum += u->term[i];
    return r;
}

/* The whole walk by libunwind, for stacks the rules cannot walk; none when libunwind would not
 * fit on the stack (see slow_fits). */
static __attribute__((noinline)) unsigned walk_slow(rheap__unwinder_t *u, uint64_t *ips,
                                                    unsigned max, uint64_t *hash) {
    if (!slow_fits(u)) {
        *hash = 0;
        return 0;
    }
    if (RHEAP_UNLIKELY(check))
        atomic_fetch_add(&n_slow, 1);
    unsigned n = unwind_slow(u, ips, max);
    uint64_t sum = 0;
    for (unsigned i = 0; i < n; i++)
        sum += term(ips[i], i);
    *hash = stack_hash(sum, n);
    return n;
}

/* Reads the word at `a` if it lies within [lo, lo + span + 8): one comparison, unsigned. */
#define LOAD(a, out)                                                                               \
    do {                                                                                           \
        uintptr_t a_ = (a);                                                                        \
        if (RHEAP_UNLIKELY(a_ - lo > span))                                                        \
            return STEP_SLOW;                                                                      \
        memcpy(&(out), (const void *)a_, 8);                                                       \
    } while (0)

enum { STEP_SLOW = -1, STEP_END, STEP_ON };

/* Moves *ip, *sp, *bp one frame outwards by rule r. STEP_ON: done; STEP_END: this was the
 * outermost frame; STEP_SLOW: the rules cannot go on. */
__attribute__((always_inline, no_sanitize_address)) static inline int
step(const rule_t *r, uintptr_t *ip, uintptr_t *sp, uintptr_t *bp, uintptr_t lo,
     uintptr_t span) {
    uintptr_t cfa, next;
    if (RHEAP_LIKELY(r->kind == RHEAP__CFA_RSP))
        cfa = *sp + r->cfa_off;
    else if (r->kind == RHEAP__CFA_RBP)
        cfa = *bp + r->cfa_off;
    else if (r->kind == RHEAP__CFA_DEREF_RBP)
        LOAD(*bp + r->cfa_off, cfa);
    else
        return r->kind == RHEAP__CFI_END ? STEP_END : STEP_SLOW;
    if (RHEAP_UNLIKELY(cfa <= *sp))
        return STEP_SLOW;
    LOAD(cfa - 8, next);
    if (r->bp == RHEAP__BP_AT_CFA)
        LOAD(cfa + r->bp_off, *bp);
    else if (r->bp == RHEAP__BP_AT_RBP)
        LOAD(*bp + r->bp_off, *bp);
    *sp = cfa;
    *ip = next;
    return next ? STEP_ON : STEP_END;
}

/* ---- The chain ---- */

/* Whether the chain holds the rest of a walk that is at its frame n with limit max, rbp bp and
 * bounds [lo, the stack's top), and with the ip and sp of the chain's frame i (the caller
 * checked). */
__attribute__((always_inline, no_sanitize_address)) static inline int
chain_holds(const chain_t *c, unsigned i, unsigned n, uintptr_t bp, uintptr_t lo, unsigned max) {
    /* Frames i.. are all the walk can have if they reach the outermost frame within its
     * limit, or if they stopped at the same limit at the same frame number. */
    if (!(c->ended && n + c->n - i <= max) && !(i == n && c->max == max))
        return 0;
    if (c->low[i] < lo || (c->need_bp[i] && bp != c->bp[i]))
        return 0;
    for (unsigned k = 0, e = c->end[i]; k < e; k++) {
        uintptr_t v;
        memcpy(&v, (const void *)c->slot[k].addr, 8);
        if (v != c->slot[k].val)
            return 0;
    }
    return 1;
}

/* Frames 0..e-1 of the chain, from the walk that has just stepped them (their states are in
 * u->wsp and u->wbp, their rules in u->last, their terms in u->term); frames e.. are held. Each
 * frame keeps the slots the rest of the walk depends on, as step() reads them. */
static __attribute__((noinline)) void chain_keep(rheap__unwinder_t *u, const uint64_t *ips,
                                                 unsigned e) {
    chain_t *c = &u->chain;
    for (unsigned i = e; i-- > 0;) {
        const rule_t *r = &u->last[i];
        c->sp[i] = u->wsp[i];
        c->bp[i] = u->wbp[i];
        uintptr_t cfa = c->sp[i + 1], low = c->low[i + 1], a;
        unsigned m = c->end[i + 1];
        int need = 0;
        if (r->kind != RHEAP__CFI_END) { /* CFI_END: the outermost frame, nothing read */
            need = c->need_bp[i + 1];
            if (r->kind == RHEAP__CFA_DEREF_RBP) {
                a = c->bp[i] + (uintptr_t)(intptr_t)r->cfa_off;
                c->slot[m++] = (slot_t){a, cfa};
                low = a < low ? a : low;
            }
            c->slot[m++] = (slot_t){cfa - 8, c->ip[i + 1]};
            low = cfa - 8 < low ? cfa - 8 : low;
            if (r->bp != RHEAP__BP_SAME) {
                /* rbp from a slot: its value matters only if a later frame reads it, its
                 * address (bounds-checked by the step) always. */
                a = (r->bp == RHEAP__BP_AT_CFA ? cfa : c->bp[i]) + (uintptr_t)(intptr_t)r->bp_off;
                if (need)
                    c->slot[m++] = (slot_t){a, c->bp[i + 1]};
                low = a < low ? a : low;
                need = r->bp == RHEAP__BP_AT_RBP;
            }
            need |= r->kind != RHEAP__CFA_RSP;
        }
        c->ip[i] = (uintptr_t)ips[i];
        c->sum[i] = c->sum[i + 1] + u->term[i];
        c->low[i] = low;
        c->end[i] = (uint16_t)m;
        c->need_bp[i] = (uint8_t)need;
    }
}

/* The chain's frames i.., met by a walk at its frame n: moved to frame n (state c->n too), the
 * sums of their hash terms made again for their new numbers. */
static __attribute__((noinline)) void chain_move(chain_t *c, unsigned i, unsigned n) {
    unsigned k = c->n - i;
    memmove(c->ip + n, c->ip + i, (k + 1) * sizeof *c->ip);
    memmove(c->sp + n, c->sp + i, (k + 1) * sizeof *c->sp);
    memmove(c->bp + n, c->bp + i, (k + 1) * sizeof *c->bp);
    memmove(c->low + n, c->low + i, (k + 1) * sizeof *c->low);
    memmove(c->end + n, c->end + i, (k + 1) * sizeof *c->end);
    memmove(c->need_bp + n, c->need_bp + i, (k + 1) * sizeof *c->need_bp);
    c->n = n + k;
    c->sum[c->n] = 0;
    for (unsigned f = c->n; f-- > n;)
        c->sum[f] = c->sum[f + 1] + term(c->ip[f], f);
}

/* A walk at its frame n takes the chain's frames i.. (chain_holds said so): their ips into
 * ips[n..], their hash terms into *sum; they become the chain's frames n.., after the walk's
 * own. Returns the walk's number of frames. */
static inline unsigned chain_take(rheap__unwinder_t *u, uint64_t *ips, unsigned i, unsigned n,
                                  unsigned max, uint64_t *sum) {
    chain_t *c = &u->chain;
    if (i != n)
        chain_move(c, i, n);
    c->max = max;
    memcpy(ips + n, c->ip + n, (c->n - n) * sizeof *ips);
    *sum += c->sum[n];
    if (n)
        chain_keep(u, ips, n);
    return c->n;
}

/* Reads other frames' stack slots, which ASan would take for overflows of this one. */
__attribute__((noinline, no_sanitize_address)) unsigned rheap__unwind(rheap__unwinder_t *u,
                                                                      const rheap__frame_t *from,
                                                                      uint64_t *ips,
                                                                      unsigned max,
                                                                      uint64_t *hash) {
    uintptr_t ip = from->ip, sp = from->sp, bp = from->bp;
    uint64_t sum = 0;
    unsigned n = 0;
#if !defined(__x86_64__)
    goto slow; /* the rules' registers and frame layout are x86-64's */
#endif
    unsigned gen = atomic_load_explicit(&rheap__unload_gen, memory_order_acquire);
    if (RHEAP_UNLIKELY(gen != u->unload_gen)) {
        forget(u);
        u->unload_gen = gen;
    }
    if (RHEAP_UNLIKELY(!in_stack(u, sp)))
        goto slow;
    if (RHEAP_UNLIKELY(u->stack_hi - sp < 8))
        goto slow;
    uintptr_t lo = sp, span = u->stack_hi - 8 - sp;
    /* The caller is the tracer itself: an exported function calling another while the real
     * functions are being resolved, or a program that links the recorder's code in. Its frames
     * are stepped through and dropped. */
    for (unsigned k = 0; RHEAP_UNLIKELY(ip >= self_lo && ip < self_hi); k++)
        if (k == OWN || step(table_rule(u, ip), &ip, &sp, &bp, lo, span) != STEP_ON)
            goto slow;
    const chain_t *c = &u->chain;
    const uintptr_t *csp = c->sp;
    unsigned i = 0, cn = c->n; /* i: the chain's first frame whose sp is not below this one's */
    int s = STEP_ON;
    while (n < max) {
        while (i < cn && csp[i] < sp)
            i++;
        if (i < cn && sp == csp[i] && ip == c->ip[i]) {
            if (chain_holds(c, i, n, bp, lo, max)) {
                n = chain_take(u, ips, i, n, max, &sum);
                goto done;
            }
            cn = 0; /* one try of the chain per walk: a failed one costs a pass over its slots */
        }
        u->wsp[n] = sp;
        u->wbp[n] = bp;
        const rule_t *r = find_rule(u, n, ip, &sum);
        ips[n++] = ip;
        s = step(r, &ip, &sp, &bp, lo, span);
        if (s != STEP_ON) {
            if (s == STEP_SLOW)
                goto slow;
            break;
        }
    }
    /* A new chain: state n, then frames n-1..0. */
    chain_t *w = &u->chain;
    w->n = n;
    w->max = max;
    w->ended = s == STEP_END;
    w->ip[n] = ip;
    w->sp[n] = sp;
    w->bp[n] = bp;
    w->sum[n] = 0;
    w->low[n] = UINTPTR_MAX;
    w->end[n] = 0;
    w->need_bp[n] = 0;
    chain_keep(u, ips, n);
done:
    if (RHEAP_UNLIKELY(check))
        compare(u, ips, n, max, sum);
    *hash = stack_hash(sum, n);
    return n;
slow:
    u->chain.n = 0; /* the rules cannot walk this stack: nothing to compare with */
    return walk_slow(u, ips, max, hash);
}
