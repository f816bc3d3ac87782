/*
 * fork.c: the fork handlers (pthread_atfork, and around _Fork in exec.c). The parent's locks are
 * held across the fork so the child gets them in a known state; the child records into a
 * recording of its own. Also processes made without these handlers (rheap__foreign_process).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/kcmp.h>

#include "internal.h"
#include "sample.h"

/* A fork from a signal handler that interrupted the tracer takes no tracer lock (it could be
 * holding one): the child resets everything anyway. */
static struct {
    int unlocked;  /* prepare took no lock: parent and child release none */
    pid_t pid;     /* the forking process, set between prepare and the child handler */
} forking;

/* The guard stays held from prepare until the parent or child handler: atfork handlers
 * registered before librheap's run while the locks are held (prepare handlers in reverse order,
 * the others in order), and what they allocate must pass through untraced rather than wait for
 * a lock this thread holds. */
void rheap__fork_prepare(void) {
    int guard = rheap__tl.guard;
    forking.unlocked = guard;
    if (guard) {
        forking.pid = getpid();
        return;
    }
    rheap__tl.guard = 1;
    rheap__threads_quiesce_loader();
    rheap__ctl_lock();
    rheap__threads_lock_all();
    rheap__sample_fork_lock();
    forking.pid = getpid();
}

void rheap__fork_parent(void) {
    forking.pid = 0;
    if (forking.unlocked)
        return;
    rheap__sample_fork_unlock();
    rheap__threads_unlock_all();
    rheap__ctl_unlock();
    rheap__threads_release_loader();
    rheap__tl.guard = 0;
}

/* The child records into its own rip-<childpid>/ (its process record names the parent), never
 * into the parent's files. */
/* The recorder's state in a child, copied from the parent while another thread may have been
 * inside it: every recorder and lock reset, the parent's buffered events dropped (the parent
 * writes them), recording off. */
static void reset_child(void) {
    atomic_store(rheap__own_word, 1); /* the kernel wiped it; this copy's state is its own now */
    rheap__threads_after_fork_child();
    rheap__recording_after_fork();
    rheap__toggle_after_fork();
    atomic_fetch_and(&rheap__word, ~(RHEAP__ON | RHEAP__PROFILE | RHEAP__EXITING));
}

void rheap__fork_child(void) {
    rheap__tl.guard = 1;
    int was_on = atomic_load(&rheap__word) & RHEAP__ON;
    if (!forking.unlocked)
        rheap__sample_fork_unlock();
    reset_child();
    /* A child of a process rheap attach records is left unrecorded (got.c). */
    if (was_on && !rheap__attach_forked()) {
        static rheap__config_t c; /* 4 KiB: not on the forking thread's stack */
        c = rheap__rec.cfg;
        if (rheap__start(&c, "fork") != 0)
            rheap__log("cannot start the forked child's recording: ", strerrordesc_np(errno), NULL);
    }
    forking.pid = 0;
    rheap__tl.guard = forking.unlocked;
}

/* A process made by clone() without CLONE_VM or by the fork system call runs no fork handler:
 * it holds a copy of its parent's recorders, files named and offsets counted for the parent.
 * Its writers refuse to write (rip_writer_detach), and where the pid is compared (a failed
 * write, exit, exec) this turns its recording off with one line: the events it made are
 * already mixed with its parent's in memory and cannot be told apart, so it is not recorded
 * rather than recorded in part. A vfork child shares its parent's memory, which must then stay
 * untouched: kcmp tells the two apart, and when it cannot (no kcmp, not permitted) memory is
 * taken as shared. Returns 1 when this process is not the recording's, 0 when it is (or
 * nothing is recording). Called with the guard held and no tracer lock. */
int rheap__foreign_process(void) {
    if (!(atomic_load(&rheap__word) & RHEAP__ON))
        return 0;
    /* Read without the control lock (a copy of it may be held for good): an atomic read of a
     * value that, within one process, is always this process's pid once it recorded. */
    pid_t pid = getpid(), owner = __atomic_load_n(&rheap__rec.pid, __ATOMIC_RELAXED);
    if (pid == owner)
        return 0;
    long order = syscall(SYS_kcmp, pid, owner, KCMP_VM, 0, 0);
    if (order == 1 || order == 2) {
        char num[24];
        reset_child();
        rheap__log("process ", rheap__utoa((uint64_t)pid, num),
                   " was made without fork handlers (a raw clone or fork system call): it is not "
                   "recorded",
                   NULL);
    }
    return 1;
}

/* Without MADV_WIPEONFORK (kernels before 4.14) the word stays 1 in every copy: a copy made
 * without fork handlers is then found only where the pid is compared (see above). */
static _Atomic int own_fallback = 1;
_Atomic int *rheap__own_word = &own_fallback;

void rheap__own_init(void) {
    if (rheap__own_word != &own_fallback)
        return;
    void *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return;
    if (madvise(m, 4096, MADV_WIPEONFORK) != 0) {
        munmap(m, 4096);
        return;
    }
    atomic_store((_Atomic int *)m, 1);
    rheap__own_word = m;
}

int rheap__own_check(void) {
    if (rheap__foreign_process())
        return 0;
    /* The recording's own process, or none records: the word is right again from now on. A
     * copy whose parent was not recording may record a recording of its own later. */
    if (atomic_load(&rheap__word) & RHEAP__ON)
        atomic_store(rheap__own_word, 1);
    return 1;
}

/* The process that is forking this one, or 0 outside a fork: a fork child's process record
 * names it. */
pid_t rheap__forking_pid(void) {
    return forking.pid;
}
