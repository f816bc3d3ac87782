/*
 * dirlock.c: one collector per directory and user. Two collectors following the same
 * recordings would both compact them: each would write a checkpoint of what it read and delete
 * files the other still lists, and their checkpoints would replace each other's. So `rheap
 * serve` holds an exclusive flock on `.rheap-serve-<uid>.lock` in each directory it follows,
 * for as long as it runs, with its pid written inside for the message of the next one.
 *
 * The lock is per user because a collector follows its own user's recordings only: two users'
 * collectors over one shared directory never read the same files. The file stays when the
 * collector ends: removing it would let a collector that opened it just before lock an inode
 * no one else can find, beside a new file a third one locks.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "collector.h"

int rc__dir_lock(const char *dir, int *fd_out, char *msg, size_t len)
{
    *fd_out = -1;
    char path[4200];
    if ((size_t)snprintf(path, sizeof path, "%s/.rheap-serve-%lu.lock", dir,
                         (unsigned long)geteuid()) >= sizeof path) {
        snprintf(msg, len, "%s: path too long", dir);
        return -1;
    }
    int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
        /* A directory this collector may not write to: it cannot compact there either, so it
         * only reads, as any number of readers may. */
        if (errno == EACCES || errno == EROFS || errno == EPERM)
            return 0;
        snprintf(msg, len, "%s: %s", path, strerror(errno));
        return -1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int err = errno;
        char pid[32] = "";
        ssize_t n = pread(fd, pid, sizeof pid - 1, 0);
        pid[n > 0 ? n : 0] = 0;
        pid[strcspn(pid, "\n")] = 0;
        close(fd);
        if (err == EWOULDBLOCK)
            snprintf(msg, len,
                     "%s is followed by another rheap serve (pid %s, holding %s): one "
                     "collector per directory, as two would compact the same recordings; stop "
                     "that one first",
                     dir, pid[0] ? pid : "unknown", path);
        else
            snprintf(msg, len, "%s: cannot lock: %s", path, strerror(err));
        return -1;
    }
    char text[32];
    int w = snprintf(text, sizeof text, "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) != 0 || pwrite(fd, text, (size_t)w, 0) != w) {
        snprintf(msg, len, "%s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    *fd_out = fd;
    return 0;
}
