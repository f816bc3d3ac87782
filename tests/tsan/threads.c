/*
 * threads.c: the recorder's threaded paths under ThreadSanitizer, with exact counts.
 *
 * The recorder's sources are compiled into this program with their interposed names renamed
 * (CMakeLists.txt): rheap_tsan_malloc is librheap's malloc wrapper, whose "real" malloc is
 * TSan's. Threads call the renamed entry points while others drive the public API, the toggle
 * signal, fork and thread exit; the recordings are then read back and compared with what the
 * threads did. Usage: tsan_threads api|signal|fork|churn|stress.
 *
 * The program first re-executes itself with RHEAP_DIR (a new temporary directory),
 * RHEAP_SIGNAL=USR2 and RHEAP_DEPTH set: the recorder reads its environment in its constructor,
 * before main. The directory is removed when the phase passes and kept when it fails.
 *
 * Windows with exact counts never race their own edges: the threads that allocate are created
 * after recording starts and joined before it stops, and everything else happens in between.
 * The stress windows open and close under running threads; there each file must still read
 * cleanly and no address may be live twice in a thread's file.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rheap.h"
#include "tally.h"

/* The recorder's entry points under the names CMakeLists.txt gives them. */
void *rheap_tsan_malloc(size_t size);
void rheap_tsan_free(void *p);
void *rheap_tsan_calloc(size_t n, size_t size);
void *rheap_tsan_realloc(void *p, size_t size);
void *rheap_tsan_reallocarray(void *p, size_t n, size_t size);
int rheap_tsan_posix_memalign(void **out, size_t align, size_t size);
void *rheap_tsan_aligned_alloc(size_t align, size_t size);
void *rheap_tsan_memalign(size_t align, size_t size);
void *rheap_tsan_valloc(size_t size);
void *rheap_tsan_pvalloc(size_t size);
int rheap_tsan_execv(const char *path, char *const argv[]);
void rheap_tsan__exit(int status) __attribute__((noreturn));
/* forkgate.c: TSan's allocator held still across a fork, as glibc's malloc is. */
void rheap_tsan_forkgate_install(void);

enum {
    NWORKERS = 4,
    ROUNDS = 200,         /* rounds per worker in an exact window */
    MARK_EVERY = 50,      /* a worker marks after every 50th round */
    ALLOCS_PER_ROUND = 9, /* one per entry point */
    FREES_PER_ROUND = 7,  /* realloc and reallocarray replace their block */
    /* A thread holds at most this many blocks at any moment of a round (the bound for the
     * blocks a stress window can cut at either end). */
    MAX_HELD = 8,
    DEPTH = 16,
};

static const char *phase = "?";
static char tmpdir[PATH_MAX];

void rheap_tsan_fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "tsan_threads %s: ", phase);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    if (tmpdir[0])
        fprintf(stderr, "tsan_threads %s: recordings kept in %s\n", phase, tmpdir);
    exit(1);
}

#define FAIL rheap_tsan_fail

#define EXPECT_EQ(what, got, want)                                                                 \
    do {                                                                                           \
        unsigned long long got_ = (got), want_ = (want);                                           \
        if (got_ != want_)                                                                         \
            FAIL("%s: %s is %llu, expected %llu", rec->dir, what, got_, want_);                    \
    } while (0)

static rheap_config api_config(double sample_rate) {
    rheap_config c = RHEAP_CONFIG_INIT;
    c.max_stack_depth = DEPTH;
    c.sample_rate = sample_rate;
    c.output_dir = tmpdir;
    return c;
}

static void enable_or_fail(double sample_rate) {
    rheap_config c = api_config(sample_rate);
    if (rheap_enable(&c) != 0)
        FAIL("rheap_enable: %s", strerror(errno));
}

static void disable_or_fail(void) {
    if (rheap_disable() != 0)
        FAIL("rheap_disable: %s", strerror(errno));
}

/* ---- What the threads do ---- */

/* One round: every entry point once, then every block freed. 9 allocations, 7 frees. */
static void one_round(unsigned i) {
    size_t n = 16 + (i % 61) * 8;
    void *a = rheap_tsan_malloc(n);
    void *b = rheap_tsan_calloc(4, n);
    if (!a || !b)
        FAIL("malloc/calloc failed");
    a = rheap_tsan_realloc(a, 2 * n);
    b = rheap_tsan_reallocarray(b, 8, n);
    void *c = NULL;
    int r = rheap_tsan_posix_memalign(&c, 64, n);
    void *d = rheap_tsan_aligned_alloc(128, 256);
    void *e = rheap_tsan_memalign(32, n);
    void *f = rheap_tsan_valloc(n);
    void *g = rheap_tsan_pvalloc(n);
    if (!a || !b || r != 0 || !d || !e || !f || !g)
        FAIL("an allocation failed in round %u", i);
    memset(a, 1, 2 * n); /* TSan sees the blocks used, not just passed around */
    rheap_tsan_free(a);
    rheap_tsan_free(b);
    rheap_tsan_free(c);
    rheap_tsan_free(d);
    rheap_tsan_free(e);
    rheap_tsan_free(f);
    rheap_tsan_free(g);
    rheap_tsan_free(NULL); /* not an event */
}

typedef struct {
    pthread_t th;
    char name[16];
    unsigned rounds;     /* 0: until `stop` */
    unsigned marks;      /* out: marks made */
    unsigned done;       /* out: rounds made */
} worker_t;

static _Atomic int stop;
static _Atomic int workers_running;

static void *worker_main(void *arg) {
    worker_t *w = arg;
    pthread_setname_np(pthread_self(), w->name);
    for (unsigned i = 0; w->rounds ? i < w->rounds : !atomic_load(&stop); i++) {
        one_round(i);
        w->done++;
        if (w->rounds && (i + 1) % MARK_EVERY == 0) {
            if (rheap_mark("worker") != 0)
                FAIL("%s: rheap_mark failed while recording", w->name);
            w->marks++;
        }
    }
    atomic_fetch_sub(&workers_running, 1);
    return NULL;
}

/* Every thread of the test starts with SIGUSR2 blocked, so the toggle signal only ever lands
 * in the thread that waits for it (TSan runs a handler when its thread leaves a blocking call,
 * and a worker parked in pthread_join would hold it back). */
static void spawn(pthread_t *th, void *(*fn)(void *), void *arg) {
    sigset_t usr2, old;
    sigemptyset(&usr2);
    sigaddset(&usr2, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &usr2, &old);
    int r = pthread_create(th, NULL, fn, arg);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (r != 0)
        FAIL("pthread_create: %s", strerror(r));
}

static void start_workers(worker_t *w, unsigned n, unsigned rounds, const char *prefix) {
    atomic_store(&stop, 0);
    atomic_store(&workers_running, (int)n);
    for (unsigned i = 0; i < n; i++) {
        memset(&w[i], 0, sizeof w[i]);
        snprintf(w[i].name, sizeof w[i].name, "%s%u", prefix, i);
        w[i].rounds = rounds;
        spawn(&w[i].th, worker_main, &w[i]);
    }
}

static void join_workers(worker_t *w, unsigned n) {
    atomic_store(&stop, 1);
    for (unsigned i = 0; i < n; i++)
        pthread_join(w[i].th, NULL);
}

/* ---- Checks ---- */

/* Every event happened before the window closed: a time past the off record means an event was
 * stamped against another recording's start. */
static void check_times(const rheap_tsan_rec_t *rec) {
    for (unsigned i = 0; i < rec->nfiles; i++)
        if (rec->files[i].last_t > rec->off_t)
            FAIL("%s: thread %u (%s) has an event at %llu ns, after the off record at %llu ns",
                 rec->dir, rec->files[i].tid, rec->files[i].name,
                 (unsigned long long)rec->files[i].last_t, (unsigned long long)rec->off_t);
}

static void check_process(const rheap_tsan_rec_t *rec, const char *on, const char *off) {
    EXPECT_EQ("the number of on records", rec->ons, 1);
    EXPECT_EQ("the number of off records", rec->offs, 1);
    EXPECT_EQ("the lost event count", rec->lost, 0);
    if (strcmp(rec->on_how, on) != 0 || strcmp(rec->off_how, off) != 0)
        FAIL("%s: on/off are \"%s\"/\"%s\", expected \"%s\"/\"%s\"", rec->dir, rec->on_how,
             rec->off_how, on, off);
    check_times(rec);
}

/* A thread that made `rounds` whole rounds and `marks` marks inside the window; `sampled`:
 * whether every allocation has a backtrace (sample rate 1) or none (0). */
static void check_exact(const rheap_tsan_rec_t *rec, const char *name, unsigned rounds,
                        unsigned marks, int sampled) {
    const rheap_tsan_file_t *f = rheap_tsan_by_name(rec, name);
    if (!f)
        FAIL("%s: no thread file named %s", rec->dir, name);
    char what[96];
    for (int c = RIP_CALL_MALLOC; c <= RIP_CALL_PVALLOC; c++) {
        snprintf(what, sizeof what, "%s's %s count", name, rip_call_name((rip_call_t)c));
        EXPECT_EQ(what, f->calls[c], rounds);
    }
    snprintf(what, sizeof what, "%s's free count", name);
    EXPECT_EQ(what, f->frees, (unsigned long long)rounds * FREES_PER_ROUND);
    snprintf(what, sizeof what, "%s's mark count", name);
    EXPECT_EQ(what, f->marks, marks);
    snprintf(what, sizeof what, "%s's allocations without a backtrace", name);
    EXPECT_EQ(what, f->stackless, sampled ? 0 : f->allocs);
    snprintf(what, sizeof what, "%s's stack records", name);
    if (!sampled)
        EXPECT_EQ(what, f->stacks, 0);
    else if (rounds && !f->stacks)
        FAIL("%s: %s has backtraces but no stack records", rec->dir, name);
    snprintf(what, sizeof what, "%s's unmatched frees", name);
    EXPECT_EQ(what, f->unmatched, 0);
    snprintf(what, sizeof what, "%s's addresses live twice", name);
    EXPECT_EQ(what, f->double_live, 0);
    snprintf(what, sizeof what, "%s's blocks live at the end", name);
    EXPECT_EQ(what, f->live_end, 0);
}

/* A window opened and closed under running threads: whole rounds cannot be counted, but
 * nothing may be lost inside it. */
static void check_cut(const rheap_tsan_rec_t *rec) {
    for (unsigned i = 0; i < rec->nfiles; i++) {
        const rheap_tsan_file_t *f = &rec->files[i];
        if (f->double_live || f->stackless || f->unmatched > MAX_HELD || f->live_end > MAX_HELD)
            FAIL("%s: thread %u (%s): %llu addresses live twice, %llu allocations without a "
                 "backtrace, %llu unmatched frees, %llu live at the end (at most %d expected)",
                 rec->dir, f->tid, f->name, (unsigned long long)f->double_live,
                 (unsigned long long)f->stackless, (unsigned long long)f->unmatched,
                 (unsigned long long)f->live_end, MAX_HELD);
    }
}

static rheap_tsan_rec_t *read_rec(const char *dir) {
    rheap_tsan_rec_t *rec = calloc(1, sizeof *rec);
    if (!rec)
        FAIL("out of memory");
    rheap_tsan_read(dir, rec);
    return rec;
}

/* Every recording directory in tmpdir except `skip`, cut-checked with the expected on/off
 * kinds ("*" for any); returns how many there were. */
static unsigned check_all_cut(const char *const *skip, unsigned nskip, const char *on,
                              const char *off) {
    DIR *d = opendir(tmpdir);
    if (!d)
        FAIL("%s: %s", tmpdir, strerror(errno));
    char dir[2 * PATH_MAX];
    unsigned n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        const char *line = e->d_name;
        if (strncmp(line, "rip-", 4) != 0)
            continue;
        snprintf(dir, sizeof dir, "%s/%s", tmpdir, line);
        int skipped = 0;
        for (unsigned i = 0; i < nskip; i++)
            skipped |= strcmp(dir, skip[i]) == 0;
        if (skipped)
            continue;
        rheap_tsan_rec_t *rec = read_rec(dir);
        EXPECT_EQ("the number of on records", rec->ons, 1);
        EXPECT_EQ("the number of off records", rec->offs, 1);
        EXPECT_EQ("the lost event count", rec->lost, 0);
        if ((strcmp(on, "*") != 0 && strcmp(rec->on_how, on) != 0) ||
            (strcmp(off, "*") != 0 && strcmp(rec->off_how, off) != 0))
            FAIL("%s: on/off are \"%s\"/\"%s\", expected \"%s\"/\"%s\"", rec->dir, rec->on_how,
                 rec->off_how, on, off);
        check_times(rec);
        check_cut(rec);
        free(rec);
        n++;
    }
    closedir(d);
    return n;
}

/* ---- api: rheap_flush and rheap_mark from another thread while the workers record ---- */

static unsigned ctl_marks;

static void *api_controller(void *arg) {
    (void)arg;
    pthread_setname_np(pthread_self(), "tsan-ctl");
    rheap_config c = api_config(1.0);
    if (rheap_enable(&c) != -1 || errno != EALREADY)
        FAIL("rheap_enable while recording: expected -1 with EALREADY");
    do {
        if (rheap_flush() != 0)
            FAIL("rheap_flush while recording: %s", strerror(errno));
        if (rheap_mark("controller") != 0)
            FAIL("rheap_mark while recording failed");
        ctl_marks++;
        if (!rheap_is_enabled())
            FAIL("rheap_is_enabled is 0 while recording");
    } while (atomic_load(&workers_running) > 0);
    return NULL;
}

static void phase_api(void) {
    worker_t w[NWORKERS];
    pthread_t ctl;
    enable_or_fail(1.0);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s", rheap_output_path());
    start_workers(w, NWORKERS, ROUNDS, "tsan-w");
    spawn(&ctl, api_controller, NULL);
    join_workers(w, NWORKERS);
    pthread_join(ctl, NULL);
    disable_or_fail();
    if (rheap_disable() != -1 || errno != EALREADY)
        FAIL("rheap_disable when not recording: expected -1 with EALREADY");
    if (rheap_flush() != -1 || errno != EALREADY)
        FAIL("rheap_flush when not recording: expected -1 with EALREADY");

    rheap_tsan_rec_t *rec = read_rec(path);
    check_process(rec, "api", "api");
    EXPECT_EQ("the pid", rec->pid, (unsigned)getpid());
    EXPECT_EQ("the number of thread files", rec->nfiles, NWORKERS + 1);
    for (unsigned i = 0; i < NWORKERS; i++)
        check_exact(rec, w[i].name, ROUNDS, ROUNDS / MARK_EVERY, 1);
    check_exact(rec, "tsan-ctl", 0, ctl_marks, 1);
    printf("api: %u workers x %u rounds, %u controller flushes and marks: exact\n", NWORKERS,
           ROUNDS, ctl_marks);
    free(rec);
}

/* ---- signal: windows opened and closed by SIGUSR2 ---- */

/* Sends the toggle signal to the process and waits until recording is `want`. Only this thread
 * has the signal unblocked. The wait has a generous deadline so a lost toggle fails the test
 * instead of hanging it; it asserts nothing about speed. */
static void toggle_and_wait(int want) {
    if (kill(getpid(), SIGUSR2) != 0)
        FAIL("kill: %s", strerror(errno));
    struct timespec t0, now, nap = {0, 1000000};
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (rheap_is_enabled() != want) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - t0.tv_sec > 60)
            FAIL("the toggle signal did not turn recording %s", want ? "on" : "off");
        nanosleep(&nap, NULL);
    }
    if (!want && rheap_flush() != -1)
        FAIL("rheap_flush after the signal turned recording off: expected -1");
    /* rheap_flush takes the control lock, so the window that was closing is complete now. */
}

static void phase_signal(void) {
    sigset_t usr2;
    sigemptyset(&usr2);
    sigaddset(&usr2, SIGUSR2);
    pthread_sigmask(SIG_UNBLOCK, &usr2, NULL);

    /* An exact window: no worker runs while the signal opens or closes it. */
    worker_t w[NWORKERS];
    toggle_and_wait(1);
    char exact[PATH_MAX];
    snprintf(exact, sizeof exact, "%s", rheap_output_path());
    start_workers(w, NWORKERS, ROUNDS, "tsan-s");
    join_workers(w, NWORKERS);
    toggle_and_wait(0);
    rheap_tsan_rec_t *rec = read_rec(exact);
    check_process(rec, "signal", "signal");
    EXPECT_EQ("the number of thread files", rec->nfiles, NWORKERS);
    for (unsigned i = 0; i < NWORKERS; i++)
        check_exact(rec, w[i].name, ROUNDS, ROUNDS / MARK_EVERY, 1);
    free(rec);

    /* Windows opened and closed under running workers: the toggle is acted on by the
     * recorder's toggle thread or by a worker's next allocation, whichever comes first. */
    enum { WINDOWS = 10 };
    start_workers(w, NWORKERS, 0, "tsan-s");
    for (unsigned i = 0; i < WINDOWS; i++) {
        toggle_and_wait(1);
        toggle_and_wait(0);
    }
    join_workers(w, NWORKERS);
    const char *skip[] = {exact};
    unsigned n = check_all_cut(skip, 1, "signal", "signal");
    if (n != WINDOWS)
        FAIL("%u recordings from the signal windows, expected %u", n, (unsigned)WINDOWS);
    printf("signal: 1 exact window, %u windows under running threads: clean\n", n);
}

/* ---- fork: children forked while the workers record ---- */

enum { FORKS = 4, CHILD_ROUNDS = 20, MAIN_ROUNDS = 3 };

/* Waits for a child, or kills it after a minute: a child blocked on a lock inherited from the
 * parent (the loader's, libunwind's) may have every signal blocked, so only SIGKILL ends it. */
static void wait_child(pid_t pid) {
    struct timespec t0, now, nap = {0, 2000000};
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int status;
    for (;;) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid)
            break;
        if (r < 0)
            FAIL("waitpid: %s", strerror(errno));
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - t0.tv_sec > 60) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            FAIL("child %d still running after 60 s, killed (blocked on a lock it inherited?)",
                 (int)pid);
        }
        nanosleep(&nap, NULL);
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        FAIL("child %d ended with status 0x%x", (int)pid, status);
}

/* Backtraces are on: unwinding and module snapshots go through dl_iterate_phdr and libunwind's
 * locks, which a fork child inherits held if another thread was inside them; the recorder keeps
 * its threads out of those calls across a fork. TSan's allocator, the recorder's real one here,
 * does not do the same for its own locks: forkgate.c does it for it, as glibc's malloc does for
 * itself. */
static void phase_fork(void) {
    pthread_setname_np(pthread_self(), "tsan-main");
    rheap_tsan_forkgate_install();
    worker_t w[NWORKERS];
    enable_or_fail(1.0);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s", rheap_output_path());
    start_workers(w, NWORKERS, 0, "tsan-f");
    pid_t kids[FORKS];
    for (unsigned k = 0; k < FORKS; k++) {
        /* The forking thread records too, so the child inherits a live recorder. */
        for (unsigned i = 0; i < MAIN_ROUNDS; i++)
            one_round(i);
        fflush(NULL);
        pid_t pid = fork();
        if (pid < 0)
            FAIL("fork: %s", strerror(errno));
        if (pid == 0) {
            for (unsigned i = 0; i < CHILD_ROUNDS; i++)
                one_round(i);
            if (rheap_mark("child") != 0)
                rheap_tsan__exit(3);
            rheap_tsan__exit(0); /* the recorder's _exit: completes the child's recording */
        }
        kids[k] = pid;
        wait_child(pid);
    }
    join_workers(w, NWORKERS);
    disable_or_fail();

    rheap_tsan_rec_t *rec = read_rec(path);
    check_process(rec, "api", "api");
    EXPECT_EQ("the number of thread files", rec->nfiles, NWORKERS + 1);
    for (unsigned i = 0; i < NWORKERS; i++)
        check_exact(rec, w[i].name, w[i].done, 0, 1);
    check_exact(rec, "tsan-main", FORKS * MAIN_ROUNDS, 0, 1);
    free(rec);
    unsigned total = 0;
    for (unsigned i = 0; i < NWORKERS; i++)
        total += w[i].done;

    for (unsigned k = 0; k < FORKS; k++) {
        char dir[2 * PATH_MAX];
        snprintf(dir, sizeof dir, "%s/rip-%d", tmpdir, (int)kids[k]);
        rec = read_rec(dir);
        check_process(rec, "fork", "exit");
        EXPECT_EQ("the child's pid", rec->pid, (unsigned)kids[k]);
        EXPECT_EQ("the child's parent pid", rec->ppid, (unsigned)getpid());
        EXPECT_EQ("the number of thread files", rec->nfiles, 1);
        EXPECT_EQ("the child's thread id", rec->files[0].tid, (unsigned)kids[k]);
        check_exact(rec, "tsan-main", CHILD_ROUNDS, 1, 1);
        free(rec);
    }
    printf("fork: %u children forked under %u workers (%u rounds): exact on both sides\n",
           (unsigned)FORKS, NWORKERS, total);
}

/* ---- churn: many short-lived threads, recorders retired and reclaimed ---- */

enum { WAVES = 16, WAVE = 8, CHURN_ROUNDS = 3 };

static _Atomic int churn_done;
static unsigned flusher_marks;

static void *churn_flusher(void *arg) {
    (void)arg;
    pthread_setname_np(pthread_self(), "tsan-flush");
    do {
        if (rheap_flush() != 0)
            FAIL("rheap_flush while recording: %s", strerror(errno));
        if (rheap_mark("flush") != 0)
            FAIL("rheap_mark while recording failed");
        flusher_marks++;
    } while (!atomic_load(&churn_done));
    return NULL;
}

static void *churn_thread(void *arg) {
    worker_t *w = arg;
    pthread_setname_np(pthread_self(), w->name);
    for (unsigned i = 0; i < w->rounds; i++)
        one_round(i);
    if (rheap_mark("churn") != 0)
        FAIL("%s: rheap_mark failed while recording", w->name);
    return NULL;
}

static void phase_churn(void) {
    enable_or_fail(1.0);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s", rheap_output_path());
    pthread_t flusher;
    spawn(&flusher, churn_flusher, NULL);
    static worker_t w[WAVES * WAVE];
    for (unsigned v = 0; v < WAVES; v++) {
        for (unsigned i = 0; i < WAVE; i++) {
            worker_t *t = &w[v * WAVE + i];
            snprintf(t->name, sizeof t->name, "tsan-c%u", v * WAVE + i);
            t->rounds = CHURN_ROUNDS;
            spawn(&t->th, churn_thread, t);
        }
        for (unsigned i = 0; i < WAVE; i++)
            pthread_join(w[v * WAVE + i].th, NULL);
    }
    atomic_store(&churn_done, 1);
    pthread_join(flusher, NULL);
    disable_or_fail();

    rheap_tsan_rec_t *rec = read_rec(path);
    check_process(rec, "api", "api");
    EXPECT_EQ("the number of thread files", rec->nfiles, WAVES * WAVE + 1);
    for (unsigned i = 0; i < WAVES * WAVE; i++)
        check_exact(rec, w[i].name, CHURN_ROUNDS, 1, 1);
    check_exact(rec, "tsan-flush", 0, flusher_marks, 1);
    printf("churn: %u threads in waves of %u, %u concurrent flushes: exact\n", WAVES * WAVE,
           (unsigned)WAVE, flusher_marks);
    free(rec);
}

/* ---- profile: profile mode's counters, countdowns and sampled set under threads ----
 *
 * Workers run rounds in profile mode with a small interval (many samples, so the set of sampled
 * blocks and its lock are busy) while another thread flushes: every thread's last totals record
 * must count its calls and bytes exactly, and every sampled allocation carry a backtrace. */

enum { PROFILE_THREADS = 8, PROFILE_ROUNDS = 300 };

static void *profile_thread(void *arg) {
    worker_t *w = arg;
    pthread_setname_np(pthread_self(), w->name);
    for (unsigned i = 0; i < w->rounds; i++)
        one_round(i);
    return NULL;
}

static void phase_profile(void) {
    rheap_config c = api_config(1.0);
    c.mode = RHEAP_MODE_PROFILE;
    c.sample_interval = 512;
    if (rheap_enable(&c) != 0)
        FAIL("rheap_enable: %s", strerror(errno));
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s", rheap_output_path());
    pthread_t flusher;
    atomic_store(&churn_done, 0);
    spawn(&flusher, churn_flusher, NULL);
    static worker_t w[PROFILE_THREADS];
    for (unsigned i = 0; i < PROFILE_THREADS; i++) {
        snprintf(w[i].name, sizeof w[i].name, "tsan-p%u", i);
        w[i].rounds = PROFILE_ROUNDS;
        spawn(&w[i].th, profile_thread, &w[i]);
    }
    for (unsigned i = 0; i < PROFILE_THREADS; i++)
        pthread_join(w[i].th, NULL);
    atomic_store(&churn_done, 1);
    pthread_join(flusher, NULL);
    disable_or_fail();

    /* one_round(i) asks for n + 4n + 2n + 8n + n + 256 + n + n bytes and n more from pvalloc
     * (the bytes asked for are counted, not the page it rounds them up to). */
    uint64_t bytes = 0;
    for (unsigned i = 0; i < PROFILE_ROUNDS; i++)
        bytes += 19 * (16 + (i % 61) * 8) + 256;
    rheap_tsan_rec_t *rec = read_rec(path);
    uint64_t sampled = 0;
    for (unsigned i = 0; i < PROFILE_THREADS; i++) {
        const rheap_tsan_file_t *f = rheap_tsan_by_name(rec, w[i].name);
        if (!f || !f->has_totals)
            FAIL("%s: no totals of thread %s", path, w[i].name);
        EXPECT_EQ("allocations counted", f->totals_allocs, (uint64_t)PROFILE_ROUNDS * 9);
        EXPECT_EQ("bytes counted", f->totals_bytes, bytes);
        EXPECT_EQ("frees counted", f->totals_frees, (uint64_t)PROFILE_ROUNDS * 7);
        EXPECT_EQ("sampled allocations without a backtrace", f->stackless, 0);
        EXPECT_EQ("addresses live twice", f->double_live, 0);
        sampled += f->allocs;
    }
    if (sampled < PROFILE_THREADS * PROFILE_ROUNDS)
        FAIL("%s: only %llu sampled allocations", path, (unsigned long long)sampled);
    printf("profile: %u threads, %llu samples, exact totals\n", (unsigned)PROFILE_THREADS,
           (unsigned long long)sampled);
    free(rec);
}

/* ---- stress: windows opened and closed by the API under running threads ---- */

enum { CYCLES = 30, EXEC_EVERY = 5 };

static _Atomic int stress_done;

static void *stress_poker(void *arg) {
    (void)arg;
    pthread_setname_np(pthread_self(), "tsan-poke");
    while (!atomic_load(&stress_done)) {
        /* Any of these may find recording off; only their safety is under test. */
        (void)rheap_flush();
        (void)rheap_mark("poke");
        (void)rheap_is_enabled();
    }
    return NULL;
}

static void phase_stress(void) {
    worker_t w[NWORKERS];
    start_workers(w, NWORKERS, 0, "tsan-x");
    pthread_t poker;
    spawn(&poker, stress_poker, NULL);
    unsigned execs = 0;
    for (unsigned c = 0; c < CYCLES; c++) {
        enable_or_fail(1.0);
        for (unsigned i = 0; i < 3; i++)
            if (rheap_flush() != 0)
                FAIL("rheap_flush while recording: %s", strerror(errno));
        if (c % EXEC_EVERY == 0) {
            /* A failed exec completes the recording and starts a new one. */
            char *argv[] = {"rheap-tsan-none", NULL};
            if (rheap_tsan_execv("/nonexistent/rheap-tsan-none", argv) != -1 || errno != ENOENT)
                FAIL("execv of a missing file: expected -1 with ENOENT");
            if (!rheap_is_enabled())
                FAIL("recording did not resume after a failed exec");
            execs++;
        }
        disable_or_fail();
    }
    atomic_store(&stress_done, 1);
    pthread_join(poker, NULL);
    join_workers(w, NWORKERS);
    unsigned n = check_all_cut(NULL, 0, "*", "*");
    if (n != CYCLES + execs)
        FAIL("%u recordings, expected %u", n, CYCLES + execs);
    printf("stress: %u API windows (%u split by a failed exec) under %u workers: clean\n", n,
           execs, NWORKERS);
}

/* ---- Set-up ---- */

/* TSan reads its suppressions from here. libunwind (not instrumented) initializes a global
 * signal mask once with unsynchronized double-checked locking; the interceptors it calls
 * (sigfillset, sigprocmask) make that visible. Nothing of the recorder is suppressed. */
const char *__tsan_default_suppressions(void);
const char *__tsan_default_suppressions(void) {
    return "race:libunwind.so\n";
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

int main(int argc, char **argv) {
    static const struct {
        const char *name;
        void (*run)(void);
    } phases[] = {{"api", phase_api},     {"signal", phase_signal}, {"fork", phase_fork},
                  {"churn", phase_churn}, {"profile", phase_profile},
                  {"stress", phase_stress}};
    void (*run)(void) = NULL;
    for (unsigned i = 0; argc == 2 && i < sizeof phases / sizeof phases[0]; i++)
        if (strcmp(argv[1], phases[i].name) == 0) {
            phase = phases[i].name;
            run = phases[i].run;
        }
    if (!run) {
        fprintf(stderr, "usage: tsan_threads api|signal|fork|churn|stress\n");
        return 2;
    }
    const char *dir = getenv("RHEAP_TSAN_DIR");
    if (!dir) {
        const char *base = getenv("TMPDIR");
        snprintf(tmpdir, sizeof tmpdir, "%s/rheap-tsan-XXXXXX", base && *base ? base : "/tmp");
        if (!mkdtemp(tmpdir))
            FAIL("mkdtemp %s: %s", tmpdir, strerror(errno));
        setenv("RHEAP_TSAN_DIR", tmpdir, 1);
        setenv("RHEAP_DIR", tmpdir, 1);
        setenv("RHEAP_SIGNAL", "USR2", 1);
        setenv("RHEAP_DEPTH", "16", 1);
        setenv("RHEAP_ENABLE", "0", 1);
        execv("/proc/self/exe", argv);
        FAIL("re-executing /proc/self/exe: %s", strerror(errno));
    }
    snprintf(tmpdir, sizeof tmpdir, "%s", dir);

    /* The main thread starts with the toggle signal blocked like every other test thread. */
    sigset_t usr2;
    sigemptyset(&usr2);
    sigaddset(&usr2, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &usr2, NULL);

    run();
    if (!getenv("RHEAP_TSAN_KEEP"))
        nftw(tmpdir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    return 0;
}
