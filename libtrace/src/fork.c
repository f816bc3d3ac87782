/*
 * fork.c: the fork handlers (pthread_atfork, and around _Fork in exec.c). The parent's locks are
 * held across the fork so the child gets them in a known state; the child records into a
 * recording of its own.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "sample.h"

/* A fork from a signal handler that interrupted the tracer takes no tracer lock (it could be
 * holding one): the child resets everything anyway. */
static struct {
    int unlocked;  /* prepare took no lock: parent and child release none */
    pid_t pid;     /* the forking process, set between prepare and the child handler */
} forking;

void rheap__fork_prepare(void) {
    int guard = rheap__guard;
    forking.unlocked = guard;
    if (guard) {
        forking.pid = getpid();
        return;
    }
    rheap__guard = 1;
    rheap__threads_quiesce_loader();
    rheap__ctl_lock();
    rheap__threads_lock_all();
    rheap__sample_fork_lock();
    forking.pid = getpid();
    rheap__guard = guard;
}

void rheap__fork_parent(void) {
    forking.pid = 0;
    if (forking.unlocked)
        return;
    rheap__sample_fork_unlock();
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
    if (!forking.unlocked)
        rheap__sample_fork_unlock();
    rheap__threads_after_fork_child();
    rheap__recording_after_fork();
    rheap__toggle_after_fork();
    atomic_fetch_and(&rheap__word, ~(RHEAP__ON | RHEAP__EXITING));
    if (was_on) {
        rheap__config_t c = rheap__rec.cfg;
        if (rheap__start(&c, "fork") != 0)
            rheap__log("cannot start the forked child's recording: ", strerrordesc_np(errno), NULL);
    }
    forking.pid = 0;
    rheap__guard = guard;
}

/* The process that is forking this one, or 0 outside a fork: a fork child's process record
 * names it. */
pid_t rheap__forking_pid(void) {
    return forking.pid;
}
