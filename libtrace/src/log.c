/*
 * log.c: the tracer's few messages. They can be written from inside malloc, so no stdio: the
 * pieces are joined in a stack buffer and written with one write(2), errno kept.
 */
#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

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
    long r = rheap__sys_write(STDERR_FILENO, line, len);
    (void)r;
    errno = saved;
}
