/*
 * fuzz_cfi.c: the call-frame decoder's fuzz target. An input is a 4-byte little-endian offset
 * and an image: the offset, from the image's start, is the code address asked about, and the
 * image is an .eh_frame_hdr followed by whatever the table points to. The decoder gets the image
 * (copied to a buffer of exactly its size, so ASan sees any read past it) as its whole range and
 * must answer with a valid rule or "slow", never crash or read outside. Its working memory is
 * filled with another byte before each call, as a caller may leave anything there.
 *
 * Besides the input's own address, the first entries of the header's table (when the header
 * has the usual encodings) are asked about at their start and a few bytes in, so that mutations
 * of the CFI programs are reached even when the mutated offset no longer hits an FDE.
 *
 * Built with -DRHEAP_LIBFUZZER and -fsanitize=fuzzer it runs under libFuzzer (the CMake option
 * RHEAP_LIBFUZZER, or for example
 * `clang -DRHEAP_LIBFUZZER -fsanitize=fuzzer,address -Ilibtrace/src -Irip-format/src
 * tests/fuzz/fuzz_cfi.c libtrace/src/cfi.c`). Built plainly, its main replays the files given
 * as arguments (tests/data/cfi-corpus/) and deterministic mutations of each.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned answered[RHEAP__CFI_SLOW + 1];

/* The decoder's working memory, another byte in every byte of it at each call. */
static rheap__cfi_work_t *work(void) {
    static rheap__cfi_work_t w;
    static unsigned char fill;
    memset(&w, fill += 0x5b, sizeof w);
    return &w;
}

static void ask(const uint8_t *img, size_t n, uintptr_t pc) {
    rheap__cfi_rule_t r = rheap__cfi_rule(img, img + n, img, pc, work());
    if (r.kind < RHEAP__CFA_RSP || r.kind > RHEAP__CFI_SLOW || r.bp > RHEAP__BP_AT_RBP)
        abort();
    answered[r.kind]++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 4)
        return 0;
    int32_t off;
    memcpy(&off, data, 4);
    size_t n = size - 4;
    uint8_t *img = malloc(n ? n : 1);
    if (!img)
        return 0;
    memcpy(img, data + 4, n);
    ask(img, n, (uintptr_t)img + (uintptr_t)(intptr_t)off);
    if (n >= 12 && img[0] == 1 && img[2] == 0x03 && img[3] == 0x3b) {
        uint32_t count;
        memcpy(&count, img + 8, 4);
        for (uint32_t i = 0; i < count && i < 16 && 12 + 8 * (size_t)i + 4 <= n; i++) {
            int32_t start;
            memcpy(&start, img + 12 + 8 * i, 4);
            uintptr_t pc = (uintptr_t)img + (uintptr_t)(intptr_t)start;
            for (unsigned k = 0; k < 64; k = 2 * k + 1)
                ask(img, n, pc + k);
        }
    }
    free(img);
    return 0;
}

#ifndef RHEAP_LIBFUZZER
static uint8_t *slurp(const char *path, size_t *len) {
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
            buf = realloc(buf, cap);
            if (!buf) {
                fprintf(stderr, "fuzz_cfi: out of memory\n");
                exit(1);
            }
        }
        n = fread(buf + *len, 1, cap - *len, f);
        *len += n;
    } while (n > 0);
    fclose(f);
    return buf;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: fuzz_cfi FILE...  (the corpus is empty?)\n");
        return 1;
    }
    uint32_t x = 2463534242u;
    unsigned runs = 0;
    for (int a = 1; a < argc; a++) {
        size_t len;
        uint8_t *data = slurp(argv[a], &len);
        /* A seed's own address has a rule, so the corpus reaches the decoder's far end. */
        int32_t off = 0;
        if (len >= 4)
            memcpy(&off, data, 4);
        if (len < 4 || rheap__cfi_rule(data + 4, data + len, data + 4,
                                       (uintptr_t)data + 4 + (uintptr_t)(intptr_t)off, work())
                               .kind == RHEAP__CFI_SLOW) {
            fprintf(stderr, "fuzz_cfi: %s: the seed's own address has no rule\n", argv[a]);
            return 1;
        }
        LLVMFuzzerTestOneInput(data, len);
        uint8_t *m = malloc(2 * len + 1);
        for (int i = 0; i < 2000; i++) {
            memcpy(m, data, len);
            size_t mlen = len;
            int edits = 1 + i % 4;
            for (int k = 0; k < edits && mlen > 4; k++) {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                /* The offset stays: mutations go to the image, mostly near its start, where
                 * the header, the CIE and the first FDEs are. */
                size_t span = mlen - 4 < 256 || (x & 1) ? mlen - 4 : 256;
                size_t at = 4 + (x >> 8) % span;
                switch ((x >> 4) % 4) {
                case 0: m[at] = (uint8_t)(x >> 16); break;
                case 1: m[at] ^= (uint8_t)(1u << ((x >> 16) % 8)); break;
                case 2: mlen = at + 1; break;
                case 3: m[at] = (uint8_t)(m[at] + 1 + (x >> 16) % 4); break;
                }
            }
            LLVMFuzzerTestOneInput(m, mlen);
            runs++;
        }
        free(m);
        free(data);
    }
    printf("fuzz_cfi: %d seeds, %u mutations; answers: %u rsp, %u rbp, %u *rbp, %u end, %u slow\n",
           argc - 1, runs, answered[RHEAP__CFA_RSP], answered[RHEAP__CFA_RBP],
           answered[RHEAP__CFA_DEREF_RBP], answered[RHEAP__CFI_END], answered[RHEAP__CFI_SLOW]);
    return 0;
}
#endif
