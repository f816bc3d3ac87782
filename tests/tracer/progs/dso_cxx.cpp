/*
 * dso_cxx: a C++ library for the dlopen_cxx test. The program that loads it is C, so libstdc++
 * comes in with this library alone, in its local scope, where librheap's dlsym(RTLD_NEXT) does
 * not see it; its operator new and delete calls still reach librheap (first in the global
 * scope). dso_cxx_work makes a known set of them, whose innermost frame is in this library.
 */
#include <cstddef>
#include <new>

struct alignas(64) Wide {
    char bytes[256];
};

/* Allocates `count` arrays of 3000 + i bytes, then one aligned and one nothrow block, and frees
 * them all in reverse order. Visible: the test program finds it with dlsym. */
extern "C" __attribute__((visibility("default"))) int dso_cxx_work(int count)
{
    char *blocks[64];
    if (count > 64)
        return -1;
    for (int i = 0; i < count; i++) {
        blocks[i] = new char[3000 + (std::size_t)i];
        blocks[i][0] = (char)i;
    }
    Wide *w = new Wide;
    w->bytes[0] = 1;
    int *q = new (std::nothrow) int(7);
    if (!q)
        return -1;
    delete q;
    delete w;
    for (int i = count - 1; i >= 0; i--)
        delete[] blocks[i];
    return count;
}
