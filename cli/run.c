/*
 * run.c: `rheap run -o OUT.db -- PROG ARGS...`: records a program and everything it forks or
 * execs, then converts all of it into one database.
 *
 * librheap does the following: preloaded, it records each process into its own rip-<pid>[-N]/
 * under $RHEAP_DIR and stays in the environment of every child. This file gives the run a
 * private directory for those recordings, waits for the whole process tree (rheap becomes a
 * subreaper, so orphaned grandchildren come back to it), converts every recording it finds
 * there in-process, and exits with the program's status as a shell would report it (or, when
 * the program succeeded but its recordings could not be converted, with the converter's).
 *
 * The conversion does not wait for the end: a thread converts each recording whose process has
 * ended while the others run on, and follows a recording that holds most of the run's bytes
 * while the program writes it (rheap_convert's live inputs), so that when the program exits only
 * its last events are left to convert, and the summary comes soon after.
 */
#define _GNU_SOURCE /* pipe2 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>


#include <rheap_inject.h>
#include <rip.h>

#include "cli.h"
#include "rheap_settings.h"

typedef struct {
    const char *output;
    const char *dir;          /* parent of the private recordings directory */
    /* The settings table's options (--depth, --profile, ...): the text passed on in each
     * setting's environment variable, NULL when not given. */
    const char *settings[RHEAP__SET_COUNT];
    int keep, force, quiet;
    int nice;                 /* --nice: how much lower PROGRAM's priority is than rheap's */
    int progress;             /* the conversion's bar: 1 always, 0 never, -1 on a terminal */
    uint64_t memory;          /* --memory: the converter's budget (0: its default) */
    char **argv;              /* the program and its arguments */
    char default_output[PATH_MAX]; /* the name chosen when no -o was given */
} run_opts_t;

static void usage_run(FILE *f)
{
    fprintf(f,
            "Usage: rheap run [OPTIONS] [-o OUT.db] -- PROGRAM [ARGS...]\n"
            "\n"
            "Runs PROGRAM with librheap preloaded, records it and every process it forks or\n"
            "execs, waits until all of them have exited, converts every recording into OUT.db\n"
            "and prints a short summary. Each process that has ended, and the one that\n"
            "records most, are converted while PROGRAM runs (the database writes at low\n"
            "priority while they keep up), so the summary comes soon after the end.\n"
            "PROGRAM's stdin, stdout and stderr are its own; rheap's messages go to stderr,\n"
            "prefixed \"rheap:\".\n"
            "\n"
            "Options:\n"
            "  -o, --output FILE   the database to write (default: rheap-PROGRAM.db, or\n"
            "                      rheap-PROGRAM.N.db when that exists; rheap says which)\n"
            "  -f, --force         replace FILE if it exists\n");
    cli__setting_usage(f);
    fprintf(f,
            "  --dir DIR           make the recordings' private directory in DIR (default:\n"
            "                      beside the output)\n"
            "  --keep              keep the recordings (rip-<pid>/ directories) and say where\n"
            "  --progress          always show the conversion's progress bar on stderr\n"
            "  --no-progress       never show it (default: when stderr is a terminal)\n"
            CLI_MEMORY_HELP
            "  --nice N            run PROGRAM N steps of nice below rheap (0-19, default\n"
            "                      10), so that on busy cores the conversion keeps up with\n"
            "                      what PROGRAM records (0: at rheap's own priority)\n"
            "  -q, --quiet         no summary\n"
            "  -h, --help          show this help\n"
            "\n"
            "The tracer library is $RHEAP_LIBRARY when set, else librheap.so from the lib\n"
            "directory next to rheap's bin directory (or the build tree's libtrace/).\n"
            "\n"
            "Exit status: PROGRAM's status (128+N when a signal N killed it); 1 for a usage\n"
            "error (nothing was run); 127 when PROGRAM could not be started. When PROGRAM\n"
            "succeeded but nothing was recorded, 2; when its recording could not be\n"
            "converted, the status of rheap convert (2 bad input, 4 the database could not\n"
            "be written) and the recordings are kept. A statically linked PROGRAM cannot be\n"
            "recorded (its malloc cannot be interposed): rheap says so and exits with\n"
            "PROGRAM's status.\n");
}

/* Without -o, the database is rheap-PROG.db in the current directory, or rheap-PROG.2.db,
 * .3, ... when that exists: a name no earlier run has taken, so nothing is replaced. Says
 * which. 0, or -1 when no name is free. */
static int default_output(run_opts_t *o)
{
    const char *slash = strrchr(o->argv[0], '/');
    const char *prog = slash ? slash + 1 : o->argv[0];
    for (int n = 1; n < 1000; n++) {
        int w = n == 1 ? snprintf(o->default_output, sizeof o->default_output, "rheap-%s.db", prog)
                       : snprintf(o->default_output, sizeof o->default_output, "rheap-%s.%d.db",
                                  prog, n);
        if (w < 0 || (size_t)w >= sizeof o->default_output)
            break;
        struct stat sb;
        if (lstat(o->default_output, &sb) != 0) {
            o->output = o->default_output;
            cli__note(stderr, "no -o given: writing %s", o->output);
            return 0;
        }
    }
    cli__error(stderr, "no output given and no free name rheap-%s.N.db; add -o OUT.db before "
                       "the program", prog);
    return -1;
}

/* The program runs this much below rheap's priority. The conversion needs about as much CPU as
 * a build it records (each compiler's recording is converted once the compiler ends): at equal
 * priority on two cores the build's processes outnumbered the conversion's two workers, which
 * fell behind by a quarter of their work, and the backlog was the wait after the build's end
 * (8.5 s on this project's build, bench/RESULTS.md). Ten steps down (the `nice` command's
 * default) the workers run whenever they have a recording, the build takes what they leave,
 * and the run as a whole ends no later. A program that leaves a core free is not slowed. */
#define RUN_NICE 10

/* --nice N: 0 to 19. 0, or -1 (said). */
static int nice_option(const char *text, int *n)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end || v < 0 || v > 19) {
        cli__error(stderr, "--nice %s: expected a number from 0 to 19", text);
        return -1;
    }
    *n = (int)v;
    return 0;
}

static int parse_run(int argc, char **argv, run_opts_t *o)
{
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--")) {
            o->argv = argv + i + 1;
            break;
        }
        if (a[0] != '-') {
            o->argv = argv + i;
            break;
        }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage_run(stdout);
            return 0;
        }
        const char **value = NULL, *memory = NULL, *nice = NULL;
        if (!strcmp(a, "-o") || !strcmp(a, "--output"))
            value = &o->output;
        else if (!strcmp(a, "--dir"))
            value = &o->dir;
        else if (!strcmp(a, "--memory"))
            value = &memory;
        else if (!strcmp(a, "--nice"))
            value = &nice;
        if (value) {
            if (i + 1 >= argc) {
                cli__error(stderr, "%s needs a value (try rheap run --help)", a);
                return -1;
            }
            *value = argv[++i];
            if (memory && cli__memory_option("run", memory, &o->memory) != 0)
                return -1;
            if (nice && nice_option(nice, &o->nice) != 0)
                return -1;
            continue;
        }
        int taken = cli__setting_option("run", argc, argv, &i, o->settings);
        if (taken < 0)
            return -1;
        if (taken)
            continue;
        if (!strncmp(a, "--output=", 9))
            o->output = a + 9;
        else if (!strncmp(a, "--dir=", 6))
            o->dir = a + 6;
        else if (!strncmp(a, "--memory=", 9)) {
            if (cli__memory_option("run", a + 9, &o->memory) != 0)
                return -1;
        }
        else if (!strncmp(a, "--nice=", 7)) {
            if (nice_option(a + 7, &o->nice) != 0)
                return -1;
        }
        else if (!strcmp(a, "-f") || !strcmp(a, "--force"))
            o->force = 1;
        else if (!strcmp(a, "--keep"))
            o->keep = 1;
        else if (!strcmp(a, "-q") || !strcmp(a, "--quiet"))
            o->quiet = 1;
        else if (!strcmp(a, "--progress"))
            o->progress = 1;
        else if (!strcmp(a, "--no-progress"))
            o->progress = 0;
        else {
            cli__error(stderr, "unknown option %s (try rheap run --help)", a);
            return -1;
        }
    }
    if (!o->argv || !o->argv[0]) {
        cli__error(stderr, "no program given (rheap run -o OUT.db -- PROGRAM ARGS...)");
        return -1;
    }
    if (!o->output && default_output(o) != 0)
        return -1;
    for (int id = 0; id < RHEAP__SET_COUNT; id++)
        if (cli__check_setting((rheap__setting_id_t)id, &o->settings[id]) != 0)
            return -1;
    if (o->settings[RHEAP__SET_SAMPLE_INTERVAL] && !o->settings[RHEAP__SET_MODE]) {
        cli__error(stderr, "--sample-interval needs --profile");
        return -1;
    }
    return 1;
}

/* ---- Running the program ---- */

static volatile sig_atomic_t child_pid;
static volatile sig_atomic_t stop_waiting;

/* A terminating signal sent to rheap alone (kill PID) is passed on to the program, so it can
 * end cleanly and its recording is still converted. Once the program has exited, the signal
 * tells rheap to stop waiting for the processes it left behind (a daemon may never exit). */
static void forward(int sig)
{
    if (child_pid > 0)
        kill((pid_t)child_pid, sig);
    else
        stop_waiting = 1;
}

static void ignore_signal(int sig)
{
    (void)sig;
}

/* The signals rheap handles while the program runs, and whether each was ignored when rheap
 * started (nohup, a background job of a shell without job control, `trap '' SIG`). An ignored
 * signal stays ignored: exec keeps SIG_IGN, so the program starts as it would untraced, and
 * rheap neither forwards it nor stops for it, as a shell that ignores it would not. */
static const int run_signals[] = {SIGINT, SIGQUIT, SIGTERM, SIGHUP};
static int was_ignored[NSIG];

static void note_ignored(void)
{
    for (size_t i = 0; i < sizeof run_signals / sizeof *run_signals; i++) {
        struct sigaction sa;
        was_ignored[run_signals[i]] =
            sigaction(run_signals[i], NULL, &sa) == 0 && sa.sa_handler == SIG_IGN;
    }
}

/* sigaction(sig, act), unless sig was ignored at start: it stays so. */
static void take_signal(int sig, const struct sigaction *act, struct sigaction *old)
{
    if (was_ignored[sig]) {
        if (old)
            sigaction(sig, NULL, old);
        return;
    }
    sigaction(sig, act, old);
}

static void child_exec(const run_opts_t *o, const char *lib, const char *recdir, int errfd,
                       const sigset_t *mask)
{
    for (size_t i = 0; i < sizeof run_signals / sizeof *run_signals; i++)
        signal(run_signals[i], was_ignored[run_signals[i]] ? SIG_IGN : SIG_DFL);
    sigprocmask(SIG_SETMASK, mask, NULL);
    /* librheap goes first, so it sees allocations before any other preloaded allocator. */
    const char *old = getenv("LD_PRELOAD");
    size_t n = strlen(lib) + (old ? strlen(old) : 0) + 2;
    char *pre = malloc(n);
    if (pre) {
        snprintf(pre, n, "%s%s%s", lib, old && *old ? ":" : "", old && *old ? old : "");
        setenv("LD_PRELOAD", pre, 1);
    }
    setenv("RHEAP_DIR", recdir, 1);
    for (int id = 0; id < RHEAP__SET_COUNT; id++) {
        const rheap__setting_t *s = &rheap__settings[id];
        const char *text = o->settings[id] ? o->settings[id] : s->run_text;
        if (text && *text)
            setenv(s->env, text, 1);
        else if (text)
            unsetenv(s->env);
    }
    if (o->nice > 0)
        cli__lower_priority(o->nice);
    execvp(o->argv[0], o->argv);
    int e = errno;
    ssize_t w = write(errfd, &e, sizeof e);
    (void)w;
    _exit(127);
}

/* Starts the program; returns its pid, or -1 (message printed) when it could not be started. */
static pid_t start_program(const run_opts_t *o, const char *lib, const char *recdir)
{
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) != 0) {
        cli__error(stderr, "pipe: %s", strerror(errno));
        return -1;
    }
    fflush(NULL);
    /* The signals forward() passes on wait from before the fork until child_pid is set: the
     * program may start, and be signalled through rheap, before this process runs again, and
     * forward() would take such a signal for one sent after the program, drop it and stop
     * waiting for the program's descendants. The child gets the mask back once its handlers are
     * the program's. */
    sigset_t fwd, mask;
    sigemptyset(&fwd);
    sigaddset(&fwd, SIGTERM);
    sigaddset(&fwd, SIGHUP);
    sigprocmask(SIG_BLOCK, &fwd, &mask);
    pid_t pid = fork();
    if (pid < 0) {
        sigprocmask(SIG_SETMASK, &mask, NULL);
        cli__error(stderr, "fork: %s", strerror(errno));
        close(pfd[0]);
        close(pfd[1]);
        return -1;
    }
    if (pid == 0) {
        close(pfd[0]);
        child_exec(o, lib, recdir, pfd[1], &mask);
    }
    child_pid = pid;
    sigprocmask(SIG_SETMASK, &mask, NULL);
    close(pfd[1]);
    /* The pipe closes on a successful exec; an errno arrives when it failed. */
    int e = 0;
    ssize_t r;
    do
        r = read(pfd[0], &e, sizeof e);
    while (r < 0 && errno == EINTR);
    close(pfd[0]);
    if (r == (ssize_t)sizeof e) {
        child_pid = 0;
        waitpid(pid, NULL, 0);
        cli__error(stderr, "cannot run %s: %s%s", o->argv[0], strerror(e),
                     e == ENOENT && !strchr(o->argv[0], '/') ? " (not found in PATH)" : "");
        return -1;
    }
    return pid;
}

/* Waits for the program, then for every descendant that outlived it (they are reparented to
 * rheap, a subreaper): their recordings are complete only once they have exited. Returns the
 * program's wait status. */
static int wait_all(pid_t pid)
{
    int status = 0, ws;
    for (;;) {
        pid_t w = waitpid(pid, &ws, 0);
        if (w == pid) {
            status = ws;
            break;
        }
        if (w < 0 && errno != EINTR) {
            status = 0;
            break;
        }
    }
    child_pid = 0;
    /* From now on Ctrl-C, like SIGTERM and SIGHUP, ends the wait below. The signals stay blocked
     * except inside sigsuspend, so one that arrives between the check of stop_waiting and the
     * wait is not lost: it is delivered when sigsuspend unblocks it. SIGCHLD gets a handler
     * that does nothing, so that a descendant's exit also wakes sigsuspend. */
    struct sigaction stop = {0}, chld = {0}, old_chld;
    stop.sa_handler = forward;
    sigemptyset(&stop.sa_mask);
    chld.sa_handler = ignore_signal;
    sigemptyset(&chld.sa_mask);
    sigset_t block, old_mask;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGHUP);
    sigaddset(&block, SIGCHLD);
    sigprocmask(SIG_BLOCK, &block, &old_mask);
    take_signal(SIGINT, &stop, NULL);
    take_signal(SIGTERM, &stop, NULL);
    take_signal(SIGHUP, &stop, NULL);
    sigaction(SIGCHLD, &chld, &old_chld);
    sigset_t wait_mask = old_mask;
    sigdelset(&wait_mask, SIGINT);
    sigdelset(&wait_mask, SIGTERM);
    sigdelset(&wait_mask, SIGHUP);
    sigdelset(&wait_mask, SIGCHLD);
    int said = 0;
    while (!stop_waiting) {
        pid_t w = waitpid(-1, &ws, WNOHANG);
        if (w > 0 || (w < 0 && errno == EINTR))
            continue;
        if (w < 0)
            break; /* ECHILD: nothing left */
        if (!said) {
            cli__note(stderr, "the program exited; waiting for the processes it started "
                                "(Ctrl-C to stop waiting and convert what they recorded so far)");
            said = 1;
        }
        sigsuspend(&wait_mask);
    }
    sigaction(SIGCHLD, &old_chld, NULL);
    sigprocmask(SIG_SETMASK, &old_mask, NULL);
    if (stop_waiting)
        cli__note(stderr, "stopped waiting; processes still running are converted as far as "
                            "they recorded");
    return status;
}

/* ---- Collecting and converting the recordings ---- */

/* ---- Converting while the program runs ---- */

/* A recording is followed while it is written once its thread files hold this much: the
 * program's main work, not a shell that started it. */
#define LIVE_MIN_BYTES (1u << 20)
/* ... and once its process has run this long without starting a process of its own: a build's
 * driver (cmake --build, ninja, make) starts its first child within moments, and following it
 * would hold the conversion of every process it starts until the build ends. */
#define LIVE_MIN_AGE_MS 2000
/* How long the converter waits before it looks again for a recording to follow, or at the one
 * it follows. */
#define LIVE_POLL_MS 20
/* While nothing new is found, the looks for a recording to convert come less often, down to
 * one in this many ms: a look at a build's thousands of recordings costs milliseconds of CPU
 * (the directory listed, each process checked), taken from the build. The run's end wakes the
 * converter at once whatever the wait. */
#define LIVE_IDLE_MAX_MS 160

typedef struct {
    const char *recdir;
    const run_opts_t *o;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int over;                 /* every process has exited, or the wait for them was stopped */
    char **handed;            /* the recordings handed to the converter, sorted by path */
    size_t nhanded, caphanded;
    char *first;              /* handed out before the conversion started */
    uint64_t handed_bytes;    /* thread bytes of the recordings handed out, when handed */
    int idle_ms;              /* the wait before next_input looks again: grows while idle */
    uint32_t *parents;        /* the parents' pids of the recordings seen: never followed */
    size_t nparents, capparents;
    cli__rec_t *rest;         /* after the run: its recordings, listed once, and the next one */
    size_t nrest, irest;      /* to look at */
    int listed_rest;
    int crc;                  /* the conversion's exit status; -1: there was nothing to convert */
    int done;                 /* convert_thread has returned */
} live_t;

static void wait_ms(live_t *l, int ms)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += (long)ms * 1000000L;
    until.tv_sec += until.tv_nsec / 1000000000L;
    until.tv_nsec %= 1000000000L;
    pthread_mutex_lock(&l->mu);
    if (!l->over)
        pthread_cond_timedwait(&l->cv, &l->mu, &until);
    pthread_mutex_unlock(&l->mu);
}

static int run_over(live_t *l)
{
    pthread_mutex_lock(&l->mu);
    int over = l->over;
    pthread_mutex_unlock(&l->mu);
    return over;
}

/* Bytes of the recording's thread files. */
static uint64_t thread_bytes(const char *dir)
{
    uint64_t total = 0;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *e;
    struct stat sb;
    while ((e = readdir(d)))
        if (e->d_name[0] == 't' && fstatat(dirfd(d), e->d_name, &sb, 0) == 0)
            total += (uint64_t)sb.st_size;
    closedir(d);
    return total;
}

/* Whether a recording seen so far names pid as its parent. */
static int is_parent(const live_t *l, uint32_t pid)
{
    for (size_t i = 0; i < l->nparents; i++)
        if (l->parents[i] == pid)
            return 1;
    return 0;
}

/* The process file has its first block: the converter can tell whose recording it is. Its
 * parent's pid goes to l->parents. */
static int process_file_ready(live_t *l, const char *dir)
{
    char path[PATH_MAX];
    rip_reader_t *r;
    if ((size_t)snprintf(path, sizeof path, "%s/process.rip", dir) >= sizeof path ||
        rip_reader_open(path, &r, NULL) != RIP_OK)
        return 0;
    rip_record_t rec;
    uint32_t ppid = 0;
    while (!ppid && rip_reader_next(r, &rec, NULL) == RIP_OK)
        if (rec.kind == RIP_REC_PROCESS)
            ppid = rec.u.process.ppid;
    rip_reader_close(r);
    if (ppid && !is_parent(l, ppid) &&
        rheap_grow(&l->parents, &l->capparents, l->nparents, sizeof *l->parents, 64) == 0)
        l->parents[l->nparents++] = ppid;
    return 1;
}

/* How long the process pid has run, in ms (from /proc; 0 when it cannot tell). */
static uint64_t process_age_ms(uint32_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%u/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = 0;
    /* Field 22, starttime in clock ticks since boot, counted after the command's ')'. */
    const char *p = strrchr(buf, ')');
    for (int field = 2; p && field < 22; field++)
        p = strchr(p + 1, ' ');
    struct timespec now;
    long hz = sysconf(_SC_CLK_TCK);
    if (!p || hz <= 0 || clock_gettime(CLOCK_BOOTTIME, &now) != 0)
        return 0;
    uint64_t start_ms = strtoull(p + 1, NULL, 10) * 1000 / (uint64_t)hz;
    uint64_t now_ms = (uint64_t)now.tv_sec * 1000 + (uint64_t)now.tv_nsec / 1000000;
    return now_ms > start_ms ? now_ms - start_ms : 0;
}

/* A recording whose process has exited, or that a later recording of the same pid follows
 * (the process executed another program, or turned recording on again): complete, so it
 * converts at once, without waiting for more to be written. A pid used again by a new
 * process only makes a recording look unfinished a little longer. */
static int recording_finished(const cli__rec_t *recs, size_t n, size_t i)
{
    if (i + 1 < n && recs[i + 1].pid == recs[i].pid)
        return 1;
    return recs[i].pid && kill((pid_t)recs[i].pid, 0) != 0 && errno == ESRCH;
}

static int path_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Whether the recording at path was handed to the converter. A binary search: next_input looks
 * at every recording of the run each time it is called, and every 20 ms while nothing is new,
 * and a build's thousands of recordings made a linear search cost a core. */
static int was_handed(const live_t *l, const char *path)
{
    return l->nhanded && bsearch(&path, l->handed, l->nhanded, sizeof *l->handed, path_cmp);
}

static int seen_before(void *user, const char *path)
{
    return was_handed(user, path);
}

/* Adds path (a copy the list takes) to the handed ones, in order. 0, or -1 without memory. */
static int add_handed(live_t *l, char *path)
{
    if (rheap_grow(&l->handed, &l->caphanded, l->nhanded, sizeof *l->handed, 8) != 0)
        return -1;
    size_t at = l->nhanded;
    while (at > 0 && strcmp(l->handed[at - 1], path) > 0)
        at--;
    memmove(&l->handed[at + 1], &l->handed[at], (l->nhanded - at) * sizeof *l->handed);
    l->handed[at] = path;
    l->nhanded++;
    return 0;
}

/* next_input once the run is over: nothing new can appear, so the directory is listed once
 * and what was not handed yet goes out in pid order. Listing it at each call, as while the run
 * goes on, cost the tail of a build tree a listing of its 2,000 recordings, a path made and a
 * process file looked for in each unhanded one, per recording left: seconds of CPU. */
static const char *next_after_run(live_t *l)
{
    if (!l->listed_rest) {
        l->listed_rest = 1;
        /* Not quiet: a recording left out now (its process file was never made) is said. */
        l->rest = cli__collect_recordings_seen(l->recdir, &l->nrest, 0, seen_before, l);
    }
    while (l->irest < l->nrest) {
        const char *path = l->rest[l->irest++].path;
        if (was_handed(l, path))
            continue;
        char *copy = strdup(path);
        if (copy && add_handed(l, copy) == 0)
            return copy;
        free(copy);
    }
    return NULL;
}

/* rheap_convert's next_input. While the run goes on: a finished recording first, in pid order
 * (a build's compilers end one after another, and each converts in a moment while the tree
 * runs on, on the core the build leaves); else the recording with the most thread bytes, to be
 * followed while it is written, once it has LIVE_MIN_BYTES and most of the run's bytes, and
 * has run LIVE_MIN_AGE_MS without starting a process (a program's main work: following a
 * long-lived process that records little, a build's driver, would hold the conversion until it
 * ends while finished ones pile up). After the run, the others by pid; NULL when all were
 * handed. */
static const char *next_input(void *user)
{
    live_t *l = user;
    if (l->first) {
        char *f = l->first;
        l->first = NULL;
        return f;
    }
    for (;;) {
        if (run_over(l))
            return next_after_run(l);
        size_t n;
        cli__rec_t *recs = cli__collect_recordings_seen(l->recdir, &n, 1, seen_before, l);
        const char *pick = NULL, *busiest = NULL;
        uint32_t busiest_pid = 0;
        uint64_t best = 0, pending = 0;
        for (size_t i = 0; i < n && !pick; i++) {
            if (was_handed(l, recs[i].path))
                continue;
            if (!process_file_ready(l, recs[i].path))
                continue;
            uint64_t b = thread_bytes(recs[i].path);
            if (recording_finished(recs, n, i)) {
                pick = recs[i].path;
                l->handed_bytes += b;
                continue;
            }
            pending += b;
            if (b >= LIVE_MIN_BYTES && b > best) {
                best = b;
                busiest = recs[i].path;
                busiest_pid = (uint32_t)recs[i].pid;
            }
        }
        /* Most of what the run has recorded so far, handed or not. */
        if (!pick && busiest && best * 2 > l->handed_bytes + pending &&
            !is_parent(l, busiest_pid) && process_age_ms(busiest_pid) >= LIVE_MIN_AGE_MS) {
            pick = busiest;
            l->handed_bytes += best;
        }
        char *copy = pick ? strdup(pick) : NULL;
        cli__free_recordings(recs, n);
        if (copy && add_handed(l, copy) == 0) {
            l->idle_ms = LIVE_POLL_MS;
            return copy;
        }
        free(copy);
        if (l->idle_ms < LIVE_POLL_MS)
            l->idle_ms = LIVE_POLL_MS;
        wait_ms(l, l->idle_ms);
        if (l->idle_ms < LIVE_IDLE_MAX_MS)
            l->idle_ms *= 2;
    }
}

/* rheap_convert's growing: a recording grows until its process is gone, a later recording of
 * its pid has started (the process executed another program, or turned recording on again:
 * recording_finished hands such a one out as complete), or the run is over. Without the second,
 * the recording a build's driver made before it executed ninja looked alive as long as ninja,
 * and the conversion followed it, holding every finished compiler behind it, to the end. */
static int growing(void *user, const char *dir, int wait)
{
    live_t *l = user;
    if (wait)
        wait_ms(l, LIVE_POLL_MS);
    if (run_over(l))
        return 0;
    const char *base = strrchr(dir, '/');
    uint32_t pid, num;
    if (rip_recording_name_parse(base ? base + 1 : dir, &pid, &num) != 0)
        return 1;
    char later[PATH_MAX];
    struct stat sb;
    if ((size_t)snprintf(later, sizeof later, "%s/rip-%u-%u", l->recdir, pid, num + 1) <
            sizeof later &&
        stat(later, &sb) == 0)
        return 0;
    return !(pid && kill((pid_t)pid, 0) != 0 && errno == ESRCH);
}

static void convert_all(live_t *l);

static void *convert_thread(void *arg)
{
    live_t *l = arg;
    /* The conversion's first worker (the second is the converter's own thread). */
    pthread_setname_np(pthread_self(), "rheap worker 1");
    convert_all(l);
    pthread_mutex_lock(&l->mu);
    l->done = 1;
    pthread_mutex_unlock(&l->mu);
    return NULL;
}

static void convert_all(live_t *l)
{
    l->first = (char *)next_input(l);
    if (!l->first) {
        l->crc = -1;
        return;
    }
    rheap_convert_opts_t src = RHEAP_CONVERT_OPTS_INIT;
    src.next_input = next_input;
    src.growing = growing;
    src.live_user = l;
    l->crc = cli__convert_cmd(NULL, 0, &src, l->o->output, l->o->force, l->o->progress, 1,
                                !l->o->quiet, l->o->memory);
}

/* Waits for the converter's thread; a terminating signal meanwhile (Ctrl-C, kill) ends rheap
 * as its default action would, but first removes the temporary database and the recordings'
 * private directory, and says so in one line. The signals in `stop` are blocked in every
 * thread, so they wait here (sigtimedwait). */
static void join_or_stop(live_t *l, pthread_t conv, const sigset_t *stop, const char *recdir)
{
    for (;;) {
        pthread_mutex_lock(&l->mu);
        int done = l->done;
        pthread_mutex_unlock(&l->mu);
        if (done)
            break;
        struct timespec ts = {0, LIVE_POLL_MS * 1000000L};
        int sig = sigtimedwait(stop, NULL, &ts);
        if (sig <= 0)
            continue;
        /* stderr is kept for good: the converter, still running, would complain about the files
         * taken from under it; it now waits on stderr's lock until the process ends. Once its
         * temporary file is gone, the conversion can no longer put a database in place. */
        flockfile(stderr);
        rheap_convert_discard();
        cli__remove_tree(recdir);
        cli__note(stderr, "interrupted by %s during the conversion: %s not written, the "
                          "recordings and the temporary database removed",
                  sig == SIGINT ? "Ctrl-C" : strsignal(sig), l->o->output);
        fflush(stderr);
        signal(sig, SIG_DFL);
        sigset_t one;
        sigemptyset(&one);
        sigaddset(&one, sig);
        raise(sig);
        pthread_sigmask(SIG_UNBLOCK, &one, NULL);
        _exit(128 + sig); /* not reached */
    }
    pthread_join(conv, NULL);
}

/* The exit status a shell would report for a wait status. */
static int shell_status(int ws)
{
    if (WIFEXITED(ws))
        return WEXITSTATUS(ws);
    if (WIFSIGNALED(ws))
        return 128 + WTERMSIG(ws);
    return 1;
}

static void say_exit(int ws)
{
    if (WIFSIGNALED(ws))
        cli__note(stderr, "the program was killed by signal %d (%s); exit status %d",
                    WTERMSIG(ws), strsignal(WTERMSIG(ws)), 128 + WTERMSIG(ws));
    else if (WIFEXITED(ws) && WEXITSTATUS(ws) != 0)
        cli__note(stderr, "the program exited with status %d", WEXITSTATUS(ws));
}

int cli__cmd_run(int argc, char **argv)
{
    run_opts_t o = {0};
    o.progress = -1;
    o.nice = RUN_NICE;
    int p = parse_run(argc, argv, &o);
    if (p <= 0)
        return p == 0 ? RHEAP_EXIT_OK : RHEAP_EXIT_USAGE;
    /* Refused before the program runs: finding out after a long run would cost the run. */
    struct stat sb;
    if (stat(o.output, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        cli__error(stderr, "%s is a directory; give the database file to write", o.output);
        return RHEAP_EXIT_USAGE;
    }
    if (!o.force && stat(o.output, &sb) == 0) {
        cli__error(stderr, "%s exists; use --force to replace it", o.output);
        return RHEAP_EXIT_USAGE;
    }
    char lib[PATH_MAX], recdir[PATH_MAX];
    if (cli__find_library(lib, sizeof lib) != 0)
        return RHEAP_EXIT_USAGE;
    if (cli__make_private_dir(o.dir, o.output, "rheap-run", recdir, sizeof recdir) != 0)
        return RHEAP_EXIT_USAGE;
    /* The database --force replaces, held open: the rename of the new one over it then leaves
     * its blocks to whoever closes it last, the process that removes the recordings after rheap
     * has exited. Given back by the rename, a build's 1.8 GB took 1.3 s after a ready database
     * (a disk mounted with discard, as with the recordings). */
    int replaced = o.force ? open(o.output, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC) : -1;
    if (replaced >= 0 && (fstat(replaced, &sb) != 0 || !S_ISREG(sb.st_mode))) {
        close(replaced);
        replaced = -1;
    }

    /* Ctrl-C and Ctrl-\ reach the whole foreground process group; like a shell waiting for a
     * job, rheap lets the program decide and converts what was recorded. The program gets the
     * dispositions rheap started with back before exec (default, or ignored). */
    struct sigaction ign = {0}, fwd = {0}, old_int, old_quit, old_term, old_hup;
    ign.sa_handler = SIG_IGN;
    fwd.sa_handler = forward;
    sigemptyset(&ign.sa_mask);
    sigemptyset(&fwd.sa_mask);
    note_ignored();
    take_signal(SIGINT, &ign, &old_int);
    take_signal(SIGQUIT, &ign, &old_quit);
    take_signal(SIGTERM, &fwd, &old_term);
    take_signal(SIGHUP, &fwd, &old_hup);
    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);

    pid_t pid = start_program(&o, lib, recdir);
    if (pid < 0) {
        cli__remove_tree(recdir);
        return 127;
    }
    /* The converter's thread takes no signal: they are the main thread's, which waits. */
    live_t l = {.recdir = recdir, .o = &o, .mu = PTHREAD_MUTEX_INITIALIZER,
                .cv = PTHREAD_COND_INITIALIZER};
    sigset_t all, old_mask;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old_mask);
    pthread_t conv;
    int started = pthread_create(&conv, NULL, convert_thread, &l) == 0;
    pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
    int ws = wait_all(pid);
    /* The program is gone: an interrupt now ends rheap, without leaving files behind. */
    sigset_t stop, run_mask;
    sigemptyset(&stop);
    for (size_t i = 0; i < sizeof run_signals / sizeof *run_signals; i++)
        if (!was_ignored[run_signals[i]])
            sigaddset(&stop, run_signals[i]);
    pthread_sigmask(SIG_BLOCK, &stop, &run_mask);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGQUIT, &old_quit, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGHUP, &old_hup, NULL);
    int status = shell_status(ws);
    say_exit(ws);
    pthread_mutex_lock(&l.mu);
    l.over = 1;
    pthread_cond_broadcast(&l.cv);
    pthread_mutex_unlock(&l.mu);
    if (started)
        join_or_stop(&l, conv, &stop, recdir);
    else
        convert_all(&l);
    for (size_t i = 0; i < l.nhanded; i++)
        free(l.handed[i]);
    free(l.handed);
    free(l.parents);
    cli__free_recordings(l.rest, l.nrest);

    int crc = l.crc;
    if (crc == -1) {
        /* A static program is no failure of rheap's: the run did what it could, and its status
         * is the program's. Anything else that recorded nothing is one, when the program
         * itself succeeded. */
        char exe[PATH_MAX];
        int is_static =
            cli__exe_find(o.argv[0], exe, sizeof exe) == 0 && ri_exe_is_static(exe) == 1;
        if (is_static)
            cli__warning(stderr,
                           "%s: statically linked: its malloc cannot be interposed, nothing was "
                           "recorded; %s not written",
                           o.argv[0], o.output);
        else
            cli__error(stderr, "no recording was made%s; %s not written",
                         o.settings[RHEAP__SET_ENABLE] ? " (recording stayed off)" : "", o.output);
        cli__remove_tree(recdir);
        return status || is_static ? status : RHEAP_EXIT_INPUT;
    }

    int converted = crc == RHEAP_EXIT_OK || crc == RHEAP_EXIT_WARNINGS;
    if (converted && !o.keep) {
        cli__remove_tree_detached(recdir);
        if (replaced >= 0)
            close(replaced);
    } else if (!converted) {
        cli__note(stderr,
                    "the recordings are kept in %s; convert them again with: "
                    "rheap convert %s/rip-* -o %s",
                    recdir, recdir, o.output);
    } else {
        cli__note(stderr, "recordings kept in %s", recdir);
    }
    if (!converted && status == 0)
        return crc;
    return status;
}
