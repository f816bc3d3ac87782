/*
 * debuginfo.c: where the symbolizer looks for separate debug information.
 *
 * Distributions ship their binaries stripped and the DWARF in separate files (Debian's -dbgsym
 * packages), installed under /usr/lib/debug. libdwfl's standard callback finds such a file in
 * the order gdb uses:
 *
 * 1. by GNU build-id: DIR/.build-id/xx/yyyy.debug, for each directory DIR of the search path;
 * 2. by the `.gnu_debuglink` section's file name (its CRC checked): beside the module, in the
 *    module's directory's `.debug/`, and under each DIR followed by the module's own directory;
 * 3. through debuginfod, by build-id, only when the user has set DEBUGINFOD_URLS (libdw reads
 *    the variable itself; unset, or empty, nothing goes to the network).
 *
 * RHEAP_DEBUG_DIR adds directories (colon-separated) searched before /usr/lib/debug, so debug
 * files can be kept in a tree of one's own (or a test's) without installing them system-wide.
 */
#include <stdlib.h>
#include <string.h>

#include "converter.h"

char *cv__debuginfo_path(void)
{
    /* The libdwfl path syntax: entries separated by ':'; an empty entry is the module's own
     * directory, a relative one (".debug") is relative to it, an absolute one a root under
     * which both the build-id tree and the module's path are looked up. */
    static const char head[] = ":.debug:";
    static const char tail[] = "/usr/lib/debug";
    const char *user = getenv("RHEAP_DEBUG_DIR");
    size_t ulen = user ? strlen(user) : 0;
    char *p = malloc(sizeof head + ulen + 1 + sizeof tail);
    if (!p)
        return NULL;
    strcpy(p, head);
    if (ulen) {
        strcat(p, user);
        strcat(p, ":");
    }
    strcat(p, tail);
    return p;
}
