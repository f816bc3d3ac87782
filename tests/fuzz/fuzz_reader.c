/*
 * fuzz_reader.c: the reader's fuzz target. LLVMFuzzerTestOneInput reads any bytes to the end;
 * the reader must return an error for bad input and never crash, leak or read out of bounds.
 *
 * Each input is also wrapped as the content of a valid frame of format 1.0 and of format 2.0,
 * and as the staged block of a format 3.1 thread file's staging area (FORMAT.md section 6: the
 * records a killed process leaves), so that mutations reach the record decoders past the block
 * checksum and the staged-block reader.
 *
 * Built with -DRHEAP_LIBFUZZER and -fsanitize=fuzzer it runs under libFuzzer (the CMake option
 * RHEAP_LIBFUZZER does this). Built plainly, its main replays the seed files given as arguments
 * (the golden files of every version: the 3.x thread files start with a staging area holding
 * the records written after the last flush, as a killed process leaves them) plus
 * deterministic mutations of them (byte overwrites, bit flips, cuts, spliced copies), aimed at
 * the bytes that are not zero so that the 320 KiB staging areas are not mostly wasted on
 * reserved space; with --corpus it replays each file once, as libFuzzer would, without
 * requiring it to read cleanly (tests/data/reader-corpus/: inputs a fuzzer found to reach new
 * code, most of them invalid).
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

/* A format 3.1 thread file whose frame holds only the stream header and whose staging area
 * stages block 1 with `data` as its records, and as the start of each of its four columns. */
enum { STAGE_BLOCK = 65536, STAGED_MAX = 4096 + 5 * STAGE_BLOCK + 4096 };

/* The file is kept between calls: only the commit word and the bytes the last input wrote are
 * changed, not the 320 KiB area (so the replay stays fast under the sanitizers). Its length goes
 * to *len. */
static const uint8_t *staged_file(const uint8_t *data, size_t size, size_t *len)
{
    static uint8_t out[STAGED_MAX];
    static bytes_t head, frame;
    static const block2_t empty;
    static size_t last = SIZE_MAX; /* bytes of the previous input; SIZE_MAX: none yet */
    size_t n = rip_stage_size(STAGE_BLOCK);
    if (last == SIZE_MAX) {
        memset(out, 0, n);
        rip_stage_header(out, STAGE_BLOCK);
        /* The frame: one block with the stream header and no record. */
        b_header_v2(&head, "RIPT", 1, 28, 2);
        head.b[4] = 3; /* major 3: a thread file that may stage */
        b_join(&head, &empty);
        b_frame(&frame, &head);
        memcpy(out + n, frame.b, frame.n);
        last = 0;
    }
    for (int i = 0; i < 5; i++) {
        uint8_t *area = out + 4096 + (size_t)i * STAGE_BLOCK + (i == 0 ? 16 : 0);
        memset(area, 0, last);
        memcpy(area, data, size);
    }
    last = size;
    uint64_t commit = (1ull << 32) | (16 + size);
    memcpy(out + 64, &commit, 8);
    *len = n + frame.n;
    return out;
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
    if (size <= 60000) {
        size_t len;
        const uint8_t *staged = staged_file(data, size, &len);
        check_one(staged, len);
    }
    return 0;
}

#ifndef RHEAP_LIBFUZZER
static uint32_t x = 2463534242u;

static uint32_t next(void)
{
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return x;
}

/* A place to change: mostly next to a byte that is not zero (the headers, the records, the
 * commit word), sometimes anywhere. */
static size_t place(const size_t *busy, size_t nbusy, size_t len)
{
    uint32_t r = next();
    if (nbusy && r % 4)
        return (busy[(r >> 2) % nbusy] + (r >> 28) % 3) % len;
    return (r >> 2) % len;
}

int main(int argc, char **argv)
{
    unsigned runs = 0, seeds = 0;
    int corpus = argc > 1 && !strcmp(argv[1], "--corpus");
    /* The staged wrap of nothing is a well-formed file: the wraps reach the staged records. */
    size_t records, slen;
    rip_error_t werr;
    const uint8_t *staged = staged_file((const uint8_t *)"", 0, &slen);
    CHECK_STATUS(read_all_mem(staged, slen, &records, &werr), RIP_END);
    for (int a = 1 + corpus; a < argc; a++, seeds++) {
        size_t len;
        uint8_t *data = slurp(argv[a], &len);
        if (corpus) {
            LLVMFuzzerTestOneInput(data, len);
            runs++;
            free(data);
            continue;
        }
        size_t n;
        rip_error_t err;
        /* The seed itself must read cleanly. */
        CHECK_STATUS(read_all_mem(data, len, &n, &err), RIP_END);
        size_t *busy = malloc((len + 1) * sizeof *busy), nbusy = 0;
        for (size_t i = 0; i < len; i++)
            if (data[i])
                busy[nbusy++] = i;
        uint8_t *m = malloc(32 * len + 1);   /* room for four splices */
        /* A large seed (a staging area) costs its size at every read: fewer rounds. */
        int rounds = len > 65536 ? 100 : 2000;
        for (int i = 0; i < rounds; i++) {
            memcpy(m, data, len);
            size_t mlen = len;
            int edits = 1 + i % 4;
            for (int k = 0; k < edits; k++) {
                size_t at = place(busy, nbusy, mlen);
                uint32_t r = next();
                switch (r % 4) {
                case 0: m[at] = (uint8_t)(r >> 8); break;
                case 1: m[at] ^= (uint8_t)(1u << ((r >> 8) % 8)); break;
                case 2: mlen = at + 1; break;
                case 3: memcpy(m + mlen, m + at, mlen - at); mlen += mlen - at; break;
                }
            }
            LLVMFuzzerTestOneInput(m, mlen);
            runs++;
        }
        free(m);
        free(busy);
        free(data);
    }
    printf("fuzz_reader: %u inputs replayed from %u files\n", runs, seeds);
    return seeds ? 0 : 1;
}
#endif
