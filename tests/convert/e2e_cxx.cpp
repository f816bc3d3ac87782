// e2e_cxx.cpp: a `new` inside a namespaced class template, for the end-to-end demangling check.
#include <cstddef>

extern "C" {
int e2e_cxx_line;
char *volatile e2e_cxx_keep;
}

namespace demo {
template <typename T> struct Pool {
    __attribute__((noinline)) static void grow(unsigned long n);
};

template <typename T> void Pool<T>::grow(unsigned long n)
{
    e2e_cxx_keep = new char[n]; e2e_cxx_line = __LINE__;
}
} // namespace demo

extern "C" void e2e_cxx_site(void)
{
    demo::Pool<int>::grow(66);
}
