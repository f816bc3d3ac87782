/*
 * rollback.c: a writer left by siglongjmp at any instruction after a block's write, in the rest
 * of the flush and the records after it, then rolled back as the tracer does
 * (rip_writer_rollback), writes a file that reads back whole: every committed allocation
 * exactly once, in order, each naming a stack its file defines.
 *
 * The jump is made at one instruction after another, not at a few chosen places. The block's
 * write system call is trapped (seccomp), made by the handler itself, and returns with the
 * processor's trap flag set (x86-64): SIGTRAP follows each instruction from there, and the
 * handler jumps out at the k-th. What follows mirrors the tracer: the stack the abandoned event
 * was defining counts as defined only if rip_writer_stack returned (the tracer's table entry
 * comes after it); the events after the jump are each followed by a rollback with nothing in
 * progress (a later jump that lands right after a commit), which must change nothing, and
 * every other one names stack 1, defined in the first block.
 * Elsewhere than x86-64 the test is skipped, and in a ThreadSanitizer build: its runtime takes
 * locks of its own in the middle of the instrumented code, and a jump from there leaves one held.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <setjmp.h>
#include <signal.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <ucontext.h>

#include "test_util.h"

#if defined(__SANITIZE_THREAD__)
#define UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UNDER_TSAN 1
#endif
#endif

#if defined(__x86_64__) && !defined(UNDER_TSAN)

#define BS (64u << 10)
#define BEFORE 20   /* allocations committed before the step under test */
#define AFTER 40    /* allocations after it, each followed by a rollback */
#define TRAP_FLAG 0x100
#define TRAP_BUDGET 200000L

static const uint64_t ips1[] = {0x401000, 0x402000, 0x403000};
static const uint64_t ips2[] = {0x501000, 0x502000};

static sigjmp_buf env;
static volatile int armed;
static volatile long steps, jump_at;

/* The writer's pwrite64, trapped: made here (as pwritev, which passes the filter), its result
 * returned, and, while a step is under test, the trap flag set from the next instruction on. */
static void on_sys(int sig, siginfo_t *si, void *ctx)
{
    (void)sig;
    (void)si;
    ucontext_t *uc = ctx;
    greg_t *g = uc->uc_mcontext.gregs;
    int saved = errno;
    struct iovec v = {(void *)g[REG_RSI], (size_t)g[REG_RDX]};
    g[REG_RAX] = syscall(SYS_pwritev, (int)g[REG_RDI], &v, 1, (long)g[REG_R10], 0L);
    if (g[REG_RAX] < 0)
        g[REG_RAX] = -errno;
    errno = saved;
    if (armed)
        g[REG_EFL] |= TRAP_FLAG;
}

/* Counts instructions; jumps out at the chosen one. */
static void on_trap(int sig)
{
    (void)sig;
    steps++;
    if (steps == jump_at)
        siglongjmp(env, 1);
}

/* Clears the trap flag, in a function of its own: the push would otherwise land in the red
 * zone of the function it is written in. A siglongjmp out of the handler leaves the flag clear
 * (the kernel clears it for the handler and nothing restores it). */
static __attribute__((noinline)) void step_off(void)
{
    __asm__ volatile("pushfq\n\tandq $~0x100, (%%rsp)\n\tpopfq" ::: "memory", "cc");
}

/* From here on every pwrite64 of the process raises SIGSYS. */
static void trap_writes(void)
{
    struct sock_filter code[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 3),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_pwrite64, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {sizeof code / sizeof code[0], code};
    CHECK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0);
    CHECK(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0);
}

static uint64_t addr_of(int i)
{
    return 0x10000 + 64 * (uint64_t)i;
}

/* The step under test, an event of the tracer's that meets a flush: the second block written,
 * a new stack defined (then entered in the table: *defined), an allocation naming it. */
static __attribute__((noinline)) void step(rip_writer_t *w, volatile int *defined)
{
    armed = 1;
    rip_status_t a = rip_writer_flush(w);
    rip_status_t b = rip_writer_stack(w, 2, ips2, 2);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    *defined = 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    rip_status_t c = rip_writer_alloc(w, RIP_CALL_MALLOC, 1000 * BEFORE, addr_of(BEFORE), 64, 2,
                                      0, 0, 0);
    step_off();
    armed = 0;
    CHECK_STATUS(a, RIP_OK);
    CHECK_STATUS(b, RIP_OK);
    CHECK_STATUS(c, RIP_OK);
}

/* One run with a jump at instruction k of the step (0: none). Returns whether it jumped. */
static int run(long k)
{
    rip_header_t h = thread_header();
    tstaged_t f;
    tstaged_open(&f, "rollback", BS, &h);
    rip_writer_t *w = f.w;
    uint64_t expect[BEFORE + 1 + AFTER];
    size_t n = 0;

    CHECK_STATUS(rip_writer_stack(w, 1, ips1, 3), RIP_OK);
    for (int i = 0; i < BEFORE; i++) {
        CHECK_STATUS(rip_writer_alloc(w, RIP_CALL_MALLOC, 1000 * (uint64_t)i, addr_of(i), 64, 1,
                                      0, 0, 0),
                     RIP_OK);
        expect[n++] = addr_of(i);
        if (i == BEFORE / 2)
            CHECK_STATUS(rip_writer_flush(w), RIP_OK); /* stack 1 is in the first block */
    }
    uint64_t events = rip_writer_events(w);

    volatile int defined = 0, jumped = 0;
    steps = 0;
    jump_at = k;
    if (sigsetjmp(env, 1) == 0)
        step(w, &defined);
    else
        jumped = 1;
    armed = 0;
    jump_at = 0;
    rip_writer_rollback(w); /* as the tracer's recovery does; after no jump, a no-op */
    if (rip_writer_events(w) > events)
        expect[n++] = addr_of(BEFORE);

    uint64_t stack = 2;
    if (!defined) {
        stack = 3;
        CHECK_STATUS(rip_writer_stack(w, 3, ips2, 2), RIP_OK);
    }
    for (int i = BEFORE + 1; i <= BEFORE + AFTER; i++) {
        CHECK_STATUS(rip_writer_alloc(w, RIP_CALL_MALLOC, 1000 * (uint64_t)i, addr_of(i), 64,
                                      i % 2 ? 1 : stack, 0, 0, 0),
                     RIP_OK);
        rip_writer_rollback(w);
        expect[n++] = addr_of(i);
        if (i == BEFORE + AFTER / 2)
            CHECK_STATUS(rip_writer_flush(w), RIP_OK);
    }
    CHECK_STATUS(rip_writer_flush(w), RIP_OK);

    size_t len;
    uint8_t *data = slurp(f.path, &len);
    rip_reader_t *r;
    rip_error_t err;
    rip_status_t st = rip_reader_open_mem(data, len, "rollback.rip", &r, &err);
    size_t got = 0;
    rip_record_t rec;
    while (st == RIP_OK && (st = rip_reader_next(r, &rec, &err)) == RIP_OK) {
        if (rec.kind != RIP_REC_ALLOC)
            continue;
        if (got >= n || rec.u.alloc.addr != expect[got])
            CHECK_FAIL("jump at instruction %ld: allocation %zu of the file is at 0x%" PRIx64
                       ", expected %s0x%" PRIx64,
                       k, got, rec.u.alloc.addr, got >= n ? "none after " : "",
                       expect[got >= n ? n - 1 : got]);
        got++;
    }
    if (st != RIP_END) {
        char buf[600];
        CHECK_FAIL("jump at instruction %ld after the block's write: reading gives %s (%s)", k,
                   rip_strerror(st), rip_error_format(&err, buf, sizeof buf));
    }
    if (got != n)
        CHECK_FAIL("jump at instruction %ld: %zu allocations read, %zu committed", k, got, n);
    rip_reader_close(r);
    free(data);
    munmap(f.stage, f.stage_size);
    close(f.fd);
    free(f.mem);
    unlink(f.path);
    return jumped;
}

int main(void)
{
    struct sigaction sa = {0};
    sa.sa_sigaction = on_sys;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(SIGSYS, &sa, NULL) == 0);
    struct sigaction st = {0};
    st.sa_handler = on_trap;
    sigemptyset(&st.sa_mask);
    CHECK(sigaction(SIGTRAP, &st, NULL) == 0);
    trap_writes();

    /* Runs without a jump: the first binds the functions the step calls, the second counts
     * its instructions after the block's write. Then a jump at each of them, or, when they are
     * many (a sanitizer's build), at every stride-th, so that the runs single-step no more than
     * TRAP_BUDGET instructions in all. A sanitizer's runtime may also take a few instructions
     * more or less in a run: the runs end at the first without a jump. */
    CHECK_U(run(0), 0);
    CHECK_U(run(0), 0);
    long total = steps, k = 1, tried = 0;
    CHECK(total > 100);
    long stride = 1 + total * total / (2 * TRAP_BUDGET);
    while (k <= total && run(k)) {
        tried++;
        k += stride;
    }
    if (k <= total - total / 8)
        CHECK_FAIL("a run without a jump at instruction %ld of %ld", k, total);
    printf("figure: a jump at %ld of the %ld instructions after the block's write\n", tried,
           total);
    return 0;
}

#else

int main(void)
{
    puts("skipped: single-stepping needs x86-64, and jumps out of ThreadSanitizer's runtime "
         "would leave its locks held");
    return 77;
}

#endif
