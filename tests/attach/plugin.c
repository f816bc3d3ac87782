/* plugin.c: a library loaded while rheap attach records (see loader.c): its allocations go
 * through its own GOT slots, which the attach must redirect once it is loaded. */
#include <stdlib.h>

void *plugin_alloc(void)
{
    return malloc(7777);
}
