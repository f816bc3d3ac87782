/*
 * fuzz_reader.c: the reader's fuzz target. LLVMFuzzerTestOneInput reads any bytes to the end;
 * the reader must return an error for bad input and never crash, leak or read out of bounds.
 *
 * Each input is also wrapped as the content of a valid frame of format 1.0 and of format 2.0, so
 * that mutations reach the record decoders past the block checksum.
 *
 * Built with -DRIP_LIBFUZZER and -fsanitize=fuzzer it runs under libFuzzer (for example
 * `clang -DRIP_LIBFUZZER -fsanitize=fuzzer,address ...`). Built plainly, its main replays the
 * files given as arguments plus deterministic mutations of them (byte overwrites, cuts, spliced
 * copies), so the tests run it without a fuzzer; run the replay under valgrind or ASan to catch
 * memory errors.
 */
#include "test_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_one(const uint8_t *data, size_t size)
{
    size_t n;
    rip_error_t err;
    rip_status_t st = read_all_mem(data, size, &n, &err);
    if (st != RIP_END && (err.detail[0] == 0 || err.path[0] == 0))
        abort();   /* every failure must say what went wrong */
}

/* Each input is read three times: as a file, and as the decompressed content of a valid
 * one-block frame after a 1.0 header (rows of records) and after a 2.0 header with time_shift 2
 * (the input then starts with the column directory), so that mutations reach the record
 * decoders of both versions instead of stopping at the checksum. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bytes_t raw, frame;
    check_one(data, size);
    if (size <= 60000) {
        raw.n = 0;
        b_header(&raw, "RIPT", 1, 0, 24);
        b_raw(&raw, data, size);
        b_frame(&frame, &raw);
        check_one(frame.b, frame.n);
        raw.n = 0;
        b_header_v2(&raw, "RIPT", 0, 28, 2);
        b_raw(&raw, data, size);
        b_frame(&frame, &raw);
        check_one(frame.b, frame.n);
    }
    return 0;
}

#ifndef RIP_LIBFUZZER
int main(int argc, char **argv)
{
    uint32_t x = 2463534242u;
    unsigned runs = 0;
    for (int a = 1; a < argc; a++) {
        size_t len;
        uint8_t *data = slurp(argv[a], &len);
        size_t n;
        rip_error_t err;
        /* The seed itself must read cleanly. */
        CHECK_STATUS(read_all_mem(data, len, &n, &err), RIP_END);
        uint8_t *m = malloc(32 * len + 1);   /* room for four splices */
        for (int i = 0; i < 3000; i++) {
            memcpy(m, data, len);
            size_t mlen = len;
            int edits = 1 + i % 4;
            for (int k = 0; k < edits; k++) {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                size_t at = x % mlen;
                switch ((x >> 24) % 4) {
                case 0: m[at] = (uint8_t)(x >> 8); break;
                case 1: m[at] ^= (uint8_t)(1u << ((x >> 8) % 8)); break;
                case 2: mlen = at + 1; break;
                case 3: memcpy(m + mlen, m + at, mlen - at); mlen += mlen - at; break;
                }
            }
            LLVMFuzzerTestOneInput(m, mlen);
            runs++;
        }
        free(m);
        free(data);
    }
    printf("fuzz_reader: %u inputs replayed\n", runs);
    return argc > 1 ? 0 : 1;
}
#endif
