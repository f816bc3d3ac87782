/*
 * badinput.c: `rheap convert` on truncated, bit-flipped, empty and foreign inputs, and the
 * command-line contract (exit statuses, --force, never a half-written database).
 * Usage: convert_badinput MODE RHEAP DIR.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <lz4frame.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tgen.h"

static tgen_stack_t st;
static const char *rheap;
static char dir[1024], rec[1100], out[1100], err[8192];
static uint64_t block_at[4]; /* file offsets where blocks 1..3 of t1.rip start */

__attribute__((noinline)) static void site(void)
{
    tgen_capture(&st);
}

/* A recording whose t1.rip has three blocks: 10 mallocs, 5 frees, 10 more mallocs. */
static void write_recording(void)
{
    tgen_fresh_dir(rec);
    tgen_process(rec, 77, 1, 5000, 1, 100);
    rip_header_t h = tgen_thread_header(77, 1, 1, 5000);
    tgen_file_t f;
    tgen_open(&f, rec, "t1.rip", &h);
    tgen_modules(&f, 0);
    rip_writer_stack(f.w, 1, st.ips, st.depth);
    block_at[1] = 7; /* after the lz4 frame header */
    for (int i = 0; i < 10; i++)
        rip_writer_alloc(f.w, RIP_CALL_MALLOC, 1 + i, 0x1000 + 16 * i, 8, 1, 0, 0, 0);
    tgen_flush(&f);
    block_at[2] = rip_writer_file_size(f.w) - 4; /* the next block overwrites the end mark */
    for (int i = 0; i < 5; i++)
        rip_writer_free(f.w, 11 + i, 0x1000 + 16 * i);
    tgen_flush(&f);
    block_at[3] = rip_writer_file_size(f.w) - 4;
    for (int i = 0; i < 10; i++)
        rip_writer_alloc(f.w, RIP_CALL_MALLOC, 20 + i, 0x9000 + 16 * i, 8, 1, 0, 0, 0);
    tgen_close(&f);
}

static int run_convert(int force)
{
    char *argv[] = {(char *)rheap, "convert", "--no-progress", rec, "-o", out,
                    force ? "--force" : NULL, NULL};
    return tgen_run(argv, err, sizeof err);
}

/* Neither the database nor a temporary file may be left behind after a failure. */
static void check_nothing_written(void)
{
    CHECK(access(out, F_OK) != 0);
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL)
        if (strstr(e->d_name, ".tmp-")) {
            fprintf(stderr, "left behind: %s\n", e->d_name);
            check_failures++;
        }
    if (d)
        closedir(d);
}

static void check_err_has(const char *what)
{
    if (!strstr(err, what)) {
        fprintf(stderr, "stderr lacks \"%s\": %s\n", what, err);
        check_failures++;
    }
}

static void check_one_line(void)
{
    /* One line for one problem (plus the "not written" note). */
    const char *nl = strchr(err, '\n');
    CHECK(nl != NULL);
}

static void write_bytes(const char *path, const void *p, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || (n && write(fd, p, n) != (ssize_t)n)) {
        perror(path);
        exit(99);
    }
    close(fd);
}

static char *thread_path(void)
{
    static char p[1200];
    snprintf(p, sizeof p, "%s/t1.rip", rec);
    return p;
}

static void mode_truncated(void)
{
    /* Cut inside block 3: blocks 1 and 2 convert, with a warning naming the file and where
     * the incomplete block starts. */
    if (truncate(thread_path(), (off_t)block_at[3] + 10) != 0)
        exit(99);
    CHECK_INT(run_convert(0), 3);
    check_err_has("t1.rip");
    char off[64];
    snprintf(off, sizeof off, "offset %llu", (unsigned long long)block_at[3]);
    check_err_has(off);
    sqlite3 *db = tgen_db_open(out);
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM allocations"), 10);
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM allocations WHERE dealloc_after IS NULL"), 5);
    CHECK_INT(tgen_int(db, "SELECT value FROM meta WHERE key = 'truncated_files'"), 1);
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM allocation_sites WHERE sym = 'site'"), 10);
    sqlite3_close(db);
}

static void mode_bitflip(void)
{
    /* Flip a bit inside block 2's data: its checksum fails, nothing is written. */
    int fd = open(thread_path(), O_RDWR);
    unsigned char c;
    off_t at = (off_t)block_at[2] + 4 + 3;
    if (fd < 0 || pread(fd, &c, 1, at) != 1)
        exit(99);
    c ^= 0x10;
    if (pwrite(fd, &c, 1, at) != 1)
        exit(99);
    close(fd);
    CHECK_INT(run_convert(0), 2);
    check_err_has("t1.rip");
    char off[64];
    snprintf(off, sizeof off, "offset %llu", (unsigned long long)block_at[2]);
    check_err_has(off);
    check_one_line();
    check_nothing_written();
}

static void mode_empty(void)
{
    /* An empty thread file (a thread killed before its first flush) holds nothing: warning. */
    char p[1200];
    snprintf(p, sizeof p, "%s/t2.rip", rec);
    write_bytes(p, "", 0);
    int rc = run_convert(0);
    CHECK_INT(rc, 3);
    check_err_has("t2.rip");
    sqlite3 *db = tgen_db_open(out);
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM allocations"), 20);
    /* The empty thread file names no thread. */
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM threads"), 1);
    sqlite3_close(db);
    /* The same recording twice under two names (a copy, or a pid reused by another run) would
     * merge two processes: refused before anything is written. */
    unlink(out);
    char copy[1100], cmd[3400];
    snprintf(copy, sizeof copy, "%s/copy", dir);
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && cp -r '%s' '%s'", copy, rec, copy);
    CHECK(system(cmd) == 0);
    char *dup[] = {(char *)rheap, "convert", "--no-progress", rec, copy, "-o", out, NULL};
    CHECK_INT(tgen_run(dup, err, sizeof err), 2);
    check_err_has("both recording 1 of process 77");
    check_nothing_written();
    /* A recording whose process file is empty, beside a good one: skipped with a warning. */
    char q[1200];
    snprintf(q, sizeof q, "%s/process.rip", copy);
    write_bytes(q, "", 0);
    CHECK_INT(tgen_run(dup, err, sizeof err), 3);
    check_err_has("the recording is skipped");
    db = tgen_db_open(out);
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM processes"), 1);
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM allocations"), 20);
    sqlite3_close(db);
    /* An empty process file: not a recording that can be converted. */
    unlink(out);
    snprintf(p, sizeof p, "%s/process.rip", rec);
    write_bytes(p, "", 0);
    CHECK_INT(run_convert(0), 2);
    check_err_has("process.rip");
    check_nothing_written();
}

static void mode_foreign(void)
{
    /* Plain text under a thread file's name. */
    write_bytes(thread_path(), "hello, world\n", 13);
    CHECK_INT(run_convert(0), 2);
    check_err_has("t1.rip");
    check_err_has("offset 0");
    check_nothing_written();
    /* A valid lz4 frame of something else. */
    char text[256], frame[1024];
    memset(text, 'x', sizeof text);
    size_t n = LZ4F_compressFrame(frame, sizeof frame, text, sizeof text, NULL);
    if (LZ4F_isError(n))
        exit(99);
    write_bytes(thread_path(), frame, n);
    CHECK_INT(run_convert(0), 2);
    check_err_has("t1.rip");
    check_nothing_written();
}

static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static void mode_version(void)
{
    /* A well-formed frame whose header says major version 2. */
    unsigned char f[128], data[36];
    memset(data, 0, sizeof data);
    memcpy(data, "RIPT", 4);
    data[4] = 2; /* major */
    put32(data + 8, 24);
    put32(data + 12, 77);
    put32(data + 16, 1);
    put32(data + 20, 1);
    put32(data + 24, 1);
    size_t k = 0;
    put32(f, 0x184D2204);
    f[4] = 0x70;
    f[5] = 0x40;
    f[6] = (unsigned char)((rip_xxh32(f + 4, 2, 0) >> 8) & 0xff);
    k = 7;
    put32(f + k, (uint32_t)sizeof data | 0x80000000u);
    k += 4;
    memcpy(f + k, data, sizeof data);
    k += sizeof data;
    put32(f + k, rip_xxh32(data, sizeof data, 0));
    k += 4;
    put32(f + k, 0);
    k += 4;
    write_bytes(thread_path(), f, k);
    CHECK_INT(run_convert(0), 2);
    check_err_has("t1.rip");
    check_err_has("version");
    check_nothing_written();
}

static void mode_paths(void)
{
    char bogus[1200];
    snprintf(bogus, sizeof bogus, "%s/no-such-dir", dir);
    char *a1[] = {(char *)rheap, "convert", bogus, "-o", out, NULL};
    CHECK_INT(tgen_run(a1, err, sizeof err), 2);
    check_err_has("no-such-dir");
    check_nothing_written();

    /* A directory that is not a recording. */
    snprintf(bogus, sizeof bogus, "%s/empty", dir);
    tgen_fresh_dir(bogus);
    char *a2[] = {(char *)rheap, "convert", bogus, "-o", out, NULL};
    CHECK_INT(tgen_run(a2, err, sizeof err), 2);
    check_err_has("empty");
    check_nothing_written();

    /* A file where a directory is expected. */
    char *a3[] = {(char *)rheap, "convert", thread_path(), "-o", out, NULL};
    CHECK_INT(tgen_run(a3, err, sizeof err), 2);
    check_nothing_written();

    /* The short form, then an existing output without and with --force. */
    char *a4[] = {(char *)rheap, "--no-progress", rec, out, NULL};
    CHECK_INT(tgen_run(a4, err, sizeof err), 0);
    write_bytes(out, "precious", 8);
    CHECK_INT(run_convert(0), 1);
    check_err_has("--force");
    struct stat sb;
    CHECK(stat(out, &sb) == 0 && sb.st_size == 8);
    CHECK_INT(run_convert(1), 0);
    sqlite3 *db = tgen_db_open(out);
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM allocations"), 20);
    sqlite3_close(db);
    unlink(out);

    /* The option forms getopt_long allows: an attached value, --output=FILE, grouped short
     * options, options after the paths. Each converts the same 20 rows. */
    char attached[1300], eq[1300];
    snprintf(attached, sizeof attached, "-o%s", out);
    snprintf(eq, sizeof eq, "--output=%s", out);
    char *f1[] = {(char *)rheap, "convert", "--no-progress", rec, attached, NULL};
    char *f2[] = {(char *)rheap, "convert", eq, "-qf", "--no-progress", rec, NULL};
    char *f3[] = {(char *)rheap, "convert", rec, "--no-progress", "-fq", "-o", out, NULL};
    char *f4[] = {(char *)rheap, "-qf", "--no-progress", rec, out, NULL};
    char **forms[] = {f1, f2, f3, f4};
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        CHECK_INT(tgen_run(forms[i], err, sizeof err), 0);
        /* -q: no summary line; without it, the line names the output. */
        CHECK_INT(strstr(err, "rheap: wrote ") != NULL, i == 0);
        sqlite3 *fdb = tgen_db_open(out);
        CHECK_INT(tgen_int(fdb, "SELECT count(*) FROM allocations"), 20);
        sqlite3_close(fdb); /* the next forms replace it, with -f */
    }
    unlink(out);
    /* What a usage error says. */
    char *m1[] = {(char *)rheap, "convert", rec, "-o", NULL};
    CHECK_INT(tgen_run(m1, err, sizeof err), 1);
    CHECK_STR(err, "rheap: error: -o needs a file name (try rheap convert --help)\n");
    char *m2[] = {(char *)rheap, "convert", rec, "--output", NULL};
    CHECK_INT(tgen_run(m2, err, sizeof err), 1);
    CHECK_STR(err, "rheap: error: --output needs a file name (try rheap convert --help)\n");
    char *m3[] = {(char *)rheap, "convert", "-qx", rec, "-o", out, NULL};
    CHECK_INT(tgen_run(m3, err, sizeof err), 1);
    CHECK_STR(err, "rheap: error: unknown option -x (try rheap convert --help)\n");
    char *m4[] = {(char *)rheap, "convert", "--bogus=1", rec, "-o", out, NULL};
    CHECK_INT(tgen_run(m4, err, sizeof err), 1);
    CHECK_STR(err, "rheap: error: unknown option --bogus=1 (try rheap convert --help)\n");
    char *m5[] = {(char *)rheap, "convert", "--force=yes", rec, "-o", out, NULL};
    CHECK_INT(tgen_run(m5, err, sizeof err), 1);
    CHECK_STR(err, "rheap: error: --force takes no value (try rheap convert --help)\n");
    char *m6[] = {(char *)rheap, "-x", rec, out, NULL};
    CHECK_INT(tgen_run(m6, err, sizeof err), 1);
    CHECK_STR(err, "rheap: error: unknown option -x (try rheap --help)\n");
    CHECK(access(out, F_OK) != 0);

    /* An output in a directory that does not exist: the database cannot be written. */
    char bad_out[1300];
    snprintf(bad_out, sizeof bad_out, "%s/missing-dir/out.db", dir);
    char *a5[] = {(char *)rheap, "convert", rec, "-o", bad_out, NULL};
    CHECK_INT(tgen_run(a5, err, sizeof err), 4);

    /* Usage errors and help. */
    char *u1[] = {(char *)rheap, NULL};
    CHECK_INT(tgen_run(u1, err, sizeof err), 1);
    char *u2[] = {(char *)rheap, "convert", rec, NULL};
    CHECK_INT(tgen_run(u2, err, sizeof err), 1);
    char *u3[] = {(char *)rheap, "convert", "--bogus", NULL};
    CHECK_INT(tgen_run(u3, err, sizeof err), 1);
    char *h1[] = {(char *)rheap, "--help", NULL};
    CHECK_INT(tgen_run(h1, err, sizeof err), 0);
    char *h2[] = {(char *)rheap, "convert", "--help", NULL};
    CHECK_INT(tgen_run(h2, err, sizeof err), 0);
    char *h3[] = {(char *)rheap, "dump", "--help", NULL};
    CHECK_INT(tgen_run(h3, err, sizeof err), 0);
    char *h4[] = {(char *)rheap, "--version", NULL};
    CHECK_INT(tgen_run(h4, err, sizeof err), 0);
    char *d1[] = {(char *)rheap, "dump", rec, NULL};
    CHECK_INT(tgen_run(d1, err, sizeof err), 0);
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s MODE RHEAP DIR\n", argv[0]);
        return 2;
    }
    const char *mode = argv[1];
    rheap = argv[2];
    site();
    snprintf(dir, sizeof dir, "%s/bad-%s", argv[3], mode);
    tgen_fresh_dir(dir);
    snprintf(rec, sizeof rec, "%s/rip-77", dir);
    snprintf(out, sizeof out, "%s/out.db", dir);
    write_recording();
    if (!strcmp(mode, "truncated"))
        mode_truncated();
    else if (!strcmp(mode, "bitflip"))
        mode_bitflip();
    else if (!strcmp(mode, "empty"))
        mode_empty();
    else if (!strcmp(mode, "foreign"))
        mode_foreign();
    else if (!strcmp(mode, "version"))
        mode_version();
    else if (!strcmp(mode, "paths"))
        mode_paths();
    else {
        fprintf(stderr, "unknown mode %s\n", mode);
        return 2;
    }
    if (check_failures) {
        fprintf(stderr, "%d check(s) failed; last stderr of rheap:\n%s", check_failures, err);
        return 1;
    }
    printf("ok\n");
    return 0;
}
