/*
 * bench_gen.c: writes a large synthetic recording for bench/convert-bench.sh.
 * Usage: convert_bench_gen DIR THREADS EVENTS [HELD]
 *
 * HELD (default 0) blocks are allocated first, spread over the threads, and never freed: a big
 * heap of small objects (16-127 bytes, from 64 stacks) that stays live under the churn that
 * follows, as a cache or an index does. EVENTS counts the churn only; the recording holds
 * HELD + EVENTS events.
 *
 * Each thread allocates into a window of live blocks and frees the oldest ones, with some
 * reallocs, some blocks freed by another thread and a few leaks; its stacks are real stacks of
 * this program with one varied frame, so the converter symbolizes real code. Times interleave
 * the threads so the merge has real work to do. Times are multiples of 4 ns, as the tracer's
 * clock gives them (the converter keeps times in 4 ns units).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tgen.h"

#define WINDOW 4096
#define NSTACKS 2000

static tgen_stack_t base_stack;

__attribute__((noinline)) static void site(void)
{
    tgen_capture(&base_stack);
}

int main(int argc, char **argv)
{
    if (argc != 4 && argc != 5) {
        fprintf(stderr, "usage: %s DIR THREADS EVENTS [HELD]\n", argv[0]);
        return 2;
    }
    const char *dir = argv[1];
    int nthreads = atoi(argv[2]);
    uint64_t nevents = strtoull(argv[3], NULL, 10);
    uint64_t nheld = argc > 4 ? strtoull(argv[4], NULL, 10) : 0;
    if (nthreads < 1 || nthreads > 255) {
        fprintf(stderr, "%s: THREADS must be 1 to 255\n", argv[0]);
        return 2;
    }
    site();
    tgen_fresh_dir(dir);
    uint64_t per = nevents / (uint64_t)nthreads, held = nheld / (uint64_t)nthreads;
    /* Recording ends (an "off" record) after the last event: a recording without an end
     * converts with a warning, and the benchmark wants status 0. */
    tgen_process(dir, 9999, 1, 1, 1, (nheld + nevents + (uint64_t)nthreads + 1) * 4);
    uint64_t text_lo = base_stack.ips[0] & ~0xfffull;
    for (int th = 0; th < nthreads; th++) {
        char name[64];
        snprintf(name, sizeof name, "t%d.rip", 10000 + th);
        rip_header_t h = tgen_thread_header(9999, 10000 + th, th + 1, 1);
        tgen_file_t f;
        void *mem;
        (void)mem;
        tgen_open(&f, dir, name, &h);
        tgen_modules(&f, 0);
        for (int s = 1; s <= NSTACKS; s++) {
            tgen_stack_t st = base_stack;
            /* Frame 1 varies over the program's code: distinct stacks, real symbols. */
            st.ips[1] = text_lo + (uint64_t)(s * 37 % 4096) + 1;
            rip_writer_stack(f.w, (uint64_t)s, st.ips, st.depth);
        }
        uint64_t base = 0x100000000ull * (uint64_t)(th + 1);
        uint64_t live[WINDOW];
        memset(live, 0, sizeof live);
        uint64_t next = 0, seed = 12345u + (uint64_t)th;
        /* The held heap: its own address range per thread, above every churn address. */
        uint64_t hbase = (1ull << 44) + ((uint64_t)th << 38);
        for (uint64_t i = 0; i < held; i++) {
            uint64_t t = (i * (uint64_t)nthreads + (uint64_t)th) * 4;
            uint64_t size = 16 + (i * 7) % 112;
            if (rip_writer_alloc(f.w, RIP_CALL_MALLOC, t, hbase + i * 128, size, 1 + i % 64, 0,
                                 0, 0) != RIP_OK)
                return 1;
        }
        for (uint64_t e = 0; e < per;) {
            uint64_t t = ((held + e) * (uint64_t)nthreads + (uint64_t)th) * 4;
            size_t slot = next % WINDOW;
            if (live[slot]) {
                if (rip_writer_free(f.w, t, live[slot]) != RIP_OK)
                    return 1;
                live[slot] = 0;
                e++;
                continue;
            }
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            uint64_t addr = base + (next % (WINDOW * 4)) * 64;
            uint64_t size = 16 + (seed >> 58) * 8;
            uint64_t stack = 1 + (seed >> 20) % NSTACKS;
            if ((seed >> 40) % 16 == 0 && slot > 0 && live[slot - 1]) {
                /* realloc of the previous block */
                uint64_t old = live[slot - 1];
                live[slot - 1] = 0;
                rip_writer_alloc(f.w, RIP_CALL_REALLOC, t, addr, size * 2, stack, 0, old, t);
            } else if ((seed >> 44) % 64 == 0) {
                rip_writer_alloc(f.w, RIP_CALL_MALLOC, t, addr + 0x80000000ull, size, stack, 0, 0, 0);
                e++;
                next++;
                continue; /* a leak: never freed */
            } else {
                rip_writer_alloc(f.w, RIP_CALL_MALLOC, t, addr, size, stack, 0, 0, 0);
            }
            live[slot] = addr;
            next++;
            e++;
        }
        tgen_close(&f);
    }
    return 0;
}
