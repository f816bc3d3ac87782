/*
 * backtrace.c: the backtrace the recorder gets in the TSan test, in place of libunwind's
 * unw_backtrace (CMakeLists.txt renames the recorder's call to rheap_tsan_unw_backtrace).
 *
 * unw_backtrace keeps a per-thread frame cache that libunwind frees from a thread-specific-data
 * destructor in the last destructor round, after TSan has already torn down the exiting
 * thread's state; the free takes a mutex through TSan's interceptor and crashes the process.
 * An unw_step walk gives the same addresses without that cache, so the recorder's stack
 * tables and module snapshots still run on real backtraces.
 */
#define UNW_LOCAL_ONLY
#include <libunwind.h>

int rheap_tsan_unw_backtrace(void **buf, int size);

int rheap_tsan_unw_backtrace(void **buf, int size) {
    unw_context_t ctx;
    unw_cursor_t cur;
    if (size <= 0 || unw_getcontext(&ctx) != 0 || unw_init_local(&cur, &ctx) != 0)
        return 0;
    int n = 0;
    /* The first frame is this function's caller, as with unw_backtrace. */
    while (n < size && unw_step(&cur) > 0) {
        unw_word_t ip;
        if (unw_get_reg(&cur, UNW_REG_IP, &ip) != 0)
            break;
        buf[n++] = (void *)ip;
    }
    return n;
}
