/*
 * dlopen_cxx: a C program that loads a C++ library (argv[1]) with RTLD_LOCAL, as binutils' ar
 * and ld load the LLVM gold plugin, and lets it allocate with operator new between the markers
 * "begin" and "end". libstdc++ is then out of the global scope, and the recorder cannot find
 * the real operators by dlsym(RTLD_NEXT): it must still serve and record every call, not fail
 * it (a crash of the program).
 */
#include "progs.h"

#include <dlfcn.h>

PROGS_SINK_DEFINITION;

int main(int argc, char **argv)
{
    if (argc != 2) {
        say("usage: dlopen_cxx LIBRARY\n");
        return 2;
    }
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        say("dlopen failed: %s\n", dlerror());
        return 1;
    }
    int (*work)(int) = (int (*)(int))dlsym(lib, "dso_cxx_work");
    if (!work)
        return 1;
    enum { COUNT = 20 };
    progs_mark("begin");
    if (work(COUNT) != COUNT)
        return 1;
    progs_mark("end");

    say("expect-list thread tid=%d\n", (int)gettid());
    for (int i = 0; i < COUNT; i++)
        say("expect-list alloc call=operator new[] size=%d in=libtracer_dso_cxx.so\n", 3000 + i);
    say("expect-list alloc call=operator new size=256 align=64 in=libtracer_dso_cxx.so\n");
    say("expect-list alloc call=operator new size=%zu in=libtracer_dso_cxx.so\n", sizeof(int));
    say("expect-list free of=operator new:%zu\n", sizeof(int));
    say("expect-list free of=operator new:256\n");
    for (int i = COUNT - 1; i >= 0; i--)
        say("expect-list free of=operator new[]:%d\n", 3000 + i);
    return 0;
}
