/*
 * rheap_ptrace.h: holding a running process's threads and making calls in it (src/ptrace.c),
 * the outside half of an attach: `rheap attach` calls these, and librheap's attach entry points
 * (got.c, rheap_attach.h) are what it calls in the process. The header of the small library
 * rheap_ptrace, linked into the rheap command only (never into librheap.so), not installed.
 * Every function is for one process at a time and is not thread-safe.
 */
#ifndef RHEAP_PTRACE_H
#define RHEAP_PTRACE_H

#include <stddef.h>
#include <stdint.h>
#include <limits.h>
#include <sys/types.h>

/* A thread held with PTRACE_SEIZE and stopped. */
typedef struct {
    pid_t tid;
    int sig; /* the signal its stop held, delivered when it is let go */
    int held;
} rheap__pt_thread_t;

/* Every thread of a process, held. */
typedef struct {
    pid_t pid;
    rheap__pt_thread_t *t;
    size_t n, cap;
    uint64_t stopped_at; /* CLOCK_MONOTONIC ns when the first was stopped */
    uint64_t longest_ns; /* set by resume_all: how long the first one was held */
} rheap__pt_world_t;

/* Registers the attach looks at. */
typedef struct {
    uint64_t ip, sp;
    int64_t orig_ax, ax;
} rheap__pt_regs_t;

/* CLOCK_MONOTONIC in ns. */
uint64_t rheap__pt_now_ns(void);

/* Seizes thread tid and stops it, waiting at most timeout_ms. 0, or -1 with errno (ESRCH: the
 * thread is gone; EPERM: not permitted). */
int rheap__pt_take(pid_t tid, rheap__pt_thread_t *t, int timeout_ms);
/* Lets a held thread go (PTRACE_DETACH), delivering the signal its stop held. */
void rheap__pt_release(rheap__pt_thread_t *t);
int rheap__pt_regs(const rheap__pt_thread_t *t, rheap__pt_regs_t *r);

/* The thread ids of pid (malloc'ed; NULL with *n = 0 when the process is gone). */
pid_t *rheap__pt_threads(pid_t pid, size_t *n);
/* Holds every thread of pid, those it starts meanwhile too. 0, or -1 with errno, every
 * thread let go. */
int rheap__pt_stop_all(pid_t pid, rheap__pt_world_t *w, int timeout_ms);
/* Lets every thread go and frees the list; sets w->longest_ns. */
void rheap__pt_resume_all(rheap__pt_world_t *w);

/* An argument of rheap__pt_call that stands for the blob's address in the process. */
#define RHEAP__PT_BLOB UINT64_MAX

/* Calls fn(a0, a1) on held thread t, with blob_len bytes of blob copied to its stack first
 * (an argument RHEAP__PT_BLOB is their address), waiting at most timeout_ms; *ret gets the
 * result. The thread's state is put back whole afterwards and it stays held. 0, or -1 with
 * errno (ESRCH: the process is gone; EFAULT: the function faulted; ETIMEDOUT). */
int rheap__pt_call(rheap__pt_thread_t *t, uint64_t fn, uint64_t a0, uint64_t a1, const void *blob,
                 size_t blob_len, uint64_t *ret, int timeout_ms);

/* Reads or writes len bytes at addr in process pid. 0 or -1. */
int rheap__pt_read(pid_t pid, uint64_t addr, void *buf, size_t len);
int rheap__pt_write(pid_t pid, uint64_t addr, const void *buf, size_t len);

/* ---- procmaps.c: the process read from outside ---- */

/* One file-backed mapping of the process (exec: executable). */
typedef struct {
    uint64_t start, end, offset;
    unsigned long long inode;
    int exec;
    char path[PATH_MAX];
} rheap__pt_map_t;

typedef struct {
    rheap__pt_map_t *m;
    size_t n;
} rheap__pt_maps_t;

/* The file-backed mappings of /proc/PID/maps into *ms (free with rheap__pt_maps_free). 0 or
 * -1. */
int rheap__pt_maps_read(pid_t pid, rheap__pt_maps_t *ms);
void rheap__pt_maps_free(rheap__pt_maps_t *ms);
/* The values of the dynamic symbols names[0..n) (0 for one not defined) of the ELF file at
 * path, and the address its first PT_LOAD segment is linked at, which the mapping at offset 0
 * starts at plus the load bias. 0, or -1 when the file cannot be read as a 64-bit ELF file. */
int rheap__pt_elf_symbols(const char *path, const char *const *names, uint64_t *values, size_t n,
                          uint64_t *first_vaddr);

#endif
