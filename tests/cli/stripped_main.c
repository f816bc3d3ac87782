/*
 * stripped_main.c: keeps 3 blocks of 700 bytes from the stripped library's stripped_make, so
 * their allocation site must read as that exported function, not as an unnamed address.
 */
#include <stdio.h>
#include <stddef.h>

char *stripped_make(size_t n);

int main(void)
{
    static char *keep[3];
    for (int i = 0; i < 3; i++)
        keep[i] = stripped_make(700);
    printf("stripped: kept %p %p %p\n", (void *)keep[0], (void *)keep[1], (void *)keep[2]);
    return 0;
}
