/*
 * api_twice: linked with librheap (not preloaded). Checks the control API's results and
 * errors, and records twice: set A between the first rheap_enable and rheap_disable, set B
 * while off (not recorded), set C in a second recording with a stack depth limit of 5. The
 * first recording must be rip-<pid>/ holding exactly set A, the second rip-<pid>-2/ holding
 * exactly set C, with no backtrace deeper than 5 frames.
 */
#include "progs.h"

#include "rheap.h"

#define CHECK_STOP_ON_FAILURE 1
#include "check.h"

/* The control API's failures set errno: a failed check shows it. */
#define CHECK_API(cond)                                                                        \
    do {                                                                                       \
        if (!(cond))                                                                           \
            CHECK_FAIL("check failed: %s (errno %d)", #cond, errno);                           \
    } while (0)

PROGS_SINK_DEFINITION;

/* Allocates set C from 8 calls deep, so that the depth limit of 5 cuts every backtrace. */
__attribute__((noinline)) static void deep(int level, tally_t *t)
{
    if (level > 0) {
        deep(level - 1, t);
        SINK(t); /* not a tail call */
        return;
    }
    for (int i = 0; i < 20; i++) {
        void *p = calloc(4, 100);
        tally_alloc(t, T_CALLOC, 400);
        SINK(p);
        free(p);
        tally_free(t);
    }
}

static void copy_base(char *dst, size_t size, const char *path)
{
    const char *slash = strrchr(path, '/');
    snprintf(dst, size, "%s", slash ? slash + 1 : path);
}

int main(void)
{
    tally_t a = {0}, c = {0};
    char first[256], second[256];

    CHECK_API(rheap_is_enabled() == 0);
    errno = 0;
    CHECK_API(rheap_disable() == -1 && errno == EALREADY);
    CHECK_API(rheap_mark("nothing") == -1);
    CHECK_API(rheap_output_path() == NULL);

    CHECK_API(rheap_enable(NULL) == 0);
    CHECK_API(rheap_is_enabled() == 1);
    errno = 0;
    CHECK_API(rheap_enable(NULL) == -1 && errno == EALREADY);
    CHECK_API(rheap_mark("set A") == 0);
    void *keep[8];
    for (int i = 0; i < 8; i++) {
        keep[i] = malloc(123 + (size_t)i);
        tally_alloc(&a, T_MALLOC, 123 + (unsigned long)i);
    }
    for (int i = 0; i < 8; i += 2) {
        free(keep[i]);
        tally_free(&a);
    }
    keep[0] = realloc(keep[1], 999);
    tally_alloc(&a, T_REALLOC, 999);
    CHECK_API(rheap_flush() == 0);
    CHECK_API(rheap_disable() == 0);
    CHECK_API(rheap_is_enabled() == 0);
    CHECK_API(rheap_output_path() != NULL);
    copy_base(first, sizeof first, rheap_output_path());
    errno = 0;
    CHECK_API(rheap_flush() == -1 && errno == EALREADY);

    /* Set B: not recorded. */
    for (int i = 0; i < 30; i++) {
        void *p = malloc(555);
        SINK(p);
        free(p);
    }
    free(keep[0]);
    free(keep[3]);
    free(keep[5]);
    free(keep[7]);

    rheap_config bad = RHEAP_CONFIG_INIT;
    bad.max_stack_depth = 0;
    errno = 0;
    CHECK_API(rheap_enable(&bad) == -1 && errno == EINVAL);
    bad = (rheap_config)RHEAP_CONFIG_INIT;
    bad.sample_rate = 1.5;
    errno = 0;
    CHECK_API(rheap_enable(&bad) == -1 && errno == EINVAL);
    /* The ranges are the environment's (RHEAP_BUFFER_KB=0 is refused there too). */
    bad = (rheap_config)RHEAP_CONFIG_INIT;
    bad.buffer_kb = 0;
    errno = 0;
    CHECK_API(rheap_enable(&bad) == -1 && errno == EINVAL);
    bad = (rheap_config)RHEAP_CONFIG_INIT;
    bad.buffer_kb = 4097;
    errno = 0;
    CHECK_API(rheap_enable(&bad) == -1 && errno == EINVAL);
    bad = (rheap_config)RHEAP_CONFIG_INIT;
    bad.max_threads = 1000001;
    errno = 0;
    CHECK_API(rheap_enable(&bad) == -1 && errno == EINVAL);
    bad = (rheap_config)RHEAP_CONFIG_INIT;
    bad.sample_interval = 1000000000;
    errno = 0;
    CHECK_API(rheap_enable(&bad) == -1 && errno == EINVAL);
    CHECK_API(rheap_is_enabled() == 0);

    rheap_config cfg = RHEAP_CONFIG_INIT;
    cfg.max_stack_depth = 5;
    CHECK_API(rheap_enable(&cfg) == 0);
    deep(8, &c);
    CHECK_API(rheap_disable() == 0);
    copy_base(second, sizeof second, rheap_output_path());

    say("dirs %s %s\n", first, second);
    say("first ");
    tally_print(&a, getpid());
    say("second ");
    tally_print(&c, getpid());
    return 0;
}
