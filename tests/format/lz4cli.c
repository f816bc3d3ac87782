/*
 * lz4cli.c: the lz4 command accepts a written file (`lz4 -t`) and decompresses it (`lz4 -dc`)
 * to the exact stream the format describes. Skipped (exit 77) when lz4 is not installed.
 */
#include "test_util.h"

int main(void)
{
    if (system("command -v lz4 >/dev/null 2>&1") != 0) {
        printf("lz4cli: the lz4 command is not installed: skipped\n");
        return 77;
    }
    rip_header_t h = thread_header();
    tfile_t f;
    tfile_open(&f, "lz4cli", 64 << 10, &h);
    /* 100000 frees of 3 bytes each (type, dt 5 then 0, address 8 then delta 0): records do not
     * span blocks, so the stream is exactly 36 + 300000 bytes in 5 blocks. */
    for (int i = 0; i < 100000; i++)
        CHECK_STATUS(rip_writer_free(f.w, 5, 8), RIP_OK);
    CHECK_STATUS(rip_writer_flush(f.w), RIP_OK);

    char cmd[512];
    snprintf(cmd, sizeof cmd, "lz4 -t %s 2>&1", f.path);
    int rc = system(cmd);
    if (rc != 0)
        FAILF("%s: exit status %d", cmd, rc);

    snprintf(cmd, sizeof cmd, "lz4 -dc %s", f.path);
    FILE *p = popen(cmd, "r");
    CHECK(p != NULL);
    static uint8_t out[400000];
    size_t n = 0, k;
    while ((k = fread(out + n, 1, sizeof out - n, p)) > 0)
        n += k;
    CHECK_U(pclose(p), 0);
    CHECK_U(n, 36 + 300000);
    CHECK(memcmp(out, "RIPT\x01\x00\x00\x00\x18\x00\x00\x00", 12) == 0);
    CHECK_U(out[36], 0x10);   /* the first record: a free */
    CHECK_U(out[37], 5);
    CHECK_U(out[38], 16);     /* zigzag(8) */
    CHECK_U(out[39], 0x10);
    CHECK_U(out[40], 0);
    CHECK_U(out[41], 0);
    tfile_close(&f, 1);
    printf("lz4cli: ok\n");
    return 0;
}
