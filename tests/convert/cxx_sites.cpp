// cxx_sites.cpp: an allocation site inside a namespaced class template, so the converter's
// demangling of C++ names can be checked exactly.
#include "tgen.h"

extern "C" {
tgen_stack_t tgen_cxx_stack;
int tgen_cxx_line;
}

namespace demo {
template <typename T> struct Pool {
    __attribute__((noinline)) static void grow(unsigned long n);
};

template <typename T> void Pool<T>::grow(unsigned long n)
{
    (void)n;
    tgen_capture(&tgen_cxx_stack); tgen_cxx_line = __LINE__;
}
} // namespace demo

extern "C" void tgen_cxx_site(void)
{
    demo::Pool<int>::grow(3);
}
