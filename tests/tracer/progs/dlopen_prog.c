/*
 * dlopen_prog: loads the test library given as argv[1], lets it allocate between the markers
 * "begin" and "end", and unloads it; then loads and unloads it once more. The allocations must
 * be attributed to the library (their innermost frame is in it), and dlclose, which frees
 * while holding the loader lock, must not deadlock the recorder.
 */
#include "progs.h"

#include <dlfcn.h>

PROGS_SINK_DEFINITION;

int main(int argc, char **argv)
{
    if (argc != 2) {
        say("usage: dlopen_prog LIBRARY\n");
        return 2;
    }
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        say("dlopen failed: %s\n", dlerror());
        return 1;
    }
    int (*work)(int) = (int (*)(int))dlsym(lib, "dso_work");
    if (!work)
        return 1;
    enum { COUNT = 50 };
    progs_mark("begin");
    if (work(COUNT) != COUNT)
        return 1;
    progs_mark("end");
    dlclose(lib);

    /* The second round is only for the recorder's module tracking and lock order. */
    lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return 1;
    work = (int (*)(int))dlsym(lib, "dso_work");
    if (!work || work(5) != 5)
        return 1;
    dlclose(lib);

    say("expect-list thread tid=%d\n", (int)gettid());
    say("expect-list alloc call=calloc size=%zu in=libtracer_dso.so\n", COUNT * sizeof(void *));
    for (int i = 0; i < COUNT; i++)
        say("expect-list alloc call=malloc size=%d in=libtracer_dso.so\n", 2000 + i);
    for (int i = COUNT - 1; i >= 0; i--)
        say("expect-list free of=malloc:%d\n", 2000 + i);
    say("expect-list free of=calloc:%zu\n", COUNT * sizeof(void *));
    return 0;
}
