/*
 * units.c: sizes and times in units a person reads at a glance, for table output.
 *
 * Only the aligned-column output is converted; CSV and JSON keep exact integers, and --raw
 * keeps them in columns too. A column holds bytes when its name is `bytes` or `size` or ends in
 * `_bytes` or `_size`, nanoseconds when it ends in `_ns`: the naming rule every query file and
 * summary table follows. Small values stay exact: a byte count under 10 KiB reads as itself.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "cli.h"

static int ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), m = strlen(tail);
    return n >= m && !strcmp(s + n - m, tail);
}

void cli__human_bytes(long long b, char *buf, size_t len)
{
    ra_human_bytes(b, buf, len);
}

void cli__human_ns(long long ns, char *buf, size_t len)
{
    long long a = ns < 0 ? -ns : ns;
    if (a < 1000)
        snprintf(buf, len, "%lld ns", ns);
    else if (a < 1000000)
        snprintf(buf, len, "%.1f us", (double)ns / 1e3);
    else if (a < 1000000000)
        snprintf(buf, len, "%.1f ms", (double)ns / 1e6);
    else
        snprintf(buf, len, "%.2f s", (double)ns / 1e9);
}

void cli__table_humanize(ra_table_t *t)
{
    for (size_t c = 0; c < t->ncols; c++) {
        const char *n = t->names[c];
        int is_bytes = !strcmp(n, "bytes") || !strcmp(n, "size") || ends_with(n, "_bytes") ||
                       ends_with(n, "_size");
        int is_ns = ends_with(n, "_ns");
        if (!is_bytes && !is_ns)
            continue;
        for (size_t r = 0; r < t->nrows; r++) {
            size_t at = r * t->ncols + c;
            if (!t->cells[at] || t->types[at] != SQLITE_INTEGER)
                continue;
            char buf[32];
            long long v = strtoll(t->cells[at], NULL, 10);
            if (is_bytes)
                cli__human_bytes(v, buf, sizeof buf);
            else
                cli__human_ns(v, buf, sizeof buf);
            char *s = strdup(buf);
            if (!s)
                continue;
            free(t->cells[at]);
            t->cells[at] = s;
        }
    }
}
