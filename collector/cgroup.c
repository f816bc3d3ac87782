/*
 * cgroup.c: the memory limit a process runs under, for `rheap serve --dump-threshold N%`.
 *
 * A process's control groups are in /proc/PID/cgroup: "0::/PATH" for the unified hierarchy
 * (cgroup v2: the limit is memory.max), "N:memory:/PATH" (or a list of controllers naming
 * memory) for cgroup v1 (memory.limit_in_bytes). A group's limit applies to everything below it,
 * so the effective limit is the smallest along PATH up to the root; "max", or v1's "unlimited"
 * (a number near 2^63), is no limit. The hierarchies are looked for where Debian mounts them:
 * /sys/fs/cgroup (v2), /sys/fs/cgroup/unified (v2 beside v1), /sys/fs/cgroup/memory (v1).
 */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector.h"

/* A limit at or above this is "unlimited" (v1 writes 2^63 rounded down to a page). */
#define NO_LIMIT ((uint64_t)1 << 60)

/* The smallest limit in FILE of the groups ROOT/PATH, ROOT/PATH's parent, ... ROOT. */
static uint64_t smallest(const char *root, const char *path, const char *file)
{
    char dir[PATH_MAX];
    if ((size_t)snprintf(dir, sizeof dir, "%s%s", root, path) >= sizeof dir)
        return UINT64_MAX;
    uint64_t best = UINT64_MAX;
    size_t rootlen = strlen(root);
    for (;;) {
        char f[PATH_MAX + 32];
        snprintf(f, sizeof f, "%s/%s", dir, file);
        FILE *fp = fopen(f, "r");
        if (fp) {
            char buf[64];
            if (fgets(buf, sizeof buf, fp) && buf[0] >= '0' && buf[0] <= '9') {
                uint64_t v = strtoull(buf, NULL, 10);
                if (v < best)
                    best = v;
            }
            fclose(fp);
        }
        char *slash = strrchr(dir, '/');
        if (!slash || (size_t)(slash - dir) < rootlen)
            break;
        *slash = 0;
    }
    return best;
}

int rc__cgroup_limit(uint32_t pid, uint64_t *limit)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%" PRIu32 "/cgroup", pid);
    FILE *fp = fopen(path, "r");
    if (!fp)
        return -1;
    uint64_t best = UINT64_MAX;
    char line[4096];
    while (fgets(line, sizeof line, fp)) {
        line[strcspn(line, "\n")] = 0;
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2)
            continue;
        *c2 = 0;
        const char *controllers = c1 + 1, *group = c2 + 1;
        uint64_t v = UINT64_MAX;
        if (!strcmp(line, "0") && !*controllers) {
            uint64_t a = smallest("/sys/fs/cgroup", group, "memory.max");
            uint64_t b = smallest("/sys/fs/cgroup/unified", group, "memory.max");
            v = a < b ? a : b;
        } else {
            /* "memory" as one of the comma-separated controllers. */
            char list[256];
            snprintf(list, sizeof list, ",%s,", controllers);
            if (strstr(list, ",memory,"))
                v = smallest("/sys/fs/cgroup/memory", group, "memory.limit_in_bytes");
        }
        if (v < best)
            best = v;
    }
    fclose(fp);
    if (best >= NO_LIMIT)
        return -1;
    *limit = best;
    return 0;
}
