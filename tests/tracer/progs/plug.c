/*
 * plug: built twice, as libtracer_plug_a.so (PLUG = plug_a) and libtracer_plug_b.so (PLUG =
 * plug_b). The two have the same size and layout, so the loader puts the second where the first
 * was after a dlclose, and their allocation sites have the same addresses.
 */
#include <stdlib.h>

__attribute__((visibility("default"), noinline)) void *PLUG(size_t size)
{
    return malloc(size);
}
