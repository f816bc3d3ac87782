/*
 * privileges.c: setuid and its kin. The recording directory belongs to the user who started the
 * recording, mode 0700: after root drops to another user, the threads the process starts would
 * get no file there, and recording would stop. So before the real call makes another user the
 * effective one, root gives the directory to that user; files are created through the
 * directory's kept descriptor, so the directories above it need not be searchable by that user.
 * The files already open stay root's: the recorder writes them through the descriptors and
 * mappings it keeps.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <unistd.h>

#include "internal.h"

/* Gives the open recording's directory to `euid` when root is about to become that user. */
static void hand_over(uid_t euid) {
    if (euid == (uid_t)-1 || euid == 0 || geteuid() != 0)
        return;
    int guard = rheap__tl.guard;
    rheap__tl.guard = 1;
    rheap__ctl_lock();
    if ((atomic_load(&rheap__word) & RHEAP__ON) && getpid() == rheap__rec.pid)
        rheap__recording_give_to(euid);
    rheap__ctl_unlock();
    rheap__tl.guard = guard;
}

RHEAP_EXPORT int setuid(uid_t uid) {
    static int (*real)(uid_t);
    if (!real)
        real = (int (*)(uid_t))rheap__next("setuid");
    if (!real) {
        errno = ENOSYS;
        return -1;
    }
    hand_over(uid);
    return real(uid);
}

RHEAP_EXPORT int seteuid(uid_t euid) {
    static int (*real)(uid_t);
    if (!real)
        real = (int (*)(uid_t))rheap__next("seteuid");
    if (!real) {
        errno = ENOSYS;
        return -1;
    }
    hand_over(euid);
    return real(euid);
}

RHEAP_EXPORT int setreuid(uid_t ruid, uid_t euid) {
    static int (*real)(uid_t, uid_t);
    if (!real)
        real = (int (*)(uid_t, uid_t))rheap__next("setreuid");
    if (!real) {
        errno = ENOSYS;
        return -1;
    }
    hand_over(euid);
    return real(ruid, euid);
}

RHEAP_EXPORT int setresuid(uid_t ruid, uid_t euid, uid_t suid) {
    static int (*real)(uid_t, uid_t, uid_t);
    if (!real)
        real = (int (*)(uid_t, uid_t, uid_t))rheap__next("setresuid");
    if (!real) {
        errno = ENOSYS;
        return -1;
    }
    hand_over(euid);
    return real(ruid, euid, suid);
}
