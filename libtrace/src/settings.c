/*
 * settings.c: the settings table and the parser of their values (see rheap_settings.h).
 *
 * The numbers are read by hand rather than with strtol or strtod: those skip leading blanks,
 * take a sign, and (strtod) read exponents, hex floats and the locale's decimal point, and
 * strtod may allocate. A setting written " 5", "+5" or "1e-2" is refused here, the same way
 * wherever it comes from.
 */
#include "rheap_settings.h"

#include <limits.h>
#include <signal.h>
#include <string.h>

#include "rheap.h"
#include "rip.h"

/* The defaults are rheap.h's, which RHEAP_CONFIG_INIT uses too; README.md's settings table
 * lists the same names, ranges and defaults. */
const rheap__setting_t rheap__settings[RHEAP__SET_COUNT] = {
    [RHEAP__SET_DEPTH] = {"RHEAP_DEPTH", "--depth", NULL, NULL, RHEAP__TYPE_UINT, 1, RIP_MAX_DEPTH,
                          RHEAP_DEFAULT_DEPTH, "frames", "most frames kept per backtrace"},
    [RHEAP__SET_SAMPLE_RATE] = {"RHEAP_SAMPLE_RATE", "--sample-rate", NULL, NULL,
                                RHEAP__TYPE_RATE, 0, 1000000, RHEAP_DEFAULT_SAMPLE_PPM, "",
                                "fraction of allocations with a backtrace\n"
                                "(every allocation is still recorded: byte counts stay exact)"},
    [RHEAP__SET_BUFFER_KB] = {"RHEAP_BUFFER_KB", NULL, NULL, NULL, RHEAP__TYPE_BLOCK, 1, 4096,
                              RHEAP_DEFAULT_BUFFER_KB, "KiB", "per-thread buffer"},
    [RHEAP__SET_MAX_THREADS] = {"RHEAP_MAX_THREADS", NULL, NULL, NULL, RHEAP__TYPE_UINT, 1, 1000000,
                                RHEAP_DEFAULT_MAX_THREADS, "threads",
                                "most threads recording at once"},
    /* `rheap run` without --signal gives its program no toggle signal, whatever its own
     * environment says: a signal meant for rheap's parent would reach the program. */
    [RHEAP__SET_SIGNAL] = {"RHEAP_SIGNAL", "--signal", NULL, "", RHEAP__TYPE_SIGNAL, 0, 0, 0, "",
                           "a signal that toggles recording (USR1, USR2, RTMIN+3, a number):\n"
                           "kill -SIG PID turns it on or off in that process"},
    /* The recording directory's own name and the thread files' names need the last 64 bytes.
     * `rheap run` sets it to its private directory (its --dir is that directory's parent). */
    [RHEAP__SET_DIR] = {"RHEAP_DIR", NULL, NULL, NULL, RHEAP__TYPE_PATH, 0, PATH_MAX - 65, 0, "",
                        "where rip-<pid>/ is made"},
    /* The default depends on how librheap was loaded: 1 when preloaded, 0 when linked. */
    [RHEAP__SET_ENABLE] = {"RHEAP_ENABLE", "--off", "0", "1", RHEAP__TYPE_BOOL, 0, 1, 0, "",
                           "start with recording off (turn it on with --signal, or from\n"
                           "the program with rheap_enable())"},
    [RHEAP__SET_MODE] = {"RHEAP_MODE", "--profile", "profile", "trace", RHEAP__TYPE_MODE, 0, 1, 0,
                         "",
                         "profile mode: record a sample of the allocations, about one\n"
                         "per --sample-interval bytes allocated, each with its backtrace\n"
                         "and its free; cheap enough to leave on, and the database holds\n"
                         "estimates (calls and bytes allocated stay exact)"},
    [RHEAP__SET_SAMPLE_INTERVAL] = {"RHEAP_SAMPLE_INTERVAL", "--sample-interval", NULL, NULL,
                                    RHEAP__TYPE_UINT, 1, 999999999, RHEAP_DEFAULT_SAMPLE_INTERVAL,
                                    "bytes", "mean bytes between samples\n(profile mode only)"},
    [RHEAP__SET_SAMPLE_SEED] = {"RHEAP_SAMPLE_SEED", NULL, NULL, NULL, RHEAP__TYPE_UINT, 0,
                                999999999, 0, "", "profile mode: seed of the draws (0: a new one)"},
    /* A week-long profile-mode recording is a series of closed segments that a collector can
     * compact (docs/COLLECTOR.md); 0 keeps one file per thread however large it grows. */
    [RHEAP__SET_SEGMENT_KB] = {"RHEAP_SEGMENT_KB", "--segment-kb", NULL, NULL, RHEAP__TYPE_UINT, 0,
                               1048576, RHEAP_DEFAULT_SEGMENT_KB, "KiB",
                               "KiB per thread file in profile mode\n"
                               "(then the thread goes on in a new segment; 0: no limit)"},
    [RHEAP__SET_RSS_MS] = {"RHEAP_RSS_MS", NULL, NULL, NULL, RHEAP__TYPE_UINT, 0, 3600000,
                           RHEAP_DEFAULT_RSS_MS, "ms",
                           "time between samples of the process's resident memory (0: none)"},
    [RHEAP__SET_MMAP] = {"RHEAP_MMAP", NULL, NULL, NULL, RHEAP__TYPE_BOOL, 0, 1,
                         RHEAP_DEFAULT_MMAP, "",
                         "record the program's own anonymous mmap, munmap and mremap"},
};

/* Decimal digits only, at most 9 of value (anything larger is out of every range here). */
static int parse_uint(const char *s, uint64_t *out) {
    uint64_t v = 0;
    if (!*s)
        return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > 100000000u)
            return -1;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    *out = v;
    return 0;
}

/* A rate in [0, 1] written as a decimal ("1", "0.25", ".001", "1."), in parts per million;
 * digits past the sixth decimal are dropped, but "1.0000001" is above 1 and refused. */
static int parse_rate(const char *s, uint64_t *ppm) {
    uint64_t whole = 0, frac = 0, scale = 1000000;
    int digits = 0, beyond = 0;
    for (; *s >= '0' && *s <= '9'; s++, digits++)
        if ((whole = whole * 10 + (uint64_t)(*s - '0')) > 1)
            return -1;
    if (*s == '.') {
        for (s++; *s >= '0' && *s <= '9'; s++, digits++) {
            if (scale > 1) {
                scale /= 10;
                frac += (uint64_t)(*s - '0') * scale;
            } else if (*s != '0') {
                beyond = 1;
            }
        }
    }
    if (*s || !digits)
        return -1;
    uint64_t v = whole * 1000000 + frac;
    if (v > 1000000 || (v == 1000000 && beyond))
        return -1;
    *ppm = v;
    return 0;
}

uint64_t rheap__block_kb(uint64_t kb) {
    static const unsigned sizes[] = {64, 256, 1024, 4096};
    for (unsigned i = 0; i < 4; i++)
        if (kb <= sizes[i])
            return sizes[i];
    return 4096;
}

/* The signals a program may leave to a profiler, by name, then RTMIN+N, then any number but
 * SIGKILL's and SIGSTOP's. */
static int parse_signal(const char *s) {
    static const struct {
        const char *name;
        int sig;
    } names[] = {{"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"HUP", SIGHUP},   {"PROF", SIGPROF},
                 {"URG", SIGURG},   {"WINCH", SIGWINCH}, {"PWR", SIGPWR}, {"TTIN", SIGTTIN},
                 {"TTOU", SIGTTOU}};
    if (strncmp(s, "SIG", 3) == 0)
        s += 3;
    for (unsigned i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(s, names[i].name) == 0)
            return names[i].sig;
    uint64_t n;
    if (strncmp(s, "RTMIN+", 6) == 0) {
        if (parse_uint(s + 6, &n) == 0 && (uint64_t)SIGRTMIN + n <= (uint64_t)SIGRTMAX)
            return SIGRTMIN + (int)n;
        return -1;
    }
    if (parse_uint(s, &n) == 0 && n >= 1 && n <= (uint64_t)SIGRTMAX && n != SIGKILL &&
        n != SIGSTOP)
        return (int)n;
    return -1;
}

int rheap__setting_parse(rheap__setting_id_t id, const char *text, uint64_t *value) {
    if ((unsigned)id >= RHEAP__SET_COUNT || !text)
        return RHEAP__SETTING_BAD;
    const rheap__setting_t *s = &rheap__settings[id];
    uint64_t v;
    switch (s->type) {
    case RHEAP__TYPE_UINT:
    case RHEAP__TYPE_BLOCK:
        if (parse_uint(text, &v) != 0 || v < s->min || v > s->max)
            return RHEAP__SETTING_BAD;
        if (s->type == RHEAP__TYPE_BLOCK)
            v = rheap__block_kb(v);
        break;
    case RHEAP__TYPE_RATE:
        if (parse_rate(text, &v) != 0)
            return RHEAP__SETTING_BAD;
        break;
    case RHEAP__TYPE_SIGNAL: {
        if (!*text)
            return RHEAP__SETTING_EMPTY;
        int sig = parse_signal(text);
        if (sig <= 0)
            return RHEAP__SETTING_BAD;
        v = (uint64_t)sig;
        break;
    }
    case RHEAP__TYPE_PATH:
        if (!*text)
            return RHEAP__SETTING_EMPTY;
        v = strnlen(text, s->max + 1);
        if (v > s->max)
            return RHEAP__SETTING_BAD;
        break;
    case RHEAP__TYPE_BOOL:
        if (!*text)
            return RHEAP__SETTING_EMPTY;
        if ((text[0] != '0' && text[0] != '1') || text[1])
            return RHEAP__SETTING_BAD;
        v = (uint64_t)(text[0] - '0');
        break;
    case RHEAP__TYPE_MODE:
        if (!*text)
            return RHEAP__SETTING_EMPTY;
        if (strcmp(text, "trace") == 0)
            v = 0;
        else if (strcmp(text, "profile") == 0)
            v = 1;
        else
            return RHEAP__SETTING_BAD;
        break;
    default:
        return RHEAP__SETTING_BAD;
    }
    *value = v;
    return RHEAP__SETTING_OK;
}

int rheap__setting_check(rheap__setting_id_t id, uint64_t value) {
    if ((unsigned)id >= RHEAP__SET_COUNT)
        return -1;
    const rheap__setting_t *s = &rheap__settings[id];
    switch (s->type) {
    case RHEAP__TYPE_UINT:
    case RHEAP__TYPE_BLOCK:
    case RHEAP__TYPE_RATE:
    case RHEAP__TYPE_BOOL:
    case RHEAP__TYPE_MODE:
        return value >= s->min && value <= s->max ? 0 : -1;
    default:
        return -1;
    }
}

/* ---- Texts made from the table (no snprintf: this file stays safe inside malloc) ---- */

typedef struct {
    char *buf;
    size_t len, at;
} text_t;

static void put(text_t *t, const char *s) {
    for (; *s && t->at + 1 < t->len; s++)
        t->buf[t->at++] = *s;
    if (t->len)
        t->buf[t->at] = 0;
}

static void put_uint(text_t *t, uint64_t v) {
    char digits[24], *p = digits + sizeof digits - 1;
    *p = 0;
    do
        *--p = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    put(t, p);
}

/* A rate in parts per million as the shortest decimal: 1, 0.5, 0.01. */
static void put_rate(text_t *t, uint64_t ppm) {
    put_uint(t, ppm / 1000000);
    uint64_t frac = ppm % 1000000;
    if (!frac)
        return;
    char digits[8] = "0000000";
    for (int i = 6; i >= 1; i--, frac /= 10)
        digits[i] = (char)('0' + frac % 10);
    int end = 7;
    while (digits[end - 1] == '0')
        end--;
    digits[0] = '.';
    digits[end] = 0;
    put(t, digits);
}

const char *rheap__setting_expected(rheap__setting_id_t id, char *buf, size_t len) {
    text_t t = {buf, len, 0};
    put(&t, "");
    if ((unsigned)id >= RHEAP__SET_COUNT)
        return buf;
    const rheap__setting_t *s = &rheap__settings[id];
    switch (s->type) {
    case RHEAP__TYPE_UINT:
        put(&t, "a number ");
        if (*s->unit) {
            put(&t, "of ");
            put(&t, s->unit);
            put(&t, " ");
        }
        put(&t, "from ");
        put_uint(&t, s->min);
        put(&t, " to ");
        put_uint(&t, s->max);
        break;
    case RHEAP__TYPE_BLOCK:
        put(&t, "64, 256, 1024 or 4096");
        break;
    case RHEAP__TYPE_RATE:
        put(&t, "a fraction from 0 to 1, like 0.01");
        break;
    case RHEAP__TYPE_SIGNAL:
        put(&t, "a signal name like USR2, RTMIN+3, or a number");
        break;
    case RHEAP__TYPE_PATH:
        put(&t, "a directory path shorter than PATH_MAX");
        break;
    case RHEAP__TYPE_BOOL:
        put(&t, "1 or 0");
        break;
    case RHEAP__TYPE_MODE:
        put(&t, "trace or profile");
        break;
    }
    return buf;
}

const char *rheap__setting_range(rheap__setting_id_t id, char *buf, size_t len) {
    text_t t = {buf, len, 0};
    put(&t, "");
    if ((unsigned)id >= RHEAP__SET_COUNT)
        return buf;
    const rheap__setting_t *s = &rheap__settings[id];
    if (s->type == RHEAP__TYPE_UINT || s->type == RHEAP__TYPE_BLOCK) {
        put(&t, ", ");
        put_uint(&t, s->min);
        put(&t, "-");
        put_uint(&t, s->max);
        put(&t, " (default ");
        put_uint(&t, s->def);
        put(&t, ")");
    } else if (s->type == RHEAP__TYPE_RATE) {
        put(&t, ", ");
        put_rate(&t, s->min);
        put(&t, "-");
        put_rate(&t, s->max);
        put(&t, " (default ");
        put_rate(&t, s->def);
        put(&t, ")");
    }
    return buf;
}
