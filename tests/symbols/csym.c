/* csym.c: a C program for the symbolization tests. Built with gcc and clang at -O0 and -O2:
 * at -O2, push() and copy_name() are inlined into fill(), so one return address stands for
 * three source frames. Every block stays reachable from `head`, so no allocation can be
 * optimized away. */
#include <stdlib.h>
#include <string.h>

struct node {
    struct node *next;
    char *name;
};

static struct node *head;
void *volatile sink;

static inline char *copy_name(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    memcpy(d, s, n);
    return d;
}

static struct node *push(const char *s)
{
    struct node *l = malloc(sizeof *l);
    l->name = copy_name(s);
    l->next = head;
    head = l;
    return l;
}

__attribute__((noinline)) void fill(int n)
{
    for (int i = 0; i < n; i++)
        push(i & 1 ? "odd" : "even");
}

__attribute__((noinline)) void *grow(void *p, size_t n)
{
    return realloc(p, n);
}

int main(void)
{
    fill(4);
    void *p = calloc(3, 8);
    sink = grow(p, 100);
    return head ? 0 : 1;
}
