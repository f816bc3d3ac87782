/*
 * tempfile.c: the converter's scratch files (the store's spill, the checkpoint lists, the
 * rows a worker keeps for its turn).
 *
 * A scratch file has no name from the start where the file system allows it (O_TMPFILE), else
 * a name of our own made exclusively and unlinked at once: either way it is gone whenever the
 * conversion ends, by success, an error, a signal or kill -9, and no other process opens it.
 */
#define _GNU_SOURCE /* O_TMPFILE, mkostemp */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "converter.h"

int cv__temp_open(const char *near, const char *suffix, char *name, size_t namesz)
{
    char dir[2048];
    if (near) {
        /* Beside the database: the disk the user chose for the output has the room. */
        const char *slash = strrchr(near, '/');
        if (!slash)
            snprintf(dir, sizeof dir, ".");
        else if (slash == near)
            snprintf(dir, sizeof dir, "/");
        else
            snprintf(dir, sizeof dir, "%.*s", (int)(slash - near), near);
    } else {
        const char *t = getenv("TMPDIR");
        snprintf(dir, sizeof dir, "%s", t && *t ? t : "/tmp");
    }
    if (near)
        snprintf(name, namesz, "%.2000s.%.64s (a temporary file without a name in %.2000s)", near,
                 suffix, dir);
    else
        snprintf(name, namesz, "rheap-%.64s (a temporary file without a name in %.2000s)", suffix,
                 dir);
    int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
        char path[4096];
        if (near)
            snprintf(path, sizeof path, "%.2000s.%.64s-XXXXXX", near, suffix);
        else
            snprintf(path, sizeof path, "%.2000s/rheap-%.64s-XXXXXX", dir, suffix);
        fd = mkostemp(path, O_CLOEXEC);
        if (fd >= 0) {
            unlink(path);
            snprintf(name, namesz, "%s (unlinked)", path);
        }
    }
    return fd;
}
