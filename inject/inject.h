/*
 * inject.h: what the injection library's files share and nothing outside sees: holding a
 * process's threads and making calls in it (ptrace.c), what /proc says of it (proc.c), ELF
 * symbols (symbols.c) and the one way a failure is reported (target.c). Every function is for
 * one process at a time and is not thread-safe.
 */
#ifndef RHEAP_INJECT_INTERNAL_H
#define RHEAP_INJECT_INTERNAL_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "rheap_attach.h"
#include "rheap_inject.h"

/* ---- ptrace.c ---- */

/* A thread held with PTRACE_SEIZE and stopped. */
typedef struct {
    pid_t tid;
    int sig; /* the signal its stop held, delivered when it is let go */
    int held;
} ri__pt_thread_t;

/* Every thread of a process, held. */
typedef struct {
    pid_t pid;
    ri__pt_thread_t *t;
    size_t n, cap;
    uint64_t stopped_at; /* CLOCK_MONOTONIC ns when the first was stopped */
    uint64_t longest_ns; /* set by resume_all: how long the first one was held */
} ri__pt_world_t;

/* Registers the attach looks at. */
typedef struct {
    uint64_t ip, sp;
    int64_t orig_ax, ax;
} ri__pt_regs_t;

/* Seizes thread tid and stops it, waiting at most timeout_ms. 0, or -1 with errno (ESRCH: the
 * thread is gone; EPERM: not permitted). */
int ri__pt_take(pid_t tid, ri__pt_thread_t *t, int timeout_ms);
/* Lets a held thread go (PTRACE_DETACH), delivering the signal its stop held. */
void ri__pt_release(ri__pt_thread_t *t);
int ri__pt_regs(const ri__pt_thread_t *t, ri__pt_regs_t *r);

/* The thread ids of pid (malloc'ed; NULL with *n = 0 when the process is gone). */
pid_t *ri__pt_threads(pid_t pid, size_t *n);
/* Holds every thread of pid, those it starts meanwhile too. 0, or -1 with errno, every
 * thread let go. */
int ri__pt_stop_all(pid_t pid, ri__pt_world_t *w, int timeout_ms);
/* Lets every thread go and frees the list; sets w->longest_ns. */
void ri__pt_resume_all(ri__pt_world_t *w);

/* An argument of ri__pt_call that stands for the blob's address in the process. */
#define RI__PT_BLOB UINT64_MAX

/* Calls fn(a0, a1) on held thread t, with blob_len bytes of blob copied to its stack first
 * (an argument RI__PT_BLOB is their address), waiting at most timeout_ms; *ret gets the
 * result. The thread's state is put back whole afterwards and it stays held. 0, or -1 with
 * errno (ESRCH: the process is gone; EFAULT: the function faulted; ETIMEDOUT). */
int ri__pt_call(ri__pt_thread_t *t, uint64_t fn, uint64_t a0, uint64_t a1, const void *blob,
                 size_t blob_len, uint64_t *ret, int timeout_ms);

/* Reads or writes len bytes at addr in process pid. 0 or -1. */
int ri__pt_read(pid_t pid, uint64_t addr, void *buf, size_t len);
int ri__pt_write(pid_t pid, uint64_t addr, const void *buf, size_t len);

/* ---- proc.c ---- */

/* One file-backed mapping of the process. */
typedef struct {
    uint64_t start, end, offset;
    unsigned long long inode;
    int exec;
    char path[PATH_MAX];
} ri__map_t;

typedef struct {
    ri__map_t *m;
    size_t n;
} ri__maps_t;

/* A field of /proc/PID/status ("Uid", "TracerPid"), its first number (the second in *second
 * when not NULL); -1 when absent. */
long ri__status_field(pid_t pid, const char *name, long *second);
/* Whether this process has CAP_SYS_PTRACE. */
int ri__have_cap_ptrace(void);
/* A ptrace of pid refused: RI_E_TRACED when a tracer holds it, else RI_E_PERM with what
 * would permit it (the Yama scope, whether we have CAP_SYS_PTRACE) in err. */
ri_status_t ri__perm(pid_t pid, ri_err_t *err);
/* The file-backed mappings of /proc/PID/maps. 0, or -1 with errno. */
int ri__maps_read(pid_t pid, ri__maps_t *ms);
void ri__maps_free(ri__maps_t *ms);
/* Which module a mapped file is, by its name. */
int ri__is_libc(const char *path);
int ri__is_loader(const char *path);
int ri__is_librheap(const char *path);
/* The mapping at offset 0 of the first file that match accepts, or NULL. */
const ri__map_t *ri__find_module(const ri__maps_t *ms, int (*match)(const char *));
/* path as the process sees it, reached from here: /proc/PID/root/path. */
void ri__in_root(pid_t pid, const char *path, char *buf, size_t len);
/* Whether a and b name the same file (device and inode). */
int ri__same_file(const char *a, const char *b);

/* ---- symbols.c ---- */

/* The values of the dynamic symbols names[0..n) (0 for one not defined) of the ELF file at
 * path, and the address its first PT_LOAD segment is linked at, which the mapping at offset 0
 * starts at plus the load bias. 0, or -1 when the file cannot be read as a 64-bit ELF file. */
int ri__elf_symbols(const char *path, const char *const *names, uint64_t *values, size_t n,
                    uint64_t *first_vaddr);

/* ---- target.c ---- */

/* Fills err (status, errno, a number, a text or NULL) and returns status. */
ri_status_t ri__fail(ri_err_t *err, ri_status_t status, int sys, long id, const char *text);

#endif
