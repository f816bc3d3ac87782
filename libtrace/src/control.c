/*
 * control.c: configuration, the life of a recording, and the public API.
 *
 * A recording starts (rheap_enable, the environment at start-up, the toggle signal, a fork
 * child continuing its parent's recording, a failed exec) by creating a new directory
 * rip-<pid>[-N]/ with its process file, and ends (rheap_disable, the signal, exit, exec, an
 * internal failure) when every thread's file is flushed and closed and the process file gets
 * its `off` record. Everything here runs under the control lock, rarely; the allocation path
 * only reads rheap__word.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "rheap.h"
#include "settings.h"

_Atomic int rheap__word = RHEAP__UNINIT;
rheap__config_t rheap__cfg;
uint64_t rheap__start_ns;
_Atomic unsigned rheap__gen;
char rheap__rec_path[PATH_MAX];
uint32_t rheap__rec_num;

static pthread_mutex_t ctl = PTHREAD_MUTEX_INITIALIZER;
static rheap__config_t env_cfg;   /* from the environment: used by env, signal and fork starts */
static int preloaded;
static pid_t rec_pid;             /* the process the open recording belongs to */
static void *proc_mem;
static size_t proc_mem_size;
static rip_writer_t *proc_w;
static _Atomic int failed_once;
static pid_t forking_pid;         /* set between fork's prepare and child handlers */

void rheap__ctl_lock(void) {
    pthread_mutex_lock(&ctl);
}

void rheap__ctl_unlock(void) {
    pthread_mutex_unlock(&ctl);
}

/* ---- Configuration ---- */

/* The defaults of the settings table (settings.c), which are RHEAP_CONFIG_INIT's. */
static void default_config(rheap__config_t *c) {
    c->depth = (unsigned)rheap__settings[RHEAP__SET_DEPTH].def;
    c->max_threads = (unsigned)rheap__settings[RHEAP__SET_MAX_THREADS].def;
    c->buffer_kb = (unsigned)rheap__settings[RHEAP__SET_BUFFER_KB].def;
    c->sample_ppm = (uint32_t)rheap__settings[RHEAP__SET_SAMPLE_RATE].def;
    c->signal = 0;
    c->dir[0] = 0;
}

/* Reads setting `id` from the environment into *value: 1 when it is set to an accepted value;
 * 0 when it is unset, empty where empty means the default, or refused. A refused value gets
 * one line on stderr and the caller keeps the default. */
static int env_setting(rheap__setting_id_t id, uint64_t *value, const char **text) {
    const rheap__setting_t *s = &rheap__settings[id];
    const char *v = getenv(s->env);
    if (!v)
        return 0;
    int st = rheap__setting_parse(id, v, value);
    if (st == RHEAP__SETTING_BAD) {
        /* Quote at most 64 bytes of the value: the message stays one short line. */
        char shown[72];
        size_t n = strnlen(v, 65);
        memcpy(shown, v, n > 64 ? 64 : n);
        strcpy(shown + (n > 64 ? 64 : n), n > 64 ? "..." : "");
        rheap__log("ignoring ", s->env, "=", shown, ": expected ", s->expected, NULL);
    }
    if (text)
        *text = v;
    return st == RHEAP__SETTING_OK;
}

static void read_env(rheap__config_t *c) {
    default_config(c);
    uint64_t v;
    const char *text;
    if (env_setting(RHEAP__SET_DEPTH, &v, NULL))
        c->depth = (unsigned)v;
    if (env_setting(RHEAP__SET_SAMPLE_RATE, &v, NULL))
        c->sample_ppm = (uint32_t)v;
    if (env_setting(RHEAP__SET_BUFFER_KB, &v, NULL))
        c->buffer_kb = (unsigned)v;
    if (env_setting(RHEAP__SET_MAX_THREADS, &v, NULL))
        c->max_threads = (unsigned)v;
    if (env_setting(RHEAP__SET_SIGNAL, &v, NULL))
        c->signal = (int)v;
    if (env_setting(RHEAP__SET_DIR, &v, &text))
        memcpy(c->dir, text, v + 1);
}

/* ---- Starting and stopping (control lock held) ---- */

static int make_recording_dir(const rheap__config_t *c) {
    char dir[PATH_MAX], num[24];
    if (c->dir[0] == '/') {
        strcpy(dir, c->dir);
    } else {
        if (!getcwd(dir, sizeof dir - 80))
            return -1;
        if (c->dir[0]) {
            if (strlen(dir) + strlen(c->dir) + 80 > sizeof dir) {
                errno = ENAMETOOLONG;
                return -1;
            }
            strcat(dir, "/");
            strcat(dir, c->dir);
        }
    }
    size_t base = strlen(dir);
    for (uint32_t n = 1; n < 100000; n++) {
        dir[base] = 0;
        strcat(dir, "/rip-");
        strcat(dir, rheap__utoa((uint64_t)getpid(), num));
        if (n > 1) {
            strcat(dir, "-");
            strcat(dir, rheap__utoa(n, num));
        }
        if (mkdir(dir, 0700) == 0) {
            strcpy(rheap__rec_path, dir);
            rheap__rec_num = n;
            return 0;
        }
        if (errno != EEXIST)
            return -1;
    }
    return -1;
}

/* The process record: who we are. /proc/self/cmdline is read into a static buffer (we are
 * under the control lock) and cut into arguments. */
static rip_status_t write_process(void) {
    static char cmdline[65536];
    static const char *argv[4096];
    uint32_t argc = 0;
    int fd = rheap__sys_open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC, 0);
    ssize_t len = 0;
    if (fd >= 0) {
        ssize_t n;
        while (len < (ssize_t)sizeof cmdline - 1 &&
               (n = rheap__sys_read(fd, cmdline + len, sizeof cmdline - 1 - (size_t)len)) > 0)
            len += n;
        rheap__sys_close(fd);
    }
    cmdline[len] = 0;
    for (ssize_t i = 0; i < len && argc < 4096; i += (ssize_t)strlen(cmdline + i) + 1)
        argv[argc++] = cmdline + i;
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    struct timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall);
    uint64_t wall_ns = (uint64_t)wall.tv_sec * 1000000000u + (uint64_t)wall.tv_nsec;
    /* A fork child names the process that forked it, even if that one has exited by now and
     * the child was re-parented. */
    pid_t ppid = forking_pid ? forking_pid : getppid();
    return rip_writer_process(proc_w, (uint32_t)ppid, exe, argc, argv, wall_ns, "monotonic",
                              (uint32_t)sysconf(_SC_PAGESIZE));
}

static void close_process_file(void) {
    if (proc_mem)
        munmap(proc_mem, proc_mem_size);
    proc_mem = NULL;
    proc_w = NULL;
}

static int start(const rheap__config_t *c, const char *how) {
    if (atomic_load(&rheap__word) & RHEAP__ON) {
        errno = EALREADY;
        return -1;
    }
    if (make_recording_dir(c) != 0)
        return -1;
    char path[PATH_MAX + 16];
    strcpy(path, rheap__rec_path);
    strcat(path, "/process.rip");
    proc_mem_size = rip_writer_footprint(64 * 1024);
    proc_mem = mmap(NULL, proc_mem_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    int fd = -1;
    if (proc_mem == MAP_FAILED)
        proc_mem = NULL;
    else
        fd = rheap__open_file(path);
    if (fd < 0) {
        /* Leave nothing behind: an empty directory would look like a broken recording. */
        int err = errno;
        close_process_file();
        rmdir(rheap__rec_path);
        errno = err;
        return -1;
    }
    rheap__cfg = *c;
    rheap__start_ns = rheap__now_abs();
    rec_pid = getpid();
    rip_header_t h = {1, RIP_FORMAT_MAJOR, RIP_FORMAT_MINOR, (uint32_t)rec_pid, 0, rheap__rec_num, 0,
                      rheap__start_ns, RHEAP__TIME_SHIFT};
    proc_w = rip_writer_init(proc_mem, 64 * 1024, fd, &h);
    rip_status_t st = rip_writer_detach(proc_w, path, rheap__file_limit());
    int err = errno;
    rheap__sys_close(fd);
    errno = err;
    atomic_store(&rheap__lost_events, 0);
    if (st == RIP_OK)
        st = write_process();
    if (st == RIP_OK)
        st = rip_writer_config(proc_w, c->depth, c->sample_ppm, c->buffer_kb, c->max_threads,
                               (uint32_t)c->signal, rheap__rec_path);
    if (st == RIP_OK)
        st = rip_writer_on(proc_w, 0, how);
    if (st == RIP_OK)
        st = rip_writer_flush(proc_w);
    if (st != RIP_OK) {
        int err = errno;
        close_process_file();
        unlink(path);
        rmdir(rheap__rec_path);
        errno = err;
        return -1;
    }
    atomic_store(&failed_once, 0);
    atomic_fetch_add(&rheap__gen, 1);
    atomic_fetch_or(&rheap__word, RHEAP__ON);
    return 0;
}

/* Events of threads refused a recorder (over max_threads) are counted, never silently gone. */
static void write_lost(void) {
    uint64_t lost = atomic_exchange(&rheap__lost_events, 0);
    if (lost)
        rip_writer_lost(proc_w, rheap__now(), lost, "threads over max_threads");
}

/* Creates a recording file: exclusive, never through a symlink, mode 0600. The caller hands
 * it to a writer that reopens it by name for each write, then closes this descriptor. */
int rheap__open_file(const char *path) {
    return rheap__sys_open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
}

/* The file size limit (RLIMIT_FSIZE), 0 when unlimited: the writer stops short of it. */
uint64_t rheap__file_limit(void) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_FSIZE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        return 0;
    return (uint64_t)rl.rlim_cur;
}

static int stop(const char *how) {
    if (!(atomic_load(&rheap__word) & RHEAP__ON)) {
        errno = EALREADY;
        return -1;
    }
    atomic_fetch_and(&rheap__word, ~(RHEAP__ON | RHEAP__EXITING));
    rheap__threads_wait_reallocs();
    rheap__threads_flush_all(1);
    if (proc_w) {
        write_lost();
        rip_writer_off(proc_w, rheap__now(), how);
        rip_writer_flush(proc_w);
    }
    close_process_file();
    return 0;
}

/* At exit the files are flushed and the process file says "off", but the recorders stay open
 * and write every later event through at once: static destructors and libraries finalized
 * after librheap still free memory. */
static void flush_for_exit(void) {
    if (!(atomic_load(&rheap__word) & RHEAP__ON) || getpid() != rec_pid)
        return;
    atomic_fetch_or(&rheap__word, RHEAP__EXITING);
    rheap__threads_flush_all(0);
    if (proc_w) {
        write_lost();
        rip_writer_off(proc_w, rheap__now(), "exit");
        rip_writer_flush(proc_w);
    }
}

int rheap__report_failure(const char *what, int err) {
    if (atomic_exchange(&failed_once, 1))
        return 0;
    rheap__log(what, ": ", strerrordesc_np(err), "; recording stopped, the program goes on", NULL);
    return 1;
}

void rheap__fail(const char *what, int err) {
    if (!rheap__report_failure(what, err))
        return;
    rheap__ctl_lock();
    char how[128] = "error: ";
    strncat(how, what, sizeof how - 10);
    stop(how);
    rheap__ctl_unlock();
}

/* ---- Signal toggle ---- */

/* Deliveries not yet acted on: each one toggles, so two quick signals close the window and
 * open a new one rather than cancelling out. */
static _Atomic unsigned pending_toggles;

/* The toggle thread: with a toggle signal configured, one thread of ours waits for it, so a
 * window closes (files written, `off` recorded) when the signal arrives even if the service is
 * idle. Without it (it could not be created, or in a forked child) the next allocator call in
 * any thread acts on the signal instead. */
static sem_t toggle_sem;
static _Atomic int toggle_thread_ok;

static void on_toggle_signal(int sig) {
    (void)sig;
    /* Only count and wake: the handler may have interrupted this very thread inside the
     * tracer. sem_post is async-signal-safe. */
    atomic_fetch_add(&pending_toggles, 1);
    atomic_fetch_or(&rheap__word, RHEAP__TOGGLE);
    if (atomic_load(&toggle_thread_ok)) {
        int saved = errno;
        sem_post(&toggle_sem);
        errno = saved;
    }
}

static void apply_toggles(void) {
    atomic_fetch_and(&rheap__word, ~RHEAP__TOGGLE);
    rheap__ctl_lock();
    for (unsigned n = atomic_exchange(&pending_toggles, 0); n; n--) {
        if (atomic_load(&rheap__word) & RHEAP__ON)
            stop("signal");
        else if (start(&env_cfg, "signal") != 0)
            rheap__log("cannot start recording: ", strerrordesc_np(errno), NULL);
    }
    rheap__ctl_unlock();
}

static void *toggle_main(void *arg) {
    (void)arg;
    rheap__guard = 1; /* this thread's own allocations are not the program's */
    prctl(PR_SET_NAME, "rheap-toggle", 0, 0, 0);
    for (;;) {
        while (sem_wait(&toggle_sem) != 0)
            ;
        apply_toggles();
    }
    return NULL;
}

/* From the constructor (libc is up by then), with the guard held. */
static void start_toggle_thread(void) {
    if (!env_cfg.signal || sem_init(&toggle_sem, 0, 0) != 0)
        return;
    pthread_t th;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    /* The thread must not take the toggle signal itself: block it there, as it inherits the
     * creator's mask. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    if (pthread_create(&th, &attr, toggle_main, NULL) == 0)
        atomic_store(&toggle_thread_ok, 1);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
}

/* ---- fork ---- */

/* A fork from a signal handler that interrupted the tracer takes no tracer lock (it could be
 * holding one): the child resets everything anyway. */
static int fork_unlocked;

void rheap__fork_prepare(void) {
    int guard = rheap__guard;
    fork_unlocked = guard;
    if (guard) {
        forking_pid = getpid();
        return;
    }
    rheap__guard = 1;
    rheap__threads_quiesce_loader();
    rheap__ctl_lock();
    rheap__threads_lock_all();
    forking_pid = getpid();
    rheap__guard = guard;
}

void rheap__fork_parent(void) {
    forking_pid = 0;
    if (fork_unlocked)
        return;
    rheap__threads_unlock_all();
    rheap__ctl_unlock();
    rheap__threads_release_loader();
}

/* The child records into its own rip-<childpid>/ (its process record names the parent), never
 * into the parent's files. */
void rheap__fork_child(void) {
    int guard = rheap__guard;
    rheap__guard = 1;
    int was_on = atomic_load(&rheap__word) & RHEAP__ON;
    rheap__threads_after_fork_child();
    pthread_mutex_init(&ctl, NULL);
    close_process_file(); /* the child's copy of the parent's process-file writer */
    atomic_store(&toggle_thread_ok, 0); /* threads do not survive fork */
    atomic_fetch_and(&rheap__word, ~(RHEAP__ON | RHEAP__EXITING));
    if (was_on) {
        rheap__config_t c = rheap__cfg;
        if (start(&c, "fork") != 0)
            rheap__log("cannot start the forked child's recording: ", strerrordesc_np(errno), NULL);
    }
    forking_pid = 0;
    rheap__guard = guard;
}

/* ---- Initialization ---- */

static void init_locked(void) {
    if (!(atomic_load(&rheap__word) & RHEAP__UNINIT))
        return;
    read_env(&env_cfg);
    const char *pre = getenv("LD_PRELOAD");
    preloaded = pre && strstr(pre, "librheap") != NULL;
    rheap__modules_init();
    rheap__threads_init();
    pthread_atfork(rheap__fork_prepare, rheap__fork_parent, rheap__fork_child);
    if (env_cfg.signal) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_toggle_signal;
        sa.sa_flags = SA_RESTART;
        sigemptyset(&sa.sa_mask);
        sigaction(env_cfg.signal, &sa, NULL);
    }
    atomic_fetch_and(&rheap__word, ~RHEAP__UNINIT);
    uint64_t enable;
    int autostart = preloaded;
    if (env_setting(RHEAP__SET_ENABLE, &enable, NULL))
        autostart = (int)enable;
    if (autostart && start(&env_cfg, "env") != 0)
        rheap__log("cannot start recording in ", env_cfg.dir[0] ? env_cfg.dir : ".", ": ",
                   strerrordesc_np(errno), NULL);
}

static void init(void) {
    rheap__unwind_init(); /* dl_iterate_phdr: not under the control lock */
    rheap__ctl_lock();
    init_locked();
    rheap__ctl_unlock();
}

void rheap__slow_path(void) {
    int word = atomic_load(&rheap__word);
    if (word & RHEAP__UNINIT)
        init();
    if (word & RHEAP__TOGGLE)
        apply_toggles();
}

/* Programs that allocate before this constructor runs have already initialized us. */
__attribute__((constructor)) static void rheap_constructor(void) {
    rheap__resolve();
    rheap__exec_init();
    int guard = rheap__guard;
    rheap__guard = 1;
    if (atomic_load(&rheap__word) & RHEAP__UNINIT)
        init();
    start_toggle_thread();
    rheap__guard = guard;
}

__attribute__((destructor)) static void rheap_destructor(void) {
    rheap__before_exit();
}

/* ---- Called by exec.c and the _exit wrappers ---- */

int rheap__before_exec(void) {
    int guard = rheap__guard, was_on = 0;
    if (guard)
        return 0; /* a signal handler interrupted the tracer: its state is mid-update, leave it */
    rheap__guard = 1;
    rheap__ctl_lock();
    /* A vfork child shares our memory: it must not touch the parent's recording. */
    if ((atomic_load(&rheap__word) & RHEAP__ON) && getpid() == rec_pid) {
        was_on = 1;
        stop("exec");
    }
    rheap__ctl_unlock();
    rheap__guard = guard;
    return was_on;
}

void rheap__after_failed_exec(int was_on) {
    if (!was_on)
        return;
    int guard = rheap__guard;
    rheap__guard = 1;
    rheap__ctl_lock();
    rheap__config_t c = rheap__cfg;
    start(&c, "exec");
    rheap__ctl_unlock();
    rheap__guard = guard;
}

void rheap__before_exit(void) {
    int guard = rheap__guard;
    if (guard)
        return; /* a signal handler interrupted the tracer: flushing now could deadlock */
    rheap__guard = 1;
    rheap__ctl_lock();
    flush_for_exit();
    rheap__ctl_unlock();
    rheap__guard = guard;
}

/* ---- Public API ---- */

static int config_from_api(const rheap_config *in, rheap__config_t *c) {
    rheap_config d = RHEAP_CONFIG_INIT;
    if (!in)
        in = &d;
    if (in->max_stack_depth < 1 || in->max_stack_depth > RIP_MAX_DEPTH || in->max_threads < 1 ||
        !(in->sample_rate >= 0.0 && in->sample_rate <= 1.0) || in->buffer_kb > 4096 ||
        (in->output_dir && strlen(in->output_dir) >= sizeof c->dir - 64))
        return -1;
    default_config(c);
    c->depth = in->max_stack_depth;
    c->max_threads = in->max_threads;
    c->buffer_kb = (unsigned)rheap__block_kb(in->buffer_kb ? in->buffer_kb : 64);
    c->sample_ppm = (uint32_t)(in->sample_rate * 1000000.0 + 0.5);
    c->signal = env_cfg.signal;
    if (in->output_dir)
        strcpy(c->dir, in->output_dir);
    return 0;
}

RHEAP_EXPORT int rheap_enable(const rheap_config *config) {
    int guard = rheap__guard, saved_errno, r;
    rheap__guard = 1;
    rheap__resolve();
    rheap__unwind_init();
    rheap__ctl_lock();
    init_locked();
    rheap__config_t c;
    if (config_from_api(config, &c) != 0) {
        errno = EINVAL;
        r = -1;
    } else {
        r = start(&c, "api");
    }
    saved_errno = errno;
    rheap__ctl_unlock();
    rheap__guard = guard;
    errno = saved_errno;
    return r;
}

RHEAP_EXPORT int rheap_disable(void) {
    int guard = rheap__guard;
    rheap__guard = 1;
    rheap__ctl_lock();
    int r = stop("api"), saved = errno;
    rheap__ctl_unlock();
    rheap__guard = guard;
    errno = saved;
    return r;
}

RHEAP_EXPORT int rheap_flush(void) {
    int guard = rheap__guard, r = 0;
    rheap__guard = 1;
    rheap__ctl_lock();
    if (atomic_load(&rheap__word) & RHEAP__ON) {
        rheap__threads_flush_all(0);
        if (proc_w)
            rip_writer_flush(proc_w);
    } else {
        r = -1;
    }
    rheap__ctl_unlock();
    rheap__guard = guard;
    if (r)
        errno = EALREADY;
    return r;
}

RHEAP_EXPORT int rheap_mark(const char *label) {
    if (!(atomic_load(&rheap__word) & RHEAP__ON) || !label) {
        errno = EALREADY;
        return -1;
    }
    int guard = rheap__guard;
    rheap__guard = 1;
    int r = rheap__record_mark(label);
    rheap__guard = guard;
    return r;
}

RHEAP_EXPORT int rheap_is_enabled(void) {
    return (atomic_load(&rheap__word) & RHEAP__ON) ? 1 : 0;
}

RHEAP_EXPORT const char *rheap_output_path(void) {
    return rheap__rec_path[0] ? rheap__rec_path : NULL;
}
