/*
 * headroom WHERE BYTES: allocates with only BYTES of stack left below the caller, on the main
 * thread (WHERE = main: RLIMIT_STACK is lowered so that the [stack] mapping may grow to just
 * BYTES below the point of the call, which the recorder has not seen yet) or as the first call
 * of a thread on a stack of its own with a guard page below (WHERE = thread). Overflowing the
 * stack is a SIGSEGV. Prints the allocations it made: 3 of 3333 bytes, all freed.
 */
#include "progs.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/resource.h>

PROGS_SINK_DEFINITION;

static size_t headroom;
static uintptr_t floor_addr; /* the lowest usable stack address */

static __attribute__((noinline)) void allocate(void)
{
    for (int i = 0; i < 3; i++) {
        void *p = malloc(3333);
        SINK(p);
        free(p);
    }
}

/* Uses the stack down to floor_addr + headroom, then allocates. */
static __attribute__((noinline)) void descend(void)
{
    uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
    size_t take = sp - floor_addr - headroom;
    volatile char pad[take];
    pad[0] = 0;
    pad[take - 1] = 0;
    allocate();
    SINK(pad);
}

/* The end of the [stack] mapping, from /proc/self/maps, read without allocating. */
static uintptr_t stack_top(void)
{
    static char buf[1 << 16];
    int fd = open("/proc/self/maps", O_RDONLY);
    size_t have = 0;
    ssize_t n;
    while (fd >= 0 && have < sizeof buf - 1 && (n = read(fd, buf + have, sizeof buf - 1 - have)) > 0)
        have += (size_t)n;
    close(fd);
    buf[have] = 0;
    char *s = strstr(buf, "[stack]");
    if (!s)
        return 0;
    while (s > buf && s[-1] != '\n')
        s--;
    char *dash = strchr(s, '-');
    return dash ? (uintptr_t)strtoull(dash + 1, NULL, 16) : 0;
}

static void *thread_main(void *arg)
{
    (void)arg;
    descend();
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    headroom = (size_t)atol(argv[2]);
    if (strcmp(argv[1], "main") == 0) {
        uintptr_t top = stack_top();
        uintptr_t here = (uintptr_t)__builtin_frame_address(0);
        struct rlimit rl;
        if (!top || getrlimit(RLIMIT_STACK, &rl) != 0)
            return 1;
        size_t page = (size_t)sysconf(_SC_PAGESIZE);
        rl.rlim_cur = ((top - here) / page + 64) * page; /* the mapping grows by whole pages */
        if (setrlimit(RLIMIT_STACK, &rl) != 0)
            return 1;
        floor_addr = top - rl.rlim_cur;
        descend();
    } else {
        size_t page = (size_t)sysconf(_SC_PAGESIZE), size = 128 * 1024;
        char *mem = mmap(NULL, page + size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (mem == MAP_FAILED || mprotect(mem, page, PROT_NONE) != 0)
            return 1;
        floor_addr = (uintptr_t)mem + page;
        pthread_attr_t attr;
        pthread_t t;
        pthread_attr_init(&attr);
        if (pthread_attr_setstack(&attr, mem + page, size) != 0 ||
            pthread_create(&t, &attr, thread_main, NULL) != 0)
            return 1;
        pthread_join(t, NULL);
    }
    say("done\nexpect 3 3333\n");
    return 0;
}
