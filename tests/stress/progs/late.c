/*
 * late: a library the exits program is linked with. The dynamic linker finalizes it after
 * librheap (a preloaded library comes before the program's own in the search order), so its
 * destructor allocates and frees after the tracer's exit flush: stress_late_count() blocks of
 * 7777 bytes, each freed at once.
 */
#include <stdlib.h>

#define NLATE 100

__attribute__((visibility("default"))) int stress_late_count(void)
{
    return NLATE;
}

__attribute__((destructor)) static void stress_late_fini(void)
{
    for (int i = 0; i < NLATE; i++) {
        void *volatile p = malloc(7777);
        free(p);
    }
}
