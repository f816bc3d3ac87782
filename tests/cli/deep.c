/* A leak two calls deep, through functions with long names. The tests compile this file in a
 * directory with a long path, so that `rheap stack` has to shorten its locations to fit 80
 * columns while keeping every function name whole. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) void *allocate_the_buffer_that_is_never_given_back(size_t n)
{
    return malloc(n);
}

__attribute__((noinline)) void *prepare_a_connection_with_a_rather_long_name(void)
{
    return allocate_the_buffer_that_is_never_given_back(4242);
}

int main(void)
{
    printf("leaked %p\n", prepare_a_connection_with_a_rather_long_name());
    return 0;
}
