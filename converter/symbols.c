/*
 * symbols.c: the conversion's symbolizer (symbolize.c) behind the public API of
 * rheap_convert.h, for readers that follow recordings themselves and never write a database.
 * The lines of each resolved address are copied once into the public shape, indexed by the
 * symbolizer's dense location id, so a caller resolving the same address again costs one hash
 * lookup in symbolize.c and one array index here.
 */
#include <stdlib.h>

#include "converter.h"

struct rheap_symbols {
    cv__sym_t *sym;
    rheap_symbol_line_t **lines; /* by location id; NULL until first asked */
    size_t cap;
};

rheap_symbols_t *rheap_symbols_create(void)
{
    rheap_symbols_t *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    /* A module gone or rebuilt since it was recorded only leaves its frames unnamed: the
     * reader has no one to tell, so no warning callback. */
    s->sym = cv__sym_create(NULL, NULL);
    if (!s->sym) {
        free(s);
        return NULL;
    }
    return s;
}

void rheap_symbols_destroy(rheap_symbols_t *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->cap; i++)
        free(s->lines[i]);
    free(s->lines);
    cv__sym_destroy(s->sym);
    free(s);
}

int rheap_symbols_module(rheap_symbols_t *s, const char *path, size_t path_len,
                         const uint8_t *build_id, size_t build_id_len)
{
    return cv__sym_file(s->sym, path, path_len, build_id, build_id_len);
}

const char *rheap_symbols_module_path(const rheap_symbols_t *s, int module)
{
    return cv__sym_file_path(s->sym, module);
}

size_t rheap_symbols_resolve(rheap_symbols_t *s, int module, uint64_t offset,
                             const rheap_symbol_line_t **lines)
{
    const cv__loc_t *l = cv__sym_resolve(s->sym, module, offset);
    if (!l)
        return 0;
    if (l->id >= s->cap) {
        size_t cap = s->cap ? s->cap : 256;
        while (cap <= l->id)
            cap *= 2;
        rheap_symbol_line_t **grown = realloc(s->lines, cap * sizeof *grown);
        if (!grown)
            return 0;
        for (size_t i = s->cap; i < cap; i++)
            grown[i] = NULL;
        s->lines = grown;
        s->cap = cap;
    }
    if (!s->lines[l->id]) {
        rheap_symbol_line_t *out = malloc(l->nframes * sizeof *out);
        if (!out)
            return 0;
        for (uint32_t i = 0; i < l->nframes; i++) {
            out[i].function = l->frames[i].sym;
            out[i].file = l->frames[i].file;
            out[i].line = l->frames[i].line;
        }
        s->lines[l->id] = out;
    }
    *lines = s->lines[l->id];
    return l->nframes;
}

double rheap_profile_weight(uint64_t size, uint64_t interval)
{
    return cv__profile_weight(size, interval);
}
