/*
 * target.c: joining a running process, the steps `rheap attach` takes in turn:
 *   1. checks that refuse early (ri_open): permissions, a static or already traced process, a
 *      librheap the process cannot see or another one loaded; then its libc's dlopen, dlsym
 *      and dlerror, from the libc's symbol table read through /proc/PID/root;
 *   2. one thread, stopped where it holds none of the allocator's or the loader's locks, loads
 *      librheap with the process's own dlopen and calls librheap's prepare (ri_load): the
 *      recording starts and the slots to redirect are found;
 *   3. every thread is stopped for librheap's commit, which redirects the slots (ri_commit);
 *   4. meanwhile the caller holds no thread and only beats (ri_beat): if it dies, librheap
 *      ends the recording itself;
 *   5. every thread is stopped for librheap's release, which puts the slots back; librheap's
 *      attach thread then ends the recording (ri_release, ri_wait_stopped).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "inject.h"

#define RI__STATUS_TEXT(name, text) [name] = text,
static const char *const status_text[] = {RI_STATUS_LIST(RI__STATUS_TEXT)};
#undef RI__STATUS_TEXT

const char *ri_status_str(int status)
{
    if (status < 0 || (size_t)status >= sizeof status_text / sizeof status_text[0])
        return "unknown status";
    return status_text[status];
}

ri_status_t ri__fail(ri_err_t *err, ri_status_t status, int sys, long id, const char *text)
{
    err->status = status;
    err->sys = sys;
    err->id = id;
    snprintf(err->text, sizeof err->text, "%s", text ? text : "");
    return status;
}

struct ri_target {
    pid_t pid;
    ri__maps_t maps;
    const ri__map_t *libc;
    uint64_t dlopen_at, dlsym_at, dlerror_at; /* in the process */
    uint64_t prepare_at, commit_at, release_at;
    uint64_t ctl_at; /* librheap's control block */
    uint64_t beat;
    ri_timings_t timings;
    rheap__attach_ctl_t ctl;
};

static int read_ctl(ri_target_t *t)
{
    if (ri__pt_read(t->pid, t->ctl_at, &t->ctl, sizeof t->ctl) != 0)
        return -1;
    return t->ctl.magic == RHEAP__ATTACH_MAGIC ? 0 : -1;
}

void ri_beat(ri_target_t *t)
{
    t->beat++;
    ri__pt_write(t->pid, t->ctl_at + offsetof(rheap__attach_ctl_t, heartbeat), &t->beat,
                 sizeof t->beat);
}

unsigned ri_modules(ri_target_t *t)
{
    read_ctl(t);
    return t->ctl.modules;
}

const ri_timings_t *ri_timings(const ri_target_t *t)
{
    return &t->timings;
}

void ri_close(ri_target_t *t)
{
    if (!t)
        return;
    ri__maps_free(&t->maps);
    free(t);
}

/* Step 1's checks, in the order of their cost; RI_OK with t's libc functions found. */
static ri_status_t check_process(ri_target_t *t, const char *lib, ri_err_t *err)
{
    pid_t pid = t->pid;
    long euid = -1, ruid = ri__status_field(pid, "Uid", &euid);
    if (ruid < 0)
        return ri__fail(err, RI_E_NO_PROCESS, ESRCH, 0, NULL);
    if (pid == getpid())
        return ri__fail(err, RI_E_SELF, 0, 0, NULL);
    if (geteuid() != 0 && (ruid != (long)getuid() || euid != (long)getuid()) &&
        !ri__have_cap_ptrace())
        return ri__fail(err, RI_E_OTHER_USER, EPERM, euid, NULL);
    long tracer = ri__status_field(pid, "TracerPid", NULL);
    if (tracer > 0)
        return ri__fail(err, RI_E_TRACED, 0, tracer, NULL);
    char exe[64];
    snprintf(exe, sizeof exe, "/proc/%d/exe", (int)pid);
    if (ri_exe_is_static(exe) == 1)
        return ri__fail(err, RI_E_STATIC, 0, 0, NULL);
    if (ri__maps_read(pid, &t->maps) != 0) {
        if (errno == EACCES || errno == EPERM)
            return ri__perm(pid, err); /* the same right as ptrace's guards the maps */
        return ri__fail(err, RI_E_MAPS, errno, 0, NULL);
    }
    t->libc = ri__find_module(&t->maps, ri__is_libc);
    if (!t->libc)
        return ri__fail(err, RI_E_NO_LIBC, 0, 0, NULL);
    /* librheap must be reachable at the same path inside the process's filesystem. */
    char lib_there[PATH_MAX + 64];
    ri__in_root(pid, lib, lib_there, sizeof lib_there);
    struct stat there;
    if (stat(lib_there, &there) != 0 && (errno == EACCES || errno == EPERM))
        return ri__perm(pid, err); /* /proc/PID/root is guarded as ptrace is */
    if (!ri__same_file(lib, lib_there))
        return ri__fail(err, RI_E_LIB_UNSEEN, 0, 0, lib);
    /* A librheap loaded already must be this one: dlopen would load a file of another path,
     * or one rebuilt since at the same path, as a second copy. */
    const ri__map_t *other = ri__find_module(&t->maps, ri__is_librheap);
    if (other &&
        (strcmp(other->path, lib) != 0 || other->inode != (unsigned long long)there.st_ino)) {
        err->replaced = strcmp(other->path, lib) == 0;
        return ri__fail(err, RI_E_OTHER_LIB, 0, 0, other->path);
    }
    /* dlopen, dlsym and dlerror in its libc (glibc 2.34 and later have them there). */
    char file[PATH_MAX + 64];
    ri__in_root(pid, t->libc->path, file, sizeof file);
    const char *names[3] = {"dlopen", "dlsym", "dlerror"};
    uint64_t v[3], first = 0;
    if (ri__elf_symbols(file, names, v, 3, &first) != 0 || !v[0] || !v[1])
        return ri__fail(err, RI_E_NO_DLOPEN, 0, 0, t->libc->path);
    uint64_t bias = t->libc->start - first;
    t->dlopen_at = bias + v[0];
    t->dlsym_at = bias + v[1];
    t->dlerror_at = v[2] ? bias + v[2] : 0;
    return RI_OK;
}

ri_status_t ri_open(pid_t pid, const char *lib, ri_target_t **out, ri_err_t *err)
{
    memset(err, 0, sizeof *err);
    *out = NULL;
    ri_target_t *t = calloc(1, sizeof *t);
    if (!t)
        return ri__fail(err, RI_E_NOMEM, ENOMEM, 0, NULL);
    t->pid = pid;
    ri_status_t st = check_process(t, lib, err);
    if (st != RI_OK) {
        ri_close(t);
        return st;
    }
    *out = t;
    return RI_OK;
}

/* Whether a thread stopped with these registers may run dlopen: not while it is inside the
 * dynamic loader (whose lock it may hold), nor inside libc (it may hold a malloc arena's lock
 * that dlopen's own allocations would wait for), nor inside librheap, unless it is blocked in
 * a system call that the stop interrupted and that will be restarted: there it waits, and
 * waiting holds none of those locks. */
static int safe_point(const ri_target_t *t, const ri__pt_regs_t *r)
{
    int blocked = r->orig_ax >= 0 && (r->ax == -512 || r->ax == -513 || r->ax == -514 ||
                                      r->ax == -516); /* -ERESTARTSYS ... -ERESTART_RESTARTBLOCK */
    for (size_t i = 0; i < t->maps.n; i++) {
        const ri__map_t *m = &t->maps.m[i];
        if (r->ip < m->start || r->ip >= m->end)
            continue;
        if (ri__is_loader(m->path) || ri__is_librheap(m->path))
            return 0;
        if (ri__is_libc(m->path))
            return blocked;
        return 1;
    }
    return 1; /* code outside any file: a JIT's, the vDSO's */
}

/* Reads a string of at most len - 1 bytes at addr in the process. */
static void read_string(pid_t pid, uint64_t addr, char *buf, size_t len)
{
    buf[0] = 0;
    for (size_t got = 0; addr && got + 1 < len;) {
        size_t chunk = len - 1 - got < 64 ? len - 1 - got : 64;
        if (ri__pt_read(pid, addr + got, buf + got, chunk) != 0)
            break;
        buf[got + chunk] = 0;
        if (memchr(buf + got, 0, chunk))
            break;
        got += chunk;
    }
    buf[len - 1] = 0;
}

/* Step 2, on a thread th held at a safe point: load librheap, find its three functions, call
 * prepare. */
static ri_status_t load_and_prepare(ri_target_t *t, ri__pt_thread_t *th, const char *lib,
                                    const char *settings, size_t settings_len, ri_err_t *err)
{
    uint64_t handle = 0;
    if (ri__pt_call(th, t->dlopen_at, RI__PT_BLOB, 2 /* RTLD_NOW */, lib, strlen(lib) + 1,
                    &handle, 30000) != 0)
        return ri__fail(err, RI_E_DLOPEN_CALL, errno, 0, NULL);
    if (!handle) {
        char why[512] = "";
        uint64_t msg = 0;
        if (t->dlerror_at && ri__pt_call(th, t->dlerror_at, 0, 0, NULL, 0, &msg, 5000) == 0)
            read_string(t->pid, msg, why, sizeof why);
        return ri__fail(err, RI_E_DLOPEN, 0, 0, why);
    }
    const char *names[3] = {RHEAP__ATTACH_PREPARE, RHEAP__ATTACH_COMMIT, RHEAP__ATTACH_RELEASE};
    uint64_t *at[3] = {&t->prepare_at, &t->commit_at, &t->release_at};
    for (int i = 0; i < 3; i++)
        if (ri__pt_call(th, t->dlsym_at, handle, RI__PT_BLOB, names[i], strlen(names[i]) + 1,
                        at[i], 5000) != 0 ||
            !*at[i])
            return ri__fail(err, RI_E_NO_SYMBOL, 0, 0, names[i]);
    if (ri__pt_call(th, t->prepare_at, RI__PT_BLOB, 0, settings, settings_len, &t->ctl_at,
                    30000) != 0)
        return ri__fail(err, RI_E_PREPARE, errno, 0, NULL);
    if (read_ctl(t) != 0)
        return ri__fail(err, RI_E_CTL, 0, 0, NULL);
    if (t->ctl.error)
        return ri__fail(err, RI_E_REFUSED, 0, 0, t->ctl.message);
    return RI_OK;
}

/* Step 2's search for a thread at a safe point: each thread in turn, every millisecond, for
 * 5 seconds. */
ri_status_t ri_load(ri_target_t *t, const char *lib, const char *settings, size_t settings_len,
                    ri_err_t *err)
{
    memset(err, 0, sizeof *err);
    uint64_t until = ri_now_ns() + 5000000000u;
    do {
        size_t n;
        pid_t *tids = ri__pt_threads(t->pid, &n);
        if (!tids)
            return ri__fail(err, RI_E_GONE, ESRCH, 0, NULL);
        for (size_t i = 0; i < n; i++) {
            ri__pt_thread_t th;
            uint64_t t0 = ri_now_ns();
            if (ri__pt_take(tids[i], &th, 5000) != 0) {
                if (errno == ESRCH)
                    continue;
                int e = errno;
                free(tids);
                if (e == EPERM)
                    return ri__perm(t->pid, err);
                return ri__fail(err, RI_E_PTRACE, e, 0, NULL);
            }
            ri__pt_regs_t r;
            if (ri__pt_regs(&th, &r) == 0 && safe_point(t, &r)) {
                ri_status_t st = load_and_prepare(t, &th, lib, settings, settings_len, err);
                ri__pt_release(&th);
                t->timings.borrowed = ri_now_ns() - t0;
                free(tids);
                return st;
            }
            ri__pt_release(&th);
        }
        free(tids);
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    } while (ri_now_ns() < until);
    return ri__fail(err, RI_E_NO_SAFE_POINT, 0, 0, NULL);
}

/* Steps 3 and 5: every thread stopped, fn called on one, everyone let go. Tried again while
 * librheap answers EAGAIN (its attach thread was stopped while changing the table, or the
 * loader was stopped while changing its list). Returns fn's result (>= 0), or -1 with errno. */
static long stopped_world_call(ri_target_t *t, uint64_t fn, uint64_t *pause, size_t *threads)
{
    uint64_t until = ri_now_ns() + 5000000000u;
    for (;;) {
        ri__pt_world_t w;
        if (ri__pt_stop_all(t->pid, &w, 5000) != 0)
            return -1;
        uint64_t ret = 0;
        int rc = w.n ? ri__pt_call(&w.t[0], fn, 0, 0, NULL, 0, &ret, 5000) : -1;
        int e = w.n ? errno : ESRCH;
        *threads = w.n;
        ri__pt_resume_all(&w);
        if (w.longest_ns > *pause)
            *pause = w.longest_ns;
        if (rc != 0) {
            errno = e;
            return -1;
        }
        if ((long)ret != -EAGAIN || ri_now_ns() > until) {
            if ((long)ret < 0) {
                errno = (int)-(long)ret;
                return -1;
            }
            return (long)ret;
        }
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
}

ri_status_t ri_commit(ri_target_t *t, long *slots, ri_err_t *err)
{
    memset(err, 0, sizeof *err);
    *slots = stopped_world_call(t, t->commit_at, &t->timings.commit_pause,
                                &t->timings.commit_threads);
    return *slots < 0 ? ri__fail(err, RI_E_CALL, errno, 0, NULL) : RI_OK;
}

ri_status_t ri_release(ri_target_t *t, ri_err_t *err)
{
    memset(err, 0, sizeof *err);
    long rc = stopped_world_call(t, t->release_at, &t->timings.release_pause,
                                 &t->timings.release_threads);
    return rc < 0 ? ri__fail(err, RI_E_CALL, errno, 0, NULL) : RI_OK;
}

void ri_wait_stopped(ri_target_t *t)
{
    uint64_t until = ri_now_ns() + 60000000000u;
    while (ri_now_ns() < until && ri_alive(t->pid)) {
        if (read_ctl(t) != 0 || atomic_load(&t->ctl.state) == RHEAP__ATTACH_STOPPED)
            return;
        ri_beat(t);
        struct timespec ms = {0, 2000000};
        nanosleep(&ms, NULL);
    }
}
