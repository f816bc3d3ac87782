/*
 * late: a library the exits program is linked with. The dynamic linker finalizes it after
 * librheap (a preloaded library comes before the program's own in the search order), so its
 * destructor runs after the tracer's exit flush. Once armed (stress_late_arm, which returns the
 * count), it allocates that many blocks of 7777 bytes there, each freed at once.
 */
#include <stdlib.h>

#define NLATE 100

static int armed;

__attribute__((visibility("default"))) int stress_late_arm(void)
{
    armed = 1;
    return NLATE;
}

__attribute__((destructor)) static void stress_late_fini(void)
{
    if (!armed)
        return;
    for (int i = 0; i < NLATE; i++) {
        void *volatile p = malloc(7777);
        free(p);
    }
}
