/*
 * sys.c: the few system calls the tracer makes while holding a lock, issued directly. Through
 * libc, open, close, read and write are thread cancellation points: a pthread_cancel landing
 * there would unwind the thread with a tracer lock held, and every other thread would then wait
 * for it forever. syscall(2) is not a cancellation point.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

int rheap__sys_open(const char *path, int flags, int mode) {
    return (int)syscall(SYS_openat, AT_FDCWD, path, flags, mode);
}

int rheap__sys_close(int fd) {
    return (int)syscall(SYS_close, fd);
}

long rheap__sys_read(int fd, void *buf, unsigned long len) {
    return syscall(SYS_read, fd, buf, len);
}

long rheap__sys_write(int fd, const void *buf, unsigned long len) {
    return syscall(SYS_write, fd, buf, len);
}

/* The placement is the format library's (rip_fd_keep_high), so the writer's kept descriptor and
 * the recording directory's follow one policy. */
int rheap__sys_keep_high(int fd) {
    int high = rip_fd_keep_high(fd);
    syscall(SYS_close, fd);
    return high;
}

/* The signals a handler could run for, blocked, except those a fault raises (blocked, they
 * would kill the process at once). */
void rheap__sys_block_signals(sigset_t *old) {
    sigset_t all;
    sigfillset(&all);
    sigdelset(&all, SIGSEGV);
    sigdelset(&all, SIGBUS);
    sigdelset(&all, SIGILL);
    sigdelset(&all, SIGFPE);
    sigdelset(&all, SIGTRAP);
    syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, old, _NSIG / 8);
}

void rheap__sys_restore_signals(const sigset_t *old) {
    syscall(SYS_rt_sigprocmask, SIG_SETMASK, old, NULL, _NSIG / 8);
}
