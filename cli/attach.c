/*
 * attach.c: `rheap attach [-o OUT.db] [--duration S] [--profile] [--depth N] ... PID`: records a
 * process that is already running, for a window, without restarting it.
 *
 * The joining itself is the injection library (../inject/): its checks, librheap loaded by a
 * borrowed thread, the commit and the release with every thread stopped. Here: the options,
 * the recording's directory and librheap's settings, the window (rheap holds no thread, the
 * process runs untraced; rheap only beats, so that librheap ends the recording itself if rheap
 * dies), each failure as one line that names the fix, and the conversion as rheap run's.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rheap_inject.h>

#include "cli.h"

typedef struct {
    const char *output;
    /* The settings table's options that librheap takes when attached (ATTACH_SETTINGS): the
     * text passed on, NULL when not given. */
    const char *settings[RHEAP__SET_COUNT];
    const char *dir;
    double duration; /* seconds; 0: until Ctrl-C */
    int force, keep, quiet, timings;
    pid_t pid;
} attach_opts_t;

/* The settings an attached librheap takes (libtrace/src/got.c, read_settings): those of a window
 * of recording. The toggle signal and the state at start are `rheap run`'s: an attach is a
 * window from now on. */
static const rheap__setting_id_t ATTACH_SETTINGS[] = {RHEAP__SET_DEPTH, RHEAP__SET_MODE,
                                                      RHEAP__SET_SAMPLE_INTERVAL,
                                                      RHEAP__SET_SEGMENT_KB};
#define ATTACH_NSETTINGS (sizeof ATTACH_SETTINGS / sizeof *ATTACH_SETTINGS)

static void usage_attach(FILE *f)
{
    fprintf(f,
            "Usage: rheap attach [OPTIONS] PID\n"
            "\n"
            "Records the running process PID, which was started without rheap, for a window:\n"
            "from now until --duration ends or rheap attach gets Ctrl-C (SIGINT) or SIGTERM.\n"
            "librheap is loaded into the process and its allocator calls are sent to it;\n"
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
            "  --sample-interval N profile mode: mean bytes between samples (default 524288)\n"
            "  --segment-kb N      profile mode: KiB per thread file, then the thread goes on\n"
            "                      in a new segment (default 4096; 0: no limit)\n"
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
            "Exit status: 0 when the window was recorded and converted; 1 when rheap could\n"
            "not attach (one line says why and what to do); else the status of rheap\n"
            "convert.\n");
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
        const char *before[RHEAP__SET_COUNT];
        memcpy(before, o->settings, sizeof before);
        int taken = cli__setting_option("attach", argc, argv, &i, o->settings);
        if (taken < 0)
            return -1;
        if (taken) {
            int ok = 0;
            for (size_t k = 0; k < ATTACH_NSETTINGS; k++)
                ok |= o->settings[ATTACH_SETTINGS[k]] != before[ATTACH_SETTINGS[k]];
            if (!ok) {
                cli__error(stderr, "%s is an option of rheap run, not of rheap attach", a);
                return -1;
            }
            continue;
        }
        const char **value = NULL;
        if (!strcmp(a, "-o") || !strcmp(a, "--output"))
            value = &o->output;
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
    for (size_t k = 0; k < ATTACH_NSETTINGS; k++)
        if (cli__check_setting(ATTACH_SETTINGS[k], &o->settings[ATTACH_SETTINGS[k]]) != 0)
            return -1;
    if (o->settings[RHEAP__SET_SAMPLE_INTERVAL] && !o->settings[RHEAP__SET_MODE]) {
        cli__error(stderr, "--sample-interval needs --profile");
        return -1;
    }
    return 1;
}

/* ---- Why the process cannot be joined: one line that names the fix ---- */

/* The line for a failure of the injection library. */
static void explain(pid_t pid, const ri_err_t *e, const char *lib)
{
    int p = (int)pid;
    switch (e->status) {
    case RI_E_NO_PROCESS: cli__error(stderr, "cannot attach to %d: no such process", p); break;
    case RI_E_SELF: cli__error(stderr, "cannot attach to %d: that is rheap itself", p); break;
    case RI_E_OTHER_USER:
        cli__error(stderr,
                   "cannot attach to %d: it belongs to another user (uid %ld); run "
                   "rheap attach as that user, or as root",
                   p, e->id);
        break;
    case RI_E_TRACED:
        cli__error(stderr,
                   "cannot attach to %d: it is already traced by process %ld (a "
                   "debugger or tracer); detach that first",
                   p, e->id);
        break;
    case RI_E_PERM:
        if (e->yama == 3)
            cli__error(stderr,
                       "cannot attach to %d: ptrace is disabled on this machine "
                       "(kernel.yama.ptrace_scope = 3, until the next boot)",
                       p);
        else if (e->yama >= 1 && !e->cap)
            cli__error(stderr,
                       "cannot attach to %d: ptrace not permitted (kernel.yama.ptrace_scope = "
                       "%d); run rheap attach as root, or allow it with: sysctl "
                       "kernel.yama.ptrace_scope=0",
                       p, e->yama);
        else if (!e->cap)
            cli__error(stderr,
                       "cannot attach to %d: ptrace not permitted; run rheap attach as the "
                       "process's user or as root (in a container: add CAP_SYS_PTRACE)",
                       p);
        else
            cli__error(stderr,
                       "cannot attach to %d: ptrace not permitted although rheap has "
                       "CAP_SYS_PTRACE (a security module refuses it)",
                       p);
        break;
    case RI_E_STATIC:
        cli__error(stderr,
                   "cannot attach to %d: it is statically linked, so its malloc "
                   "cannot be redirected; start it under rheap run instead",
                   p);
        break;
    case RI_E_MAPS:
        cli__error(stderr, "cannot attach to %d: cannot read /proc/%d/maps: %s", p, p,
                   strerror(e->sys));
        break;
    case RI_E_NO_LIBC:
        cli__error(stderr,
                   "cannot attach to %d: it has no libc.so mapped (statically linked, "
                   "or not a glibc program); start it under rheap run instead",
                   p);
        break;
    case RI_E_LIB_UNSEEN:
        cli__error(stderr,
                   "cannot attach to %d: %s is not the same file inside its "
                   "filesystem (another mount namespace or root); copy librheap.so "
                   "to a path it sees and set RHEAP_LIBRARY to that path",
                   p, lib);
        break;
    case RI_E_OTHER_LIB:
        cli__error(stderr,
                   "cannot attach to %d: it already has another librheap loaded (%s%s); "
                   "attach with the rheap that goes with it",
                   p, e->text, e->replaced ? ", replaced on disk since" : "");
        break;
    case RI_E_NO_DLOPEN:
        cli__error(stderr,
                   "cannot attach to %d: no dlopen in its libc (%s): glibc 2.34 or "
                   "later is needed",
                   p, e->text);
        break;
    case RI_E_GONE: cli__error(stderr, "cannot attach to %d: the process is gone", p); break;
    case RI_E_PTRACE:
        cli__error(stderr, "cannot attach to %d: ptrace: %s", p, strerror(e->sys));
        break;
    case RI_E_NO_SAFE_POINT:
        cli__error(stderr,
                   "cannot attach to %d: in 5 s no thread stopped outside the allocator "
                   "and the dynamic loader; try again",
                   p);
        break;
    case RI_E_DLOPEN_CALL:
        cli__error(stderr, "cannot attach to %d: the call of its dlopen failed: %s", p,
                   strerror(e->sys));
        break;
    case RI_E_DLOPEN:
        cli__error(stderr, "cannot attach to %d: its dlopen cannot load %s: %s", p, lib,
                   e->text[0] ? e->text : "no reason given");
        break;
    case RI_E_NO_SYMBOL:
        cli__error(stderr,
                   "cannot attach to %d: %s in it has no %s (a librheap of "
                   "another version?)",
                   p, lib, e->text);
        break;
    case RI_E_PREPARE:
        cli__error(stderr, "cannot attach to %d: the call of librheap's prepare failed: %s", p,
                   strerror(e->sys));
        break;
    case RI_E_CTL:
        cli__error(stderr, "cannot attach to %d: librheap's control block cannot be read", p);
        break;
    case RI_E_REFUSED: cli__error(stderr, "cannot attach to %d: %s", p, e->text); break;
    case RI_E_CALL:
        cli__error(stderr, "cannot attach to %d: redirecting its allocator failed: %s", p,
                   strerror(e->sys));
        break;
    case RI_E_DIR:
        cli__error(stderr,
                   "cannot attach to %d: no directory for the recording in its "
                   "filesystem (%s): %s",
                   p, e->text, strerror(e->sys));
        break;
    case RI_E_CHOWN:
        cli__error(stderr, "cannot give %s to the process's user %ld: %s", e->text, e->id,
                   strerror(e->sys));
        break;
    default: cli__error(stderr, "cannot attach to %d: %s", p, ri_status_str(e->status)); break;
    }
}

/* ---- Signals: the window ends on Ctrl-C, SIGTERM or SIGHUP; nothing else stops rheap ---- */

static volatile sig_atomic_t stop_asked;

static void on_stop(int sig)
{
    (void)sig;
    stop_asked = 1;
}

/* The recording directory: made beside the output when the process sees it there, else in
 * the process's own /tmp (ri_place_dir). `ours` is the path from here, `theirs` the path the
 * process is given. Owned by the process's user. 0, or -1 with the message printed. */
static int make_recdir(const attach_opts_t *o, char *ours, char *theirs, size_t len)
{
    if (cli__make_private_dir(o->dir, o->output, "rheap-attach", ours, len) != 0)
        return -1;
    ri_err_t err = {0};
    if (ri_place_dir(o->pid, ours, theirs, len, &err) != RI_OK) {
        explain(o->pid, &err, NULL);
        if (err.status == RI_E_CHOWN)
            cli__remove_tree(ours);
        return -1;
    }
    return 0;
}

/* The settings for librheap: NAME=VALUE strings, each NUL-terminated, then an empty one. */
static size_t make_settings(const attach_opts_t *o, const char *dir, char *buf, size_t len)
{
    size_t n = 0;
    /* The mode always: the process's own environment may name another. */
    const char *items[2 + ATTACH_NSETTINGS][2] = {
        {"RHEAP_DIR", dir},
        {rheap__settings[RHEAP__SET_MODE].env,
         o->settings[RHEAP__SET_MODE] ? o->settings[RHEAP__SET_MODE]
                                      : rheap__settings[RHEAP__SET_MODE].run_text}};
    size_t count = 2;
    for (size_t k = 0; k < ATTACH_NSETTINGS; k++) {
        if (ATTACH_SETTINGS[k] == RHEAP__SET_MODE)
            continue;
        items[count][0] = rheap__settings[ATTACH_SETTINGS[k]].env;
        items[count++][1] = o->settings[ATTACH_SETTINGS[k]];
    }
    for (size_t i = 0; i < count; i++) {
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

/* The window. Returns when it is over, the process gone, or the user stopped it. */
static void window(ri_target_t *t, pid_t pid, uint64_t start, double duration)
{
    uint64_t end = duration > 0 ? start + (uint64_t)(duration * 1e9) : UINT64_MAX;
    while (!stop_asked) {
        uint64_t now = ri_now_ns();
        if (now >= end || !ri_alive(pid))
            return;
        ri_beat(t);
        uint64_t nap = end - now < 100000000u ? end - now : 100000000u;
        struct timespec ts = {(time_t)(nap / 1000000000u), (long)(nap % 1000000000u)};
        nanosleep(&ts, NULL); /* a signal cuts it short */
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
    uint64_t begin = ri_now_ns(), committed, released;
    char lib[PATH_MAX];
    if (cli__find_library(lib, sizeof lib) != 0)
        return RHEAP_EXIT_USAGE;
    ri_target_t *t;
    ri_err_t err;
    if (ri_open(o.pid, lib, &t, &err) != RI_OK) {
        explain(o.pid, &err, lib);
        return RHEAP_EXIT_USAGE;
    }
    char ours[PATH_MAX], theirs[PATH_MAX], settings[PATH_MAX + 128];
    if (make_recdir(&o, ours, theirs, sizeof ours) != 0) {
        ri_close(t);
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
    if (ri_load(t, lib, settings, settings_len, &err) != RI_OK) {
        explain(o.pid, &err, lib);
        /* A prepare that started the recording before refusing ends it itself; whatever was
         * made is not the user's. */
        cli__remove_tree(ours);
        goto out;
    }
    long slots;
    ri_status_t st = ri_commit(t, &slots, &err);
    committed = ri_now_ns();
    if (st != RI_OK) {
        explain(o.pid, &err, lib);
        /* Prepared, not committed: the release ends the recording. */
        ri_release(t, &err);
        ri_wait_stopped(t);
        cli__remove_tree(ours);
        goto out;
    }
    unsigned modules = ri_modules(t);
    if (!o.quiet)
        cli__note(stderr, "attached to %d: %ld allocator slots in %u modules redirected%s",
                  (int)o.pid, slots, modules, o.duration > 0 ? "" : "; Ctrl-C ends the window");
    window(t, o.pid, committed, o.duration);
    if (ri_alive(o.pid)) {
        st = ri_release(t, &err);
        released = ri_now_ns();
        if (st != RI_OK && ri_alive(o.pid))
            cli__warning(stderr,
                         "putting %d's allocator back failed (%s); librheap does it "
                         "itself in 5 s",
                         (int)o.pid, strerror(err.sys));
        ri_wait_stopped(t);
    } else {
        released = ri_now_ns();
        if (!o.quiet)
            cli__note(stderr, "process %d ended during the window", (int)o.pid);
    }
    const ri_timings_t *tm = ri_timings(t);
    if (o.timings)
        cli__note(stderr,
                  "timings: begin_ns=%llu committed_ns=%llu released_ns=%llu "
                  "borrowed_us=%llu commit_pause_us=%llu commit_threads=%zu "
                  "release_pause_us=%llu release_threads=%zu slots=%ld",
                  (unsigned long long)begin, (unsigned long long)committed,
                  (unsigned long long)released, (unsigned long long)(tm->borrowed / 1000),
                  (unsigned long long)(tm->commit_pause / 1000), tm->commit_threads,
                  (unsigned long long)(tm->release_pause / 1000), tm->release_threads, slots);

    /* The process is on its own again: Ctrl-C may stop the conversion now. */
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
    rc = cli__convert_cmd(inputs, n, NULL, o.output, o.force, -1, 1, !o.quiet, 0);
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
    ri_close(t);
    return rc;
}
