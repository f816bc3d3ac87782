/*
 * exit_static: leaves through exit() from a nested call. Memory is freed after main by, in
 * order, an atexit handler (4 x 4004 bytes), a C++ static object's destructor (6 x 6006) and
 * an ELF destructor (3 x 3003). The recorder must record those late frees, so none of these
 * blocks may be live at the end of the recording.
 */
#include "progs.h"

PROGS_SINK_DEFINITION;

static void *late_c[3];
static void *by_atexit[4];

struct Holder {
    void *blocks[6];
    Holder()
    {
        for (void *&b : blocks)
            b = malloc(6006);
    }
    ~Holder()
    {
        for (void *b : blocks)
            free(b);
    }
};
static Holder holder;

__attribute__((destructor)) static void free_late(void)
{
    for (void *b : late_c)
        free(b);
}

static void free_at_exit(void)
{
    for (void *b : by_atexit)
        free(b);
}

__attribute__((noinline)) static void leave(int code)
{
    exit(code);
}

int main()
{
    for (void *&b : late_c)
        b = malloc(3003);
    for (void *&b : by_atexit)
        b = malloc(4004);
    atexit(free_at_exit);
    SINK(holder.blocks[0]);
    say("allocated 6x6006 3x3003 4x4004\n");
    leave(0);
}
