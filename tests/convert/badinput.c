/*
 * badinput.c: `rheap convert` on truncated, bit-flipped, empty and foreign inputs, on hostile
 * ones (a FIFO, a copied or missing thread file, a misnamed or foreign-owned recording, a
 * recording still being written, sizes of 2^63 and more), and the command-line contract (exit
 * statuses, --force, an output claimed once and never inside a recording, never a half-written
 * database).
 * Usage: convert_badinput MODE RHEAP DIR.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <lz4frame.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
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

/* No temporary database left behind. */
static void check_no_temporary(void)
{
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

/* Neither the database nor a temporary file may be left behind after a failure. */
static void check_nothing_written(void)
{
    CHECK(access(out, F_OK) != 0);
    check_no_temporary();
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

/* A thread file of rip-77 with `n` mallocs of `size` bytes at addresses from `base`. */
static void write_thread(const char *name, uint32_t tid, uint32_t serial, int n, uint64_t base,
                         uint64_t size)
{
    rip_header_t h = tgen_thread_header(77, tid, serial, 5000);
    tgen_file_t f;
    tgen_open(&f, rec, name, &h);
    tgen_modules(&f, 0);
    rip_writer_stack(f.w, 1, st.ips, st.depth);
    for (int i = 0; i < n; i++)
        rip_writer_alloc(f.w, RIP_CALL_MALLOC, 1 + i, base + 16 * (uint64_t)i, size, 1, 0, 0, 0);
    tgen_close(&f);
}

static char *rec_file(const char *name)
{
    static char p[1200];
    snprintf(p, sizeof p, "%s/%s", rec, name);
    return p;
}

static void mode_fifo(void)
{
    /* A FIFO under a thread file's name would block a reader forever: refused at once, by
     * convert and by dump, naming it. */
    CHECK(mkfifo(rec_file("t2.rip"), 0600) == 0);
    CHECK_INT(run_convert(0), 2);
    check_err_has("t2.rip: a FIFO, expected a regular rip file");
    check_nothing_written();
    char *d1[] = {(char *)rheap, "dump", rec, NULL};
    CHECK_INT(tgen_run(d1, err, sizeof err), 2);
    check_err_has("t2.rip: a FIFO, expected a regular rip file");
    char *d2[] = {(char *)rheap, "dump", rec_file("t2.rip"), NULL};
    CHECK_INT(tgen_run(d2, err, sizeof err), 2);
    check_err_has("t2.rip: a FIFO, expected a regular rip file");
    unlink(rec_file("t2.rip"));
    /* The process file as a FIFO: not a recording. */
    unlink(rec_file("process.rip"));
    CHECK(mkfifo(rec_file("process.rip"), 0600) == 0);
    CHECK_INT(run_convert(0), 2);
    check_err_has("process.rip is a FIFO, expected a regular file");
    check_nothing_written();
}

static void mode_serials(void)
{
    /* Three thread files numbered 1, 2, 3 by the tracer: all there, no warning. */
    write_thread("t2.rip", 2, 2, 3, 0x20000, 8);
    write_thread("t3.rip", 3, 3, 4, 0x30000, 8);
    CHECK_INT(run_convert(0), 0);
    sqlite3 *db = tgen_db_open(out);
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM allocations"), 20 + 3 + 4);
    sqlite3_close(db);
    unlink(out);
    /* t3.rip copied as t9.rip: two files claim number 3, which would double its rows. */
    char cmd[3000];
    snprintf(cmd, sizeof cmd, "cp '%s/t3.rip' '%s/t9.rip'", rec, rec);
    CHECK(system(cmd) == 0);
    CHECK_INT(run_convert(0), 2);
    check_err_has("t9.rip: offset 0: file number 3 of the recording (thread 3), the same number "
                  "as ");
    check_err_has("t3.rip (thread 3): one is a copy; remove it and convert again");
    check_one_line();
    check_nothing_written();
    unlink(rec_file("t9.rip"));
    /* t2.rip moved away: number 2 is missing, the rest converts, with a warning. */
    unlink(rec_file("t2.rip"));
    CHECK_INT(run_convert(0), 3);
    check_err_has("rip-77: 1 thread file(s) missing (the tracer numbered its files 1 to 3, "
                  "number 2 is the first not found)");
    db = tgen_db_open(out);
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM allocations"), 20 + 4);
    sqlite3_close(db);
}

static void mode_origin(void)
{
    /* A recording renamed (or planted) under another process's name. */
    char moved[1100];
    snprintf(moved, sizeof moved, "%s/rip-78", dir);
    CHECK(rename(rec, moved) == 0);
    char *a[] = {(char *)rheap, "convert", "--no-progress", moved, "-o", out, NULL};
    CHECK_INT(tgen_run(a, err, sizeof err), 3);
    check_err_has("rip-78/process.rip: offset 0: records process 77, but its directory is named "
                  "for process 78");
    sqlite3 *db = tgen_db_open(out);
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM allocations"), 20);
    sqlite3_close(db);
    unlink(out);
    CHECK(rename(moved, rec) == 0);
    CHECK_INT(run_convert(0), 0);
    unlink(out);
    /* A file of the recording owned by another user: only root can make one. */
    if (geteuid() != 0) {
        printf("origin: not root, a file owned by another user not checked\n");
        return;
    }
    CHECK(chown(thread_path(), 4242, 4242) == 0);
    CHECK_INT(run_convert(0), 3);
    check_err_has("t1.rip: owned by user 4242, not by the user converting (0), like 1 of the "
                  "recording's files");
}

/* Starts `rheap convert` of the recording to `out` without --force, stderr into `errfile`. */
static pid_t start_convert(const char *errfile)
{
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(errfile, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd < 0)
            _exit(99);
        dup2(fd, 2);
        execl(rheap, rheap, "convert", "--no-progress", "-q", rec, "-o", out, (char *)NULL);
        _exit(127);
    }
    return pid;
}

static int wait_status(pid_t pid)
{
    int ws;
    if (waitpid(pid, &ws, 0) != pid || !WIFEXITED(ws))
        return -1;
    return WEXITSTATUS(ws);
}

static void mode_output(void)
{
    /* Never into a recording directory, even with --force: it would replace the input. */
    struct stat before, after;
    CHECK(stat(rec_file("process.rip"), &before) == 0);
    char *a1[] = {(char *)rheap, "convert", "--no-progress", rec, "-o", rec_file("process.rip"),
                  "-f", NULL};
    CHECK_INT(tgen_run(a1, err, sizeof err), 1);
    check_err_has("process.rip: inside the recording ");
    check_one_line();
    CHECK(stat(rec_file("process.rip"), &after) == 0);
    CHECK(after.st_size == before.st_size && after.st_mtime == before.st_mtime);
    char *a2[] = {(char *)rheap, "convert", "--no-progress", rec, "-o", rec_file("x.db"), NULL};
    CHECK_INT(tgen_run(a2, err, sizeof err), 1);
    CHECK(access(rec_file("x.db"), F_OK) != 0);
    /* Two conversions to one output without --force: whatever their timing, one writes the
     * database and the other says the output is taken, never both exit 0. */
    for (int round = 0; round < 5; round++) {
        unlink(out);
        char e1[1200], e2[1200];
        snprintf(e1, sizeof e1, "%s/err1", dir);
        snprintf(e2, sizeof e2, "%s/err2", dir);
        pid_t p1 = start_convert(e1), p2 = start_convert(e2);
        int s1 = wait_status(p1), s2 = wait_status(p2);
        CHECK((s1 == 0 && s2 == 1) || (s1 == 1 && s2 == 0));
        FILE *f = fopen(s1 == 1 ? e1 : e2, "r");
        size_t n = f ? fread(err, 1, sizeof err - 1, f) : 0;
        err[n] = 0;
        if (f)
            fclose(f);
        CHECK(strstr(err, "already exists (use --force") ||
              strstr(err, "created by someone else while this conversion ran"));
        sqlite3 *db = tgen_db_open(out);
        CHECK_INT(tgen_int(db, "SELECT count(*) FROM allocations"), 20);
        sqlite3_close(db);
    }
    check_no_temporary();
}

static void mode_live(void)
{
    /* A program still recording: its process file has no off, and t2.rip grows by a block of
     * 100 mallocs at a time while rheap converts. The conversion ends, with a warning, on a
     * snapshot of whole blocks. */
    tgen_process(rec, 77, 1, 5000, 1, 0);
    rip_header_t h = tgen_thread_header(77, 2, 2, 5000);
    tgen_file_t f;
    tgen_open(&f, rec, "t2.rip", &h);
    tgen_modules(&f, 0);
    rip_writer_stack(f.w, 1, st.ips, st.depth);
    tgen_flush(&f);
    pid_t writer = fork();
    if (writer == 0) {
        for (uint64_t t = 1;; t++) {
            for (int i = 0; i < 100; i++)
                rip_writer_alloc(f.w, RIP_CALL_MALLOC, t * 100 + (uint64_t)i,
                                 0x100000 + 16 * (t * 100 + (uint64_t)i), 24, 1, 0, 0, 0);
            tgen_flush(&f);
        }
    }
    /* The writer is the child's: the parent only lets go of its copy. */
    close(f.fd);
    free(f.mem);
    struct stat sb;
    do
        usleep(10000);
    while (stat(rec_file("t2.rip"), &sb) == 0 && sb.st_size < 64 * 1024);
    int rc = run_convert(0);
    kill(writer, SIGKILL);
    wait_status(writer);
    CHECK_INT(rc, 3);
    CHECK(strstr(err, "error") == NULL);
    check_err_has("rip-77: the recording has no end");
    sqlite3 *db = tgen_db_open(out);
    int64_t n = tgen_int(db, "SELECT count(*) FROM allocations WHERE size = 24");
    CHECK(n >= 100);
    CHECK_INT(n % 100, 0);
    CHECK_INT(tgen_int(db, "SELECT events FROM threads WHERE tid = 2"), n);
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM allocations WHERE size = 8"), 20);
    sqlite3_close(db);
}

static void mode_huge(void)
{
    /* Sizes of 2^63 and more (no allocation that large succeeds: only a hostile recording holds
     * them) are unsigned in the database: an exact INTEGER up to 2^63 - 1, a REAL after it,
     * never negative, and no summary or query overflows. t2.rip adds to t1's 20 blocks of 8
     * bytes: 2^64 - 8 (freed), 2^64 - 8, 2^63 - 1 and 2^63 (never freed). */
    rip_header_t h = tgen_thread_header(77, 2, 2, 5000);
    tgen_file_t f;
    tgen_open(&f, rec, "t2.rip", &h);
    tgen_modules(&f, 0);
    rip_writer_stack(f.w, 1, st.ips, st.depth);
    rip_writer_alloc(f.w, RIP_CALL_MALLOC, 1, 0x50000, UINT64_MAX - 7, 1, 0, 0, 0);
    rip_writer_alloc(f.w, RIP_CALL_MALLOC, 2, 0x60000, UINT64_MAX - 7, 1, 0, 0, 0);
    rip_writer_alloc(f.w, RIP_CALL_MALLOC, 3, 0x70000, INT64_MAX, 1, 0, 0, 0);
    rip_writer_alloc(f.w, RIP_CALL_MALLOC, 4, 0x80000, (uint64_t)INT64_MAX + 1, 1, 0, 0, 0);
    rip_writer_free(f.w, 5, 0x50000);
    tgen_close(&f);
    CHECK_INT(run_convert(0), 0);
    sqlite3 *db = tgen_db_open(out);
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM allocations WHERE size < 0"), 0);
    CHECK_STR(tgen_text(db, "SELECT typeof(size) FROM allocations WHERE addr = %d", 0x70000),
              "integer");
    CHECK_INT(tgen_int(db, "SELECT size FROM allocations WHERE addr = %d", 0x70000), INT64_MAX);
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM allocations WHERE typeof(size) = 'real'"), 3);
    CHECK_INT(tgen_int(db, "SELECT size = 18446744073709551616.0 FROM allocations WHERE addr = %d",
                       0x60000), 1);
    CHECK_INT(tgen_int(db, "SELECT size = 9223372036854775808.0 FROM allocations WHERE addr = %d",
                       0x80000), 1);
    /* 160 + 2 (2^64 - 8) + (2^63 - 1) + 2^63 = 3 * 2^64 + 143 bytes allocated, 2^64 - 8 freed:
     * exact in 128 bits, stored rounded. */
    CHECK_INT(tgen_int(db, "SELECT alloc_bytes = 55340232221128654848.0 FROM recording_stats"), 1);
    CHECK_INT(tgen_int(db, "SELECT freed_bytes = 18446744073709551616.0 FROM recording_stats"), 1);
    CHECK_INT(tgen_int(db, "SELECT leaked_bytes = 36893488147419103232.0 FROM recording_stats"), 1);
    CHECK_INT(tgen_int(db, "SELECT bytes = 55340232221128654848.0 FROM stack_stats"), 1);
    CHECK_INT(tgen_int(db, "SELECT max_size = 18446744073709551616.0 FROM stack_stats"), 1);
    CHECK_INT(tgen_int(db, "SELECT alloc_bytes FROM thread_stats WHERE tid = 1"), 160);
    CHECK_INT(tgen_int(db, "SELECT alloc_bytes = 55340232221128654848.0 FROM thread_stats WHERE "
                           "tid = 2"), 1);
    CHECK_INT(tgen_int(db, "SELECT min_size = 9223372036854775808.0 FROM stack_sizes WHERE "
                           "blocks = 3"), 1);
    sqlite3_close(db);
    /* The commands that read those tables answer. */
    const char *cmds[][2] = {{"query", "sizes"}, {"query", "timeline"}, {"query", "threads"},
                             {"query", "top-sites"}, {"query", "leaks"}, {"query", "peak"},
                             {"report", NULL}};
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        char *a[] = {(char *)rheap, (char *)cmds[i][0], cmds[i][1] ? (char *)cmds[i][1] : out,
                     cmds[i][1] ? out : NULL, NULL};
        CHECK_INT(tgen_run(a, err, sizeof err), 0);
        CHECK(strstr(err, "overflow") == NULL);
    }
    /* The report's totals read them as unsigned. */
    char cmd[4200], txt[1200];
    snprintf(txt, sizeof txt, "%s/report.txt", dir);
    snprintf(cmd, sizeof cmd, "'%s' report '%s' > '%s'", rheap, out, txt);
    char *sh[] = {"/bin/sh", "-c", cmd, NULL};
    CHECK_INT(tgen_run(sh, err, sizeof err), 0);
    FILE *rf = fopen(txt, "r");
    CHECK(rf != NULL);
    char report[8192];
    size_t n = fread(report, 1, sizeof report - 1, rf);
    report[n] = 0;
    fclose(rf);
    CHECK(strstr(report, "bytes allocated  55340232221128654848 bytes (48.0 EiB)") != NULL);
    CHECK(strstr(report, "36893488147419103232 bytes (32.0 EiB)") != NULL);
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
        /* -q: no summary line; without it, the line names the output (wrapped at 80 columns,
         * so a long path may start the next line). */
        CHECK_INT(strstr(err, "rheap: wrote") != NULL, i == 0);
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
    else if (!strcmp(mode, "fifo"))
        mode_fifo();
    else if (!strcmp(mode, "serials"))
        mode_serials();
    else if (!strcmp(mode, "origin"))
        mode_origin();
    else if (!strcmp(mode, "output"))
        mode_output();
    else if (!strcmp(mode, "live"))
        mode_live();
    else if (!strcmp(mode, "huge"))
        mode_huge();
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
