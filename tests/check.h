/*
 * check.h: the assertions of every C test. A failed check prints where it is, what was
 * checked and both sides ("file.c:42: check failed: rows == 20: got 19, expected 20") and is
 * counted in check_failures; a test ends with `return check_failures ? 1 : 0` (or a summary of
 * its own) so that one run reports every difference. A file whose later steps make no sense
 * after a failure (a reader that did not open) defines CHECK_STOP_ON_FAILURE as 1 before
 * including this header: each failure then exits with status 1.
 *
 * The message is formatted on the stack and written with write(2), without stdio or malloc,
 * so the checks also serve programs that run under the tracer, where an allocation of the
 * checker would show up in the recording.
 */
#ifndef RHEAP_TEST_CHECK_H
#define RHEAP_TEST_CHECK_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef CHECK_STOP_ON_FAILURE
#define CHECK_STOP_ON_FAILURE 0
#endif

/* Failed checks so far, shared by every file of a test program (a weak definition, so that
 * each file can include this header and the linker keeps one). */
__attribute__((weak)) int check_failures;

__attribute__((format(printf, 3, 4))) static inline void
check_report(const char *file, int line, const char *fmt, ...)
{
    char buf[2048];
    int n = snprintf(buf, sizeof buf, "%s:%d: ", file, line);
    va_list ap;
    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < sizeof buf)
        n += vsnprintf(buf + n, sizeof buf - (size_t)n, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof buf - 1)
        n = (int)sizeof buf - 2;
    buf[n++] = '\n';
    for (ssize_t off = 0, w; off < n; off += w)
        if ((w = write(2, buf + off, (size_t)(n - off))) <= 0)
            break;
    check_failures++;
}

/* A failure with a message of the test's own. The exit is here, in the caller, rather than in
 * check_report: a function with a variable argument list is not inlined, so the compiler would
 * not see that a failed check stops the test and would follow the path on which it failed (a
 * null buffer written to, say), and warn of what that path does. */
#define CHECK_FAIL(...)                                                                            \
    (check_report(__FILE__, __LINE__, __VA_ARGS__), CHECK_STOP_ON_FAILURE ? exit(1) : (void)0)

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            CHECK_FAIL("check failed: %s", #cond);                                                 \
    } while (0)

/* Signed integers. */
#define CHECK_INT(got, want)                                                                       \
    do {                                                                                           \
        long long g_ = (long long)(got), w_ = (long long)(want);                                   \
        if (g_ != w_)                                                                              \
            CHECK_FAIL("check failed: %s == %s: got %lld, expected %lld", #got, #want, g_, w_);    \
    } while (0)

/* Unsigned 64-bit numbers, printed in decimal and hex (addresses, sizes, offsets). */
#define CHECK_U(got, want)                                                                         \
    do {                                                                                           \
        uint64_t g_ = (uint64_t)(got), w_ = (uint64_t)(want);                                      \
        if (g_ != w_)                                                                              \
            CHECK_FAIL("check failed: %s == %s: got %" PRIu64 " (0x%" PRIx64                       \
                       "), expected %" PRIu64 " (0x%" PRIx64 ")",                                  \
                       #got, #want, g_, g_, w_, w_);                                               \
    } while (0)

#define CHECK_STR(got, want)                                                                       \
    do {                                                                                           \
        const char *g_ = (got), *w_ = (want);                                                      \
        if (strcmp(g_, w_) != 0)                                                                   \
            CHECK_FAIL("check failed: %s: got \"%s\", expected \"%s\"", #got, g_, w_);             \
    } while (0)

#define CHECK_CONTAINS(hay, needle)                                                                \
    do {                                                                                           \
        const char *h_ = (hay), *n_ = (needle);                                                    \
        if (!strstr(h_, n_))                                                                       \
            CHECK_FAIL("check failed: %s: \"%s\" does not contain \"%s\"", #hay, h_, n_);          \
    } while (0)

#endif
