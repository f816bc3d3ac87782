// cxxmap: a C++ workload for the allocator benchmark (bench/allocators.py): a std::map of
// N strings long enough for the heap (argument 1, default 100000), built and destroyed
// `rounds` times (argument 2, default 5).
#include <cstdlib>
#include <map>
#include <string>

int main(int argc, char **argv)
{
    int n = argc > 1 ? std::atoi(argv[1]) : 100000;
    int rounds = argc > 2 ? std::atoi(argv[2]) : 5;
    size_t total = 0;
    for (int r = 0; r < rounds; r++) {
        std::map<int, std::string> m;
        for (int i = 0; i < n; i++)
            m[i] = "a value long enough to live on the heap " + std::to_string(i);
        total += m.size();
    }
    return total == (size_t)n * (size_t)rounds ? 0 : 1;
}
