/*
 * ptrace.h: holding a running process's threads and making calls in it (ptrace.c), for
 * rheap attach. Every function is for one process at a time and is not thread-safe.
 */
#ifndef RHEAP_PTRACE_H
#define RHEAP_PTRACE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A thread held with PTRACE_SEIZE and stopped. */
typedef struct {
    pid_t tid;
    int sig; /* the signal its stop held, delivered when it is let go */
    int held;
} cli__pt_thread_t;

/* Every thread of a process, held. */
typedef struct {
    pid_t pid;
    cli__pt_thread_t *t;
    size_t n, cap;
    uint64_t stopped_at; /* CLOCK_MONOTONIC ns when the first was stopped */
    uint64_t longest_ns; /* set by resume_all: how long the first one was held */
} cli__pt_world_t;

/* Registers the attach looks at. */
typedef struct {
    uint64_t ip, sp;
    int64_t orig_ax, ax;
} cli__pt_regs_t;

/* CLOCK_MONOTONIC in ns. */
uint64_t cli__pt_now_ns(void);

/* Seizes thread tid and stops it, waiting at most timeout_ms. 0, or -1 with errno (ESRCH: the
 * thread is gone; EPERM: not permitted). */
int cli__pt_take(pid_t tid, cli__pt_thread_t *t, int timeout_ms);
/* Lets a held thread go (PTRACE_DETACH), delivering the signal its stop held. */
void cli__pt_release(cli__pt_thread_t *t);
int cli__pt_regs(const cli__pt_thread_t *t, cli__pt_regs_t *r);

/* The thread ids of pid (malloc'ed; NULL with *n = 0 when the process is gone). */
pid_t *cli__pt_threads(pid_t pid, size_t *n);
/* Holds every thread of pid, those it starts meanwhile too. 0, or -1 with errno, every
 * thread let go. */
int cli__pt_stop_all(pid_t pid, cli__pt_world_t *w, int timeout_ms);
/* Lets every thread go and frees the list; sets w->longest_ns. */
void cli__pt_resume_all(cli__pt_world_t *w);

/* An argument of cli__pt_call that stands for the blob's address in the process. */
#define CLI__PT_BLOB UINT64_MAX

/* Calls fn(a0, a1) on held thread t, with blob_len bytes of blob copied to its stack first
 * (an argument CLI__PT_BLOB is their address), waiting at most timeout_ms; *ret gets the
 * result. The thread's state is put back whole afterwards and it stays held. 0, or -1 with
 * errno (ESRCH: the process is gone; EFAULT: the function faulted; ETIMEDOUT). */
int cli__pt_call(cli__pt_thread_t *t, uint64_t fn, uint64_t a0, uint64_t a1, const void *blob,
                 size_t blob_len, uint64_t *ret, int timeout_ms);

/* Reads or writes len bytes at addr in process pid. 0 or -1. */
int cli__pt_read(pid_t pid, uint64_t addr, void *buf, size_t len);
int cli__pt_write(pid_t pid, uint64_t addr, const void *buf, size_t len);

#endif
