/* A thread whose name is not UTF-8 leaks one block. The tests compile this file in a directory
 * whose name is not UTF-8 either, so the leak's location carries invalid bytes too, and check
 * that rheap's JSON output stays valid UTF-8. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static void *named(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "\xff\xfe\x01");
    return malloc(777);
}

int main(void)
{
    pthread_t t;
    void *leaked;
    if (pthread_create(&t, NULL, named, NULL) != 0 || pthread_join(t, &leaked) != 0)
        return 1;
    printf("leaked %p\n", leaked);
    return 0;
}
