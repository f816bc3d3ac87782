/*
 * alloc_map: the same C++ program built on glibc's malloc and on each replacing allocator
 * (-ljemalloc, -ltcmalloc, -lmimalloc): a std::map of 100,000 strings long enough to live on the
 * heap, built and destroyed, then 1,000 strings leaked with `new std::string` in leak_one, each
 * two blocks (the string object, allocated on the line marked LEAK, and its characters, which
 * libstdc++ allocated while building the temporary the object was moved from).
 */
#include <map>
#include <string>

#include "progs.h"

PROGS_SINK_DEFINITION;

__attribute__((noinline)) static std::string *leak_one(int i)
{
    return new std::string("a leaked string, long enough for the heap " + std::to_string(i)); // LEAK
}

int main()
{
    {
        std::map<int, std::string> m;
        for (int i = 0; i < 100000; i++)
            m[i] = "a value long enough to live on the heap " + std::to_string(i);
        SINK(&m);
    }
    for (int i = 0; i < 1000; i++)
        SINK(leak_one(i));
    return 0;
}
