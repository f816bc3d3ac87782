/*
 * uframes.c: the frames of the stacks without their repeats (schema.sql's unique_frames and
 * stack_frames).
 *
 * A process tree's stacks repeat the same frames over and over: a build's 200,000 stacks have
 * 6 million backtraces rows but fewer than 40,000 distinct frames. The readers that want every
 * stack (the exports, the page) read them as one row per stack, a list of frame ids, and each
 * frame once. Here each distinct frame (file, line, function, module, offset, inlined) gets an
 * id, in the order first met, and a stack's list is made as JSON text, so that plain SQL
 * (json_each) reads it too.
 *
 * The converter asks once per resolved address (stacks.c keeps the ids of each address's frames);
 * `rheap resymbolize` asks once per row it writes. Memory: each distinct frame's texts once.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "converter.h"

typedef struct {
    char *file, *sym, *module; /* copies; NULL: SQL NULL */
    int64_t line;              /* -1: SQL NULL */
    uint64_t offset;
    int inlined;
    uint64_t hash;
} uframe_t;

struct cv__uframes {
    uframe_t *frames;          /* frames[id - 1] */
    size_t n, cap;
    size_t written;            /* rows of unique_frames written so far: ids 1 .. written */
    uint32_t *slots;           /* open addressing on the hash: 0 empty, else an id */
    size_t mask;
};

static uint64_t mix_text(uint64_t h, const char *s)
{
    /* FNV-1a; NULL and "" differ by the byte that ends each. */
    if (!s)
        return (h ^ 0x1ff) * 1099511628211ull;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        h = (h ^ *p) * 1099511628211ull;
    return (h ^ 0xff) * 1099511628211ull;
}

static uint64_t hash_frame(const char *file, int64_t line, const char *sym, const char *module,
                           uint64_t offset, int inlined)
{
    uint64_t h = 1469598103934665603ull;
    h = mix_text(h, file);
    h = mix_text(h, sym);
    h = mix_text(h, module);
    h ^= (uint64_t)line * 0x9E3779B97F4A7C15ull;
    h ^= offset * 0xC2B2AE3D27D4EB4Full + (h << 6) + (h >> 2);
    h ^= (uint64_t)(inlined != 0) + 0x632BE59BD9B4E019ull + (h << 6) + (h >> 2);
    return h ^ (h >> 29);
}

static int same_text(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

cv__uframes_t *cv__uframes_create(void)
{
    cv__uframes_t *u = calloc(1, sizeof *u);
    if (!u)
        return NULL;
    u->mask = 1023;
    u->slots = calloc(u->mask + 1, sizeof *u->slots);
    if (!u->slots) {
        free(u);
        return NULL;
    }
    return u;
}

void cv__uframes_destroy(cv__uframes_t *u)
{
    if (!u)
        return;
    for (size_t i = 0; i < u->n; i++) {
        free(u->frames[i].file);
        free(u->frames[i].sym);
        free(u->frames[i].module);
    }
    free(u->frames);
    free(u->slots);
    free(u);
}

/* Doubles the slots while they are more than half full. 0, or -1 out of memory. */
static int grow_slots(cv__uframes_t *u)
{
    size_t mask = u->mask * 2 + 1;
    uint32_t *slots = calloc(mask + 1, sizeof *slots);
    if (!slots)
        return -1;
    for (size_t i = 0; i < u->n; i++) {
        size_t j = u->frames[i].hash & mask;
        while (slots[j])
            j = (j + 1) & mask;
        slots[j] = (uint32_t)(i + 1);
    }
    free(u->slots);
    u->slots = slots;
    u->mask = mask;
    return 0;
}

static char *dup_or_null(const char *s, int *oom)
{
    if (!s)
        return NULL;
    char *d = strdup(s);
    *oom |= !d;
    return d;
}

uint32_t cv__uframes_id(cv__uframes_t *u, const char *file, int64_t line, const char *sym,
                        const char *module, uint64_t offset, int inlined)
{
    if (line < 0)
        line = -1;
    uint64_t h = hash_frame(file, line, sym, module, offset, inlined);
    size_t j = h & u->mask;
    for (; u->slots[j]; j = (j + 1) & u->mask) {
        const uframe_t *f = &u->frames[u->slots[j] - 1];
        if (f->hash == h && f->line == line && f->offset == offset &&
            f->inlined == (inlined != 0) && same_text(f->file, file) && same_text(f->sym, sym) &&
            same_text(f->module, module))
            return u->slots[j];
    }
    if (u->n >= UINT32_MAX - 1 ||
        rheap_grow(&u->frames, &u->cap, u->n, sizeof *u->frames, 1024) != 0)
        return 0;
    int oom = 0;
    uframe_t *f = &u->frames[u->n];
    *f = (uframe_t){dup_or_null(file, &oom), dup_or_null(sym, &oom), dup_or_null(module, &oom),
                    line, offset, inlined != 0, h};
    if (oom) {
        free(f->file);
        free(f->sym);
        free(f->module);
        return 0;
    }
    u->slots[j] = (uint32_t)++u->n;
    if (u->n * 2 > u->mask + 1 && grow_slots(u) != 0) {
        /* The frame is kept (its id is good); the next lookup grows again or fails. */
        return (uint32_t)u->n;
    }
    return (uint32_t)u->n;
}

size_t cv__uframes_count(const cv__uframes_t *u)
{
    return u->n;
}

char *cv__uframes_text(const uint32_t *ids, const uint8_t *cont, size_t n)
{
    /* "-4294967295," at most per frame, the brackets and the end. */
    char *t = malloc(n * 12 + 3), *p = t;
    if (!t)
        return NULL;
    *p++ = '[';
    for (size_t i = 0; i < n; i++) {
        if (i)
            *p++ = ',';
        if (cont[i])
            *p++ = '-';
        char digits[12];
        int k = 0;
        uint32_t v = ids[i];
        do {
            digits[k++] = (char)('0' + v % 10);
            v /= 10;
        } while (v);
        while (k)
            *p++ = digits[--k];
    }
    *p++ = ']';
    *p = 0;
    return t;
}

int cv__uframes_write(cv__uframes_t *u, sqlite3 *h)
{
    if (u->written == u->n)
        return 0;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(h,
                           "INSERT INTO unique_frames (id, file, line, sym, module, offset, inlined)"
                           " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                           -1, &st, NULL) != SQLITE_OK)
        return -1;
    int rc = 0;
    while (rc == 0 && u->written < u->n) {
        const uframe_t *f = &u->frames[u->written];
        sqlite3_bind_int64(st, 1, (sqlite3_int64)(u->written + 1));
        sqlite3_bind_text(st, 2, f->file, -1, SQLITE_STATIC);
        if (f->line >= 0)
            sqlite3_bind_int64(st, 3, f->line);
        else
            sqlite3_bind_null(st, 3);
        sqlite3_bind_text(st, 4, f->sym, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 5, f->module, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 6, (sqlite3_int64)f->offset);
        sqlite3_bind_int(st, 7, f->inlined);
        rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
        sqlite3_reset(st);
        if (rc == 0)
            u->written++;
    }
    sqlite3_finalize(st);
    return rc;
}
