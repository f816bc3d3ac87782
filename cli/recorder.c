/*
 * recorder.c: what the commands that record (rheap run, rheap attach) share: finding librheap,
 * checking a recorder setting given as an option, the private directory the recordings go to,
 * finding the recordings in it, and removing it once they are converted.
 */
#define _GNU_SOURCE /* nftw */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rip.h>

#include "cli.h"

int cli__check_setting(rheap__setting_id_t id, const char **value)
{
    uint64_t v;
    if (!*value)
        return 0;
    int st = rheap__setting_parse(id, *value, &v);
    if (st == RHEAP__SETTING_BAD) {
        char expected[96];
        cli__error(stderr, "%s %s: expected %s", rheap__settings[id].option, *value,
                   rheap__setting_expected(id, expected, sizeof expected));
        return -1;
    }
    if (st == RHEAP__SETTING_EMPTY)
        *value = NULL;
    return 0;
}

int cli__setting_option(const char *cmd, int argc, char **argv, int *i,
                        const char *values[RHEAP__SET_COUNT])
{
    const char *a = argv[*i];
    for (int id = 0; id < RHEAP__SET_COUNT; id++) {
        const rheap__setting_t *s = &rheap__settings[id];
        size_t n = s->option ? strlen(s->option) : 0;
        if (!n || strncmp(a, s->option, n) != 0)
            continue;
        if (s->flag && !a[n]) {
            values[id] = s->flag;
            return 1;
        }
        if (s->flag)
            continue;
        if (a[n] == '=') {
            values[id] = a + n + 1;
            return 1;
        }
        if (a[n])
            continue;
        if (*i + 1 >= argc) {
            cli__error(stderr, "%s needs a value (try rheap %s --help)", a, cmd);
            return -1;
        }
        values[id] = argv[++*i];
        return 1;
    }
    return 0;
}

/* The word in the help's first column for a setting's value, by its type. */
static const char *value_word(const rheap__setting_t *s)
{
    if (s->flag)
        return "";
    switch (s->type) {
    case RHEAP__TYPE_RATE: return " R";
    case RHEAP__TYPE_SIGNAL: return " SIG";
    case RHEAP__TYPE_PATH: return " DIR";
    default: return " N";
    }
}

void cli__setting_usage(FILE *f)
{
    for (int id = 0; id < RHEAP__SET_COUNT; id++) {
        const rheap__setting_t *s = &rheap__settings[id];
        if (!s->option)
            continue;
        char head[64], range[96];
        snprintf(head, sizeof head, "%s%s", s->option, value_word(s));
        rheap__setting_range((rheap__setting_id_t)id, range, sizeof range);
        /* The table's line breaks are only a suggestion: the text is wrapped here, with the
         * range joined to its first sentence, to the help's width. */
        char text[512];
        const char *nl = strchr(s->help, '\n');
        int first = nl ? (int)(nl - s->help) : (int)strlen(s->help);
        snprintf(text, sizeof text, "%.*s%s%s", first, s->help, range, nl ? nl : "");
        fprintf(f, "  %-19s ", head);
        cli__wrap(f, 22, 22, text);
    }
}

static int readable(const char *p)
{
    return access(p, R_OK) == 0;
}

int cli__find_library(char *buf, size_t len)
{
    const char *env = getenv("RHEAP_LIBRARY");
    if (env && *env) {
        if (!readable(env)) {
            cli__error(stderr, "RHEAP_LIBRARY=%s: %s", env, strerror(errno));
            return -1;
        }
        if (!realpath(env, buf))
            snprintf(buf, len, "%s", env);
        return 0;
    }
    const char *dirs[] = {RHEAP_INSTALL_LIBDIR, "lib", "libtrace"};
    char p[PATH_MAX];
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
        if (cli__install_path(dirs[i], "librheap.so", p, sizeof p) == 0 && readable(p) &&
            realpath(p, buf))
            return 0;
    char bindir[PATH_MAX];
    if (cli__exe_dir(bindir, sizeof bindir) != 0)
        snprintf(bindir, sizeof bindir, "BINDIR");
    cli__error(stderr,
               "cannot find librheap.so (looked in %s/../%s, %s/../lib and %s/../libtrace); "
               "set RHEAP_LIBRARY to its path",
               bindir, RHEAP_INSTALL_LIBDIR, bindir, bindir);
    return -1;
}

int cli__make_private_dir(const char *dir, const char *output, const char *prefix, char *buf,
                          size_t len)
{
    char parent[PATH_MAX];
    if (dir) {
        snprintf(parent, sizeof parent, "%s", dir);
    } else {
        snprintf(parent, sizeof parent, "%s", output);
        char *slash = strrchr(parent, '/');
        if (!slash)
            snprintf(parent, sizeof parent, ".");
        else if (slash == parent)
            parent[1] = 0;
        else
            *slash = 0;
    }
    char abs[PATH_MAX];
    if (!realpath(parent, abs)) {
        cli__error(stderr, "%s: %s; %s", parent, strerror(errno),
                   dir ? "--dir needs an existing directory" : "the output's directory must exist");
        return -1;
    }
    if (snprintf(buf, len, "%s/%s-XXXXXX", abs, prefix) >= (int)len || !mkdtemp(buf)) {
        cli__error(stderr, "cannot make a directory for the recordings in %s: %s", abs,
                   strerror(errno));
        return -1;
    }
    return 0;
}

static int rm_entry(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
    (void)sb;
    (void)ftw;
    return type == FTW_DP ? rmdir(path) : unlink(path);
}

void cli__remove_tree(const char *dir)
{
    if (nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS) != 0)
        cli__warning(stderr, "could not remove %s: %s", dir, strerror(errno));
}

void cli__lower_priority(int steps)
{
    errno = 0;
    int now = getpriority(PRIO_PROCESS, 0);
    if (errno == 0)
        (void)setpriority(PRIO_PROCESS, 0, now + steps);
}

/* A build's recordings are thousands of files: removing them took 5 to 14 s where the file
 * system gives each freed block back to the disk at once (ext4 mounted with `discard`), after a
 * database that was ready. A process of its own removes them after rheap has exited: the child
 * forks again and exits, so the remover is nobody's to wait for, in a session of its own (a
 * Ctrl-C meant for the next command does not stop it) at the lowest priority, with /dev/null
 * for its standard files (a pipe reading rheap's output ends when rheap does). Where it cannot
 * be started, the caller removes them itself. */
void cli__remove_tree_detached(const char *dir)
{
    fflush(NULL);
    pid_t child = fork();
    if (child < 0) {
        cli__remove_tree(dir);
        return;
    }
    if (child == 0) {
        setsid();
        if (fork() != 0)
            _exit(0);
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        for (int fd = 0; fd < 3 && null >= 0; fd++)
            dup2(null, fd);
        cli__lower_priority(19);
        nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
        _exit(0);
    }
    while (waitpid(child, NULL, 0) < 0 && errno == EINTR)
        ;
}

static int cmp_rec(const void *a, const void *b)
{
    const cli__rec_t *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return x->n < y->n ? -1 : x->n > y->n;
}

static int has_process_file(const char *dir)
{
    char path[PATH_MAX];
    if ((size_t)snprintf(path, sizeof path, "%s/process.rip", dir) >= sizeof path)
        return 1; /* too long to check: the conversion will say what is wrong */
    return access(path, F_OK) == 0;
}

cli__rec_t *cli__collect_recordings(const char *recdir, size_t *n, int quiet)
{
    return cli__collect_recordings_seen(recdir, n, quiet, NULL, NULL);
}

cli__rec_t *cli__collect_recordings_seen(const char *recdir, size_t *n, int quiet,
                                         int (*seen)(void *user, const char *path), void *user)
{
    *n = 0;
    DIR *d = opendir(recdir);
    if (!d)
        return NULL;
    cli__rec_t *recs = NULL;
    size_t cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        uint32_t pid, num;
        if (rip_recording_name_parse(e->d_name, &pid, &num) != 0)
            continue;
        if (rheap_grow(&recs, &cap, *n, sizeof *recs, 8) != 0)
            break;
        size_t plen = strlen(recdir) + strlen(e->d_name) + 2;
        char *p = malloc(plen);
        if (!p)
            break;
        snprintf(p, plen, "%s/%s", recdir, e->d_name);
        /* A process still running when the wait was stopped may have made its directory and
         * not yet its process file: nothing of it can be converted. */
        if (!(seen && seen(user, p)) && !has_process_file(p)) {
            if (!quiet)
                cli__note(stderr,
                          "%s: a process was starting to record when the wait "
                          "stopped; left out",
                          p);
            free(p);
            continue;
        }
        recs[*n].path = p;
        recs[*n].pid = pid;
        recs[*n].n = num;
        (*n)++;
    }
    closedir(d);
    if (*n)
        qsort(recs, *n, sizeof *recs, cmp_rec);
    return recs;
}

void cli__free_recordings(cli__rec_t *recs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(recs[i].path);
    free(recs);
}
