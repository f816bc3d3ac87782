/*
 * exe.c: the program's file as execvp finds it, which `rheap run` asks the injection
 * library's ri_exe_is_static about before blaming itself for an empty recording: librheap
 * reaches a program through LD_PRELOAD, which only the dynamic loader reads.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

/* An executable regular file, as execvp would take it. */
static int runnable(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && access(path, X_OK) == 0;
}

int cli__exe_find(const char *name, char *buf, size_t len)
{
    if (strchr(name, '/')) {
        int n = snprintf(buf, len, "%s", name);
        return n > 0 && (size_t)n < len && runnable(buf) ? 0 : -1;
    }
    /* execvp's search: each PATH entry in turn, an empty one meaning the current directory,
     * and glibc's default list when PATH is unset. */
    const char *path = getenv("PATH");
    if (!path)
        path = "/bin:/usr/bin";
    for (const char *p = path;; p++) {
        const char *end = strchr(p, ':');
        size_t dl = end ? (size_t)(end - p) : strlen(p);
        int n =
            dl ? snprintf(buf, len, "%.*s/%s", (int)dl, p, name) : snprintf(buf, len, "%s", name);
        if (n > 0 && (size_t)n < len && runnable(buf))
            return 0;
        if (!end)
            return -1;
        p = end;
    }
}
