/*
 * replay.h: the plain main's part shared by the fuzz targets. Built without libFuzzer, a target
 * replays each seed file given as argument, then deterministic mutations of it: for the text
 * parsers (fuzz_recname.c, fuzz_suppress.c, fuzz_query.c) characters overwritten with ones that
 * matter to the parsers, inserted, deleted, the text cut, and a line repeated; a binary target
 * (fuzz_cfi.c) brings mutations of its own. The same inputs
 * every run, so a failure comes back at once; libFuzzer (the CMake option RHEAP_LIBFUZZER)
 * explores further.
 */
#ifndef RHEAP_FUZZ_REPLAY_H
#define RHEAP_FUZZ_REPLAY_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#ifndef RHEAP_LIBFUZZER
static uint8_t *fuzz_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(1);
    }
    uint8_t *buf = NULL;
    size_t cap = 0, n;
    *len = 0;
    do {
        if (*len == cap) {
            cap = cap ? 2 * cap : 4096;
            if (!(buf = realloc(buf, cap))) {
                fprintf(stderr, "fuzz: out of memory\n");
                exit(1);
            }
        }
        n = fread(buf + *len, 1, cap - *len, f);
        *len += n;
    } while (n > 0);
    fclose(f);
    return buf;
}

static uint32_t fuzz_next(void)
{
    static uint32_t x = 2463534242u;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return x;
}

/* Changes m, a copy of a seed (len bytes, room for 2 * len + 64), for mutation `round` of it;
 * returns its new length. arg is the replay's. */
typedef size_t (*fuzz_mutator_t)(uint8_t *m, size_t len, int round, const void *arg);

/* The text parsers' mutations: 1 to 3 edits, with characters from the alphabet `arg`. */
static inline size_t fuzz_text_mutation(uint8_t *m, size_t len, int round, const void *arg)
{
    const char *alphabet = arg;
    size_t nalpha = strlen(alphabet), n = len;
    for (int k = 0; k < 1 + round % 3; k++) {
        uint32_t r = fuzz_next();
        size_t at = n ? (r >> 4) % n : 0;
        uint8_t c = (r >> 28) % 4 ? (uint8_t)alphabet[(r >> 8) % nalpha] : (uint8_t)(r >> 8);
        switch (r % 6) {
        case 0:
        case 1:
            if (n)
                m[at] = c;
            break;
        case 2: /* insert */
            if (n < 2 * len + 63) {
                memmove(m + at + 1, m + at, n - at);
                m[at] = c;
                n++;
            }
            break;
        case 3: /* delete */
            if (n) {
                memmove(m + at, m + at + 1, n - at - 1);
                n--;
            }
            break;
        case 4: /* cut */
            n = at;
            break;
        case 5: { /* repeat the rest of a line once */
            const uint8_t *eol = memchr(m + at, '\n', n - at);
            size_t l = eol ? (size_t)(eol - (m + at)) + 1 : n - at;
            if (n + l <= 2 * len + 63) {
                memmove(m + at + l, m + at, n - at);
                n += l;
            }
            break;
        }
        }
    }
    return n;
}

/* Runs argv[1..]: each seed, then `rounds` mutations of it made by `mutate`. A seed that
 * seed_ok (when not NULL) refuses ends the program with status 1, named. Returns how many
 * inputs ran. */
static unsigned fuzz_replay_each(int argc, char **argv, int rounds, fuzz_mutator_t mutate,
                                 const void *arg, int (*seed_ok)(const uint8_t *, size_t))
{
    unsigned runs = 0;
    for (int a = 1; a < argc; a++) {
        size_t len;
        uint8_t *seed = fuzz_slurp(argv[a], &len);
        if (seed_ok && !seed_ok(seed, len)) {
            fprintf(stderr, "fuzz: %s: not a seed this target takes\n", argv[a]);
            exit(1);
        }
        LLVMFuzzerTestOneInput(seed, len);
        runs++;
        uint8_t *m = malloc(2 * len + 64);
        if (!m) {
            fprintf(stderr, "fuzz: out of memory\n");
            exit(1);
        }
        for (int i = 0; i < rounds; i++) {
            memcpy(m, seed, len);
            LLVMFuzzerTestOneInput(m, mutate(m, len, i, arg));
            runs++;
        }
        free(m);
        free(seed);
    }
    return runs;
}

/* Replays argv[1..] with the text mutations: each seed, then `rounds` mutations of it, with
 * characters from `alphabet`. Prints "NAME: N inputs from M seeds" and returns main's status
 * (1 without seeds). */
static inline int fuzz_replay(const char *name, int argc, char **argv, int rounds, const char *alphabet)
{
    unsigned runs = fuzz_replay_each(argc, argv, rounds, fuzz_text_mutation, alphabet, NULL);
    printf("%s: %u inputs from %d seeds\n", name, runs, argc - 1);
    return argc > 1 ? 0 : 1;
}
#endif

#endif
