/*
 * paths.c: where the installed pieces are, found from the running binary (PREFIX/bin/rheap),
 * so that an installed tree can move: librheap for `rheap run`, the canned queries for
 * `query` and `report`.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

int cli__exe_dir(char *buf, size_t len)
{
    ssize_t n = readlink("/proc/self/exe", buf, len - 1);
    if (n <= 0 || (size_t)n >= len - 1)
        return -1;
    buf[n] = 0;
    char *slash = strrchr(buf, '/');
    if (!slash)
        return -1;
    *slash = 0;
    return 0;
}

int cli__install_path(const char *installdir, const char *rest, char *buf, size_t len)
{
    char bindir[PATH_MAX];
    int n;
    if (installdir[0] == '/') {
        n = snprintf(buf, len, "%s/%s", installdir, rest);
    } else {
        if (cli__exe_dir(bindir, sizeof bindir) != 0)
            return -1;
        /* The binary is PREFIX/bin/rheap; the prefix is its directory's parent. */
        n = snprintf(buf, len, "%s/../%s/%s", bindir, installdir, rest);
    }
    return n > 0 && (size_t)n < len ? 0 : -1;
}

static int is_dir(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
}

const char *cli__queries_dir(char *buf, size_t len)
{
    const char *env = getenv("RHEAP_QUERIES");
    if (env && *env) {
        snprintf(buf, len, "%s", env);
        return buf;
    }
    char p[PATH_MAX];
    if (cli__install_path(RHEAP_INSTALL_DATADIR, "rheap/queries", p, sizeof p) == 0 && is_dir(p)) {
        if (!realpath(p, buf))
            snprintf(buf, len, "%s", p);
        return buf;
    }
    /* Running from the build tree: the source tree's queries. */
    if (is_dir(RHEAP_SOURCE_QUERIES)) {
        snprintf(buf, len, "%s", RHEAP_SOURCE_QUERIES);
        return buf;
    }
    return NULL;
}

/* ---- Query files ---- */
