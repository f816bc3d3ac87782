/*
 * rheap_inject.h: the injection library, what `rheap attach` does to a running process.
 *
 * Checking that a process can be joined (it exists, may be traced, is dynamically linked
 * against a glibc with dlopen, sees the same librheap), finding its libc's dlopen through
 * /proc/PID/root, borrowing one of its threads at a safe point to load librheap and call its
 * prepare, stopping every thread for librheap's commit and release, and the heartbeat librheap
 * watches meanwhile. What librheap does in the process is libtrace/src/got.c.
 *
 * The library prints nothing. A function that can fail returns an ri_status_t and, unless it is
 * RI_OK, fills the caller's ri_err_t with the status and the details a message needs (an errno,
 * a uid or tracer pid, a path or librheap's own message); the command turns them into its line.
 * One process at a time; nothing here is thread-safe.
 */
#ifndef RHEAP_INJECT_H
#define RHEAP_INJECT_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* X(NAME, TEXT): every result of a call, with one sentence saying what it means. */
#define RI_STATUS_LIST(X)                                                                        \
    X(RI_OK, "done")                                                                             \
    X(RI_E_NO_PROCESS, "there is no such process")                                               \
    X(RI_E_SELF, "the process is the caller itself")                                             \
    X(RI_E_OTHER_USER, "the process belongs to another user")                                    \
    X(RI_E_TRACED, "the process is already traced by another process")                           \
    X(RI_E_PERM, "tracing the process is not permitted")                                         \
    X(RI_E_STATIC, "the process is statically linked, so its malloc cannot be redirected")       \
    X(RI_E_MAPS, "the process's memory map cannot be read")                                      \
    X(RI_E_NO_LIBC, "the process has no libc.so mapped")                                         \
    X(RI_E_LIB_UNSEEN, "the library is not the same file inside the process's filesystem")       \
    X(RI_E_OTHER_LIB, "the process already has another librheap loaded")                         \
    X(RI_E_NO_DLOPEN, "the process's libc has no dlopen")                                        \
    X(RI_E_GONE, "the process is gone")                                                          \
    X(RI_E_PTRACE, "a ptrace request failed")                                                    \
    X(RI_E_NO_SAFE_POINT, "no thread stopped outside the allocator and the loader in time")      \
    X(RI_E_DLOPEN_CALL, "the call of the process's dlopen failed")                               \
    X(RI_E_DLOPEN, "the process's dlopen cannot load the library")                               \
    X(RI_E_NO_SYMBOL, "the loaded library lacks one of librheap's attach functions")             \
    X(RI_E_PREPARE, "the call of librheap's prepare failed")                                     \
    X(RI_E_CTL, "librheap's control block cannot be read")                                       \
    X(RI_E_REFUSED, "librheap refused to record the process")                                   \
    X(RI_E_CALL, "a call with every thread stopped failed")                                      \
    X(RI_E_DIR, "no directory for the recording can be made in the process's filesystem")       \
    X(RI_E_CHOWN, "the recording's directory cannot be given to the process's user")             \
    X(RI_E_NOMEM, "out of memory")

#define RI__STATUS_ENUM(name, text) name,
typedef enum { RI_STATUS_LIST(RI__STATUS_ENUM) } ri_status_t;
#undef RI__STATUS_ENUM

/* The TEXT of a status; "unknown status" for any other value. */
const char *ri_status_str(int status);

/* What went wrong, for the caller's message. Fields a status does not use are 0 or "". */
typedef struct {
    ri_status_t status;
    int sys;  /* the errno of the failed call (RI_E_MAPS, RI_E_PTRACE, RI_E_*_CALL, ...) */
    long id;  /* RI_E_OTHER_USER: the process's uid; RI_E_TRACED: the tracer's pid */
    int yama; /* RI_E_PERM: kernel.yama.ptrace_scope, -1 when unknown */
    int cap;  /* RI_E_PERM: whether the caller has CAP_SYS_PTRACE */
    int replaced; /* RI_E_OTHER_LIB: the same path, replaced on disk since it was loaded */
    /* RI_E_MAPS, RI_E_OTHER_LIB, RI_E_NO_DLOPEN, RI_E_DIR, RI_E_CHOWN: a path;
     * RI_E_DLOPEN: dlerror's message; RI_E_NO_SYMBOL: the function's name;
     * RI_E_REFUSED: librheap's message */
    char text[PATH_MAX + 256];
} ri_err_t;

/* CLOCK_MONOTONIC in ns. */
uint64_t ri_now_ns(void);
/* Whether process pid still runs: it exists and is not a zombie. */
int ri_alive(pid_t pid);
/* Whether the ELF file at path is statically linked (no PT_INTERP program header): 1, 0 (also
 * for a file that is not ELF, such as a script), or -1 when it cannot be read. */
int ri_exe_is_static(const char *path);

/* A process being joined: made by ri_open, freed by ri_close. */
typedef struct ri_target ri_target_t;

/* How long each step held the process's threads, in ns, and how many there were. */
typedef struct {
    uint64_t borrowed; /* the borrowed thread, from its stop to its release */
    uint64_t commit_pause, release_pause;
    size_t commit_threads, release_threads;
} ri_timings_t;

/* The checks that need no ptrace, then the process's libc's dlopen, dlsym and dlerror. lib is
 * librheap's absolute path, which the process must see as the same file. RI_OK with *t set. */
ri_status_t ri_open(pid_t pid, const char *lib, ri_target_t **t, ri_err_t *err);
void ri_close(ri_target_t *t);

/* ours is a directory made for the recording, reached from here. When the process sees it at
 * the same path, theirs is that path; else it is removed and one is made in the process's own
 * /tmp instead, ours the path from here (through /proc/PID/root) and theirs the process's. The
 * directory is then given to the process's user. RI_OK, RI_E_DIR or RI_E_CHOWN (the directory
 * is left for the caller to remove). ours and theirs are buffers of len bytes, never NULL: said
 * to the compiler too, since the paths are handed to calls that take no NULL. */
ri_status_t ri_place_dir(pid_t pid, char *ours, char *theirs, size_t len, ri_err_t *err)
    __attribute__((nonnull(2, 3)));

/* A thread held where it holds none of the allocator's or the loader's locks (each thread
 * tried in turn for 5 s) loads lib with the process's dlopen and calls librheap's prepare with
 * settings: settings_len bytes of NAME=VALUE strings, each NUL-terminated, then an empty one.
 * RI_OK when the recording has started and the slots to redirect are found. */
ri_status_t ri_load(ri_target_t *t, const char *lib, const char *settings, size_t settings_len,
                    ri_err_t *err);
/* Every thread stopped for librheap's commit, which redirects the allocator: *slots gets how
 * many slots it redirected. RI_OK or RI_E_CALL with err->sys. */
ri_status_t ri_commit(ri_target_t *t, long *slots, ri_err_t *err);
/* Every thread stopped for librheap's release, which puts the slots back (after a failed
 * commit too: it then ends the recording). RI_OK or RI_E_CALL with err->sys. */
ri_status_t ri_release(ri_target_t *t, ri_err_t *err);
/* After the release: waits until librheap's attach thread has ended the recording (its files
 * complete) or the process is gone, at most 60 s, beating meanwhile. */
void ri_wait_stopped(ri_target_t *t);
/* One heartbeat: while librheap sees the counter move the caller is alive; when it stops for
 * 5 s librheap ends the recording and puts the allocator back itself. */
void ri_beat(ri_target_t *t);
/* How many modules librheap's commit redirected slots in, read from its control block. */
unsigned ri_modules(ri_target_t *t);
const ri_timings_t *ri_timings(const ri_target_t *t);

#ifdef __cplusplus
}
#endif

#endif
