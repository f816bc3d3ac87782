/*
 * operators.cpp: leaks whose allocation sites are C++ operators, each site with its own count
 * of blocks (3 to 8) and size, so a test can name every one exactly: a replacement global
 * operator new (plumbing: the site is its caller), a class-specific operator new, operator(),
 * operator[], a lambda, and a C function whose name holds the word (operator_list.c).
 */
#include <cstdlib>
#include <new>

extern "C" void *parse_operator_list(int n);

/* Every new expression of the program comes here. */
void *operator new(std::size_t n)
{
    void *p = malloc(n);
    if (!p)
        throw std::bad_alloc();
    return p;
}

void operator delete(void *p) noexcept
{
    free(p);
}

void operator delete(void *p, std::size_t) noexcept
{
    free(p);
}

struct Pooled {
    char data[40];
    static void *operator new(std::size_t n) { return malloc(n); } /* @pooled */
    static void operator delete(void *p) { free(p); }
};

struct Functor {
    void *operator()(int n) { return malloc(n); } /* @call */
};

struct Table {
    void *operator[](int n) { return calloc(1, n); } /* @index */
};

__attribute__((noinline)) static long *leak_global()
{
    return new long[3]; /* @global */
}

int main()
{
    for (int i = 0; i < 3; i++)
        leak_global();
    for (int i = 0; i < 4; i++)
        new Pooled;
    Functor f;
    for (int i = 0; i < 5; i++)
        f(100);
    Table t;
    for (int i = 0; i < 6; i++)
        t[200];
    auto lambda = [](int n) { return malloc(n); }; /* @lambda */
    for (int i = 0; i < 7; i++)
        lambda(300);
    for (int i = 0; i < 8; i++)
        parse_operator_list(400);
    return 0;
}
