/*
 * dlopen_alloc: loads the library given as argv[1] with dlopen, after start-up, and lets it
 * allocate through the allocator it carries (plug_je_work: 100 blocks), keeping it loaded until
 * exit; then one malloc of its own, which is recorded. librheap cannot hook an allocator that
 * arrives this way and must say so when the recording ends.
 */
#include "progs.h"

#include <dlfcn.h>

PROGS_SINK_DEFINITION;

int main(int argc, char **argv)
{
    if (argc != 2) {
        say("usage: dlopen_alloc LIBRARY\n");
        return 2;
    }
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        say("dlopen failed: %s\n", dlerror());
        return 1;
    }
    int (*work)(int) = (int (*)(int))dlsym(lib, "plug_je_work");
    if (!work || work(100) != 100)
        return 1;
    void *p = malloc(4567);
    SINK(p);
    free(p);
    return 0;
}
