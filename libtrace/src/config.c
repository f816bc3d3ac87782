/*
 * config.c: the settings of a recording from the environment, read once at start-up. The
 * values are parsed by settings.c, the parser `rheap run` shares; rheap_enable's are api.c's.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "rheap_settings.h"

rheap__config_t rheap__env_cfg;

/* The defaults of the settings table (settings.c), which are RHEAP_CONFIG_INIT's. */
static void default_config(rheap__config_t *c) {
    c->depth = (unsigned)rheap__settings[RHEAP__SET_DEPTH].def;
    c->max_threads = (unsigned)rheap__settings[RHEAP__SET_MAX_THREADS].def;
    c->buffer_kb = (unsigned)rheap__settings[RHEAP__SET_BUFFER_KB].def;
    c->sample_ppm = (uint32_t)rheap__settings[RHEAP__SET_SAMPLE_RATE].def;
    c->profile = (int)rheap__settings[RHEAP__SET_MODE].def;
    c->interval = rheap__settings[RHEAP__SET_SAMPLE_INTERVAL].def;
    c->seed = rheap__settings[RHEAP__SET_SAMPLE_SEED].def;
    c->segment_kb = rheap__settings[RHEAP__SET_SEGMENT_KB].def;
    c->signal = 0;
    c->rss_ms = (unsigned)rheap__settings[RHEAP__SET_RSS_MS].def;
    c->maps = (int)rheap__settings[RHEAP__SET_MMAP].def;
    c->dir[0] = 0;
}

/* Reads setting `id` from the environment into *value: 1 when it is set to an accepted value;
 * 0 when it is unset, empty where empty means the default, or refused. A refused value gets
 * one line on stderr and the caller keeps the default. */
static int env_setting(rheap__setting_id_t id, uint64_t *value, const char **text) {
    const rheap__setting_t *s = &rheap__settings[id];
    const char *v = getenv(s->env);
    if (!v)
        return 0;
    int st = rheap__setting_parse(id, v, value);
    if (st == RHEAP__SETTING_BAD) {
        /* Quote at most 64 bytes of the value: the message stays one short line. */
        char shown[72];
        size_t n = strnlen(v, 65);
        memcpy(shown, v, n > 64 ? 64 : n);
        strcpy(shown + (n > 64 ? 64 : n), n > 64 ? "..." : "");
        char expected[96];
        rheap__log("ignoring ", s->env, "=", shown, ": expected ",
                   rheap__setting_expected(id, expected, sizeof expected), NULL);
    }
    if (text)
        *text = v;
    return st == RHEAP__SETTING_OK;
}

void rheap__config_read_env(void) {
    rheap__config_t *c = &rheap__env_cfg;
    default_config(c);
    uint64_t v;
    const char *text;
    if (env_setting(RHEAP__SET_DEPTH, &v, NULL))
        c->depth = (unsigned)v;
    if (env_setting(RHEAP__SET_SAMPLE_RATE, &v, NULL))
        c->sample_ppm = (uint32_t)v;
    if (env_setting(RHEAP__SET_BUFFER_KB, &v, NULL))
        c->buffer_kb = (unsigned)v;
    if (env_setting(RHEAP__SET_MAX_THREADS, &v, NULL))
        c->max_threads = (unsigned)v;
    if (env_setting(RHEAP__SET_SIGNAL, &v, NULL))
        c->signal = (int)v;
    if (env_setting(RHEAP__SET_MODE, &v, NULL))
        c->profile = (int)v;
    if (env_setting(RHEAP__SET_SAMPLE_INTERVAL, &v, NULL))
        c->interval = v;
    if (env_setting(RHEAP__SET_SAMPLE_SEED, &v, NULL))
        c->seed = v;
    if (env_setting(RHEAP__SET_SEGMENT_KB, &v, NULL))
        c->segment_kb = v;
    if (env_setting(RHEAP__SET_RSS_MS, &v, NULL))
        c->rss_ms = (unsigned)v;
    if (env_setting(RHEAP__SET_MMAP, &v, NULL))
        c->maps = (int)v;
    if (env_setting(RHEAP__SET_DIR, &v, &text))
        memcpy(c->dir, text, v + 1);
}

/* RHEAP_ENABLE: 1 or 0, else `otherwise` (a bad value is reported). */
int rheap__config_env_enable(int otherwise) {
    uint64_t enable;
    return env_setting(RHEAP__SET_ENABLE, &enable, NULL) ? (int)enable : otherwise;
}
