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
#include "replay.h"

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
/* A seed's own address has a rule, so the corpus reaches the decoder's far end. */
static int seed_ok(const uint8_t *data, size_t len) {
    int32_t off;
    if (len < 4)
        return 0;
    memcpy(&off, data, 4);
    return rheap__cfi_rule(data + 4, data + len, data + 4,
                           (uintptr_t)data + 4 + (uintptr_t)(intptr_t)off, work())
               .kind != RHEAP__CFI_SLOW;
}

/* 1 to 4 edits of the image; the offset stays. Mutations go mostly near the image's start,
 * where the header, the CIE and the first FDEs are. */
static size_t cfi_mutation(uint8_t *m, size_t len, int round, const void *arg) {
    (void)arg;
    size_t mlen = len;
    for (int k = 0; k < 1 + round % 4 && mlen > 4; k++) {
        uint32_t x = fuzz_next();
        size_t span = mlen - 4 < 256 || (x & 1) ? mlen - 4 : 256;
        size_t at = 4 + (x >> 8) % span;
        switch ((x >> 4) % 4) {
        case 0: m[at] = (uint8_t)(x >> 16); break;
        case 1: m[at] ^= (uint8_t)(1u << ((x >> 16) % 8)); break;
        case 2: mlen = at + 1; break;
        case 3: m[at] = (uint8_t)(m[at] + 1 + (x >> 16) % 4); break;
        }
    }
    return mlen;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: fuzz_cfi FILE...  (the corpus is empty?)\n");
        return 1;
    }
    unsigned runs = fuzz_replay_each(argc, argv, 2000, cfi_mutation, NULL, seed_ok);
    printf("fuzz_cfi: %u inputs from %d seeds; answers: %u rsp, %u rbp, %u *rbp, %u end, "
           "%u slow\n",
           runs, argc - 1, answered[RHEAP__CFA_RSP], answered[RHEAP__CFA_RBP],
           answered[RHEAP__CFA_DEREF_RBP], answered[RHEAP__CFI_END], answered[RHEAP__CFI_SLOW]);
    return 0;
}
#endif
