/*
 * plug_prog LIB_A LIB_B: loads LIB_A, lets its plug_a allocate 10 blocks of 1000 bytes from one
 * call site of this program, unloads it, then does the same with LIB_B and plug_b. It says
 * whether the two functions had the same address: then every return address of the two sets
 * of backtraces is the same, and only the module maps tell them apart.
 */
#include "progs.h"

#include <dlfcn.h>

PROGS_SINK_DEFINITION;

typedef void *(*plug_fn)(size_t);

static __attribute__((noinline)) void use(plug_fn plug)
{
    for (int i = 0; i < 10; i++) {
        void *p = plug(1000);
        SINK(p);
        free(p);
    }
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    const char *names[2] = {"plug_a", "plug_b"};
    void *where[2];
    for (int i = 0; i < 2; i++) {
        void *lib = dlopen(argv[1 + i], RTLD_NOW | RTLD_LOCAL);
        if (!lib)
            return 1;
        plug_fn plug = (plug_fn)dlsym(lib, names[i]);
        if (!plug)
            return 1;
        where[i] = (void *)plug;
        use(plug);
        dlclose(lib);
    }
    say("same_address=%d\n", where[0] == where[1]);
    say("expect plug_a 10\nexpect plug_b 10\n");
    return 0;
}
