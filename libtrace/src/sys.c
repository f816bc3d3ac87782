/*
 * sys.c: the few system calls the tracer makes while holding a lock, issued directly. Through
 * libc, open, close, read and write are thread cancellation points: a pthread_cancel landing
 * there would unwind the thread with a tracer lock held, and every other thread would then wait
 * for it forever. syscall(2) is not a cancellation point.
 */
#define _GNU_SOURCE
#include <fcntl.h>
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
