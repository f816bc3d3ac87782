/*
 * toggle.c: the toggle signal (RHEAP_SIGNAL). Each delivery turns recording on or off; the
 * handler only counts it, and the toggle thread (or else the next allocator call) acts on it
 * under the control lock. The toggle thread leaves the signal unblocked, so a program that
 * blocks it in all its own threads still toggles; and it says so, once, when the program has
 * installed a handler of its own for the signal (checked every second).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "internal.h"

/* The toggle thread: with a toggle signal configured, one thread of ours waits for it, so a
 * window closes (files written, `off` recorded) when the signal arrives even if the service is
 * idle. Without it (it could not be created, or in a forked child) the next allocator call in
 * any thread acts on the signal instead. */
static struct {
    /* Deliveries not yet acted on: each one toggles, so two quick signals close the window
     * and open a new one rather than cancelling out. */
    _Atomic unsigned pending;
    sem_t sem;              /* posted by the handler for the thread */
    _Atomic int thread_ok;  /* the thread runs (in this process) */
} toggle;

static void on_toggle_signal(int sig) {
    (void)sig;
    /* Only count and wake: the handler may have interrupted this very thread inside the
     * tracer. sem_post is async-signal-safe. */
    atomic_fetch_add(&toggle.pending, 1);
    atomic_fetch_or(&rheap__word, RHEAP__TOGGLE);
    if (atomic_load(&toggle.thread_ok)) {
        int saved = errno;
        sem_post(&toggle.sem);
        errno = saved;
    }
}

/* The TOGGLE bit is cleared only once the deliveries are acted on. Cleared first, it let a
 * thread that allocated while the toggle thread was still starting the recording see neither
 * TOGGLE nor ON, and its allocations passed unrecorded although the signal had come before
 * them; now such a thread takes the slow path and waits on the control lock until the
 * recording is on. A delivery that arrives after the last exchange sets the bit again. */
void rheap__toggle_apply(void) {
    rheap__ctl_lock();
    for (unsigned n = atomic_exchange(&toggle.pending, 0); n; n--) {
        if (atomic_load(&rheap__word) & RHEAP__ON)
            rheap__stop("signal");
        else if (rheap__start(&rheap__env_cfg, "signal") != 0)
            rheap__log("cannot start recording: ", strerrordesc_np(errno), NULL);
    }
    atomic_fetch_and(&rheap__word, ~RHEAP__TOGGLE);
    if (atomic_load(&toggle.pending))
        atomic_fetch_or(&rheap__word, RHEAP__TOGGLE);
    rheap__ctl_unlock();
}

/* Whether the toggle signal's handler is still ours: a program that installs its own for the
 * same signal takes the signal away without knowing it. Said once, in one line. */
static void check_handler(void) {
    static int said;
    struct sigaction sa;
    int sig = rheap__env_cfg.signal;
    if (said || sigaction(sig, NULL, &sa) != 0 || sa.sa_handler == on_toggle_signal)
        return;
    said = 1;
    char num[24];
    rheap__log("the program installed its own ",
               sa.sa_handler == SIG_IGN ? "disposition (ignored)" : "handler",
               " for signal ", rheap__utoa((uint64_t)sig, num),
               ", the toggle signal: toggling is off in this process; choose another signal "
               "(RHEAP_SIGNAL)",
               NULL);
}

static void *toggle_main(void *arg) {
    (void)arg;
    rheap__tl.guard = 1; /* this thread's own allocations are not the program's */
    prctl(PR_SET_NAME, "rheap-toggle", 0, 0, 0);
    for (;;) {
        /* Woken by a delivery, or every second to look at the handler. */
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_sec += 1;
        int r;
        while ((r = sem_clockwait(&toggle.sem, CLOCK_MONOTONIC, &until)) != 0 && errno == EINTR)
            ;
        if (r == 0)
            rheap__toggle_apply();
        else
            check_handler();
    }
    return NULL;
}

/* From the constructor (libc is up by then), with the guard held. */
void rheap__toggle_start_thread(void) {
    if (!rheap__env_cfg.signal || sem_init(&toggle.sem, 0, 0) != 0)
        return;
    pthread_t th;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    /* The thread takes no signal but the toggle signal: a service that blocks every signal in
     * all of its threads (to wait for them with sigwait) would otherwise leave the toggle signal
     * pending for ever. The handler only counts and posts, which is safe on this thread too. */
    sigset_t all, old;
    sigfillset(&all);
    sigdelset(&all, rheap__env_cfg.signal);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    if (pthread_create(&th, &attr, toggle_main, NULL) == 0)
        atomic_store(&toggle.thread_ok, 1);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
}

/* From initialization: the handler for the configured signal. */
void rheap__toggle_install(int sig) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_toggle_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
}

/* In a fork child: threads do not survive fork. */
void rheap__toggle_after_fork(void) {
    atomic_store(&toggle.thread_ok, 0);
}
