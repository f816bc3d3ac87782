/*
 * gen_golden.c: writes the golden files of the current format version, v<major>.<minor>-thread.rip
 * and v<major>.<minor>-process.rip (v3.6-*.rip today), into the directory given as argument.
 * Each version's files are generated once, when that version is new, and kept in tests/data/
 * unchanged, so that the golden test proves later readers still read files of every version.
 * Never regenerate the files of an older version: this program only writes the current one.
 *
 * The v1.0 files came from this program at format 1.0: the same records, less the ones marked
 * "since 2.0" below, with times in ns (1.0 has no time_shift). The 2.0 headers set time_shift 2,
 * so times not a multiple of 4 ns come back rounded down, and the records include addresses
 * whose deltas are not multiples of 16 (stored in bytes) beside ones that are (stored in 16-byte
 * units), and addresses an earlier event of the same block had (stored as the distance back to
 * it): the reallocarray to the first malloc's address, the free of the 8-aligned block just
 * allocated, the free of the first realloc's block, and in the second block the free of the
 * valloc block and the allocation that reuses its address just after. The free of the first
 * malloc's address in the second block is a delta: references do not cross blocks.
 *
 * Since 3.0 the thread file starts with its staging area (the 2.0 records are written the same
 * way, after it), and records written after the last flush stay staged: a malloc, a realloc of
 * it, a reference to an address of the staged block, a free and a marker, as a process that
 * died would leave them. The process file has no staging area.
 *
 * Since 3.1 the second block also holds allocations of calls named by a call record (0x46), and
 * the process file an unseen record (0x55). Since 3.3 it also holds calls 33 and later: a
 * mi_heap_malloc aligned to 128, a mi_heap_realloc of it and a mi_strdup. Since 3.4 it also holds
 * pool records (0x47): a pool created, two blocks allocated out of it (the first at the address
 * of the mi_strdup block), one of them freed, and the pool destroyed. Since 3.6 it also holds an
 * rss record (0x48) and map records (0x49): 16 pages mapped, 4 of them unmapped in the middle,
 * the first 4 remapped to 8 pages elsewhere.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "rip.h"

static void ok(rip_status_t st)
{
    if (st != RIP_OK) {
        fprintf(stderr, "gen_golden: %s\n", rip_strerror(st));
        exit(1);
    }
}

static rip_writer_t *start(const char *dir, const char *kind, const rip_header_t *h, int *fd,
                           int staged)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/v%d.%d-%s.rip", dir, RIP_FORMAT_MAJOR, RIP_FORMAT_MINOR, kind);
    *fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (*fd < 0) {
        perror(path);
        exit(1);
    }
    if (!staged) {
        void *mem = aligned_alloc(16, (rip_writer_footprint(64 << 10) + 15) & ~(size_t)15);
        return rip_writer_init(mem, 64 << 10, *fd, h);
    }
    size_t size = rip_stage_size(64 << 10);
    void *stage = MAP_FAILED;
    if (ftruncate(*fd, (off_t)size) == 0)
        stage = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
    if (stage == MAP_FAILED) {
        perror("staging area");
        exit(1);
    }
    void *mem = aligned_alloc(16, (rip_writer_footprint_staged(64 << 10) + 15) & ~(size_t)15);
    return rip_writer_init_staged(mem, 64 << 10, *fd, h, stage);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: gen_golden DIR\n");
        return 2;
    }
    int fd;
    rip_header_t h = {0, 0, 0, 4711, 4713, 1, 2, 987654321000ull, 2, 0, 0};
    rip_writer_t *w = start(argv[1], "thread", &h, &fd, 1);
    rip_segment_t exe_segs[2] = {{0x55d0c0000000ull, 0x1000, 4}, {0x55d0c0001000ull, 0x2f00, 5}};
    rip_segment_t libc_segs[3] = {{0x7f1234500000ull, 0x26000, 4}, {0x7f1234526000ull, 0x155000, 5},
                                  {0x7f12346a0000ull, 0x8000, 6}};
    ok(rip_writer_thread_name(w, 100, "worker 1"));
    ok(rip_writer_modules(w, 120, 2));
    ok(rip_writer_module(w, 0x55d0c0000000ull, "/usr/bin/demo", "\x8a\x1f\x00\x42\xfe", 5, exe_segs, 2));
    ok(rip_writer_module(w, 0x7f1234500000ull, "/lib/x86_64-linux-gnu/libc.so.6", "", 0, libc_segs, 3));
    uint64_t s1[3] = {0x55d0c0001234ull, 0x55d0c0001100ull, 0x7f123452724aull};
    uint64_t s2[1] = {0x55d0c0001300ull};
    ok(rip_writer_stack(w, 1, s1, 3));
    ok(rip_writer_stack(w, 2, s2, 1));
    ok(rip_writer_alloc(w, RIP_CALL_MALLOC, 1000, 0x55d0c1000010ull, 16, 1, 0, 0, 0));
    ok(rip_writer_alloc(w, RIP_CALL_CALLOC, 1010, 0x55d0c1000030ull, 400, 2, 0, 0, 0));
    ok(rip_writer_alloc(w, RIP_CALL_REALLOC, 1030, 0x55d0c1000500ull, 800, 1, 0, 0x55d0c1000030ull, 1020));
    ok(rip_writer_alloc(w, RIP_CALL_REALLOC, 1040, 0x55d0c1000900ull, 24, 1, 0, 0, 0));
    ok(rip_writer_alloc(w, RIP_CALL_REALLOCARRAY, 1050, 0x55d0c1000010ull, 64, 2, 0, 0x55d0c1000900ull, 1049));
    /* Since 2.0: an 8-aligned block, as an allocator with 8-byte granules returns, and its
     * free; the free after it is aligned but its delta from the odd base is not. */
    ok(rip_writer_alloc(w, RIP_CALL_MALLOC, 1053, 0x55d0c1000a08ull, 8, 1, 0, 0, 0));
    ok(rip_writer_free(w, 1055, 0x55d0c1000a08ull));
    ok(rip_writer_free(w, 1060, 0x55d0c1000500ull));
    ok(rip_writer_mark(w, 1070, "phase two"));
    /* A new block: the delta bases start again from 0. */
    ok(rip_writer_flush(w));
    ok(rip_writer_alloc(w, RIP_CALL_POSIX_MEMALIGN, 2000, 0x7f1200000040ull, 100, 0, 64, 0, 0));
    ok(rip_writer_alloc(w, RIP_CALL_ALIGNED_ALLOC, 2001, 0x7f1200001000ull, 4096, 1, 4096, 0, 0));
    ok(rip_writer_alloc(w, RIP_CALL_MEMALIGN, 2002, 0x7f1200000800ull, 1, 2, 256, 0, 0));
    ok(rip_writer_alloc(w, RIP_CALL_VALLOC, 2003, 0x7f1200004000ull, 10, 1, 4096, 0, 0));
    ok(rip_writer_alloc(w, RIP_CALL_PVALLOC, 2004, 0x7f1200008000ull, 4096, 1, 4096, 0, 0));
    /* Since 2.0: a realloc that moves the memalign block to an 8-aligned address. */
    ok(rip_writer_alloc(w, RIP_CALL_REALLOC, 2005, 0x7f1200009008ull, 5, 0, 0, 0x7f1200000800ull, 2003));
    ok(rip_writer_free(w, 2005, 0x55d0c1000010ull));
    /* Since 2.0: the valloc block freed and its address reused at once. */
    ok(rip_writer_free(w, 2006, 0x7f1200004000ull));
    ok(rip_writer_alloc(w, RIP_CALL_MALLOC, 2006, 0x7f1200004000ull, 48, 2, 0, 0, 0));
    ok(rip_writer_free(w, 2006, 0));
    ok(rip_writer_lost(w, 2007, 3, "thread table full"));
    /* Since 3.1: calls named by a call record: operator new, an aligned operator new[],
     * jemalloc's mallocx with an alignment, its rallocx moving that block and xallocx growing it
     * in place, and the free of the operator new block. */
    ok(rip_writer_alloc(w, RIP_CALL_NEW, 2008, 0x55d0c2000000ull, 24, 1, 0, 0, 0));
    ok(rip_writer_alloc(w, RIP_CALL_NEW_ARRAY, 2009, 0x55d0c2000040ull, 256, 2, 64, 0, 0));
    ok(rip_writer_alloc(w, RIP_CALL_MALLOCX, 2010, 0x55d0c2001000ull, 100, 1, 4096, 0, 0));
    ok(rip_writer_alloc(w, RIP_CALL_RALLOCX, 2011, 0x55d0c2002000ull, 200, 1, 0, 0x55d0c2001000ull, 2010));
    ok(rip_writer_alloc(w, RIP_CALL_XALLOCX, 2012, 0x55d0c2002000ull, 300, 1, 0, 0x55d0c2002000ull, 2012));
    ok(rip_writer_free(w, 2013, 0x55d0c2000000ull));
    /* Since 3.3: mimalloc's per-heap and string calls. */
    ok(rip_writer_alloc(w, RIP_CALL_MI_HEAP_MALLOC, 2014, 0x55d0c2003000ull, 40, 1, 128, 0, 0));
    ok(rip_writer_alloc(w, RIP_CALL_MI_HEAP_REALLOC, 2015, 0x55d0c2004000ull, 400, 2, 0, 0x55d0c2003000ull, 2014));
    ok(rip_writer_alloc(w, RIP_CALL_MI_STRDUP, 2016, 0x55d0c2000100ull, 6, 1, 0, 0, 0));
    /* Since 3.4: a program's own pool. */
    ok(rip_writer_pool(w, RIP_POOL_CREATE, 2017, 0x55d0c2000100ull, 0, 0, 0, "frames"));
    ok(rip_writer_pool(w, RIP_POOL_ALLOC, 2018, 0x55d0c2000100ull, 0x55d0c2000100ull, 32, 1, NULL));
    ok(rip_writer_pool(w, RIP_POOL_ALLOC, 2019, 0x55d0c2000100ull, 0x55d0c2000120ull, 48, 2, NULL));
    ok(rip_writer_pool(w, RIP_POOL_FREE, 2020, 0x55d0c2000100ull, 0x55d0c2000120ull, 0, 0, NULL));
    ok(rip_writer_pool(w, RIP_POOL_DESTROY, 2021, 0x55d0c2000100ull, 0, 0, 0, NULL));
    /* Since 3.6: resident memory, and the program's own anonymous mappings. */
    ok(rip_writer_rss(w, 2022, 5 << 20, 3 << 20, 2 << 20, 4096));
    ok(rip_writer_map(w, RIP_MAP_MAP, 2023, 0x7f1300000000ull, 65536, 1, 0, 0));
    ok(rip_writer_map(w, RIP_MAP_UNMAP, 2024, 0x7f1300004000ull, 16384, 0, 0, 0));
    ok(rip_writer_map(w, RIP_MAP_REMAP, 2025, 0x7f1400000000ull, 32768, 2, 0x7f1300000000ull, 16384));
    ok(rip_writer_flush(w));
    /* Since 3.0: staged, never flushed. */
    ok(rip_writer_alloc(w, RIP_CALL_MALLOC, 3000, 0x7f1200010010ull, 32, 1, 0, 0, 0));
    ok(rip_writer_alloc(w, RIP_CALL_REALLOC, 3004, 0x7f1200020000ull, 64, 2, 0, 0x7f1200010010ull, 3002));
    ok(rip_writer_free(w, 3008, 0x7f1200020000ull));
    ok(rip_writer_free(w, 3012, 0x7f1200009008ull));
    ok(rip_writer_mark(w, 3016, "staged"));
    close(fd);

    rip_header_t p = {1, 0, 0, 4711, 0, 1, 0, 987654321000ull, 2, 0, 0};
    w = start(argv[1], "process", &p, &fd, 0);
    const char *args[] = {"./demo", "--size", "16", "two words"};
    ok(rip_writer_process(w, 4700, "/usr/bin/demo", 4, args, 1700000000000000000ull, "monotonic", 4096));
    ok(rip_writer_config(w, 64, 1000000, 1024, 4096, 12, "/tmp"));
    /* Since 3.1: an allocator the tracer found and did not record. */
    ok(rip_writer_unseen(w, "jemalloc", "/usr/bin/demo", "_rjem_mallocx"));
    ok(rip_writer_on(w, 0, "env"));
    ok(rip_writer_off(w, 3000, "exit"));
    ok(rip_writer_flush(w));
    close(fd);
    return 0;
}
