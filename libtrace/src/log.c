/*
 * log.c: the tracer's few messages. They can be written from inside malloc, so no stdio: the
 * pieces are joined in a stack buffer and written with one write(2), errno kept.
 *
 * Descriptor 2 is the program's: a daemon may close it and open its data file there, so a line
 * written to "stderr" would land in the program's data. The file descriptor 2 named when the
 * program started (rheap__log_init, from the constructor) is remembered by device and inode,
 * and a message goes to descriptor 2 only while it is still that file; otherwise nowhere. Nor
 * is a line written where it would pass the file size limit (SIGXFSZ would kill the program).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

static dev_t err_dev;
static ino_t err_ino;
static int err_state; /* 0: not looked at yet; 1: descriptor 2 known; -1: it was closed */

void rheap__log_init(void) {
    struct stat st;
    if (err_state != 0)
        return;
    if (fstat(STDERR_FILENO, &st) != 0) {
        err_state = -1;
        return;
    }
    err_dev = st.st_dev;
    err_ino = st.st_ino;
    err_state = 1;
}

/* Whether len bytes may go to descriptor 2 now: it is the program's stderr of its start, and
 * the write stays within the file size limit. */
static int stderr_ok(size_t len) {
    struct stat st;
    if (err_state == 0)
        rheap__log_init(); /* a message before the constructor: descriptor 2 is as it started */
    if (err_state < 0 || fstat(STDERR_FILENO, &st) != 0 || st.st_dev != err_dev ||
        st.st_ino != err_ino)
        return 0;
    if (S_ISREG(st.st_mode)) {
        int fl = (int)syscall(SYS_fcntl, STDERR_FILENO, F_GETFL);
        long at = fl >= 0 && (fl & O_APPEND) ? (long)st.st_size
                                              : (long)syscall(SYS_lseek, STDERR_FILENO, 0L, SEEK_CUR);
        if (fl < 0 || at < 0 || (uint64_t)at + len > rip_file_size_limit())
            return 0;
    }
    return 1;
}

char *rheap__utoa(uint64_t v, char *buf) {
    char tmp[24];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (int i = 0; i < n; i++)
        buf[i] = tmp[n - 1 - i];
    buf[n] = 0;
    return buf;
}

void rheap__log(const char *first, ...) {
    char line[1024];
    size_t len = 0;
    const char *prefix = "rheap: ";
    memcpy(line, prefix, strlen(prefix));
    len = strlen(prefix);
    va_list ap;
    va_start(ap, first);
    for (const char *s = first; s; s = va_arg(ap, const char *)) {
        size_t n = strlen(s);
        if (n > sizeof line - 1 - len)
            n = sizeof line - 1 - len;
        memcpy(line + len, s, n);
        len += n;
    }
    va_end(ap);
    line[len++] = '\n';
    int saved = errno;
    if (stderr_ok(len)) {
        long r = rheap__sys_write(STDERR_FILENO, line, len);
        (void)r;
    }
    errno = saved;
}
