/*
 * attach.c: `rheap attach [-o OUT.db] [--duration S] [--profile] [--depth N] PID`: records a
 * process that is already running, for a window, without restarting it.
 *
 * The steps, each explained where it is done:
 *   1. checks that refuse early, each with one line that names the fix (permissions, a static
 *      or already traced or already recording process, a librheap the process cannot see);
 *   2. one thread, stopped where it holds none of the allocator's or the loader's locks,
 *      loads librheap with the process's own dlopen (found in its libc's symbol table, read
 *      through /proc/PID/root so that a process in another mount namespace works) and calls
 *      librheap's prepare: the recording starts and the slots to redirect are found;
 *   3. every thread is stopped for librheap's commit, which redirects the slots: from here on
 *      every allocation and free is recorded;
 *   4. the window: rheap holds no thread, the process runs untraced; rheap only beats (a
 *      counter librheap watches: if rheap dies, librheap ends the recording itself);
 *   5. every thread is stopped for librheap's release, which puts the slots back; librheap's
 *      attach thread then ends the recording;
 *   6. the recording is converted and summarized as rheap run does.
 * What librheap does in the process is in libtrace/src/got.c.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rheap_attach.h"
#include "cli.h"
#include "rheap_ptrace.h"

typedef struct {
    const char *output;
    const char *depth;
    const char *dir;
    double duration; /* seconds; 0: until Ctrl-C */
    int profile, force, keep, quiet, timings;
    pid_t pid;
} attach_opts_t;

static void usage_attach(FILE *f)
{
    fprintf(f,
            "Usage: rheap attach [OPTIONS] PID\n"
            "\n"
            "Records the running process PID, which was started without rheap, for a window:\n"
            "from now until --duration ends or rheap attach gets Ctrl-C (SIGINT) or SIGTERM.\n"
            "librheap is loaded into the process and its allocator calls are redirected to it;\n"
            "at the end they are put back and the process runs on as fast as before (librheap\n"
            "stays loaded, unused). Then the window is converted into OUT.db and summarized.\n"
            "Blocks the process freed in the window that it had allocated before are counted\n"
            "(processes.unmatched_frees), not paired; blocks still live at the end of the\n"
            "window are reported as such, not as leaks.\n"
            "\n"
            "Options:\n"
            "  -o, --output FILE   the database to write (default rheap-PID.db)\n"
            "  -f, --force         replace FILE if it exists\n"
            "  --duration S        the window's length in seconds (a decimal, like 0.5, or\n"
            "                      with a unit: 250ms, 1.5s);\n"
            "                      default: until Ctrl-C\n"
            "  --depth N           most frames kept per backtrace, 1-1024 (default 64)\n"
            "  --profile           profile mode: a sample of the allocations, about one per\n"
            "                      512 KiB allocated (see rheap run --help)\n"
            "  --dir DIR           make the recording's private directory in DIR (default:\n"
            "                      beside the output)\n"
            "  --keep              keep the recording (rip-<pid>/) and say where\n"
            "  --timings           print how long each step held the process's threads\n"
            "  -q, --quiet         no summary\n"
            "  -h, --help          show this help\n"
            "\n"
            "Needs the right to trace PID: the same user (and kernel.yama.ptrace_scope 0), or\n"
            "root / CAP_SYS_PTRACE. x86-64 Linux with glibc 2.35 or later.\n"
            "\n"
            "Exit status: 0 when the window was recorded and converted; 1 when rheap could not\n"
            "attach (one line says why and what to do); else the status of rheap convert.\n");
}

static int parse_attach(int argc, char **argv, attach_opts_t *o)
{
    const char *pid = NULL, *duration = NULL;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage_attach(stdout);
            return 0;
        }
        const char **value = NULL;
        if (!strcmp(a, "-o") || !strcmp(a, "--output"))
            value = &o->output;
        else if (!strcmp(a, "--depth"))
            value = &o->depth;
        else if (!strcmp(a, "--duration"))
            value = &duration;
        else if (!strcmp(a, "--dir"))
            value = &o->dir;
        if (value) {
            if (i + 1 >= argc) {
                cli__error(stderr, "%s needs a value (try rheap attach --help)", a);
                return -1;
            }
            *value = argv[++i];
        } else if (!strcmp(a, "--profile")) {
            o->profile = 1;
        } else if (!strcmp(a, "-f") || !strcmp(a, "--force")) {
            o->force = 1;
        } else if (!strcmp(a, "--keep")) {
            o->keep = 1;
        } else if (!strcmp(a, "--timings")) {
            o->timings = 1;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            o->quiet = 1;
        } else if (a[0] == '-' && a[1]) {
            cli__error(stderr, "unknown option %s (try rheap attach --help)", a);
            return -1;
        } else if (pid) {
            cli__error(stderr, "one PID only (got %s and %s)", pid, a);
            return -1;
        } else {
            pid = a;
        }
    }
    char *end;
    long v = pid ? strtol(pid, &end, 10) : 0;
    if (!pid || end == pid || *end || v <= 0 || v > INT_MAX) {
        cli__error(stderr, "%s (rheap attach [-o OUT.db] PID)",
                   pid ? "PID must be a process id, a positive number" : "no PID given");
        return -1;
    }
    o->pid = (pid_t)v;
    if (duration) {
        /* Seconds (0.5), or a time with its unit as every time parameter takes it (250ms). */
        int64_t ns;
        int bad;
        if (strspn(duration, "0123456789.") < strlen(duration)) {
            bad = ra_duration_ns(duration, &ns) != 0;
            o->duration = bad ? 0 : (double)ns / 1e9;
        } else {
            o->duration = strtod(duration, &end);
            bad = end == duration || *end;
        }
        if (bad || !(o->duration > 0) || o->duration > 1e7) {
            cli__error(stderr,
                       "--duration %s: expected a time above 0, in seconds or with a unit "
                       "(250ms, 1.5s)",
                       duration);
            return -1;
        }
    }
    if (cli__check_setting(RHEAP__SET_DEPTH, &o->depth) != 0)
        return -1;
    return 1;
}

/* ---- What rheap learns about the process before it touches it ---- */

/* A field of /proc/PID/status ("Uid", "TracerPid"), its first number; -1 when absent. */
static long status_field(pid_t pid, const char *name, long *second)
{
    char path[64], line[512];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    long v = -1;
    size_t n = strlen(name);
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, name, n) && line[n] == ':') {
            char *end;
            v = strtol(line + n + 1, &end, 10);
            if (second)
                *second = strtol(end, NULL, 10);
            break;
        }
    fclose(f);
    return v;
}

/* Whether this process has CAP_SYS_PTRACE (bit 19 of CapEff). */
static int have_cap_ptrace(void)
{
    char line[256];
    FILE *f = fopen("/proc/self/status", "r");
    int have = 0;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "CapEff:", 7))
            have = (strtoull(line + 7, NULL, 16) >> 19) & 1;
    if (f)
        fclose(f);
    return have;
}

static int yama_scope(void)
{
    FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
    int v = -1;
    if (f) {
        if (fscanf(f, "%d", &v) != 1)
            v = -1;
        fclose(f);
    }
    return v;
}

/* The one line for a ptrace refused with EPERM, with what would permit it. */
static void explain_eperm(pid_t pid)
{
    int scope = yama_scope(), cap = have_cap_ptrace();
    long tracer = status_field(pid, "TracerPid", NULL);
    if (tracer > 0)
        cli__error(stderr,
                   "cannot attach to %d: it is already traced by process %ld (a "
                   "debugger or tracer); detach that first",
                   (int)pid, tracer);
    else if (scope == 3)
        cli__error(stderr,
                   "cannot attach to %d: ptrace is disabled on this machine "
                   "(kernel.yama.ptrace_scope = 3, until the next boot)",
                   (int)pid);
    else if (scope >= 1 && !cap)
        cli__error(stderr,
                   "cannot attach to %d: ptrace not permitted (kernel.yama.ptrace_scope = %d); "
                   "run rheap attach as root, or allow it with: sysctl kernel.yama.ptrace_scope=0",
                   (int)pid, scope);
    else if (!cap)
        cli__error(stderr,
                   "cannot attach to %d: ptrace not permitted; run rheap attach as the "
                   "process's user or as root (in a container: add CAP_SYS_PTRACE)",
                   (int)pid);
    else
        cli__error(stderr,
                   "cannot attach to %d: ptrace not permitted although rheap has "
                   "CAP_SYS_PTRACE (a security module refuses it)",
                   (int)pid);
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

static int is_libc(const char *path)
{
    const char *b = base_name(path);
    return !strncmp(b, "libc.so", 7) || (!strncmp(b, "libc-", 5) && strstr(b, ".so"));
}

static int is_loader(const char *path)
{
    return !strncmp(base_name(path), "ld-", 3) && strstr(path, ".so");
}

static int is_librheap(const char *path)
{
    return !strncmp(base_name(path), "librheap", 8);
}

/* The mapping at offset 0 of the first file that `match` accepts, or NULL. */
static const rheap__pt_map_t *find_module(const rheap__pt_maps_t *ms, int (*match)(const char *))
{
    for (size_t i = 0; i < ms->n; i++)
        if (ms->m[i].offset == 0 && match(ms->m[i].path))
            return &ms->m[i];
    return NULL;
}

/* path as the process sees it, reached from here: /proc/PID/root/path. */
static void in_root(pid_t pid, const char *path, char *buf, size_t len)
{
    snprintf(buf, len, "/proc/%d/root%s", (int)pid, path);
}

static int same_file(const char *a, const char *b)
{
    struct stat x, y;
    return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

/* ---- Signals: the window ends on Ctrl-C, SIGTERM or SIGHUP; nothing else stops rheap ---- */

static volatile sig_atomic_t stop_asked;

static void on_stop(int sig)
{
    (void)sig;
    stop_asked = 1;
}

/* ---- The attach ---- */

typedef struct {
    pid_t pid;
    rheap__pt_maps_t maps;
    const rheap__pt_map_t *libc;
    uint64_t dlopen_at, dlsym_at, dlerror_at; /* in the process */
    uint64_t prepare_at, commit_at, release_at;
    uint64_t ctl_at; /* librheap's control block */
    uint64_t beat;
    /* timings, ns */
    uint64_t begin, borrowed, commit_pause, release_pause, committed, released;
    size_t commit_threads, release_threads;
    rheap__attach_ctl_t ctl;
} attach_t;

static int read_ctl(attach_t *a)
{
    if (rheap__pt_read(a->pid, a->ctl_at, &a->ctl, sizeof a->ctl) != 0)
        return -1;
    return a->ctl.magic == RHEAP__ATTACH_MAGIC ? 0 : -1;
}

static void beat(attach_t *a)
{
    a->beat++;
    rheap__pt_write(a->pid, a->ctl_at + offsetof(rheap__attach_ctl_t, heartbeat), &a->beat,
                  sizeof a->beat);
}

/* Whether a thread stopped with these registers may run dlopen: not while it is inside the
 * dynamic loader (whose lock it may hold), nor inside libc (it may hold a malloc arena's lock
 * that dlopen's own allocations would wait for), nor inside librheap, unless it is blocked in
 * a system call that the stop interrupted and that will be restarted: there it waits, and
 * waiting holds none of those locks. */
static int safe_point(const attach_t *a, const rheap__pt_regs_t *r)
{
    int blocked = r->orig_ax >= 0 && (r->ax == -512 || r->ax == -513 || r->ax == -514 ||
                                      r->ax == -516); /* -ERESTARTSYS ... -ERESTART_RESTARTBLOCK */
    for (size_t i = 0; i < a->maps.n; i++) {
        const rheap__pt_map_t *m = &a->maps.m[i];
        if (r->ip < m->start || r->ip >= m->end)
            continue;
        if (is_loader(m->path) || is_librheap(m->path))
            return 0;
        if (is_libc(m->path))
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
        if (rheap__pt_read(pid, addr + got, buf + got, chunk) != 0)
            break;
        buf[got + chunk] = 0;
        if (memchr(buf + got, 0, chunk))
            break;
        got += chunk;
    }
    buf[len - 1] = 0;
}

/* Step 2, on a thread t held at a safe point: load librheap, find its three functions, call
 * prepare. 0, or -1 with the message printed. */
static int load_and_prepare(attach_t *a, rheap__pt_thread_t *t, const char *lib, const char *settings,
                            size_t settings_len)
{
    uint64_t handle = 0;
    if (rheap__pt_call(t, a->dlopen_at, RHEAP__PT_BLOB, 2 /* RTLD_NOW */, lib, strlen(lib) + 1, &handle,
                     30000) != 0) {
        cli__error(stderr, "cannot attach to %d: the call of its dlopen failed: %s", (int)a->pid,
                   strerror(errno));
        return -1;
    }
    if (!handle) {
        char why[512] = "";
        uint64_t msg = 0;
        if (a->dlerror_at && rheap__pt_call(t, a->dlerror_at, 0, 0, NULL, 0, &msg, 5000) == 0)
            read_string(a->pid, msg, why, sizeof why);
        cli__error(stderr, "cannot attach to %d: its dlopen cannot load %s: %s", (int)a->pid, lib,
                   why[0] ? why : "no reason given");
        return -1;
    }
    const char *names[3] = {RHEAP__ATTACH_PREPARE, RHEAP__ATTACH_COMMIT, RHEAP__ATTACH_RELEASE};
    uint64_t *at[3] = {&a->prepare_at, &a->commit_at, &a->release_at};
    for (int i = 0; i < 3; i++)
        if (rheap__pt_call(t, a->dlsym_at, handle, RHEAP__PT_BLOB, names[i], strlen(names[i]) + 1,
                         at[i], 5000) != 0 ||
            !*at[i]) {
            cli__error(stderr,
                       "cannot attach to %d: %s in it has no %s (a librheap of "
                       "another version?)",
                       (int)a->pid, lib, names[i]);
            return -1;
        }
    if (rheap__pt_call(t, a->prepare_at, RHEAP__PT_BLOB, 0, settings, settings_len, &a->ctl_at,
                     30000) != 0) {
        cli__error(stderr, "cannot attach to %d: the call of librheap's prepare failed: %s",
                   (int)a->pid, strerror(errno));
        return -1;
    }
    if (read_ctl(a) != 0) {
        cli__error(stderr, "cannot attach to %d: librheap's control block cannot be read",
                   (int)a->pid);
        return -1;
    }
    if (a->ctl.error) {
        cli__error(stderr, "cannot attach to %d: %s", (int)a->pid, a->ctl.message);
        return -1;
    }
    return 0;
}

/* Step 2's search for a thread at a safe point: each thread in turn, every millisecond, for
 * 5 seconds. 0, or -1 with the message printed. */
static int borrow_thread(attach_t *a, const char *lib, const char *settings, size_t settings_len)
{
    uint64_t until = rheap__pt_now_ns() + 5000000000u;
    do {
        size_t n;
        pid_t *tids = rheap__pt_threads(a->pid, &n);
        if (!tids) {
            cli__error(stderr, "cannot attach to %d: the process is gone", (int)a->pid);
            return -1;
        }
        for (size_t i = 0; i < n; i++) {
            rheap__pt_thread_t t;
            uint64_t t0 = rheap__pt_now_ns();
            if (rheap__pt_take(tids[i], &t, 5000) != 0) {
                if (errno == ESRCH)
                    continue;
                if (errno == EPERM)
                    explain_eperm(a->pid);
                else
                    cli__error(stderr, "cannot attach to %d: ptrace: %s", (int)a->pid,
                               strerror(errno));
                free(tids);
                return -1;
            }
            rheap__pt_regs_t r;
            if (rheap__pt_regs(&t, &r) == 0 && safe_point(a, &r)) {
                int rc = load_and_prepare(a, &t, lib, settings, settings_len);
                rheap__pt_release(&t);
                a->borrowed = rheap__pt_now_ns() - t0;
                free(tids);
                return rc;
            }
            rheap__pt_release(&t);
        }
        free(tids);
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    } while (rheap__pt_now_ns() < until);
    cli__error(stderr,
               "cannot attach to %d: in 5 s no thread stopped outside the allocator "
               "and the dynamic loader; try again",
               (int)a->pid);
    return -1;
}

/* Steps 3 and 5: every thread stopped, fn called on one, everyone let go. Tried again while
 * librheap answers EAGAIN (its attach thread was stopped while changing the table, or the
 * loader was stopped while changing its list). Returns fn's result (>= 0), or -1 with errno. */
static long stopped_world_call(attach_t *a, uint64_t fn, uint64_t *pause, size_t *threads)
{
    uint64_t until = rheap__pt_now_ns() + 5000000000u;
    for (;;) {
        rheap__pt_world_t w;
        if (rheap__pt_stop_all(a->pid, &w, 5000) != 0)
            return -1;
        uint64_t ret = 0;
        int rc = w.n ? rheap__pt_call(&w.t[0], fn, 0, 0, NULL, 0, &ret, 5000) : -1;
        int e = w.n ? errno : ESRCH;
        *threads = w.n;
        rheap__pt_resume_all(&w);
        if (w.longest_ns > *pause)
            *pause = w.longest_ns;
        if (rc != 0) {
            errno = e;
            return -1;
        }
        if ((long)ret != -EAGAIN || rheap__pt_now_ns() > until) {
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

/* Whether the process still runs: it exists and is not a zombie (ended, not yet reaped). */
static int alive(pid_t pid)
{
    char path[64], state = 0;
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    /* "pid (comm) S ...": the state follows the last ')', as comm may hold one. */
    char line[1024];
    if (fgets(line, sizeof line, f)) {
        char *close = strrchr(line, ')');
        if (close && close[1] == ' ')
            state = close[2];
    }
    fclose(f);
    return state && state != 'Z' && state != 'X';
}

/* Step 1's checks that need no ptrace. 0, or -1 with the message printed. */
static int check_process(attach_t *a, const char *lib, char *lib_there, size_t len)
{
    pid_t pid = a->pid;
    long euid = -1, ruid = status_field(pid, "Uid", &euid);
    if (ruid < 0) {
        cli__error(stderr, "cannot attach to %d: no such process", (int)pid);
        return -1;
    }
    if (pid == getpid()) {
        cli__error(stderr, "cannot attach to %d: that is rheap itself", (int)pid);
        return -1;
    }
    if (geteuid() != 0 && (ruid != (long)getuid() || euid != (long)getuid()) &&
        !have_cap_ptrace()) {
        cli__error(stderr,
                   "cannot attach to %d: it belongs to another user (uid %ld); run "
                   "rheap attach as that user, or as root",
                   (int)pid, euid);
        return -1;
    }
    long tracer = status_field(pid, "TracerPid", NULL);
    if (tracer > 0) {
        cli__error(stderr,
                   "cannot attach to %d: it is already traced by process %ld (a "
                   "debugger or tracer); detach that first",
                   (int)pid, tracer);
        return -1;
    }
    char exe[64];
    snprintf(exe, sizeof exe, "/proc/%d/exe", (int)pid);
    if (cli__exe_is_static(exe) == 1) {
        cli__error(stderr,
                   "cannot attach to %d: it is statically linked, so its malloc "
                   "cannot be redirected; start it under rheap run instead",
                   (int)pid);
        return -1;
    }
    if (rheap__pt_maps_read(pid, &a->maps) != 0) {
        if (errno == EACCES || errno == EPERM) {
            explain_eperm(pid); /* the same right as ptrace's guards the maps */
            return -1;
        }
        cli__error(stderr, "cannot attach to %d: cannot read /proc/%d/maps: %s", (int)pid, (int)pid,
                   strerror(errno));
        return -1;
    }
    a->libc = find_module(&a->maps, is_libc);
    if (!a->libc) {
        cli__error(stderr,
                   "cannot attach to %d: it has no libc.so mapped (statically linked, "
                   "or not a glibc program); start it under rheap run instead",
                   (int)pid);
        return -1;
    }
    /* librheap must be reachable at the same path inside the process's filesystem. */
    in_root(pid, lib, lib_there, len);
    struct stat there;
    if (stat(lib_there, &there) != 0 && (errno == EACCES || errno == EPERM)) {
        explain_eperm(pid); /* /proc/PID/root is guarded as ptrace is */
        return -1;
    }
    if (!same_file(lib, lib_there)) {
        cli__error(stderr,
                   "cannot attach to %d: %s is not the same file inside its "
                   "filesystem (another mount namespace or root); copy librheap.so "
                   "to a path it sees and set RHEAP_LIBRARY to that path",
                   (int)pid, lib);
        return -1;
    }
    /* A librheap loaded already must be this one: dlopen would load a file of another path,
     * or one rebuilt since at the same path, as a second copy. */
    const rheap__pt_map_t *other = find_module(&a->maps, is_librheap);
    if (other &&
        (strcmp(other->path, lib) != 0 || other->inode != (unsigned long long)there.st_ino)) {
        cli__error(stderr,
                   "cannot attach to %d: it already has another librheap loaded (%s%s); "
                   "attach with the rheap that goes with it",
                   (int)pid, other->path,
                   strcmp(other->path, lib) == 0 ? ", replaced on disk since" : "");
        return -1;
    }
    /* dlopen, dlsym and dlerror in its libc (glibc 2.34 and later have them there). */
    char file[PATH_MAX + 64];
    in_root(pid, a->libc->path, file, sizeof file);
    const char *names[3] = {"dlopen", "dlsym", "dlerror"};
    uint64_t v[3], first = 0;
    if (rheap__pt_elf_symbols(file, names, v, 3, &first) != 0 || !v[0] || !v[1]) {
        cli__error(stderr,
                   "cannot attach to %d: no dlopen in its libc (%s): glibc 2.34 or "
                   "later is needed",
                   (int)pid, a->libc->path);
        return -1;
    }
    uint64_t bias = a->libc->start - first;
    a->dlopen_at = bias + v[0];
    a->dlsym_at = bias + v[1];
    a->dlerror_at = v[2] ? bias + v[2] : 0;
    return 0;
}

/* The recording directory: made beside the output when the process sees it there, else in
 * the process's own /tmp (reached through /proc/PID/root). `ours` is the path from here,
 * `theirs` the path the process is given. Owned by the process's user. 0 or -1. */
static int make_recdir(const attach_opts_t *o, char *ours, char *theirs, size_t len)
{
    if (cli__make_private_dir(o->dir, o->output, "rheap-attach", ours, len) != 0)
        return -1;
    char there[PATH_MAX + 64];
    in_root(o->pid, ours, there, sizeof there);
    if (same_file(ours, there)) {
        snprintf(theirs, len, "%s", ours);
    } else {
        rmdir(ours);
        char tmp[PATH_MAX];
        in_root(o->pid, "/tmp", tmp, sizeof tmp);
        if (snprintf(ours, len, "%s/rheap-attach-XXXXXX", tmp) >= (int)len || !mkdtemp(ours)) {
            cli__error(stderr,
                       "cannot attach to %d: no directory for the recording in its "
                       "filesystem (%s): %s",
                       (int)o->pid, tmp, strerror(errno));
            return -1;
        }
        snprintf(theirs, len, "%s", ours + strlen(tmp) - strlen("/tmp"));
    }
    long euid = -1, egid = -1; /* the second numbers of Uid and Gid: the effective ids */
    status_field(o->pid, "Uid", &euid);
    status_field(o->pid, "Gid", &egid);
    if (euid >= 0 && egid >= 0 && (uid_t)euid != geteuid() &&
        chown(ours, (uid_t)euid, (gid_t)egid) != 0) {
        cli__error(stderr, "cannot give %s to the process's user %ld: %s", ours, euid,
                   strerror(errno));
        cli__remove_tree(ours);
        return -1;
    }
    return 0;
}

/* The settings for librheap: NAME=VALUE strings, each NUL-terminated, then an empty one. */
static size_t make_settings(const attach_opts_t *o, const char *dir, char *buf, size_t len)
{
    size_t n = 0;
    const char *items[3][2] = {{"RHEAP_DIR", dir},
                               {"RHEAP_DEPTH", o->depth},
                               {"RHEAP_MODE", o->profile ? "profile" : "trace"}};
    for (int i = 0; i < 3; i++) {
        if (!items[i][1])
            continue;
        int w = snprintf(buf + n, len - n, "%s=%s", items[i][0], items[i][1]);
        if (w < 0 || (size_t)w + 2 > len - n)
            return 0;
        n += (size_t)w + 1;
    }
    buf[n++] = 0;
    return n;
}

/* Step 4: the window. Returns when it is over, the process gone, or the user stopped it. */
static void window(attach_t *a, double duration)
{
    uint64_t end = duration > 0 ? a->committed + (uint64_t)(duration * 1e9) : UINT64_MAX;
    while (!stop_asked) {
        uint64_t now = rheap__pt_now_ns();
        if (now >= end || !alive(a->pid))
            return;
        beat(a);
        uint64_t nap = end - now < 100000000u ? end - now : 100000000u;
        struct timespec ts = {(time_t)(nap / 1000000000u), (long)(nap % 1000000000u)};
        nanosleep(&ts, NULL); /* a signal cuts it short */
    }
}

/* After the release: librheap's attach thread ends the recording; wait until its files are complete
 * (or the process is gone), beating meanwhile. */
static void wait_stopped(attach_t *a)
{
    uint64_t until = rheap__pt_now_ns() + 60000000000u;
    while (rheap__pt_now_ns() < until && alive(a->pid)) {
        if (read_ctl(a) != 0 || atomic_load(&a->ctl.state) == RHEAP__ATTACH_STOPPED)
            return;
        beat(a);
        struct timespec ms = {0, 2000000};
        nanosleep(&ms, NULL);
    }
}

int cli__cmd_attach(int argc, char **argv)
{
    attach_opts_t o = {0};
    int p = parse_attach(argc, argv, &o);
    if (p <= 0)
        return p == 0 ? RHEAP_EXIT_OK : RHEAP_EXIT_USAGE;
    char default_output[64];
    if (!o.output) {
        snprintf(default_output, sizeof default_output, "rheap-%d.db", (int)o.pid);
        o.output = default_output;
    }
    int checked = cli__output_check(o.output, o.force, "database file");
    if (checked != RHEAP_EXIT_OK)
        return checked;
    attach_t a;
    memset(&a, 0, sizeof a);
    a.pid = o.pid;
    a.begin = rheap__pt_now_ns();
    char lib[PATH_MAX], lib_there[PATH_MAX + 64];
    if (cli__find_library(lib, sizeof lib) != 0)
        return RHEAP_EXIT_USAGE;
    if (check_process(&a, lib, lib_there, sizeof lib_there) != 0) {
        rheap__pt_maps_free(&a.maps);
        return RHEAP_EXIT_USAGE;
    }
    char ours[PATH_MAX], theirs[PATH_MAX], settings[PATH_MAX + 128];
    if (make_recdir(&o, ours, theirs, sizeof ours) != 0) {
        rheap__pt_maps_free(&a.maps);
        return RHEAP_EXIT_USAGE;
    }
    size_t settings_len = make_settings(&o, theirs, settings, sizeof settings);

    /* From here the window ends on these signals; until the slots are redirected, they only
     * shorten it to nothing. */
    struct sigaction sa = {0}, old_int, old_term, old_hup;
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    sigaction(SIGHUP, &sa, &old_hup);

    int rc = RHEAP_EXIT_USAGE;
    if (borrow_thread(&a, lib, settings, settings_len) != 0) {
        /* A prepare that started the recording before refusing ends it itself; whatever was
         * made is not the user's. */
        cli__remove_tree(ours);
        goto out;
    }
    long slots = stopped_world_call(&a, a.commit_at, &a.commit_pause, &a.commit_threads);
    a.committed = rheap__pt_now_ns();
    if (slots < 0) {
        int e = errno;
        cli__error(stderr, "cannot attach to %d: redirecting its allocator failed: %s", (int)a.pid,
                   strerror(e));
        /* Prepared, not committed: the release ends the recording. */
        size_t ignored;
        uint64_t pause = 0;
        stopped_world_call(&a, a.release_at, &pause, &ignored);
        wait_stopped(&a);
        cli__remove_tree(ours);
        goto out;
    }
    read_ctl(&a);
    if (!o.quiet)
        cli__note(stderr, "attached to %d: %ld allocator slots in %u modules redirected%s",
                  (int)a.pid, slots, a.ctl.modules,
                  o.duration > 0 ? "" : "; Ctrl-C ends the window");
    window(&a, o.duration);
    int gone = !alive(a.pid);
    if (!gone) {
        long restored = stopped_world_call(&a, a.release_at, &a.release_pause, &a.release_threads);
        a.released = rheap__pt_now_ns();
        if (restored < 0 && alive(a.pid))
            cli__warning(stderr,
                         "putting %d's allocator back failed (%s); librheap does it "
                         "itself in 5 s",
                         (int)a.pid, strerror(errno));
        wait_stopped(&a);
    } else {
        a.released = rheap__pt_now_ns();
        if (!o.quiet)
            cli__note(stderr, "process %d ended during the window", (int)a.pid);
    }
    if (o.timings)
        cli__note(stderr,
                  "timings: begin_ns=%llu committed_ns=%llu released_ns=%llu "
                  "borrowed_us=%llu commit_pause_us=%llu commit_threads=%zu "
                  "release_pause_us=%llu release_threads=%zu slots=%ld",
                  (unsigned long long)a.begin, (unsigned long long)a.committed,
                  (unsigned long long)a.released, (unsigned long long)(a.borrowed / 1000),
                  (unsigned long long)(a.commit_pause / 1000), a.commit_threads,
                  (unsigned long long)(a.release_pause / 1000), a.release_threads, slots);

    /* Step 6. The process is on its own again: Ctrl-C may stop the conversion now. */
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGHUP, &old_hup, NULL);
    size_t n;
    cli__rec_t *recs = cli__collect_recordings(ours, &n, o.quiet);
    if (!n) {
        cli__error(stderr, "no recording was made; %s not written", o.output);
        cli__remove_tree(ours);
        rc = RHEAP_EXIT_INPUT;
        goto out;
    }
    const char **inputs = malloc(n * sizeof *inputs);
    if (!inputs) {
        cli__free_recordings(recs, n);
        rc = RHEAP_EXIT_OUTPUT;
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        inputs[i] = recs[i].path;
    rc = cli__convert_cmd(inputs, n, NULL, o.output, o.force, -1, 1, !o.quiet);
    free(inputs);
    cli__free_recordings(recs, n);
    int converted = rc == RHEAP_EXIT_OK || rc == RHEAP_EXIT_WARNINGS;
    if (converted && !o.keep)
        cli__remove_tree(ours);
    else if (!converted)
        cli__note(stderr,
                  "the recording is kept in %s; convert it again with: rheap convert "
                  "%s/rip-* -o %s",
                  ours, ours, o.output);
    else
        cli__note(stderr, "recording kept in %s", ours);
out:
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGHUP, &old_hup, NULL);
    rheap__pt_maps_free(&a.maps);
    return rc;
}
