/*
 * proc.c: what the library learns about a process from /proc before touching it: its status
 * fields, the right to trace it, its file-backed mappings, whether it still runs, and paths
 * as it sees them (through /proc/PID/root, so a process in another mount namespace works).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "inject.h"

long ri__status_field(pid_t pid, const char *name, long *second)
{
    char path[64], line[512];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    long v = -1;
    size_t n = strlen(name);
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, name, n) && line[n] == ':') {
            char *end;
            v = strtol(line + n + 1, &end, 10);
            if (second)
                *second = strtol(end, NULL, 10);
            break;
        }
    fclose(f);
    return v;
}

int ri__have_cap_ptrace(void)
{
    char line[256];
    FILE *f = fopen("/proc/self/status", "r");
    int have = 0;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "CapEff:", 7))
            have = (strtoull(line + 7, NULL, 16) >> 19) & 1; /* bit 19: CAP_SYS_PTRACE */
    if (f)
        fclose(f);
    return have;
}

static int yama_scope(void)
{
    FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
    int v = -1;
    if (f) {
        if (fscanf(f, "%d", &v) != 1)
            v = -1;
        fclose(f);
    }
    return v;
}

ri_status_t ri__perm(pid_t pid, ri_err_t *err)
{
    long tracer = ri__status_field(pid, "TracerPid", NULL);
    if (tracer > 0)
        return ri__fail(err, RI_E_TRACED, 0, tracer, NULL);
    err->yama = yama_scope();
    err->cap = ri__have_cap_ptrace();
    return ri__fail(err, RI_E_PERM, EPERM, 0, NULL);
}

void ri__maps_free(ri__maps_t *ms)
{
    free(ms->m);
    ms->m = NULL;
    ms->n = 0;
}

int ri__maps_read(pid_t pid, ri__maps_t *ms)
{
    char path[64], line[PATH_MAX + 128];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
    FILE *f = fopen(path, "r");
    ms->m = NULL;
    ms->n = 0;
    if (!f)
        return -1;
    size_t cap = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long long s, e, off, inode;
        char perms[8];
        int at = 0;
        if (sscanf(line, "%llx-%llx %7s %llx %*s %llu %n", &s, &e, perms, &off, &inode, &at) < 5 ||
            !at)
            continue;
        char *p = line + at;
        p[strcspn(p, "\n")] = 0;
        if (p[0] != '/')
            continue;
        if (ms->n == cap) {
            size_t want = cap ? cap * 2 : 64;
            ri__map_t *m = realloc(ms->m, want * sizeof *m);
            if (!m)
                break;
            ms->m = m;
            cap = want;
        }
        ri__map_t *m = &ms->m[ms->n++];
        m->start = s;
        m->end = e;
        m->offset = off;
        m->inode = inode;
        m->exec = perms[2] == 'x';
        snprintf(m->path, sizeof m->path, "%s", p);
    }
    fclose(f);
    return 0;
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

int ri__is_libc(const char *path)
{
    const char *b = base_name(path);
    return !strncmp(b, "libc.so", 7) || (!strncmp(b, "libc-", 5) && strstr(b, ".so"));
}

int ri__is_loader(const char *path)
{
    return !strncmp(base_name(path), "ld-", 3) && strstr(path, ".so");
}

int ri__is_librheap(const char *path)
{
    return !strncmp(base_name(path), "librheap", 8);
}

const ri__map_t *ri__find_module(const ri__maps_t *ms, int (*match)(const char *))
{
    for (size_t i = 0; i < ms->n; i++)
        if (ms->m[i].offset == 0 && match(ms->m[i].path))
            return &ms->m[i];
    return NULL;
}

void ri__in_root(pid_t pid, const char *path, char *buf, size_t len)
{
    snprintf(buf, len, "/proc/%d/root%s", (int)pid, path);
}

int ri__same_file(const char *a, const char *b)
{
    struct stat x, y;
    return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

int ri_alive(pid_t pid)
{
    char path[64], state = 0;
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    /* "pid (comm) S ...": the state follows the last ')', as comm may hold one. */
    char line[1024];
    if (fgets(line, sizeof line, f)) {
        char *close = strrchr(line, ')');
        if (close && close[1] == ' ')
            state = close[2];
    }
    fclose(f);
    return state && state != 'Z' && state != 'X';
}

ri_status_t ri_place_dir(pid_t pid, char *ours, char *theirs, size_t len, ri_err_t *err)
{
    char there[PATH_MAX + 64];
    ri__in_root(pid, ours, there, sizeof there);
    if (ri__same_file(ours, there)) {
        snprintf(theirs, len, "%s", ours);
    } else {
        rmdir(ours);
        char tmp[PATH_MAX];
        ri__in_root(pid, "/tmp", tmp, sizeof tmp);
        if (snprintf(ours, len, "%s/rheap-attach-XXXXXX", tmp) >= (int)len || !mkdtemp(ours))
            return ri__fail(err, RI_E_DIR, errno, 0, tmp);
        snprintf(theirs, len, "%s", ours + strlen(tmp) - strlen("/tmp"));
    }
    long euid = -1, egid = -1; /* the second numbers of Uid and Gid: the effective ids */
    ri__status_field(pid, "Uid", &euid);
    ri__status_field(pid, "Gid", &egid);
    if (euid >= 0 && egid >= 0 && (uid_t)euid != geteuid() &&
        chown(ours, (uid_t)euid, (gid_t)egid) != 0)
        return ri__fail(err, RI_E_CHOWN, errno, euid, ours);
    return RI_OK;
}
