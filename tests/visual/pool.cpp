// pool.cpp: a C++ program whose own leak is known: 3 x new int[25] (100 bytes each), kept and
// never deleted. Besides it, libstdc++ allocates its emergency exception pool while the dynamic
// loader runs its static initializers, and never frees it: the built-in suppression list takes
// that one out. Nothing is printed, so stdio allocates nothing.
static int *volatile keep[3];

int main()
{
    for (int i = 0; i < 3; i++)
        keep[i] = new int[25]; // @pool_leak
    return 0;
}
