/*
 * call_values: pvalloc(1000) and realloc(NULL, 50), each freed. The database must say what was
 * asked: pvalloc with 1000 bytes (aligned to the page, printed), and realloc, not malloc.
 */
#include "progs.h"

#include <malloc.h>

PROGS_SINK_DEFINITION;

int main(void)
{
    void *a = pvalloc(1000);
    void *b = realloc(NULL, 50);
    SINK(a);
    SINK(b);
    free(a);
    free(b);
    say("expect pvalloc|1000|%ld|1\nexpect realloc|50||1\n", sysconf(_SC_PAGESIZE));
    return 0;
}
