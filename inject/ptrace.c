/*
 * ptrace.c: stopping a running process's threads and making calls in it, for rheap attach.
 *
 * Every thread is taken with PTRACE_SEIZE (which, unlike PTRACE_ATTACH, sends no SIGSTOP that
 * the process could see) and stopped with PTRACE_INTERRUPT; it is let go with PTRACE_DETACH,
 * with whatever signal arrived while it was held, so the process misses nothing. Between the
 * phases of an attach rheap holds no thread at all: the process runs untraced while it is
 * recorded.
 *
 * A call borrows a stopped thread: its registers (general and extended state) are saved, the
 * function is entered with the arguments in rdi and rsi, a stack pointer below the red zone of
 * the thread's own stack and a return address of 0, and when it returns the fault at address 0
 * stops the thread again, with the result in rax; the saved state is then put back whole. A
 * thread stopped inside a system call has orig_rax set to -1 for the call, so the kernel does
 * not restart the system call into the function; once the state is back, it restarts it as
 * it would have. x86-64 only.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "inject.h"

#ifndef __x86_64__
#error "rheap attach makes calls in the attached process the x86-64 way"
#endif

uint64_t ri_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int ri__pt_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
    struct iovec local = {buf, len}, remote = {(void *)(uintptr_t)addr, len};
    return process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -1;
}

int ri__pt_write(pid_t pid, uint64_t addr, const void *buf, size_t len)
{
    struct iovec local = {(void *)buf, len}, remote = {(void *)(uintptr_t)addr, len};
    if (process_vm_writev(pid, &local, 1, &remote, 1, 0) == (ssize_t)len)
        return 0;
    /* process_vm_writev refuses pages that are not writable; a stopped thread's stack always
     * is, but fall back to word writes all the same. */
    const unsigned char *p = buf;
    for (size_t off = 0; off < len; off += 8) {
        uint64_t word = 0;
        size_t n = len - off < 8 ? len - off : 8;
        if (n < 8) {
            errno = 0;
            long old = ptrace(PTRACE_PEEKDATA, pid, (void *)(uintptr_t)(addr + off), NULL);
            if (errno)
                return -1;
            memcpy(&word, &old, 8);
        }
        memcpy(&word, p + off, n);
        if (ptrace(PTRACE_POKEDATA, pid, (void *)(uintptr_t)(addr + off), (void *)word) != 0)
            return -1;
    }
    return 0;
}

/* Waits until thread tid stops or ends, for at most timeout_ms. 1 stopped, 0 gone (it exited
 * or the process died), -1 timed out (errno ETIMEDOUT) or failed. */
static int wait_thread(pid_t tid, int *status, int timeout_ms)
{
    uint64_t until = ri_now_ns() + (uint64_t)timeout_ms * 1000000u;
    long nap = 2000; /* ns: short first, since most stops come within microseconds */
    for (;;) {
        pid_t w = waitpid(tid, status, __WALL | WNOHANG);
        if (w == tid)
            return WIFSTOPPED(*status) ? 1 : 0;
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return errno == ECHILD ? 0 : -1;
        if (ri_now_ns() > until) {
            errno = ETIMEDOUT;
            return -1;
        }
        struct timespec ts = {0, nap};
        nanosleep(&ts, NULL);
        if (nap < 500000)
            nap *= 2;
    }
}

/* The signal a stop holds for the thread, to be delivered when it is let go: 0 for the
 * stops rheap caused (PTRACE_INTERRUPT, a group stop). */
static int stop_signal(int status)
{
    if (status >> 16)
        return 0; /* an event stop (PTRACE_EVENT_STOP) */
    return WSTOPSIG(status);
}

int ri__pt_take(pid_t tid, ri__pt_thread_t *t, int timeout_ms)
{
    memset(t, 0, sizeof *t);
    t->tid = tid;
    if (ptrace(PTRACE_SEIZE, tid, NULL, NULL) != 0)
        return -1;
    if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) != 0) {
        int e = errno;
        ptrace(PTRACE_DETACH, tid, NULL, NULL);
        errno = e;
        return -1;
    }
    int status;
    int r = wait_thread(tid, &status, timeout_ms);
    if (r <= 0) {
        int e = r == 0 ? ESRCH : errno;
        if (r < 0)
            ptrace(PTRACE_DETACH, tid, NULL, NULL);
        errno = e;
        return -1;
    }
    t->sig = stop_signal(status);
    t->held = 1;
    return 0;
}

void ri__pt_release(ri__pt_thread_t *t)
{
    if (t->held)
        ptrace(PTRACE_DETACH, t->tid, NULL, (void *)(intptr_t)t->sig);
    t->held = 0;
}

int ri__pt_regs(const ri__pt_thread_t *t, ri__pt_regs_t *r)
{
    struct user_regs_struct u;
    if (ptrace(PTRACE_GETREGS, t->tid, NULL, &u) != 0)
        return -1;
    r->ip = u.rip;
    r->sp = u.rsp;
    r->orig_ax = (int64_t)u.orig_rax;
    r->ax = (int64_t)u.rax;
    return 0;
}

/* The threads of pid now, from /proc/PID/task. */
static pid_t *list_threads(pid_t pid, size_t *n)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    *n = 0;
    DIR *d = opendir(path);
    if (!d)
        return NULL;
    size_t cap = 64;
    pid_t *tids = malloc(cap * sizeof *tids);
    struct dirent *e;
    while (tids && (e = readdir(d))) {
        char *end;
        long v = strtol(e->d_name, &end, 10);
        if (end == e->d_name || *end)
            continue;
        if (*n == cap) {
            pid_t *more = realloc(tids, 2 * cap * sizeof *tids);
            if (!more) {
                free(tids);
                tids = NULL;
                break;
            }
            tids = more;
            cap *= 2;
        }
        tids[(*n)++] = (pid_t)v;
    }
    closedir(d);
    return tids;
}

pid_t *ri__pt_threads(pid_t pid, size_t *n)
{
    return list_threads(pid, n);
}

int ri__pt_stop_all(pid_t pid, ri__pt_world_t *w, int timeout_ms)
{
    memset(w, 0, sizeof *w);
    w->pid = pid;
    /* Taken in rounds: a thread still running may start another between the listing and the
     * stop; once every listed thread is held, the list can only shrink, and a round that finds
     * no new thread is the last. */
    for (int round = 0; round < 1000; round++) {
        size_t n;
        pid_t *tids = list_threads(pid, &n);
        if (!tids) {
            if (w->n)
                break;
            errno = ESRCH;
            return -1;
        }
        size_t added = 0;
        for (size_t i = 0; i < n; i++) {
            int known = 0;
            for (size_t j = 0; j < w->n && !known; j++)
                known = w->t[j].tid == tids[i];
            if (known)
                continue;
            if (w->n == w->cap) {
                size_t cap = w->cap ? 2 * w->cap : 64;
                ri__pt_thread_t *more = realloc(w->t, cap * sizeof *more);
                if (!more) {
                    free(tids);
                    ri__pt_resume_all(w);
                    errno = ENOMEM;
                    return -1;
                }
                w->t = more;
                w->cap = cap;
            }
            if (!w->n)
                w->stopped_at = ri_now_ns();
            if (ri__pt_take(tids[i], &w->t[w->n], timeout_ms) == 0) {
                w->n++;
                added++;
            } else if (errno != ESRCH) {
                int e = errno;
                free(tids);
                ri__pt_resume_all(w);
                errno = e;
                return -1;
            }
        }
        free(tids);
        if (!added)
            return 0;
    }
    return 0;
}

void ri__pt_resume_all(ri__pt_world_t *w)
{
    for (size_t i = 0; i < w->n; i++)
        ri__pt_release(&w->t[i]);
    if (w->n)
        w->longest_ns = ri_now_ns() - w->stopped_at;
    free(w->t);
    w->t = NULL;
    w->n = w->cap = 0;
}

/* The extended register state (x87, SSE, AVX, ...) as the kernel saves it. */
#define XSTATE_MAX (64 * 1024)

int ri__pt_call(ri__pt_thread_t *t, uint64_t fn, uint64_t a0, uint64_t a1, const void *blob,
                 size_t blob_len, uint64_t *ret, int timeout_ms)
{
    struct user_regs_struct saved, r;
    if (ptrace(PTRACE_GETREGS, t->tid, NULL, &saved) != 0)
        return -1;
    unsigned char *xstate = malloc(XSTATE_MAX);
    if (!xstate) {
        errno = ENOMEM;
        return -1;
    }
    struct iovec xv = {xstate, XSTATE_MAX};
    int have_x = ptrace(PTRACE_GETREGSET, t->tid, (void *)NT_X86_XSTATE, &xv) == 0;
    if (!have_x) {
        xv.iov_len = sizeof(struct user_fpregs_struct);
        have_x = ptrace(PTRACE_GETREGSET, t->tid, (void *)NT_PRFPREG, &xv) == 0 ? 2 : 0;
    }
    /* Below the red zone (128 bytes) with room to spare, the blob, then the return address. */
    uint64_t sp = saved.rsp - 1024;
    uint64_t blob_at = 0;
    if (blob) {
        sp = (sp - blob_len) & ~(uint64_t)15;
        blob_at = sp;
    }
    sp &= ~(uint64_t)15;
    sp -= 8; /* at entry, rsp + 8 is 16-byte aligned, as after a call */
    uint64_t zero = 0;
    int rc = -1, e = 0;
    if ((blob && ri__pt_write(t->tid, blob_at, blob, blob_len) != 0) ||
        ri__pt_write(t->tid, sp, &zero, sizeof zero) != 0) {
        e = errno;
        goto out;
    }
    r = saved;
    r.rip = fn;
    r.rsp = sp;
    r.rdi = a0 == RI__PT_BLOB ? blob_at : a0;
    r.rsi = a1 == RI__PT_BLOB ? blob_at : a1;
    r.rax = 0;
    r.orig_rax = (unsigned long long)-1;
    if (ptrace(PTRACE_SETREGS, t->tid, NULL, &r) != 0) {
        e = errno;
        goto out;
    }
    int deliver = 0;
    for (;;) {
        if (ptrace(PTRACE_CONT, t->tid, NULL, (void *)(intptr_t)deliver) != 0) {
            e = errno;
            goto restore;
        }
        deliver = 0;
        int status;
        int w = wait_thread(t->tid, &status, timeout_ms);
        if (w == 0) {
            t->held = 0;
            e = ESRCH;
            goto out; /* the process is gone */
        }
        if (w < 0) {
            /* The call does not return: take the thread back where it is. What the call held
             * stays held; this is said to the user, who learns which call it was. */
            e = errno;
            ptrace(PTRACE_INTERRUPT, t->tid, NULL, NULL);
            wait_thread(t->tid, &status, 1000);
            goto restore;
        }
        int sig = stop_signal(status);
        if (sig == SIGSEGV) {
            struct user_regs_struct now;
            if (ptrace(PTRACE_GETREGS, t->tid, NULL, &now) == 0 && now.rip == 0) {
                *ret = now.rax;
                rc = 0;
                goto restore;
            }
            e = EFAULT; /* the function itself faulted: its signal is not passed on */
            goto restore;
        }
        /* A signal for the process arrived meanwhile: its handler runs on top of the call, as
         * it would on top of any code. */
        deliver = sig;
    }
restore:
    if (ptrace(PTRACE_SETREGS, t->tid, NULL, &saved) != 0 && !e)
        e = errno;
    if (have_x) {
        struct iovec back = {xstate, xv.iov_len};
        ptrace(PTRACE_SETREGSET, t->tid,
               (void *)(uintptr_t)(have_x == 1 ? NT_X86_XSTATE : NT_PRFPREG), &back);
    }
out:
    free(xstate);
    if (rc != 0)
        errno = e ? e : EIO;
    return rc;
}
