/*
 * output.c: the one rule for a file a command is asked to write (-o FILE): an existing file is
 * replaced only with --force, so a database, a page or a profile made earlier is never lost to
 * a repeated command line. Devices and pipes (/dev/null, a FIFO) are written to as they are.
 */
#include <sys/stat.h>

#include "cli.h"

int cli__output_check(const char *path, int force, const char *what)
{
    struct stat sb;
    if (!path || stat(path, &sb) != 0)
        return RHEAP_EXIT_OK;
    if (S_ISDIR(sb.st_mode)) {
        cli__error(stderr, "%s is a directory; give the %s to write", path, what);
        return RHEAP_EXIT_USAGE;
    }
    if (S_ISREG(sb.st_mode) && !force) {
        cli__error(stderr, "%s exists; use --force to replace it", path);
        return RHEAP_EXIT_USAGE;
    }
    return RHEAP_EXIT_OK;
}
