/*
 * recording.c: listing a recording directory (process.rip required, thread files sorted by
 * thread id and reuse suffix, other names ignored) and `rheap dump` over it: its output, and its
 * exit codes 0 (clean), 3 (truncated) and 2 (invalid, missing).
 */
#include <sys/stat.h>

#include "test_util.h"
#include "run_dump.h"

/* The version the writer puts in every file: what `rheap dump` must show. */
#define VERSION_TEXT_(major, minor) #major "." #minor
#define VERSION_TEXT(major, minor) VERSION_TEXT_(major, minor)
#define VERSION VERSION_TEXT(RIP_FORMAT_MAJOR, RIP_FORMAT_MINOR)

static char dir[128];

static void write_file(const char *name, int is_process, uint32_t tid, int flush)
{
    char path[300];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0);
    rip_header_t h = {is_process, 0, 0, 321, tid, 1, tid % 100, 1000, 0, 0, 0};
    void *mem = aligned_alloc(16, (rip_writer_footprint(1) + 15) & ~(size_t)15);
    rip_writer_t *w = rip_writer_init(mem, 1, fd, &h);
    if (is_process) {
        const char *argv[] = {"prog", "a b"};
        CHECK_STATUS(rip_writer_process(w, 1, "/bin/prog", 2, argv, 5, "monotonic", 4096), RIP_OK);
    } else {
        CHECK_STATUS(rip_writer_free(w, tid, 0x1000 + tid), RIP_OK);
    }
    if (flush)
        CHECK_STATUS(rip_writer_flush(w), RIP_OK);
    free(mem);
    close(fd);
}

static char *dump_of(const char *path, int expect_rc, char **errtext)
{
    char *out = NULL, *err = NULL;
    size_t on = 0, en = 0;
    FILE *o = open_memstream(&out, &on), *e = open_memstream(&err, &en);
    int rc = run_dump(path, o, e);
    fclose(o);
    fclose(e);
    if (rc != expect_rc)
        CHECK_FAIL("rheap dump %s exited %d, expected %d; stderr: %s", path, rc, expect_rc, err);
    *errtext = err;
    return out;
}

int main(void)
{
    snprintf(dir, sizeof dir, "rip-test-%d", (int)getpid());
    CHECK(mkdir(dir, 0700) == 0);
    rip_recording_t *rec;
    rip_error_t err;
    char buf[600];

    CHECK_STATUS(rip_recording_open(dir, &rec, &err), RIP_E_NOT_RECORDING);
    CHECK(rec == NULL);
    snprintf(buf, sizeof buf, "%s: not a rip recording (no process.rip)", dir);
    char msg[1024];
    CHECK(strcmp(rip_error_format(&err, msg, sizeof msg), buf) == 0);
    CHECK_STATUS(rip_recording_open("no-such-dir", &rec, &err), RIP_E_NOT_RECORDING);
    CHECK_CONTAINS(err.detail, "No such file or directory");

    write_file("process.rip", 1, 0, 1);
    static const char *names[] = {"t10.rip", "t9.rip", "t10-2.rip", "t100.rip", "t10-10.rip",
                                  "tx.rip", "t10.txt", "t-1.rip", "t010.rip", "t10-1.rip",
                                  "t10-.rip", "t10.rip.bak", "process.rip.1"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        write_file(names[i], 0, 10, 1);
    CHECK_STATUS(rip_recording_open(dir, &rec, &err), RIP_OK);
    CHECK(strcmp(rip_recording_dir(rec), dir) == 0);
    snprintf(buf, sizeof buf, "%s/process.rip", dir);
    CHECK(strcmp(rip_recording_process_path(rec), buf) == 0);
    CHECK_U(rip_recording_thread_count(rec), 5);
    static const char *order[] = {"t9.rip", "t10.rip", "t10-2.rip", "t10-10.rip", "t100.rip"};
    for (size_t i = 0; i < 5; i++) {
        snprintf(buf, sizeof buf, "%s/%s", dir, order[i]);
        if (strcmp(rip_recording_thread_path(rec, i), buf) != 0)
            CHECK_FAIL("thread file %zu: got %s, expected %s", i, rip_recording_thread_path(rec, i), buf);
    }
    CHECK(rip_recording_thread_path(rec, 5) == NULL);
    rip_recording_close(rec);
    rip_recording_close(NULL);

    /* rheap dump over the directory: the process file first, then the threads in order. */
    for (size_t i = 5; i < sizeof names / sizeof names[0]; i++) {
        snprintf(buf, sizeof buf, "%s/%s", dir, names[i]);
        unlink(buf);
    }
    write_file("t9.rip", 0, 9, 1);
    write_file("t100.rip", 0, 100, 1);
    char *errtext;
    char *out = dump_of(dir, 0, &errtext);
    static const char expect[] =
        "# file process.rip type=process version=" VERSION " pid=321 tid=0 recording=1 serial=0 start_ns=1000 time_shift=0\n"
        "process ppid=1 exe=/bin/prog wall_ns=5 clock=monotonic page_size=4096 argc=2 argv=prog a\\x20b\n"
        "# file t9.rip type=thread version=" VERSION " pid=321 tid=9 recording=1 serial=9 start_ns=1000 time_shift=0\n"
        "free t=9 addr=0x1009\n"
        "# file t10.rip type=thread version=" VERSION " pid=321 tid=10 recording=1 serial=10 start_ns=1000 time_shift=0\n"
        "free t=10 addr=0x100a\n"
        "# file t10-2.rip type=thread version=" VERSION " pid=321 tid=10 recording=1 serial=10 start_ns=1000 time_shift=0\n"
        "free t=10 addr=0x100a\n"
        "# file t10-10.rip type=thread version=" VERSION " pid=321 tid=10 recording=1 serial=10 start_ns=1000 time_shift=0\n"
        "free t=10 addr=0x100a\n"
        "# file t100.rip type=thread version=" VERSION " pid=321 tid=100 recording=1 serial=0 start_ns=1000 time_shift=0\n"
        "free t=100 addr=0x1064\n";
    if (strcmp(out, expect) != 0)
        CHECK_FAIL("dump output:\n%s\nexpected:\n%s", out, expect);
    CHECK_U(strlen(errtext), 0);
    free(out);
    free(errtext);

    /* A thread file cut before its end mark: the rest is still dumped, exit code 3. */
    snprintf(buf, sizeof buf, "%s/t10-2.rip", dir);
    size_t len;
    uint8_t *data = slurp(buf, &len);
    spill(buf, data, len - 4);
    free(data);
    out = dump_of(dir, 3, &errtext);
    snprintf(msg, sizeof msg,
             "rheap: warning: %s: offset %zu: file ends before the end mark (expected a block or the "
             "end mark)\n", buf, len - 4);
    if (strcmp(errtext, msg) != 0)
        CHECK_FAIL("stderr: %s, expected %s", errtext, msg);
    CHECK(strstr(out, "# file t100.rip") != NULL);
    free(out);
    free(errtext);

    /* An empty thread file (killed before its first flush) is truncated too. */
    write_file("t10-2.rip", 0, 10, 0);
    out = dump_of(buf, 3, &errtext);
    snprintf(msg, sizeof msg, "rheap: warning: %s: offset 0: empty file (expected an lz4 frame)\n", buf);
    CHECK(strcmp(errtext, msg) == 0);
    CHECK_U(strlen(out), 0);
    free(out);
    free(errtext);

    /* A corrupt file stops the dump with exit code 2 and one line. */
    spill(buf, "\x04\x22\x4d\x18\x70\x40\x00", 7);
    out = dump_of(dir, 2, &errtext);
    snprintf(msg, sizeof msg, "rheap: error: %s: offset 6: lz4 frame header checksum mismatch\n", buf);
    CHECK(strcmp(errtext, msg) == 0);
    CHECK(strstr(out, "# file t100.rip") == NULL);
    free(out);
    free(errtext);

    /* Missing paths and directories that are not recordings. */
    out = dump_of("no-such-path", 2, &errtext);
    CHECK(strcmp(errtext, "rheap: error: no-such-path: cannot open: No such file or directory\n") == 0);
    free(out);
    free(errtext);
    out = dump_of(".", 2, &errtext);
    CHECK(strcmp(errtext, "rheap: error: .: not a rip recording (no process.rip)\n") == 0);
    free(out);
    free(errtext);

    /* Recording directories' names: what librheap makes is read, anything else refused. */
    static const struct {
        const char *name;
        int ok;
        uint32_t pid, n;
    } rec_names[] = {
        {"rip-1", 1, 1, 1}, {"rip-4711", 1, 4711, 1}, {"rip-4711-2", 1, 4711, 2},
        {"rip-4294967295-99999", 1, 4294967295u, 99999},
        {"rip-+5", 0, 0, 0}, {"rip--5", 0, 0, 0}, {"rip-05", 0, 0, 0}, {"rip-0", 0, 0, 0},
        {"rip-5-1", 0, 0, 0}, {"rip-5-0", 0, 0, 0}, {"rip-5-02", 0, 0, 0}, {"rip-5-", 0, 0, 0},
        {"rip-5-+2", 0, 0, 0}, {"rip-", 0, 0, 0}, {"rip-5 ", 0, 0, 0}, {"rip- 5", 0, 0, 0},
        {"rip-4294967296", 0, 0, 0}, {"rip-5-4294967296", 0, 0, 0}, {"rip-5x", 0, 0, 0},
        {"rip-5/", 0, 0, 0}, {"RIP-5", 0, 0, 0}, {"rip5", 0, 0, 0}, {"", 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof rec_names / sizeof rec_names[0]; i++) {
        uint32_t pid = 7, n = 7;
        int ok = rip_recording_name_parse(rec_names[i].name, &pid, &n) == 0;
        if (ok != rec_names[i].ok)
            CHECK_FAIL("name '%s': %s, expected %s", rec_names[i].name, ok ? "read" : "refused",
                       rec_names[i].ok ? "read" : "refused");
        if (ok && (pid != rec_names[i].pid || n != rec_names[i].n))
            CHECK_FAIL("name '%s': pid %u n %u, expected %u %u", rec_names[i].name, pid, n,
                       rec_names[i].pid, rec_names[i].n);
        if (!ok && (pid != 7 || n != 7))
            CHECK_FAIL("name '%s' refused but wrote pid %u n %u", rec_names[i].name, pid, n);
    }
    uint32_t unused;
    CHECK(rip_recording_name_parse(NULL, &unused, &unused) == -1);

    /* Clean up. */
    static const char *left[] = {"process.rip", "t9.rip", "t10.rip", "t10-2.rip", "t10-10.rip", "t100.rip"};
    for (size_t i = 0; i < sizeof left / sizeof left[0]; i++) {
        snprintf(buf, sizeof buf, "%s/%s", dir, left[i]);
        unlink(buf);
    }
    rmdir(dir);
    printf("recording: ok\n");
    return 0;
}
