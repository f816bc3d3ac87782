/*
 * cxx_new: C++ allocation forms are recorded once each, under their own call: new (plain,
 * nothrow, aligned) as "operator new", new[] as "operator new[]", with the size the program asked
 * for (not the malloc that libstdc++ makes of it) and the alignment of the aligned forms; every
 * delete form as a free. Prints the exact event list riptally must print between the markers
 * "begin" and "end"; the innermost frame of each allocation is the program's call of the
 * operator (or libstdc++'s, for the string it builds).
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
    EXPECT("alloc call=operator new size=%zu in=exe", sizeof(int));
    delete one;
    EXPECT("free of=operator new:%zu", sizeof(int));

    char *arr = new char[777];
    SINK(arr);
    EXPECT("alloc call=operator new[] size=777 in=exe");
    delete[] arr;
    EXPECT("free of=operator new[]:777");

    /* The size asked for, 0, though operator new asks malloc for 1 byte. */
    char *empty = new char[0];
    SINK(empty);
    EXPECT("alloc call=operator new[] size=0 in=exe");
    delete[] empty;
    EXPECT("free of=operator new[]:0");

    Line *line = new Line;
    SINK(line);
    EXPECT("alloc call=operator new size=192 align=64 in=exe");
    delete line;
    EXPECT("free of=operator new:192");

    char *wide = new (std::align_val_t(128)) char[384];
    SINK(wide);
    EXPECT("alloc call=operator new[] size=384 align=128 in=exe");
    ::operator delete[](wide, std::align_val_t(128));
    EXPECT("free of=operator new[]:384");

    char *quiet = new (std::nothrow) char[999];
    SINK(quiet);
    EXPECT("alloc call=operator new[] size=999 in=exe");
    delete[] quiet;
    EXPECT("free of=operator new[]:999");

    void *raw = ::operator new(4321);
    SINK(raw);
    EXPECT("alloc call=operator new size=4321 in=exe");
    ::operator delete(raw, 4321); /* sized delete */
    EXPECT("free of=operator new:4321");

    {
        std::vector<int> v;
        v.reserve(1000);
        EXPECT("alloc call=operator new size=%zu in=exe", 1000 * sizeof(int));
        v.push_back(1);
        std::string s(500, 'x');
        EXPECT("alloc call=operator new size=501 in=libstdc++.so.6");
        SINK(s.data());
    }
    EXPECT("free of=operator new:501");
    EXPECT("free of=operator new:%zu", 1000 * sizeof(int));
    progs_mark("end");

    say("expect-list thread tid=%d\n", (int)gettid());
    for (int i = 0; i < n; i++)
        say("expect-list %s\n", lines[i]);
    return 0;
}
