/*
 * killed: makes 500 malloc(100)/free pairs and 10 malloc(7) it keeps, then kills itself with
 * SIGKILL: its thread file's last records are only in the staging area, never written as a
 * block.
 */
#include <signal.h>
#include <stdlib.h>

int main(void)
{
    for (int i = 0; i < 500; i++) {
        void *volatile p = malloc(100);
        free(p);
    }
    for (int i = 0; i < 10; i++) {
        void *volatile p = malloc(7);
        (void)p;
    }
    raise(SIGKILL);
    return 1;
}
