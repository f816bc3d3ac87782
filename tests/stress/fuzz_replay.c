/*
 * fuzz_replay: a plain main for the rip reader's fuzz target (tests/format/fuzz_reader.c, built
 * with RIP_LIBFUZZER so that it brings no main of its own). Feeds every file named on the
 * command line to LLVMFuzzerTestOneInput once, exactly as libFuzzer would: the corpus kept in
 * tests/data/fuzz-corpus/ holds inputs the fuzzer found to reach new code in the reader, most of
 * them invalid, and every one must be rejected or read without a crash (the target aborts on
 * an error that does not say what went wrong). Run it in a sanitized build to catch memory
 * errors as well.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: fuzz_replay FILE...  (the corpus is empty?)\n");
        return 1;
    }
    for (int a = 1; a < argc; a++) {
        FILE *f = fopen(argv[a], "rb");
        if (!f) {
            perror(argv[a]);
            return 1;
        }
        uint8_t *buf = NULL;
        size_t len = 0, cap = 0, n;
        do {
            if (len == cap) {
                cap = cap ? 2 * cap : 4096;
                uint8_t *grown = realloc(buf, cap);
                if (!grown) {
                    fprintf(stderr, "fuzz_replay: out of memory\n");
                    return 1;
                }
                buf = grown;
            }
            n = fread(buf + len, 1, cap - len, f);
            len += n;
        } while (n > 0);
        fclose(f);
        LLVMFuzzerTestOneInput(buf, len);
        free(buf);
    }
    printf("fuzz_replay: %d inputs replayed\n", argc - 1);
    return 0;
}
