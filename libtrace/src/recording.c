/*
 * recording.c: the life of one recording. It starts (rheap__start) by creating a new directory
 * rip-<pid>[-N]/ with its process file, and ends (rheap__stop) when every thread's file is
 * flushed and closed and the process file gets its `off` record. What starts and stops it (the
 * environment, the API, the toggle signal, fork, exec, exit, an internal failure) is in the
 * other files; everything here runs under the control lock, rarely. The allocation path only
 * reads rheap__word and, while recording, rheap__rec.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "sample.h"

_Atomic int rheap__word = RHEAP__UNINIT;
_Atomic unsigned rheap__gen;
rheap__recording_t rheap__rec;

/* What only this file touches: the control lock, and the open recording's process file (its
 * writer, in memory of its own). */
static struct {
    pthread_mutex_t lock;
    void *proc_mem;
    size_t proc_mem_size;
    rip_writer_t *proc_w;
    int unseen_written; /* the process file has its unseen record */
    int dirfd;               /* the open recording's directory (O_PATH, placed high), or -1 */
    dev_t dir_dev;           /* its identity, checked before each use */
    ino_t dir_ino;
    _Atomic int failed_once; /* the failure line was printed in this recording */
} ctl = {.lock = PTHREAD_MUTEX_INITIALIZER, .dirfd = -1};

void rheap__ctl_lock(void) {
    pthread_mutex_lock(&ctl.lock);
}

void rheap__ctl_unlock(void) {
    pthread_mutex_unlock(&ctl.lock);
}

int rheap__ctl_trylock(void) {
    return pthread_mutex_trylock(&ctl.lock);
}

static int make_recording_dir(const rheap__config_t *c) {
    /* Static, as every path buffer here (under the control lock): a recording may start from
     * an allocation (the toggle signal, a fork) with little stack left. */
    static char dir[PATH_MAX];
    char num[24];
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
    /* Names this program image took itself are skipped silently; another one is said. */
    uint32_t own = rheap__rec.pid == getpid() ? rheap__rec.num : 0;
    static char taken[PATH_MAX]; /* under the control lock, off a stack that may be small */
    taken[0] = 0;
    for (uint32_t n = 1; n < 100000; n++) {
        dir[base] = 0;
        strcat(dir, "/rip-");
        strcat(dir, rheap__utoa((uint64_t)getpid(), num));
        if (n > 1) {
            strcat(dir, "-");
            strcat(dir, rheap__utoa(n, num));
        }
        if (mkdir(dir, 0700) == 0) {
            strcpy(rheap__rec.path, dir);
            rheap__rec.num = n;
            if (taken[0])
                rheap__log("recording into ", dir, " (", taken, " was made by another)", NULL);
            return 0;
        }
        if (errno != EEXIST)
            return -1;
        if (n > own && !taken[0] && rheap__dir_planted(dir))
            strcpy(taken, dir);
    }
    return -1;
}

/* The process record: who we are. /proc/self/cmdline is read into a static buffer (we are
 * under the control lock) and cut into arguments: at most MAX_ARGS of them, in 60 KiB (the
 * record must fit a block). A longer command line ends with an argument that says so. */
#define MAX_ARGS 4096
static rip_status_t write_process(void) {
    static char cmdline[60 * 1024];
    static const char *argv[MAX_ARGS];
    uint32_t argc = 0;
    int fd = rheap__sys_open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC, 0);
    ssize_t len = 0;
    int cut = 0;
    if (fd >= 0) {
        ssize_t n;
        while (len < (ssize_t)sizeof cmdline - 1 &&
               (n = rheap__sys_read(fd, cmdline + len, sizeof cmdline - 1 - (size_t)len)) > 0)
            len += n;
        char more;
        cut = len == (ssize_t)sizeof cmdline - 1 && rheap__sys_read(fd, &more, 1) == 1;
        rheap__sys_close(fd);
    }
    if (len < 0 || len >= (ssize_t)sizeof cmdline)
        len = 0; /* not from read(2) as documented */
    cmdline[len] = 0;
    ssize_t i = 0;
    for (; i < len && argc < MAX_ARGS - 1; i += (ssize_t)strlen(cmdline + i) + 1)
        argv[argc++] = cmdline + i;
    if (cut || i < len) {
        if (cut && argc > 1)
            argc--; /* the last one read may be partial */
        argv[argc++] = "[the command line goes on: too long to record]";
    }
    static char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    struct timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall);
    uint64_t wall_ns = (uint64_t)wall.tv_sec * 1000000000u + (uint64_t)wall.tv_nsec;
    /* A fork child names the process that forked it, even if that one has exited by now and
     * the child was re-parented. */
    pid_t ppid = rheap__forking_pid();
    if (!ppid)
        ppid = getppid();
    return rip_writer_process(ctl.proc_w, (uint32_t)ppid, exe, argc, argv, wall_ns, "monotonic",
                              (uint32_t)sysconf(_SC_PAGESIZE));
}

/* The process file has no staging area: closing its writer only closes the kept descriptor. */
/* Keeps a descriptor of the new recording's directory, so that its thread files can be created
 * in it whatever becomes of the path (a new root, a mount namespace, search permission lost on
 * a directory above it). None when no high number is free: files are then made by path. */
static void keep_dir(void) {
    struct stat st;
    int fd = rheap__sys_open(rheap__rec.path, O_PATH | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW, 0);
    ctl.dirfd = fd < 0 ? -1 : rheap__sys_keep_high(fd);
    if (ctl.dirfd >= 0 && fstat(ctl.dirfd, &st) == 0) {
        ctl.dir_dev = st.st_dev;
        ctl.dir_ino = st.st_ino;
    } else if (ctl.dirfd >= 0) {
        rheap__sys_close(ctl.dirfd);
        ctl.dirfd = -1;
    }
}

/* The kept directory descriptor, if the program has not closed it or reused its number. */
static int dir_fd(void) {
    struct stat st;
    if (ctl.dirfd >= 0 &&
        (fstat(ctl.dirfd, &st) != 0 || st.st_dev != ctl.dir_dev || st.st_ino != ctl.dir_ino))
        ctl.dirfd = -1; /* not ours any more: forgotten, never closed */
    return ctl.dirfd;
}

static void drop_dir(void) {
    if (dir_fd() >= 0)
        rheap__sys_close(ctl.dirfd);
    ctl.dirfd = -1;
}

int rheap__create_in_recording(const char *name, const char *path) {
    int dfd = dir_fd();
    if (dfd < 0)
        return rheap__open_file(path);
    return (int)syscall(SYS_openat, dfd, name,
                        O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
}

void rheap__recording_give_to(uid_t uid) {
    int dfd = dir_fd();
    if (dfd >= 0)
        (void)fchownat(dfd, "", uid, (gid_t)-1, AT_EMPTY_PATH);
    else
        (void)chown(rheap__rec.path, uid, (gid_t)-1);
}

static void close_process_file(void) {
    if (ctl.proc_w)
        rip_writer_close(ctl.proc_w, 0);
    if (ctl.proc_mem)
        munmap(ctl.proc_mem, ctl.proc_mem_size);
    ctl.proc_mem = NULL;
    ctl.proc_w = NULL;
}

int rheap__start(const rheap__config_t *c, const char *how) {
    if (atomic_load(&rheap__word) & RHEAP__ON) {
        errno = EALREADY;
        return -1;
    }
    if (make_recording_dir(c) != 0)
        return -1;
    static char path[PATH_MAX + 16];
    strcpy(path, rheap__rec.path);
    strcat(path, "/process.rip");
    ctl.proc_mem_size = rip_writer_footprint(64 * 1024);
    ctl.proc_mem = mmap(NULL, ctl.proc_mem_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    int fd = -1;
    if (ctl.proc_mem == MAP_FAILED)
        ctl.proc_mem = NULL;
    else
        fd = rheap__open_file(path);
    if (fd < 0) {
        /* Leave nothing behind: an empty directory would look like a broken recording. */
        int err = errno;
        close_process_file();
        rmdir(rheap__rec.path);
        errno = err;
        return -1;
    }
    rheap__rec.cfg = *c;
    rheap__rec.start_ns = rheap__now_abs();
    rheap__rss_start(c->rss_ms);
    __atomic_store_n(&rheap__rec.pid, getpid(), __ATOMIC_RELAXED); /* read unlocked: fork.c */
    rip_header_t h = {1, RIP_FORMAT_MAJOR, RIP_FORMAT_MINOR, (uint32_t)rheap__rec.pid, 0, rheap__rec.num, 0,
                      rheap__rec.start_ns, RHEAP__TIME_SHIFT, 0, 0};
    ctl.proc_w = rip_writer_init(ctl.proc_mem, 64 * 1024, fd, &h);
    rip_status_t st = rip_writer_detach(ctl.proc_w, path);
    int err = errno;
    rheap__sys_close(fd);
    errno = err;
    atomic_store(&rheap__lost_events, 0);
    if (st == RIP_OK)
        st = write_process();
    if (st == RIP_OK)
        st = rip_writer_config(ctl.proc_w, c->depth, c->sample_ppm, c->buffer_kb, c->max_threads,
                               (uint32_t)c->signal, rheap__rec.path);
    if (st == RIP_OK && c->profile)
        st = rip_writer_sampling(ctl.proc_w, c->interval, c->seed);
    rheap__unseen_say();
    ctl.unseen_written = 0;
    if (st == RIP_OK && rheap__unseen.found) {
        st = rip_writer_unseen(ctl.proc_w, rheap__unseen.allocator, rheap__unseen.module,
                               rheap__unseen.symbol);
        ctl.unseen_written = 1;
    }
    if (st == RIP_OK)
        st = rip_writer_on(ctl.proc_w, 0, how);
    if (st == RIP_OK)
        st = rip_writer_flush(ctl.proc_w);
    if (st != RIP_OK) {
        int err = errno;
        close_process_file();
        unlink(path);
        rmdir(rheap__rec.path);
        errno = err;
        return -1;
    }
    keep_dir();
    atomic_store(&ctl.failed_once, 0);
    rheap__sample_start(c);
    atomic_fetch_add(&rheap__gen, 1);
    atomic_fetch_or(&rheap__word, c->profile ? RHEAP__ON | RHEAP__PROFILE : RHEAP__ON);
    return 0;
}

/* An allocator found after the start (unseen.c's look at the modules loaded since, at exit or
 * exec): said, and recorded before the `off` record. */
static void write_unseen_late(void) {
    if (!rheap__unseen.found || ctl.unseen_written)
        return;
    rheap__unseen_say();
    rip_writer_unseen(ctl.proc_w, rheap__unseen.allocator, rheap__unseen.module,
                      rheap__unseen.symbol);
    ctl.unseen_written = 1;
}

/* Events of threads refused a recorder (over max_threads) are counted, never silently gone. */
static void write_lost(void) {
    uint64_t lost = atomic_exchange(&rheap__lost_events, 0);
    if (lost)
        rip_writer_lost(ctl.proc_w, rheap__now(), lost, "threads over max_threads");
}

/* Creates a recording file: exclusive, never through a symlink, mode 0600. The caller hands
 * it to a writer (which keeps a copy of its own) and closes this descriptor; read and write, as
 * a thread file's staging area is mapped shared from it. */
int rheap__open_file(const char *path) {
    return rheap__sys_open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
}

int rheap__stop(const char *how) {
    if (!(atomic_load(&rheap__word) & RHEAP__ON)) {
        errno = EALREADY;
        return -1;
    }
    atomic_fetch_and(&rheap__word, ~(RHEAP__ON | RHEAP__PROFILE | RHEAP__EXITING));
    rheap__threads_wait_reallocs();
    rheap__threads_flush_all(RHEAP__FLUSH_CLOSE);
    if (ctl.proc_w) {
        write_lost();
        write_unseen_late();
        rip_writer_off(ctl.proc_w, rheap__now(), how);
        rip_writer_flush(ctl.proc_w);
    }
    close_process_file();
    drop_dir();
    return 0;
}

/* At exit the files are flushed and the process file says "off", but the recorders stay open
 * for later events, which their staging areas keep: static destructors and libraries finalized
 * after librheap still free memory. The staging areas give their disk space back meanwhile; a
 * thread's next event allocates it again. */
void rheap__flush_for_exit(void) {
    if (!(atomic_load(&rheap__word) & RHEAP__ON) || getpid() != rheap__rec.pid)
        return;
    atomic_fetch_or(&rheap__word, RHEAP__EXITING);
    rheap__threads_flush_all(RHEAP__FLUSH_EXIT);
    if (ctl.proc_w) {
        write_lost();
        write_unseen_late();
        rip_writer_off(ctl.proc_w, rheap__now(), "exit");
        rip_writer_flush(ctl.proc_w);
    }
}

/* rheap_flush: every thread's buffered events and the process file written now. */
int rheap__flush(void) {
    if (!(atomic_load(&rheap__word) & RHEAP__ON)) {
        errno = EALREADY;
        return -1;
    }
    rheap__threads_flush_all(RHEAP__FLUSH_ONLY);
    if (ctl.proc_w)
        rip_writer_flush(ctl.proc_w);
    return 0;
}

/* In a fork child: a fresh control lock (the parent's may have been held by a thread that does
 * not exist here), and the parent's process-file writer dropped unwritten. */
void rheap__recording_after_fork(void) {
    pthread_mutex_init(&ctl.lock, NULL);
    close_process_file();
    drop_dir();
}

int rheap__report_failure(const char *what, int err) {
    if (atomic_exchange(&ctl.failed_once, 1))
        return 0;
    rheap__log(what, ": ", strerrordesc_np(err), "; recording stopped, the program goes on", NULL);
    return 1;
}

void rheap__fail(const char *what, int err) {
    if (rheap__foreign_process())
        return; /* not this process's recording to stop (fork.c) */
    if (!rheap__report_failure(what, err))
        return;
    sigset_t old;
    rheap__sys_block_signals(&old);
    rheap__tl.internal++;
    rheap__ctl_lock();
    char how[128] = "error: ";
    strncat(how, what, sizeof how - 10);
    rheap__stop(how);
    rheap__ctl_unlock();
    rheap__tl.internal--;
    rheap__sys_restore_signals(&old);
}
