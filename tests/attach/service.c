/*
 * service.c: a two-thread service whose every allocator call is counted in a shared mapping, so
 * a test that attaches to it knows which calls a window can hold.
 *
 *   attach_service run FILE     creates FILE (the counters), starts both threads, and runs until
 *                               FILE's stop flag is set; then checks every block it still holds
 *                               and exits 0 when none was ever found damaged, 3 otherwise
 *   attach_service read FILE    prints "allocs0 allocs1 frees0 frees1 damaged ready"
 *   attach_service stop FILE    sets the stop flag
 *
 * Each thread runs the same loop: at iteration i it frees the block it allocated at i - 8
 * (after checking its contents), then allocates i % 65536 + 1 bytes (so a recorded size names
 * the iteration) and fills them with a pattern of i. The counters are added to after each
 * call returns. -O0 -fno-builtin keep every call a call.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <fcntl.h>
#include <unistd.h>

#define RING 8

typedef struct {
    volatile uint64_t allocs[2], frees[2];
    volatile uint64_t damaged;
    volatile uint64_t ready; /* both threads have made their first iteration */
    volatile uint64_t stop;
} counters_t;

static counters_t *c;

static size_t size_of(uint64_t i)
{
    return (size_t)(i % 65536) + 1;
}

static void fill(unsigned char *p, uint64_t i)
{
    size_t n = size_of(i);
    for (size_t k = 0; k < n; k++)
        p[k] = (unsigned char)(i + k);
}

static int intact(const unsigned char *p, uint64_t i)
{
    size_t n = size_of(i);
    for (size_t k = 0; k < n; k++)
        if (p[k] != (unsigned char)(i + k))
            return 0;
    return 1;
}

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    unsigned char *ring[RING] = {0};
    uint64_t i = 0;
    for (; !c->stop; i++) {
        unsigned char *old = ring[i % RING];
        if (old) {
            if (!intact(old, i - RING))
                __atomic_add_fetch(&c->damaged, 1, __ATOMIC_RELAXED);
            free(old);
            c->frees[t]++;
        }
        unsigned char *p = malloc(size_of(i));
        if (!p)
            abort();
        c->allocs[t]++;
        fill(p, i);
        ring[i % RING] = p;
        if (i == 0)
            __atomic_add_fetch(&c->ready, 1, __ATOMIC_RELAXED);
        usleep(50);
    }
    /* The blocks still held: each checked once more, then freed. */
    for (uint64_t k = i > RING ? i - RING : 0; k < i; k++) {
        if (!intact(ring[k % RING], k))
            __atomic_add_fetch(&c->damaged, 1, __ATOMIC_RELAXED);
        free(ring[k % RING]);
    }
    return NULL;
}

static counters_t *map(const char *path, int create)
{
    int fd = open(path, create ? O_RDWR | O_CREAT | O_TRUNC : O_RDWR, 0644);
    if (fd < 0 || (create && ftruncate(fd, sizeof(counters_t)) != 0)) {
        perror(path);
        exit(2);
    }
    void *m = mmap(NULL, sizeof(counters_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED) {
        perror("mmap");
        exit(2);
    }
    return m;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: attach_service run|read|stop FILE\n");
        return 2;
    }
    if (!strcmp(argv[1], "read")) {
        c = map(argv[2], 0);
        printf("%llu %llu %llu %llu %llu %llu\n", (unsigned long long)c->allocs[0],
               (unsigned long long)c->allocs[1], (unsigned long long)c->frees[0],
               (unsigned long long)c->frees[1], (unsigned long long)c->damaged,
               (unsigned long long)c->ready);
        return 0;
    }
    if (!strcmp(argv[1], "stop")) {
        c = map(argv[2], 0);
        c->stop = 1;
        return 0;
    }
    c = map(argv[2], 1);
    pthread_t th;
    if (pthread_create(&th, NULL, worker, (void *)(intptr_t)1) != 0)
        return 2;
    worker((void *)(intptr_t)0);
    pthread_join(th, NULL);
    /* dprintf: no stdio buffer is allocated at the end, so the blocks live at exit are the
     * program's own (none). */
    dprintf(1, "allocs %llu frees %llu damaged %llu\n",
            (unsigned long long)(c->allocs[0] + c->allocs[1]),
            (unsigned long long)(c->frees[0] + c->frees[1]), (unsigned long long)c->damaged);
    return c->damaged ? 3 : 0;
}
