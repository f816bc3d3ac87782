/*
 * rss.c: samples of the process's resident memory, taken from inside events.
 *
 * A heap that stays flat while the process grows is the question a recording of allocations
 * alone cannot answer: fragmentation, memory mapped outside malloc, or the allocator keeping
 * pages it no longer hands out. So the recorder reads the kernel's own count now and then and
 * writes it beside the events (an `rss` record, rip-format/FORMAT.md).
 *
 * Why from inside events rather than from a thread of our own: a thread would be one more thing
 * in the traced program (its stack, a signal target, a fork to survive), and an idle program's
 * memory does not change. The cost stays bounded by time, not by events: one word per process
 * says when the next sample is due; an event compares its own timestamp with it (a load and a
 * compare), and the one event that finds it due and wins the compare-and-swap reads
 * /proc/self/status (an fstat and a pread) into its recorder's buffer. With the
 * default interval of 10 ms that is at most 100 reads a second, whatever the event rate.
 *
 * The file is opened once, at the recording's start, and kept (close-on-exec, at a high number
 * as the recording's own files are) and read again with pread: opening it for every sample
 * would take one of the program's descriptors for a moment, and a program at its descriptor
 * limit would see its own open() fail then. Before each read the descriptor is checked to still
 * be that file (st_dev, st_ino): a program that closed it, or reused its number, is never read
 * from; sampling stops instead. A fork child's copy refers to its parent (/proc/self was the
 * parent when it was opened): the child's recording start opens its own.
 *
 * /proc/self/status rather than statm: statm has no swap and counts shared memory with the
 * file-backed pages under one name we could not split from anonymous memory exactly; status
 * gives RssAnon, RssFile, RssShmem and VmSwap from the same counters. Shared memory (tmpfs,
 * memfd, System V) is counted as file-backed, so that rss = anon + file.
 *
 * Everything here runs inside a wrapper with the guard held: raw system calls only (sys.c), no
 * allocation, no stdio; errno is the caller's to keep (the recording path saves it).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

/* Absolute CLOCK_MONOTONIC ns of the next sample (internal.h's inline check reads it); 0 takes
 * one at the next event, UINT64_MAX none. */
_Atomic uint64_t rheap__rss_next = UINT64_MAX;
/* The interval in ns; 0: no samples (off, or /proc/self/status could not be read). */
static _Atomic uint64_t interval_ns;

/* The kept descriptor of /proc/self/status, the process that opened it and what it is. */
static int status_fd = -1;
static pid_t status_pid;
static dev_t status_dev;
static ino_t status_ino;

/* Whether status_fd still refers to the file that was opened. */
static int status_kept(void) {
    struct stat st;
    return status_fd >= 0 && syscall(SYS_fstat, status_fd, &st) == 0 &&
           st.st_dev == status_dev && st.st_ino == status_ino;
}

void rheap__rss_start(unsigned interval_ms) {
    atomic_store_explicit(&interval_ns, 0, memory_order_relaxed);
    atomic_store_explicit(&rheap__rss_next, UINT64_MAX, memory_order_relaxed);
    if (!interval_ms)
        return;
    pid_t pid = (pid_t)syscall(SYS_getpid);
    if (status_fd >= 0 && (status_pid != pid || !status_kept())) {
        /* A fork child's copy of its parent's (closed: it is ours), or one the program took. */
        if (status_kept())
            rheap__sys_close(status_fd);
        status_fd = -1;
    }
    if (status_fd < 0) {
        int fd = rheap__sys_open("/proc/self/status", O_RDONLY | O_CLOEXEC, 0);
        if (fd < 0)
            return; /* no /proc (a chroot, a sandbox): no samples */
        fd = rheap__sys_keep_high(fd);
        struct stat st;
        if (fd < 0 || syscall(SYS_fstat, fd, &st) != 0)
            return;
        status_fd = fd;
        status_pid = pid;
        status_dev = st.st_dev;
        status_ino = st.st_ino;
    }
    atomic_store_explicit(&interval_ns, (uint64_t)interval_ms * 1000000u, memory_order_relaxed);
    atomic_store_explicit(&rheap__rss_next, 0, memory_order_relaxed);
}

int rheap__rss_claim(uint64_t now) {
    uint64_t iv = atomic_load_explicit(&interval_ns, memory_order_relaxed);
    uint64_t due = atomic_load_explicit(&rheap__rss_next, memory_order_relaxed);
    if (!iv || now < due)
        return 0;
    /* One winner per interval: a thread that loses the race leaves the sample to the winner. */
    return atomic_compare_exchange_strong_explicit(&rheap__rss_next, &due, now + iv,
                                                   memory_order_relaxed, memory_order_relaxed);
}

/* The kB after the colon of the line at s[i..n), in bytes. */
static uint64_t kb_at(const char *s, size_t i, size_t n) {
    uint64_t v = 0;
    for (; i < n && (s[i] == ' ' || s[i] == '\t'); i++)
        ;
    for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
        v = v * 10 + (uint64_t)(s[i] - '0');
    return v * 1024;
}

/* The fields of a sample, in one pass over s[0..n): only lines that start with "Vm" or "Rss"
 * are compared. Fields absent stay 0. */
static void parse_status(const char *s, size_t n, rheap__rss_t *out, uint64_t *shmem) {
    static const struct {
        const char *name;
        unsigned len, field; /* 0 rss, 1 anon, 2 file, 3 shmem, 4 swap */
    } fields[] = {{"VmRSS:", 6, 0},  {"RssAnon:", 8, 1}, {"RssFile:", 8, 2},
                  {"RssShmem:", 9, 3}, {"VmSwap:", 7, 4}};
    uint64_t v[5] = {0};
    for (size_t i = 0; i < n;) {
        if (s[i] == 'V' || s[i] == 'R')
            for (unsigned k = 0; k < sizeof fields / sizeof fields[0]; k++)
                if (n - i > fields[k].len && memcmp(s + i, fields[k].name, fields[k].len) == 0) {
                    v[fields[k].field] = kb_at(s, i + fields[k].len, n);
                    break;
                }
        const char *nl = memchr(s + i, '\n', n - i);
        if (!nl)
            break;
        i = (size_t)(nl - s) + 1;
    }
    out->rss = v[0];
    out->anon = v[1];
    out->file = v[2];
    *shmem = v[3];
    out->swap = v[4];
}

int rheap__rss_read(rheap__rss_t *out, char *buf, size_t len) {
    if (!status_kept()) {
        /* The program closed it or reused its number: no more samples in this recording. */
        atomic_store_explicit(&interval_ns, 0, memory_order_relaxed);
        atomic_store_explicit(&rheap__rss_next, UINT64_MAX, memory_order_relaxed);
        return -1;
    }
    size_t n = 0;
    while (n < len) {
        long r = syscall(SYS_pread64, status_fd, buf + n, len - n, (off_t)n);
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    uint64_t shmem;
    parse_status(buf, n, out, &shmem);
    if (!out->rss)
        return -1; /* a foreign file: no sample rather than a false 0 */
    out->file += shmem;
    return 0;
}
