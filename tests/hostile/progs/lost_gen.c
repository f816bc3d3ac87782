/*
 * lost_gen: writes recordings that claim lost-event counts no process can make, with the real
 * writer, for hostile.lost_counts.
 *
 *   lost_gen DIR   writes DIR/rip-77 (thread 1: 10 mallocs and a lost count of 2^63; thread 2:
 *                  10 mallocs and a lost count of 5), DIR/rip-78 (thread 1: 2^64 - 1) and
 *                  DIR/rip-79 (thread 1: 1,000 and 2,000)
 */
#include <stdio.h>
#include <stdlib.h>

#include "tgen.h"

static tgen_stack_t st;

static void thread_file(const char *rec, uint32_t pid, uint32_t tid, const uint64_t *lost, int n)
{
    char name[32];
    snprintf(name, sizeof name, "t%u.rip", tid);
    rip_header_t h = tgen_thread_header(pid, tid, tid, 5000);
    tgen_file_t f;
    tgen_open(&f, rec, name, &h);
    tgen_modules(&f, 0);
    rip_writer_stack(f.w, 1, st.ips, st.depth);
    for (int i = 0; i < 10; i++)
        rip_writer_alloc(f.w, RIP_CALL_MALLOC, 1 + i, 0x1000 + 16 * i, 8, 1, 0, 0, 0);
    for (int i = 0; i < n; i++)
        rip_writer_lost(f.w, 20 + i, lost[i], "crafted");
    tgen_close(&f);
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    tgen_capture(&st);
    char rec[4096];
    uint64_t big[] = {(uint64_t)1 << 63}, five[] = {5}, max[] = {UINT64_MAX},
             small[] = {1000, 2000};
    snprintf(rec, sizeof rec, "%s/rip-77", argv[1]);
    tgen_fresh_dir(rec);
    tgen_process(rec, 77, 1, 5000, 1, 100);
    thread_file(rec, 77, 1, big, 1);
    thread_file(rec, 77, 2, five, 1);
    snprintf(rec, sizeof rec, "%s/rip-78", argv[1]);
    tgen_fresh_dir(rec);
    tgen_process(rec, 78, 1, 5000, 1, 100);
    thread_file(rec, 78, 1, max, 1);
    snprintf(rec, sizeof rec, "%s/rip-79", argv[1]);
    tgen_fresh_dir(rec);
    tgen_process(rec, 79, 1, 5000, 1, 100);
    thread_file(rec, 79, 1, small, 2);
    return 0;
}
