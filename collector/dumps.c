/*
 * dumps.c: `rheap serve --dump-dir DIR --dump-threshold B|N%`: a process's heap profile written
 * to DIR when its live heap passes the threshold (bytes, or a share of the memory limit of its
 * control groups: cgroup.c), and again each time it sets a new high mark at least 1/16 above the
 * last one dumped (jemalloc's prof.gdump, a memory-threshold dump). Files are named
 * rheap-heap-TIME-SEQ-pidP.pb.gz, so their names sort by time, and DIR keeps the newest `keep`.
 */
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rheap_analysis.h"

#include "collector.h"

static int dump_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Removes the oldest dumps beyond the kept count: names sort by time. */
static void dump_trim(rc__dumps_t *d)
{
    DIR *dir = opendir(d->dir);
    if (!dir)
        return;
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(dir))) {
        size_t l = strlen(e->d_name);
        if (strncmp(e->d_name, "rheap-heap-", 11) || l < 7 || strcmp(e->d_name + l - 6, ".pb.gz"))
            continue;
        if (rheap_grow(&names, &cap, n, sizeof *names, 32) != 0 || !(names[n] = strdup(e->d_name)))
            break;
        n++;
    }
    closedir(dir);
    if (n > 1)
        qsort(names, n, sizeof *names, dump_cmp);
    for (size_t i = 0; i + d->keep < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", d->dir, names[i]);
        unlink(path);
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

static void dump_one(rc__dumps_t *d, rc_host_t *h, size_t i, const rc_info_t *in)
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    char stamp[32], path[4096], tmp[4200];
    strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
    snprintf(path, sizeof path, "%s/rheap-heap-%s-%06lu-pid%" PRIu32 ".pb.gz", d->dir, stamp,
             ++d->seq, in->pid);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    rc_err_t err = {""};
    int rc = f && rc__profile_write(h, &i, 1, 0, NULL, 0, 0, f, &err) == RC_OK ? 0 : -1;
    if (f && fclose(f) != 0)
        rc = -1;
    if (rc != 0 || rename(tmp, path) != 0) {
        unlink(tmp);
        rc__log(d->log, RC_LOG_WARNING, "%s: the heap profile could not be written%s%s", path,
                err.msg[0] ? ": " : "", err.msg);
        return;
    }
    char live[32];
    ra_human_bytes((long long)in->live_bytes, live, sizeof live);
    rc__log(d->log, RC_LOG_NOTE, "process %" PRIu32 ": live heap %s: wrote %s", in->pid, live,
            path);
    dump_trim(d);
}

void rc__dumps_check(rc__dumps_t *d, rc_host_t *h)
{
    for (size_t k = 0; k < d->nmarks; k++)
        d->marks[k].seen = 0;
    for (size_t i = 0; i < rc_host_count(h); i++) {
        rc_info_t in;
        rc_host_info(h, i, &in);
        if (in.state == RC_ENDED || in.dropped)
            continue;
        size_t k = 0;
        while (k < d->nmarks &&
               !(d->marks[k].pid == in.pid && d->marks[k].recording == in.recording))
            k++;
        if (k == d->nmarks) {
            if (rheap_grow(&d->marks, &d->capmarks, d->nmarks, sizeof *d->marks, 16) != 0)
                return;
            d->marks[d->nmarks++] = (rc__dumpmark_t){in.pid, in.recording, 0, 0, 0};
        }
        rc__dumpmark_t *m = &d->marks[k];
        m->seen = 1;
        double threshold = d->threshold;
        if (d->share) {
            uint64_t limit;
            if (rc__cgroup_limit(in.pid, &limit) != 0)
                continue; /* no limit: no share of it to pass */
            threshold = d->share / 100 * (double)limit;
        }
        if (in.live_bytes < threshold) {
            m->above = 0;
            continue;
        }
        if (m->above && in.live_bytes < m->mark + m->mark / 16)
            continue;
        m->above = 1;
        if (in.live_bytes > m->mark)
            m->mark = in.live_bytes;
        dump_one(d, h, i, &in);
    }
    /* The marks of processes no longer followed go, so a week of processes leaves none. */
    size_t keep = 0;
    for (size_t k = 0; k < d->nmarks; k++)
        if (d->marks[k].seen)
            d->marks[keep++] = d->marks[k];
    d->nmarks = keep;
}


void rc__dumps_free(rc__dumps_t *d)
{
    free(d->marks);
    d->marks = NULL;
    d->nmarks = d->capmarks = 0;
}
