/*
 * cxx_new: C++ allocation forms reach the recorder through libstdc++: new and new[] as malloc,
 * aligned new as aligned_alloc, every delete form as free. Prints the exact event list
 * riptally must print between the markers "begin" and "end"; the innermost frame of each
 * allocation is libstdc++'s operator new.
 */
#include "progs.h"

#include <new>
#include <string>
#include <vector>

PROGS_SINK_DEFINITION;

struct alignas(64) Line {
    char bytes[192];
};

int main()
{
    static char lines[64][128];
    int n = 0;
#define EXPECT(...) snprintf(lines[n++], sizeof lines[0], __VA_ARGS__)

    progs_mark("begin");
    int *one = new int(5);
    SINK(one);
    EXPECT("alloc call=malloc size=%zu in=libstdc++.so.6", sizeof(int));
    delete one;
    EXPECT("free of=malloc:%zu", sizeof(int));

    char *arr = new char[777];
    SINK(arr);
    EXPECT("alloc call=malloc size=777 in=libstdc++.so.6");
    delete[] arr;
    EXPECT("free of=malloc:777");

    /* operator new never asks malloc for 0 bytes. */
    char *empty = new char[0];
    SINK(empty);
    EXPECT("alloc call=malloc size=1 in=libstdc++.so.6");
    delete[] empty;
    EXPECT("free of=malloc:1");

    Line *line = new Line;
    SINK(line);
    EXPECT("alloc call=aligned_alloc size=192 align=64 in=libstdc++.so.6");
    delete line;
    EXPECT("free of=aligned_alloc:192");

    char *wide = new (std::align_val_t(128)) char[384];
    SINK(wide);
    EXPECT("alloc call=aligned_alloc size=384 align=128 in=libstdc++.so.6");
    ::operator delete[](wide, std::align_val_t(128));
    EXPECT("free of=aligned_alloc:384");

    char *quiet = new (std::nothrow) char[999];
    SINK(quiet);
    EXPECT("alloc call=malloc size=999 in=libstdc++.so.6");
    delete[] quiet;
    EXPECT("free of=malloc:999");

    void *raw = ::operator new(4321);
    SINK(raw);
    EXPECT("alloc call=malloc size=4321 in=libstdc++.so.6");
    ::operator delete(raw, 4321); /* sized delete */
    EXPECT("free of=malloc:4321");

    {
        std::vector<int> v;
        v.reserve(1000);
        EXPECT("alloc call=malloc size=%zu in=libstdc++.so.6", 1000 * sizeof(int));
        v.push_back(1);
        std::string s(500, 'x');
        EXPECT("alloc call=malloc size=501 in=libstdc++.so.6");
        SINK(s.data());
    }
    EXPECT("free of=malloc:501");
    EXPECT("free of=malloc:%zu", 1000 * sizeof(int));
    progs_mark("end");

    say("expect-list thread tid=%d\n", (int)gettid());
    for (int i = 0; i < n; i++)
        say("expect-list %s\n", lines[i]);
    return 0;
}
