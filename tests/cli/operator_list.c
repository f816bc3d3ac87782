/* operator_list.c: a C function whose name holds the word "operator" (operators.cpp). */
#include <stdlib.h>

void *parse_operator_list(int n);

void *parse_operator_list(int n)
{
    return malloc(n); /* @list */
}
