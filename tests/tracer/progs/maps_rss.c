/*
 * maps_rss.c: a program whose own anonymous mappings and resident memory are known.
 *
 *   a: 64 pages mapped, 48 of them touched, then pages 16-23 unmapped (a hole in the middle):
 *      the mapping becomes two pieces, pages 0-15 and 24-63, both leaked
 *   b: 4 pages mapped, grown with mremap to 32 pages (it may move), then all unmapped
 *   c: 8 pages mapped and unmapped whole
 *   a file mapping of 2 pages and its unmap, which are not the program's anonymous memory
 *   a malloc of 8 MiB, which an allocator serves with a mapping of its own (not the program's)
 *
 * Between the steps it sleeps past the sampling interval and allocates, so that the recorder
 * takes a sample of resident memory just before the touching (after the mapping of a) and just
 * after it. It prints what the test expects, as "expect-NAME value" lines.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* Longer than the test's RHEAP_RSS_MS, so the next event takes a sample. */
static void pause_and_allocate(void) {
    struct timespec ts = {0, 30 * 1000 * 1000};
    nanosleep(&ts, NULL);
    free(malloc(16));
}

int main(void) {
    long page = sysconf(_SC_PAGESIZE);
    pause_and_allocate();
    char *a = mmap(NULL, 64 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (a == MAP_FAILED)
        return 1;
    pause_and_allocate(); /* a sample with a mapped, untouched */
    memset(a, 1, 48 * page);
    pause_and_allocate(); /* a sample with 48 pages more resident */
    if (munmap(a + 16 * page, 8 * page) != 0)
        return 1;

    char *b = mmap(NULL, 4 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (b == MAP_FAILED)
        return 1;
    char *b2 = mremap(b, 4 * page, 32 * page, MREMAP_MAYMOVE);
    if (b2 == MAP_FAILED)
        return 1;
    b2[31 * page] = 1;
    if (munmap(b2, 32 * page) != 0)
        return 1;

    char *c = mmap(NULL, 8 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (c == MAP_FAILED || munmap(c, 8 * page) != 0)
        return 1;

    int fd = open("/proc/self/exe", O_RDONLY);
    void *f = fd >= 0 ? mmap(NULL, 2 * page, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
    if (f == MAP_FAILED || munmap(f, 2 * page) != 0)
        return 1;
    close(fd);
    char *big = malloc(8 << 20);
    if (!big)
        return 1;
    memset(big, 2, 8 << 20);
    free(big);
    pause_and_allocate();

    printf("expect-page %ld\n", page);
    /* rows under mmap: a whole, its two pieces, b, c; under mremap: b grown */
    printf("expect-mmap %ld|%ld|%ld|%ld|%ld\n", 64 * page, 16 * page, 40 * page, 4 * page,
           8 * page);
    printf("expect-leaked %ld\n", 56 * page);
    printf("expect-a %p\n", (void *)a);
    printf("expect-pieces %p|%ld|%p|%ld\n", (void *)a, 16 * page, (void *)(a + 24 * page),
           40 * page);
    printf("expect-mremap %p|%ld|%p\n", (void *)b2, 32 * page, (void *)b);
    printf("expect-touched %ld\n", 48 * page);
    /* calls that mapped (a, b, its remap, c); most mapped at once: a's 56 pages and b's 32 */
    printf("expect-maps 4\n");
    printf("expect-map-peak %ld\n", 88 * page);
    return 0;
}
