/*
 * lifecycle.c: the process's life around the recorder: initialization (the first allocator call
 * or the constructor, whichever comes first: the environment is read, the handlers installed,
 * and recording may start), the rare states the allocation path hands over (rheap__slow_path),
 * and the recording's end before an exec or at exit.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

/* ---- Initialization ---- */

/* When this program image initialized. File times are at most as late as this clock (they may
 * come from its coarse variant), so a directory made before is never taken as made after. */
static struct timespec image_start;

void rheap__init_locked(void) {
    if (!(atomic_load(&rheap__word) & RHEAP__UNINIT))
        return;
    clock_gettime(CLOCK_REALTIME, &image_start);
    rheap__config_read_env();
    /* Preloaded, librheap records from the start unless told otherwise; linked, it waits for
     * rheap_enable. */
    const char *pre = getenv("LD_PRELOAD");
    int preloaded = pre && strstr(pre, "librheap") != NULL;
    rheap__modules_init();
    rheap__threads_init();
    pthread_atfork(rheap__fork_prepare, rheap__fork_parent, rheap__fork_child);
    if (rheap__env_cfg.signal)
        rheap__toggle_install(rheap__env_cfg.signal);
    atomic_fetch_and(&rheap__word, ~RHEAP__UNINIT);
    int autostart = rheap__config_env_enable(preloaded);
    if (autostart && rheap__start(&rheap__env_cfg, "env") != 0)
        rheap__log("cannot start recording in ", rheap__env_cfg.dir[0] ? rheap__env_cfg.dir : ".",
                   ": ", strerrordesc_np(errno), NULL);
}

static void init(void) {
    rheap__own_init();
    rheap__unwind_init(); /* dl_iterate_phdr: not under the control lock */
    rheap__unseen_scan(); /* the same */
    /* libc binds its own calls lazily too: the process's first pthread_getattr_np (a thread's
     * registration, unwind.c) runs the resolver for the calloc inside it, whose saved vector
     * registers would take 1 KiB of that thread's stack in its first allocation. Once here,
     * where the stack has room. */
    pthread_attr_t a;
    if (pthread_getattr_np(pthread_self(), &a) == 0)
        pthread_attr_destroy(&a);
    rheap__ctl_lock();
    rheap__init_locked();
    rheap__ctl_unlock();
}

void rheap__slow_path(void) {
    int word = atomic_load(&rheap__word);
    if (word & RHEAP__UNINIT)
        init();
    if (word & RHEAP__TOGGLE)
        rheap__toggle_apply();
}

/* Programs that allocate before this constructor runs have already initialized us. */
__attribute__((constructor)) static void rheap_constructor(void) {
    rheap__log_init();
    rheap__resolve();
    rheap__exec_init();
    int guard = rheap__tl.guard;
    rheap__tl.guard = 1;
    if (atomic_load(&rheap__word) & RHEAP__UNINIT)
        init();
    rheap__toggle_start_thread();
    rheap__tl.guard = guard;
}

__attribute__((destructor)) static void rheap_destructor(void) {
    rheap__before_exit();
}

/* Whether the existing `dir`, at a name a recording wanted, was put there by someone else than
 * the recorder (the caller has left out the names this image took itself): it is not a
 * directory (a link, a file), or it is one made after this image started, or one without a
 * process file. A recording of an earlier image of this process (before an exec) is none of
 * these; a stale recording of an earlier process with the same pid is not reported either.
 * Under the control lock. */
int rheap__dir_planted(const char *dir) {
    static char file[PATH_MAX + 16];
    struct stat st;
    if (lstat(dir, &st) != 0)
        return 0;
    if (!S_ISDIR(st.st_mode))
        return 1;
    if (st.st_ctim.tv_sec > image_start.tv_sec ||
        (st.st_ctim.tv_sec == image_start.tv_sec && st.st_ctim.tv_nsec > image_start.tv_nsec))
        return 1;
    size_t n = strlen(dir);
    if (n + sizeof "/process.rip" > sizeof file)
        return 0;
    memcpy(file, dir, n);
    memcpy(file + n, "/process.rip", sizeof "/process.rip");
    return lstat(file, &st) != 0;
}

/* ---- exec and exit (from exec.c and the _exit wrappers) ---- */

int rheap__before_exec(void) {
    int guard = rheap__tl.guard, was_on = 0;
    if (guard)
        return 0; /* a signal handler interrupted the tracer: its state is mid-update, leave it */
    rheap__tl.guard = 1;
    /* A vfork child shares our memory: it must not touch the parent's recording. */
    if (rheap__foreign_process()) {
        rheap__tl.guard = guard;
        return 0;
    }
    if (atomic_load(&rheap__word) & RHEAP__ON)
        rheap__unseen_rescan(); /* dl_iterate_phdr: before the control lock */
    rheap__ctl_lock();
    if (atomic_load(&rheap__word) & RHEAP__ON) {
        was_on = 1;
        rheap__stop("exec");
    }
    rheap__ctl_unlock();
    rheap__tl.guard = guard;
    return was_on;
}

void rheap__after_failed_exec(int was_on) {
    if (!was_on)
        return;
    int guard = rheap__tl.guard;
    rheap__tl.guard = 1;
    rheap__ctl_lock();
    static rheap__config_t c; /* under the control lock; 4 KiB kept off the stack */
    c = rheap__rec.cfg;
    rheap__start(&c, "exec");
    rheap__ctl_unlock();
    rheap__tl.guard = guard;
}

void rheap__before_exit(void) {
    int guard = rheap__tl.guard;
    if (guard) {
        /* exit() from a signal handler that interrupted the tracer. The interrupted code may
         * hold the control lock: then nothing more is done (every record so far is in the
         * staging areas). Else the other threads' files are written and the `off` record too;
         * this thread's recorder, if the handler interrupted it, is left as it is. */
        if (rheap__ctl_trylock() != 0)
            return;
        rheap__flush_for_exit();
        rheap__ctl_unlock();
        return;
    }
    rheap__tl.guard = 1;
    if (rheap__foreign_process()) {
        rheap__tl.guard = guard;
        return;
    }
    if (atomic_load(&rheap__word) & RHEAP__ON)
        rheap__unseen_rescan(); /* dl_iterate_phdr: before the control lock */
    rheap__ctl_lock();
    rheap__flush_for_exit();
    rheap__ctl_unlock();
    rheap__tl.guard = guard;
}
