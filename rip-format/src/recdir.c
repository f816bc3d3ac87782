/*
 * recdir.c: finds the files of a recording directory (FORMAT.md, top).
 *
 * Thread files are sorted numerically by thread id and then by reuse suffix (t12.rip before
 * t12-2.rip before t100.rip), so every tool lists threads in the same order. Names that do not
 * follow the pattern are ignored, as the format asks.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rip.h"

typedef struct {
    uint64_t tid, suffix;
    char *path;
} thread_file_t;

struct rip_recording {
    char *dir;
    char *process_path;
    thread_file_t *threads;
    size_t count;
    char *checkpoint;        /* the newest checkpoint-<K>.rip, or NULL */
    uint64_t checkpoint_num;
    int lock_fd;             /* the directory, flocked shared while the handle lives; or -1 */
};

static rip_status_t rec_fail(rip_error_t *err, rip_status_t code, const char *path,
                             const char *detail)
{
    if (err) {
        memset(err, 0, sizeof *err);
        err->code = code;
        err->offset = RIP_NO_OFFSET;
        snprintf(err->path, sizeof err->path, "%s", path);
        snprintf(err->detail, sizeof err->detail, "%s", detail);
    }
    return code;
}

/* Parses a decimal number of at most 10 digits at *s (no sign, no leading zero unless "0"). */
static int parse_num(const char **s, uint64_t *out)
{
    const char *p = *s;
    uint64_t v = 0;
    int n = 0;
    while (*p >= '0' && *p <= '9' && n < 11) {
        v = v * 10 + (uint64_t)(*p - '0');
        p++;
        n++;
    }
    if (n == 0 || n > 10 || (n > 1 && **s == '0'))
        return -1;
    *s = p;
    *out = v;
    return 0;
}

/* Matches t<tid>.rip or t<tid>-<n>.rip (n >= 2), or a segment's t<tid>-s<serial>.rip (since
 * 3.5), whose suffix is the serial plus 2^32 so that a thread's segments sort after its other
 * files, in the order they were made. */
static int parse_thread_name(const char *name, uint64_t *tid, uint64_t *suffix)
{
    const char *p = name;
    if (*p++ != 't' || parse_num(&p, tid) != 0)
        return -1;
    *suffix = 1;
    if (*p == '-' && p[1] == 's') {
        p += 2;
        if (parse_num(&p, suffix) != 0 || *suffix < 2 || *suffix > UINT32_MAX)
            return -1;
        *suffix += (uint64_t)1 << 32;
    } else if (*p == '-') {
        p++;
        if (parse_num(&p, suffix) != 0 || *suffix < 2)
            return -1;
    }
    return strcmp(p, ".rip") == 0 ? 0 : -1;
}

int rip_ranges_have(const rip_range_t *r, size_t n, uint32_t v)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (v < r[mid].first)
            hi = mid;
        else if (v > r[mid].last)
            lo = mid + 1;
        else
            return 1;
    }
    return 0;
}

int rip_checkpoint_name_parse(const char *name, uint64_t *k)
{
    const char *p = name;
    if (!name || strncmp(p, "checkpoint-", 11) != 0)
        return -1;
    p += 11;
    if (parse_num(&p, k) != 0 || *k < 1 || strcmp(p, ".rip") != 0)
        return -1;
    return 0;
}

int rip_recording_name_parse(const char *name, uint32_t *pid, uint32_t *n)
{
    const char *p = name;
    uint64_t v, num = 1;
    if (!name || strncmp(p, "rip-", 4) != 0)
        return -1;
    p += 4;
    if (parse_num(&p, &v) != 0 || v < 1 || v > UINT32_MAX)
        return -1;
    if (*p == '-') {
        p++;
        if (parse_num(&p, &num) != 0 || num < 2 || num > UINT32_MAX)
            return -1;
    }
    if (*p)
        return -1;
    *pid = (uint32_t)v;
    *n = (uint32_t)num;
    return 0;
}

static int cmp_threads(const void *a, const void *b)
{
    const thread_file_t *x = a, *y = b;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    if (x->suffix != y->suffix)
        return x->suffix < y->suffix ? -1 : 1;
    return 0;
}

static char *join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + 1 + strlen(name) + 1;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, "%s/%s", dir, name);
    return s;
}

/* Whether dir (its last component, trailing slashes aside) is a symbolic link that another user
 * than the caller owns: planted, it could point at a recording the caller may read and the
 * planter may not, and the caller's database would carry it out. */
static int foreign_link(const char *dir)
{
    char path[4096];
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    if (n >= sizeof path)
        return 0;
    memcpy(path, dir, n);
    path[n] = 0;
    struct stat st;
    return lstat(path, &st) == 0 && S_ISLNK(st.st_mode) && st.st_uid != geteuid();
}

rip_status_t rip_recording_open(const char *dir, rip_recording_t **out, rip_error_t *err)
{
    *out = NULL;
    struct stat st;
    if (foreign_link(dir))
        return rec_fail(err, RIP_E_NOT_RECORDING, dir,
                        "a symbolic link owned by another user; not followed (give the directory "
                        "it points to)");
    if (stat(dir, &st) != 0) {
        char msg[160];
        snprintf(msg, sizeof msg, "cannot open: %s", strerror(errno));
        return rec_fail(err, errno == ENOENT ? RIP_E_NOT_RECORDING : RIP_E_IO, dir, msg);
    }
    if (!S_ISDIR(st.st_mode))
        return rec_fail(err, RIP_E_NOT_RECORDING, dir, "not a rip recording (not a directory)");

    rip_recording_t *rec = calloc(1, sizeof *rec);
    if (!rec)
        return rec_fail(err, RIP_E_NOMEM, dir, "out of memory");
    rec->lock_fd = -1;
    rec->dir = strdup(dir);
    rec->process_path = join(dir, "process.rip");
    if (!rec->dir || !rec->process_path) {
        rip_recording_close(rec);
        return rec_fail(err, RIP_E_NOMEM, dir, "out of memory");
    }
    /* lstat: the files of a recording are never links (the tracer makes them O_NOFOLLOW), and
     * one found there is not followed. */
    if (lstat(rec->process_path, &st) != 0) {
        rip_recording_close(rec);
        return rec_fail(err, RIP_E_NOT_RECORDING, dir, "not a rip recording (no process.rip)");
    }
    if (!S_ISREG(st.st_mode)) {
        rip_recording_close(rec);
        return rec_fail(err, RIP_E_NOT_RECORDING, dir,
                        S_ISFIFO(st.st_mode)  ? "process.rip is a FIFO, expected a regular file"
                        : S_ISLNK(st.st_mode) ? "process.rip is a symbolic link, expected a "
                                                "regular file (links are not followed)"
                                              : "process.rip is not a regular file");
    }

    /* Shared before the listing: a compaction that deletes files waits for the handle's end,
     * and one that has begun ends before the list is made. A compaction holds the lock for the
     * few milliseconds of its deletions, so waiting here is short. */
    rec->lock_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    while (rec->lock_fd >= 0 && flock(rec->lock_fd, LOCK_SH) != 0 && errno == EINTR)
        ;
    DIR *d = opendir(dir);
    if (!d) {
        char msg[160];
        snprintf(msg, sizeof msg, "cannot list directory: %s", strerror(errno));
        rip_recording_close(rec);
        return rec_fail(err, RIP_E_IO, dir, msg);
    }
    size_t cap = 0;
    struct dirent *e;
    rip_status_t status = RIP_OK;
    while ((e = readdir(d)) != NULL) {
        uint64_t tid, suffix, k;
        if (rip_checkpoint_name_parse(e->d_name, &k) == 0) {
            if (k > rec->checkpoint_num) {
                char *path = join(dir, e->d_name);
                if (!path) {
                    status = RIP_E_NOMEM;
                    break;
                }
                free(rec->checkpoint);
                rec->checkpoint = path;
                rec->checkpoint_num = k;
            }
            continue;
        }
        if (parse_thread_name(e->d_name, &tid, &suffix) != 0)
            continue;
        if (rec->count == cap) {
            size_t ncap = cap ? cap * 2 : 16;
            thread_file_t *t = realloc(rec->threads, ncap * sizeof *t);
            if (!t) {
                status = RIP_E_NOMEM;
                break;
            }
            rec->threads = t;
            cap = ncap;
        }
        thread_file_t *t = &rec->threads[rec->count];
        t->tid = tid;
        t->suffix = suffix;
        t->path = join(dir, e->d_name);
        if (!t->path) {
            status = RIP_E_NOMEM;
            break;
        }
        rec->count++;
    }
    closedir(d);
    if (status != RIP_OK) {
        rip_recording_close(rec);
        return rec_fail(err, status, dir, "out of memory");
    }
    if (rec->count > 1)
        qsort(rec->threads, rec->count, sizeof *rec->threads, cmp_threads);
    *out = rec;
    return RIP_OK;
}

const char *rip_recording_dir(const rip_recording_t *rec)
{
    return rec->dir;
}

const char *rip_recording_process_path(const rip_recording_t *rec)
{
    return rec->process_path;
}

size_t rip_recording_thread_count(const rip_recording_t *rec)
{
    return rec->count;
}

const char *rip_recording_thread_path(const rip_recording_t *rec, size_t i)
{
    return i < rec->count ? rec->threads[i].path : NULL;
}

const char *rip_recording_checkpoint_path(const rip_recording_t *rec)
{
    return rec->checkpoint;
}

void rip_recording_close(rip_recording_t *rec)
{
    if (!rec)
        return;
    for (size_t i = 0; i < rec->count; i++)
        free(rec->threads[i].path);
    free(rec->threads);
    free(rec->checkpoint);
    if (rec->lock_fd >= 0)
        close(rec->lock_fd); /* and with it the shared lock */
    free(rec->dir);
    free(rec->process_path);
    free(rec);
}
