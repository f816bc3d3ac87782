/*
 * collect_api.c: the collector library through its public header only, on a holder recording
 * under DIR: collect_api DIR PID BYTES BLOCKS DAMAGED.
 *
 * A host made with a log sink reads the holder's trace-mode recording: exactly BYTES live in
 * BLOCKS blocks, recording; its profile is a gzip stream. A damaged thread file DAMAGED
 * (written here, inside the holder's recording) is said once, as a warning naming the file,
 * through the sink, and never on stderr (the library prints nothing; the case checks the
 * program's stderr is empty). A server asked to listen where it cannot fails with RC_E_USAGE
 * and a sentence naming the address. Prints one line per check that fails; exit status 1 then.
 */
#define _GNU_SOURCE /* open_memstream */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rheap_collect.h"

static int failures;

#define CHECK(cond, ...)                                                                         \
    do {                                                                                         \
        if (!(cond)) {                                                                           \
            printf("FAIL: " __VA_ARGS__);                                                        \
            printf("\n");                                                                        \
            failures++;                                                                          \
        }                                                                                        \
    } while (0)

typedef struct {
    int warnings, notes;
    char last[2048];
} said_t;

static void sink(void *user, rc_level_t level, const char *msg)
{
    said_t *s = user;
    if (level == RC_LOG_WARNING)
        s->warnings++;
    else
        s->notes++;
    snprintf(s->last, sizeof s->last, "%s", msg);
}

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: collect_api DIR PID BYTES BLOCKS DAMAGED\n");
        return 2;
    }
    const char *dirs[1] = {argv[1]};
    uint32_t pid = (uint32_t)strtoul(argv[2], NULL, 10);
    double bytes = strtod(argv[3], NULL), blocks = strtod(argv[4], NULL);

    said_t said = {0};
    rc_log_t log = {sink, &said};
    rc_host_t *h = rc_host_create(dirs, 1, &log);
    CHECK(h != NULL, "rc_host_create");
    if (!h)
        return 1;
    /* What the holder holds reaches its files as its buffers are flushed: scanned again, every
     * 100 ms for up to 10 s, until the heap is the one expected (its churn's 24-byte block comes
     * and goes meanwhile). */
    rc_err_t err;
    long i = -1;
    for (int tries = 0; tries < 100; tries++) {
        CHECK(rc_host_scan(h, 300, &err) == RC_OK, "rc_host_scan: %s", err.msg);
        rc_info_t in;
        if ((i = rc_host_find(h, pid)) >= 0) {
            rc_host_info(h, (size_t)i, &in);
            if (in.live_bytes == bytes && in.live_blocks == blocks)
                break;
        }
        nanosleep(&(struct timespec){0, 100000000}, NULL);
    }
    CHECK(i >= 0, "process %u not found among %zu", pid, rc_host_count(h));
    if (i >= 0) {
        rc_info_t in;
        rc_host_info(h, (size_t)i, &in);
        CHECK(in.pid == pid, "pid %u, expected %u", in.pid, pid);
        CHECK(in.state == RC_RECORDING, "state %d, expected recording", (int)in.state);
        CHECK(in.interval == 0, "interval %llu, expected 0 (trace mode)",
              (unsigned long long)in.interval);
        CHECK(in.live_bytes == bytes, "live bytes %.0f, expected %.0f", in.live_bytes, bytes);
        CHECK(in.live_blocks == blocks, "live blocks %.0f, expected %.0f", in.live_blocks, blocks);

        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        size_t idx = (size_t)i;
        rc_status_t st = rc_profile_write(h, &idx, 1, 0, f, &err);
        fclose(f);
        CHECK(st == RC_OK, "rc_profile_write: %s", rc_status_str(st));
        CHECK(len > 100 && (unsigned char)buf[0] == 0x1f && (unsigned char)buf[1] == 0x8b,
              "the profile is no gzip stream (%zu bytes)", len);
        free(buf);

        char path[4096];
        snprintf(path, sizeof path, "%s/%s", in.dir, argv[5]);
        FILE *d = fopen(path, "wb");
        CHECK(d != NULL, "%s: cannot write", path);
        if (d) {
            fputs("RIPT\001\002garbage", d);
            fclose(d);
        }
    }
    CHECK(said.warnings == 0 && said.notes == 0, "said before the damage: %s", said.last);
    CHECK(rc_host_scan(h, 300, &err) == RC_OK, "rc_host_scan: %s", err.msg);
    CHECK(rc_host_scan(h, 300, &err) == RC_OK, "rc_host_scan: %s", err.msg);
    CHECK(said.warnings == 1, "%d warnings for one damaged file, expected 1", said.warnings);
    CHECK(strstr(said.last, argv[5]) && strstr(said.last, "reads no further"),
          "the warning names no file: '%s'", said.last);
    rc_host_destroy(h);

    rc_serve_opts_t o = RC_SERVE_OPTS_INIT;
    o.listen = "192.0.2.1:1";
    o.dirs = dirs;
    o.ndirs = 1;
    rc_server_t *s = NULL;
    rc_status_t st = rc_server_open(&o, &s, &err);
    CHECK(st == RC_E_USAGE && s == NULL, "listening on 192.0.2.1: %s", rc_status_str(st));
    CHECK(st != RC_E_USAGE || strstr(err.msg, "192.0.2.1:1"), "the error names no address: '%s'",
          err.msg);
    rc_server_close(s);
    return failures ? 1 : 0;
}
