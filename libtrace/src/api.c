/*
 * api.c: the public API (rheap.h). Each call holds the guard, so whatever it allocates is not
 * recorded, and keeps errno as the contract in rheap.h says.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"
#include "rheap.h"
#include "rheap_pool.h"
#include "rheap_settings.h"

/* The settings an API caller asked for, each checked against the settings table's range, the
 * one the environment's values are held to; the toggle signal and the seed stay the
 * environment's. */
static int config_from_api(const rheap_config *in, rheap__config_t *c) {
    rheap_config d = RHEAP_CONFIG_INIT;
    if (!in)
        in = &d;
    /* A NaN or a negative rate has no ppm: refused before the conversion. */
    if (!(in->sample_rate >= 0.0 && in->sample_rate <= 1.0))
        return -1;
    uint64_t ppm = (uint64_t)(in->sample_rate * 1000000.0 + 0.5);
    if (rheap__setting_check(RHEAP__SET_DEPTH, in->max_stack_depth) != 0 ||
        rheap__setting_check(RHEAP__SET_MAX_THREADS, in->max_threads) != 0 ||
        rheap__setting_check(RHEAP__SET_BUFFER_KB, in->buffer_kb) != 0 ||
        rheap__setting_check(RHEAP__SET_SAMPLE_RATE, ppm) != 0 ||
        rheap__setting_check(RHEAP__SET_MODE, (uint64_t)(unsigned)in->mode) != 0 ||
        rheap__setting_check(RHEAP__SET_SAMPLE_INTERVAL, in->sample_interval) != 0 ||
        (in->output_dir &&
         strnlen(in->output_dir, sizeof c->dir) > rheap__settings[RHEAP__SET_DIR].max))
        return -1;
    c->dir[0] = 0;
    c->depth = in->max_stack_depth;
    c->max_threads = in->max_threads;
    c->buffer_kb = (unsigned)rheap__block_kb(in->buffer_kb);
    c->sample_ppm = (uint32_t)ppm;
    c->profile = in->mode == RHEAP_MODE_PROFILE;
    c->interval = in->sample_interval;
    c->seed = rheap__env_cfg.seed;
    c->segment_kb = rheap__env_cfg.segment_kb;
    c->signal = rheap__env_cfg.signal;
    c->rss_ms = rheap__env_cfg.rss_ms;
    c->maps = rheap__env_cfg.maps;
    if (in->output_dir)
        strcpy(c->dir, in->output_dir);
    return 0;
}

/* Creates the output directory and its missing parents, as `mkdir -p` does (mode 0777 less the
 * umask, as any directory the program makes); one that exists is fine. Nothing is allocated:
 * the path is cut in place at each '/' and put back. A failure is left for the recording's
 * own mkdir to report through errno. */
static void make_dirs(char *dir) {
    for (char *p = dir + 1;; p++) {
        if (*p != '/' && *p)
            continue;
        char c = *p;
        *p = 0;
        mkdir(dir, 0777);
        *p = c;
        if (!c)
            return;
    }
}

/* The recording rheap_enable last started (rheap__gen's value then), under the control lock. */
static unsigned api_gen;

RHEAP_EXPORT int rheap_enable(const rheap_config *config) {
    int guard = rheap__tl.guard, saved_errno, r;
    rheap__tl.guard = 1;
    rheap__resolve();
    rheap__unwind_init();
    rheap__ctl_lock();
    rheap__init_locked();
    static rheap__config_t c; /* under the control lock; 4 KiB kept off the program's stack */
    if (config_from_api(config, &c) != 0) {
        errno = EINVAL;
        r = -1;
    } else {
        r = rheap__start(&c, "api");
        /* A directory that is not there yet is made, then the start tried once more; only
         * then, so a call that cannot apply its settings (EALREADY) makes nothing. */
        if (r != 0 && errno == ENOENT && c.dir[0]) {
            make_dirs(c.dir);
            r = rheap__start(&c, "api");
        }
        if (r == 0)
            api_gen = atomic_load(&rheap__gen);
        else if (errno == EALREADY && api_gen != atomic_load(&rheap__gen))
            /* Started by the environment or the toggle signal: the program's settings (its
             * output directory above all) would be lost without a word. */
            rheap__log("rheap_enable: already recording into ", rheap__rec.path,
                       " (not started by rheap_enable); this call's settings are not applied",
                       NULL);
    }
    saved_errno = errno;
    rheap__ctl_unlock();
    rheap__tl.guard = guard;
    errno = saved_errno;
    return r;
}

RHEAP_EXPORT int rheap_disable(void) {
    int guard = rheap__tl.guard;
    rheap__tl.guard = 1;
    rheap__ctl_lock();
    int r = rheap__stop("api"), saved = errno;
    rheap__ctl_unlock();
    rheap__tl.guard = guard;
    errno = saved;
    return r;
}

RHEAP_EXPORT int rheap_flush(void) {
    int guard = rheap__tl.guard;
    rheap__tl.guard = 1;
    rheap__ctl_lock();
    int r = rheap__flush(), saved = errno;
    rheap__ctl_unlock();
    rheap__tl.guard = guard;
    errno = saved;
    return r;
}

RHEAP_EXPORT int rheap_mark(const char *label) {
    if (!(atomic_load(&rheap__word) & RHEAP__ON) || !label) {
        errno = EALREADY;
        return -1;
    }
    int guard = rheap__tl.guard;
    rheap__tl.guard = 1;
    int r = rheap__record_mark(label);
    rheap__tl.guard = guard;
    return r;
}

/* rheap_pool.h's calls all come here. The program's errno is kept: the recorder's system calls
 * must not be seen by a pool's caller. */
RHEAP_EXPORT void rheap_pool_event(int op, uintptr_t pool, const void *addr, size_t size,
                                   const char *name) {
    if (!(atomic_load(&rheap__word) & RHEAP__ON) || op < RHEAP_POOL_CREATE ||
        op > RHEAP_POOL_DESTROY)
        return;
    if ((op == RHEAP_POOL_ALLOC || op == RHEAP_POOL_FREE) && !addr)
        return;
    int saved = errno, guard = rheap__tl.guard;
    rheap__tl.guard = 1;
    rheap__record_pool(op, pool, addr, size, name, RHEAP__CALLER());
    rheap__tl.guard = guard;
    errno = saved;
}

RHEAP_EXPORT int rheap_is_enabled(void) {
    return (atomic_load(&rheap__word) & RHEAP__ON) ? 1 : 0;
}

RHEAP_EXPORT const char *rheap_output_path(void) {
    return rheap__rec.path[0] ? rheap__rec.path : NULL;
}
