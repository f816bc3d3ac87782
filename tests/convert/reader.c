/*
 * reader.c: `convert.reader`: a recording converted by one thread and by two (a reading thread
 * that decodes and merges, the converting thread that pairs, counts and writes rows) gives the
 * same database, exactly the counts the recording was written with, and the same messages,
 * statuses and partial results when it is damaged.
 *
 * The recording (three threads, some 1.2 MB of thread files, above the size from which the
 * converter starts a reading thread on its own) holds every kind of entry the two threads hand
 * each other: allocations at addresses spread over the store, frees by the allocating thread
 * and by another, reallocs whose released address another thread gets before the realloc
 * returns, frees of blocks never seen, an allocation at a live address (its free unrecorded),
 * allocations that returned NULL, pools created, filled, partly freed and destroyed, mappings
 * mapped, remapped and partly unmapped, and markers. It is converted with RHEAP_CONVERT_READER=0
 * (one thread), =1 (two, whatever the size) and unset (two, by its size): every table of the
 * three the same row for row, and the meta counts those of the writer's model. Then damaged:
 * a thread file cut in its middle (status 3, the blocks before the cut converted), a block
 * bit-flipped (status 2), an allocation naming a stack its file never defined (status 2): the
 * two ways say the same and leave the same.
 *
 * Usage: convert_reader RHEAP DIR
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tgen.h"

#define PID 7100
#define TID_B 7101
#define TID_C 7102
#define STEPS 128000u
#define X_BASE 0x500000000000ull /* the blocks of A, one per step */
#define Y_BASE 0x540000000000ull /* where C's reallocs move them */
#define U_BASE 0x580000000000ull /* never allocated: unmatched frees */
#define M_BASE 0x5c0000000000ull /* mappings */

static tgen_stack_t st_x, st_y, st_z, st_pool;

__attribute__((noinline)) static void site_x(void)
{
    tgen_capture(&st_x);
}

__attribute__((noinline)) static void site_y(void)
{
    tgen_capture(&st_y);
}

__attribute__((noinline)) static void site_z(void)
{
    tgen_capture(&st_z);
}

__attribute__((noinline)) static void site_pool(void)
{
    tgen_capture(&st_pool);
}

/* What the recording must convert to. */
typedef struct {
    int64_t events, rows, leaked, leaked_bytes, unmatched, reused, nulls, markers;
} model_t;

/* Step i's block: one of 2^28 slots of 16 bytes, in an order that looks random (to the store
 * and to the file's compression); each step below is a bijection of 28-bit numbers, so the
 * slots of distinct steps are distinct. */
static uint64_t x_addr(uint64_t i)
{
    const uint64_t mask = (1u << 28) - 1;
    uint64_t h = (i * 2654435761u) & mask;
    h ^= h >> 14;
    h = (h * 0x2c1b3c6dull) & mask;
    h ^= h >> 13;
    return X_BASE + h * 16;
}

/* Writes the recording into dir. undefined_at: the step at which A's allocation names stack 99,
 * which no file defines (0: none). */
static void write_recording(const char *dir, uint32_t undefined_at, model_t *m)
{
    memset(m, 0, sizeof *m);
    tgen_fresh_dir(dir);
    uint64_t t = 4;
    tgen_process(dir, PID, 1, 1, 1, (uint64_t)STEPS * 64 + 100000);
    rip_header_t ha = tgen_thread_header(PID, PID, 1, 1), hb = tgen_thread_header(PID, TID_B, 2, 1),
                 hc = tgen_thread_header(PID, TID_C, 3, 1);
    tgen_file_t a, b, c;
    tgen_open(&a, dir, "t7100.rip", &ha);
    tgen_open(&b, dir, "t7101.rip", &hb);
    tgen_open(&c, dir, "t7102.rip", &hc);
    tgen_file_t *all[] = {&a, &b, &c};
    const char *names[] = {"main", "freer", "mover"};
    for (int k = 0; k < 3; k++) {
        tgen_modules(all[k], 0);
        rip_writer_thread_name(all[k]->w, 0, names[k]);
        rip_writer_stack(all[k]->w, 1, st_x.ips, st_x.depth);
        rip_writer_stack(all[k]->w, 2, st_y.ips, st_y.depth);
        rip_writer_stack(all[k]->w, 3, st_z.ips, st_z.depth);
        rip_writer_stack(all[k]->w, 4, st_pool.ips, st_pool.depth);
    }
    for (uint64_t i = 0; i < STEPS; i++) {
        uint64_t xi = x_addr(i), size = 16 + i % 64;
        if (undefined_at && i == undefined_at) {
            rip_writer_alloc(a.w, RIP_CALL_MALLOC, t += 4, xi, size, 99, 0, 0, 0);
            break;
        }
        /* A's block of this step: freed at the next step by B (i % 4 == 0), by A (1), moved
         * by C's realloc (2; B gets its old address in between, and frees it), or kept (3). */
        rip_writer_alloc(a.w, RIP_CALL_MALLOC, t += 4, xi, size, 1, 0, 0, 0);
        m->events++;
        m->rows++;
        if (i > 0) {
            uint64_t prev = x_addr(i - 1), psize = 16 + (i - 1) % 64;
            switch ((i - 1) % 4) {
            case 0:
                rip_writer_free(b.w, t += 4, prev);
                m->events++;
                break;
            case 1:
                rip_writer_free(a.w, t += 4, prev);
                m->events++;
                break;
            case 2: {
                uint64_t released = t + 4, y = Y_BASE + (prev - X_BASE);
                rip_writer_alloc(b.w, RIP_CALL_MALLOC, t + 8, prev, 4000, 3, 0, 0, 0);
                rip_writer_alloc(c.w, RIP_CALL_REALLOC, t + 12, y, 100 + i % 7, 2, 0, prev,
                                 released);
                rip_writer_free(b.w, t + 16, prev);
                t += 16;
                m->events += 3;
                m->rows += 2;           /* the moved block and B's; the old one's row is above */
                m->leaked++;            /* the moved block */
                m->leaked_bytes += (int64_t)(100 + i % 7);
                break;
            }
            case 3:
                if (i % 200 == 0) {
                    /* C gets the kept block's address: its free was not recorded. */
                    rip_writer_alloc(c.w, RIP_CALL_MALLOC, t += 4, prev, 48, 3, 0, 0, 0);
                    m->events++;
                    m->rows++;
                    m->reused++;
                    m->leaked++;
                    m->leaked_bytes += 48;
                } else {
                    m->leaked++;
                    m->leaked_bytes += (int64_t)psize;
                }
                break;
            }
        }
        if (i % 50 == 25) {
            rip_writer_free(b.w, t += 4, U_BASE + i * 16);
            m->events++;
            m->unmatched++;
        }
        if (i % 300 == 7) {
            rip_writer_alloc(a.w, RIP_CALL_MALLOC, t += 4, 0, 64, 1, 0, 0, 0);
            m->events++;
            m->nulls++;
        }
        if (i % 100 == 50) {
            char label[32];
            snprintf(label, sizeof label, "step %llu", (unsigned long long)i);
            rip_writer_mark(a.w, t += 4, label);
            m->markers++;
        }
        /* A pool every 1,000 steps: 10 blocks, 3 freed, destroyed 500 steps later with 7. */
        uint64_t pool = i / 1000 + 1, pbase = 0x1000 + pool * 0x100000;
        if (i % 1000 == 10) {
            rip_writer_pool(c.w, RIP_POOL_CREATE, t += 4, pool, 0, 0, 0, "arena");
            for (uint64_t k = 0; k < 10; k++)
                rip_writer_pool(c.w, RIP_POOL_ALLOC, t += 4, pool, pbase + k * 32, 32, 4, NULL);
            for (uint64_t k = 0; k < 3; k++)
                rip_writer_pool(c.w, RIP_POOL_FREE, t += 4, pool, pbase + k * 32, 0, 0, NULL);
            m->events += 13;
            m->rows += 10;
        }
        if (i % 1000 == 510) {
            rip_writer_pool(a.w, RIP_POOL_DESTROY, t += 4, pool, 0, 0, 0, NULL);
            m->events++;
        }
        /* A mapping every 500 steps: mapped by A, moved and doubled by B, its first quarter
         * unmapped by C; the rest stays, a piece of it (three rows, one never freed). */
        uint64_t map = M_BASE + (i / 500) * 0x1000000, moved = map + 0x800000;
        if (i % 500 == 20) {
            rip_writer_map(a.w, RIP_MAP_MAP, t += 4, map, 65536, 1, 0, 0);
            m->events++;
        }
        if (i % 500 == 270) {
            rip_writer_map(b.w, RIP_MAP_REMAP, t += 4, moved, 131072, 2, map, 65536);
            m->events++;
        }
        if (i % 500 == 420) {
            rip_writer_map(c.w, RIP_MAP_UNMAP, t += 4, moved, 32768, 0, 0, 0);
            m->events++;
            m->rows += 3;
            m->leaked++;
            m->leaked_bytes += 131072 - 32768;
        }
    }
    if (!undefined_at) {
        /* The last step's block is kept. */
        m->leaked++;
        m->leaked_bytes += 16 + (STEPS - 1) % 64;
    }
    tgen_close(&a);
    tgen_close(&b);
    tgen_close(&c);
}

/* `rheap convert -q` of rip into out with RHEAP_CONVERT_READER set to reader (NULL: unset);
 * its status, and its stderr in err. */
static int convert(const char *rheap, const char *rip, const char *out, const char *reader,
                   char *err, size_t errlen)
{
    if (reader)
        setenv("RHEAP_CONVERT_READER", reader, 1);
    else
        unsetenv("RHEAP_CONVERT_READER");
    char *argv[] = {(char *)rheap, "convert", "-q", "--no-progress", "-f", (char *)rip, "-o",
                    (char *)out, NULL};
    unlink(out);
    int rc = tgen_run(argv, err, errlen);
    unsetenv("RHEAP_CONVERT_READER");
    return rc;
}

static uint64_t file_size(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (uint64_t)sb.st_size : 0;
}

static int64_t meta(sqlite3 *db, const char *key)
{
    return tgen_int(db, "SELECT value FROM meta WHERE key = '%s'", key);
}

/* The recording converted one way and the other: the same status, the same messages and, when
 * a database was written, the same database (returned, or NULL when none was written). */
static char *both_ways(const char *rheap, const char *rip, const char *dir, int status)
{
    static char err1[65536], err2[65536];
    char one[1100], two[1100];
    snprintf(one, sizeof one, "%s/one.db", dir);
    snprintf(two, sizeof two, "%s/two.db", dir);
    CHECK_INT(convert(rheap, rip, one, "0", err1, sizeof err1), status);
    CHECK_INT(convert(rheap, rip, two, "1", err2, sizeof err2), status);
    if (strcmp(err1, err2))
        fprintf(stderr, "one thread said:\n%s\ntwo threads said:\n%s\n", err1, err2);
    CHECK(strcmp(err1, err2) == 0);
    int written = access(one, F_OK) == 0;
    CHECK_INT(access(two, F_OK) == 0, written);
    if (!written)
        return NULL;
    char *x = tgen_dump_tables(one), *y = tgen_dump_tables(two);
    if (strcmp(x, y))
        tgen_first_difference("one thread against two", x, y);
    CHECK(strcmp(x, y) == 0);
    free(y);
    return x;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: convert_reader RHEAP DIR\n");
        return 2;
    }
    const char *rheap = argv[1];
    site_x();
    site_y();
    site_z();
    site_pool();
    char dir[1024], rip[1100], db_auto[1100], tfile[1200];
    snprintf(dir, sizeof dir, "%s/reader", argv[2]);
    tgen_fresh_dir(dir);
    snprintf(rip, sizeof rip, "%s/rip-%d", dir, PID);
    snprintf(db_auto, sizeof db_auto, "%s/auto.db", dir);
    model_t m;
    write_recording(rip, 0, &m);

    /* Big enough for a reading thread of its own (the converter's threshold is 1 MiB). */
    uint64_t bytes = 0;
    const char *files[] = {"t7100.rip", "t7101.rip", "t7102.rip"};
    for (int k = 0; k < 3; k++) {
        snprintf(tfile, sizeof tfile, "%s/%s", rip, files[k]);
        bytes += file_size(tfile);
    }
    fprintf(stderr, "thread files: %llu bytes\n", (unsigned long long)bytes);
    CHECK(bytes >= (1u << 20));

    char *ref = both_ways(rheap, rip, dir, 0);
    static char err[65536];
    CHECK_INT(convert(rheap, rip, db_auto, NULL, err, sizeof err), 0);
    char *z = tgen_dump_tables(db_auto);
    if (ref && strcmp(ref, z))
        tgen_first_difference("one thread against the size's choice", ref, z);
    CHECK(ref && strcmp(ref, z) == 0);
    free(z);
    free(ref);

    sqlite3 *db = tgen_db_open(db_auto);
    CHECK_INT(meta(db, "events"), m.events);
    CHECK_INT(meta(db, "allocations"), m.rows);
    CHECK_INT(meta(db, "never_freed"), m.leaked);
    CHECK_INT(meta(db, "unmatched_frees"), m.unmatched);
    CHECK_INT(meta(db, "reused_live"), m.reused);
    CHECK_INT(meta(db, "null_allocations"), m.nulls);
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM allocations"), m.rows);
    CHECK_INT(tgen_int(db, "SELECT sum(size) FROM allocations WHERE dealloc_after IS NULL"),
              m.leaked_bytes);
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM markers"), m.markers);
    /* Each realloc's row names the row of the block it moved, freed when it was released,
     * before B's block at the same address. */
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM allocations n JOIN allocations o "
                           "ON o.id = n.realloc_of WHERE n.addr >= %lld AND n.addr < %lld "
                           "AND o.dealloc_after < n.alloc_after AND o.addr = n.addr - %lld",
                       (long long)Y_BASE, (long long)M_BASE, (long long)(Y_BASE - X_BASE)),
              STEPS / 4);
    /* B's block between the two halves of each realloc, at the released address. */
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM allocations WHERE size = 4000 AND "
                           "dealloc_thread = alloc_thread"),
              STEPS / 4);
    CHECK_INT(tgen_int(db, "SELECT count(*) FROM pools"), (STEPS + 989) / 1000);
    sqlite3_close(db);

    /* A value that means nothing is refused before anything is read. */
    CHECK_INT(convert(rheap, rip, db_auto, "2", err, sizeof err), 1);
    CHECK(strstr(err, "RHEAP_CONVERT_READER=2: expected 0 (one thread), 1 (a reading thread "
                      "for every recording) or auto") != NULL);

    /* B's file cut in its middle: a warning, its blocks before the cut converted. */
    snprintf(tfile, sizeof tfile, "%s/t7101.rip", rip);
    uint64_t bsize = file_size(tfile);
    CHECK(truncate(tfile, (off_t)(bsize / 2)) == 0);
    char *cut = both_ways(rheap, rip, dir, 3);
    CHECK(cut != NULL);
    free(cut);

    /* A byte of A's file flipped in its middle: an error, nothing written. */
    write_recording(rip, 0, &m);
    snprintf(tfile, sizeof tfile, "%s/t7100.rip", rip);
    int fd = open(tfile, O_RDWR);
    unsigned char byte = 0;
    off_t at = (off_t)(file_size(tfile) / 2);
    if (fd < 0 || pread(fd, &byte, 1, at) != 1) {
        perror(tfile);
        return 99;
    }
    byte ^= 0x10;
    CHECK(pwrite(fd, &byte, 1, at) == 1);
    close(fd);
    CHECK(both_ways(rheap, rip, dir, 2) == NULL);

    /* A stack never defined, named halfway: an error, nothing written. */
    write_recording(rip, STEPS / 2, &m);
    CHECK(both_ways(rheap, rip, dir, 2) == NULL);

    return check_failures ? 1 : 0;
}
