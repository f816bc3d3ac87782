/*
 * clock.c: timestamps in CLOCK_MONOTONIC nanoseconds, cheaply.
 *
 * clock_gettime through the vDSO costs 25-30 ns here, twice per realloc; it was the largest
 * single cost of the recording path after unwinding. When the kernel itself uses the TSC as its
 * clocksource (so the TSC is constant, nonstop and synchronized across CPUs), we read the TSC
 * directly (about 7 ns) and convert it with a ratio measured against CLOCK_MONOTONIC: the
 * first calls use clock_gettime, and once CALIBRATE_NS have passed since the first one, the
 * ratio over that interval is published and anchored at that instant, so the two clocks agree
 * there. Each end of the interval pairs a TSC reading with a clock_gettime read, the closest of
 * four tries (read_pair); a 20 ms interval with ~30 ns of read jitter puts the ratio within a
 * few parts per million. Elsewhere (no TSC clocksource, no RDTSCP, other architectures) clock_gettime is used
 * throughout.
 *
 * The read is RDTSCP, not RDTSC: RDTSC may execute before the loads ahead of it complete, so an
 * allocation stamped just after malloc returned could read a time earlier than the free (in
 * another thread) that made the block available, by 50-100 ns here. The converter would then
 * see the address allocated again while still live. RDTSCP waits for the earlier loads, as the
 * vDSO's own read does.
 */
#include <cpuid.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

#define CALIBRATE_NS 20000000ull

static uint64_t mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#if defined(__x86_64__)
static inline uint64_t rdtscp(void) {
    uint32_t lo, hi, aux;
    __asm__ volatile("rdtscp" : "=a"(lo), "=d"(hi), "=c"(aux));
    return ((uint64_t)hi << 32) | lo;
}

enum { TSC_UNKNOWN, TSC_CALIBRATING, TSC_READY, TSC_UNUSABLE };

static _Atomic int tsc_state = TSC_UNKNOWN;
static uint64_t cal_tsc0, cal_mono0;          /* start of the calibration interval */
static uint64_t anchor_tsc, anchor_ns;        /* the TSC reading that equals anchor_ns */
static uint64_t mult;                         /* ns per tick, 32.32 fixed point */
static _Atomic int calibrating_lock;

/* Only a kernel that trusts the TSC for its own clock gets us to trust it, and only with
 * RDTSCP (CPUID 0x80000001, EDX bit 27). */
static int tsc_trusted(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000001, &a, &b, &c, &d) || !(d & (1u << 27)))
        return 0;
    char buf[32] = {0};
    int fd = rheap__sys_open("/sys/devices/system/clocksource/clocksource0/current_clocksource",
                             O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0)
        return 0;
    long n = rheap__sys_read(fd, buf, sizeof buf - 1);
    rheap__sys_close(fd);
    return n >= 3 && strncmp(buf, "tsc", 3) == 0 && (buf[3] == '\n' || buf[3] == 0);
}

static inline uint64_t tsc_to_ns(uint64_t tsc) {
    /* Signed: a CPU whose TSC lags the anchor's by a few ticks reads the anchor time. */
    int64_t d = (int64_t)(tsc - anchor_tsc);
    if (d < 0)
        d = 0;
    return anchor_ns + (uint64_t)(((unsigned __int128)(uint64_t)d * mult) >> 32);
}

/* A TSC reading and the CLOCK_MONOTONIC time of the same instant, as the ratio and the anchor
 * need them. Both clocks are read between two TSC reads, and of four tries the one with the
 * shortest gap is kept: a single pair can be microseconds apart (the first clock_gettime of a
 * process faults its data page in; a thread can be preempted between the reads), which would
 * skew the ratio by hundreds of ppm. The TSC value is the first read, so TSC time at the anchor
 * is at or ahead of CLOCK_MONOTONIC, never behind the times read before the switch. */
static void read_pair(uint64_t *tsc, uint64_t *ns) {
    uint64_t best = UINT64_MAX;
    *tsc = 0;
    *ns = 0;
    for (int i = 0; i < 4; i++) {
        uint64_t t1 = rdtscp(), n = mono_ns(), t2 = rdtscp();
        if (t2 - t1 < best) {
            best = t2 - t1;
            *tsc = t1;
            *ns = n;
        }
    }
}

uint64_t rheap__now_abs(void) {
    int state = atomic_load_explicit(&tsc_state, memory_order_acquire);
    if (RHEAP_LIKELY(state == TSC_READY))
        return tsc_to_ns(rdtscp());
    if (state == TSC_UNUSABLE)
        return mono_ns();
    /* No RDTSCP before tsc_trusted() has seen the CPU offer it: where it lacks (some virtual
     * machines, valgrind) the instruction would raise SIGILL in the program. */
    uint64_t tsc = state == TSC_CALIBRATING ? rdtscp() : 0, now = mono_ns();
    if (state == TSC_UNKNOWN) {
        if (!atomic_exchange(&calibrating_lock, 1)) {
            if (tsc_trusted()) {
                read_pair(&cal_tsc0, &cal_mono0);
                atomic_store(&tsc_state, TSC_CALIBRATING);
            } else {
                atomic_store(&tsc_state, TSC_UNUSABLE);
            }
            atomic_store(&calibrating_lock, 0);
        }
        return now;
    }
    /* Calibrating: publish the ratio once enough time has passed. */
    if (now - cal_mono0 >= CALIBRATE_NS && tsc > cal_tsc0 && !atomic_exchange(&calibrating_lock, 1)) {
        if (atomic_load(&tsc_state) == TSC_CALIBRATING) {
            uint64_t t, n;
            read_pair(&t, &n);
            mult = t > cal_tsc0 ? (uint64_t)(((unsigned __int128)(n - cal_mono0) << 32) / (t - cal_tsc0)) : 0;
            anchor_tsc = t;
            anchor_ns = n;
            atomic_store_explicit(&tsc_state, mult ? TSC_READY : TSC_UNUSABLE, memory_order_release);
        }
        atomic_store(&calibrating_lock, 0);
    }
    /* If the switch happened while this thread read the clocks (it may have been preempted
     * between loading the state and reading them), its time must come from the TSC like every
     * other thread's from now on: CLOCK_MONOTONIC and TSC time drift apart by the ratio's error,
     * and events of two threads stamped by different clocks could sort out of order. */
    if (atomic_load_explicit(&tsc_state, memory_order_acquire) == TSC_READY)
        return tsc_to_ns(tsc);
    return now;
}
#else
uint64_t rheap__now_abs(void) {
    return mono_ns();
}
#endif
