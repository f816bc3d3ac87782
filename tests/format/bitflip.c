/*
 * bitflip.c: every single-bit flip and every byte overwrite of a small multi-block file is
 * reported as an error, and no record delivered before the error differs from the original.
 */
#include "test_util.h"

#define MAXREC 1024

static uint64_t fps[MAXREC], offs[MAXREC];
static size_t total;

/* Reads a damaged copy; returns the status it ended with. */
static rip_status_t read_damaged(const uint8_t *data, size_t len, size_t at, const char *what)
{
    rip_reader_t *r;
    rip_error_t err;
    rip_status_t st = rip_reader_open_mem(data, len, "flip.rip", &r, &err);
    if (st == RIP_OK) {
        rip_record_t rec;
        size_t n = 0;
        while ((st = rip_reader_next(r, &rec, &err)) == RIP_OK) {
            if (n >= total || fingerprint(&rec) != fps[n])
                CHECK_FAIL("%s at byte %zu: record %zu delivered wrong", what, at, n);
            n++;
        }
        rip_reader_close(r);
    }
    if (st == RIP_END || st == RIP_OK)
        CHECK_FAIL("%s at byte %zu: damage not detected", what, at);
    if (err.detail[0] == 0 || strcmp(err.path, "flip.rip") != 0)
        CHECK_FAIL("%s at byte %zu: error without detail or path", what, at);
    return st;
}

int main(void)
{
    size_t len;
    uint8_t *data = small_thread_file("bitflip", 40, 12, &len);
    total = all_fingerprints(data, len, fps, offs, MAXREC);
    CHECK_U(total, 45);
    uint8_t *copy = malloc(len);
    unsigned by_status[16] = {0};
    for (size_t at = 0; at < len; at++) {
        for (int bit = 0; bit < 8; bit++) {
            memcpy(copy, data, len);
            copy[at] ^= (uint8_t)(1u << bit);
            by_status[read_damaged(copy, len, at, "bit flip")]++;
        }
        static const uint8_t fills[] = {0x00, 0xff, 0x7f, 0x80};
        for (size_t k = 0; k < sizeof fills; k++) {
            if (data[at] == fills[k])
                continue;
            memcpy(copy, data, len);
            copy[at] = fills[k];
            by_status[read_damaged(copy, len, at, "overwrite")]++;
        }
    }
    printf("bitflip: %zu bytes ok: corrupt %u, not rip %u, truncated %u, version %u\n", len,
           by_status[RIP_E_CORRUPT], by_status[RIP_E_NOT_RIP], by_status[RIP_E_TRUNCATED],
           by_status[RIP_E_VERSION]);
    free(copy);
    free(data);
    return 0;
}
