/*
 * foreign.c: files that are not rip files get a clear error with an offset: an empty file,
 * random bytes, a gzip header, lz4 frames holding plain text (written by hand, and by the lz4
 * command when it is installed), a frame without blocks, a missing file, a directory and a FIFO.
 */
#include <errno.h>
#include <sys/stat.h>

#include "test_util.h"

static void expect(const void *data, size_t n, rip_status_t code, uint64_t offset, const char *detail)
{
    size_t records;
    rip_error_t err;
    rip_status_t st = read_all_mem(data, n, &records, &err);
    if (st != code || err.offset != offset || !strstr(err.detail, detail))
        CHECK_FAIL("got %s at offset %" PRIu64 " (%s), expected %s at offset %" PRIu64 " (%s)",
              rip_strerror(st), err.offset, err.detail, rip_strerror(code), offset, detail);
    CHECK_U(records, 0);
    char buf[600];
    rip_error_format(&err, buf, sizeof buf);
    CHECK(strncmp(buf, "mem.rip: offset ", 16) == 0);
}

/* Repetitive, so that the lz4 command stores it compressed. */
static const char text[] =
    "This is a plain text file, not a rip recording. It has a few lines.\n"
    "This is a plain text file, not a rip recording. It has a few lines.\n"
    "This is a plain text file, not a rip recording. It has a few lines.\n"
    "Readers must say so instead of decoding it as events.\n";

/* Compresses text with the lz4 command and the given options; NULL when lz4 is missing. */
static uint8_t *lz4_cli(const char *opts, const char *content, size_t *len)
{
    if (system("command -v lz4 >/dev/null 2>&1") != 0)
        return NULL;
    char in[64], out[64], cmd[256];
    snprintf(in, sizeof in, "foreign-%d.txt", (int)getpid());
    snprintf(out, sizeof out, "foreign-%d.lz4", (int)getpid());
    spill(in, content, strlen(content));
    snprintf(cmd, sizeof cmd, "lz4 -q -f %s %s %s", opts, in, out);
    if (system(cmd) != 0)
        CHECK_FAIL("%s failed", cmd);
    uint8_t *data = slurp(out, len);
    unlink(in);
    unlink(out);
    return data;
}

int main(void)
{
    static bytes_t b, f;

    expect("", 0, RIP_E_TRUNCATED, 0, "empty file");

    uint8_t rnd[1000];
    uint32_t x = 12345;
    for (size_t i = 0; i < sizeof rnd; i++) {
        x = x * 1103515245u + 12345u;
        rnd[i] = (uint8_t)(x >> 16);
    }
    rnd[0] = 0xA7;
    expect(rnd, sizeof rnd, RIP_E_NOT_RIP, 0, "not an lz4 frame (bytes a7");

    static const uint8_t gz[] = {0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0, 3, 'x', 'y'};
    expect(gz, sizeof gz, RIP_E_NOT_RIP, 0, "not an lz4 frame (bytes 1f 8b 08 00, expected magic 04 22 4d 18)");

    /* The uncompressed stream is not a rip file either: rip files are always lz4 frames. */
    b.n = 0;
    b_header(&b, "RIPT", 1, 0, 24);
    expect(b.b, b.n, RIP_E_NOT_RIP, 0, "not an lz4 frame");

    /* A conforming frame of plain text. */
    b.n = 0;
    b_raw(&b, text, sizeof text - 1);
    b_frame(&f, &b);
    expect(f.b, f.n, RIP_E_NOT_RIP, 7, "does not start with RIPT or RIPP");

    /* A frame without blocks, and an lz4 skippable frame. */
    f.n = 0;
    b_frame_header(&f, 4);
    b_le32(&f, 0);
    expect(f.b, f.n, RIP_E_NOT_RIP, 7, "lz4 frame holds no data");
    f.n = 0;
    b_le32(&f, 0x184D2A50u);
    b_le32(&f, 4);
    b_le32(&f, 0);
    expect(f.b, f.n, RIP_E_NOT_RIP, 0, "not an lz4 frame (bytes 50 2a 4d 18");

    /* The first bytes of the magic only: a file cut early. */
    expect("\x04\x22", 2, RIP_E_TRUNCATED, 0, "file ends inside the lz4 frame header");

    size_t n;
    uint8_t *cli = lz4_cli("", text, &n);
    if (cli) {
        /* The command's defaults: content checksum on, block checksums off, 4 MiB blocks. */
        expect(cli, n, RIP_E_NOT_RIP, 4, "lz4 frame flags 0x64, expected 0x70");
        free(cli);
        /* With the flags rip requires: the reader verifies the command's checksums and reaches
         * the content. */
        cli = lz4_cli("-B4 -BX --no-frame-crc", text, &n);
        expect(cli, n, RIP_E_NOT_RIP, 7, "does not start with RIPT or RIPP");
        free(cli);
        /* Text lz4 cannot shrink is stored uncompressed, which rip never does. */
        cli = lz4_cli("-B4 -BX --no-frame-crc", "hi\n", &n);
        expect(cli, n, RIP_E_CORRUPT, 7, "block stored uncompressed (size field 0x80000003)");
        free(cli);
    } else {
        printf("foreign: lz4 command not found, frames made by it not checked\n");
    }

    rip_reader_t *r;
    rip_error_t err;
    CHECK_STATUS(rip_reader_open("no-such-file.rip", &r, &err), RIP_E_IO);
    CHECK(r == NULL);
    CHECK_U(err.offset, RIP_NO_OFFSET);
    char buf[600];
    CHECK(strcmp(rip_error_format(&err, buf, sizeof buf),
                 "no-such-file.rip: cannot open: No such file or directory") == 0);
    /* Only regular files are read: a directory fails at once, and so does a FIFO, without
     * waiting for a writer that never comes. */
    CHECK_STATUS(rip_reader_open(".", &r, &err), RIP_E_IO);
    CHECK_CONTAINS(err.detail, "a directory, expected a regular rip file");
    char fifo[64];
    snprintf(fifo, sizeof fifo, "foreign-fifo-%ld.rip", (long)getpid());
    unlink(fifo);
    CHECK(mkfifo(fifo, 0600) == 0);
    CHECK_STATUS(rip_reader_open(fifo, &r, &err), RIP_E_IO);
    CHECK_CONTAINS(err.detail, "a FIFO, expected a regular rip file");
    unlink(fifo);
    printf("foreign: ok\n");
    return 0;
}
