/*
 * dlchurn: dlopen, call and dlclose a library that allocates, CYCLES times, so the tracer sees
 * the same module come and go (frees under the loader lock, module maps changing under it).
 * Prints "expect cycles=N work_blocks=N ctor_blocks=N".
 *
 * Usage: dlchurn LIBRARY [CYCLES]   (default 300)
 */
#include "progs.h"

#include <dlfcn.h>

PROGS_SINK_DEFINITION;

int main(int argc, char **argv)
{
    if (argc < 2) {
        say("usage: dlchurn LIBRARY [CYCLES]\n");
        return 2;
    }
    int cycles = argc > 2 ? atoi(argv[2]) : 300;
    long work = 0;
    for (int i = 0; i < cycles; i++) {
        void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            say("dlopen: %s\n", dlerror());
            return 1;
        }
        int (*fn)(void) = (int (*)(void))dlsym(h, "stress_dso_work");
        if (!fn) {
            say("dlsym: %s\n", dlerror());
            return 1;
        }
        int n = fn();
        if (n < 0)
            return 1;
        work += n;
        if (dlclose(h) != 0) {
            say("dlclose: %s\n", dlerror());
            return 1;
        }
    }
    say("expect cycles=%d work_blocks=%ld ctor_blocks=%d\n", cycles, work, cycles);
    return 0;
}
