/*
 * reports.c: /report?pid=P of the server: the HTML report of a running process, made on demand.
 * A report needs a conversion, seconds for a big recording, so a child process makes it (fork;
 * the child closes its copies of the sockets and calls the caller's rc_report_fn, which writes
 * the page into a private temporary directory: the `rheap` command converts the process's
 * recordings as far as they are written there and runs `rheap report --html` on them), and the
 * server's loop goes on meanwhile; a failure costs the child only. The loop polls the children
 * and answers with the page, or with the child's messages and 500; a child past its time is
 * killed.
 */
#define _GNU_SOURCE /* mkdtemp */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collector.h"

/* The directory and the files in it: the page, the messages and whatever the report's maker
 * put there (the database it was made from). */
static void remove_report_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        char path[4400];
        while ((e = readdir(d)))
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
                snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
                unlink(path);
            }
        closedir(d);
    }
    rmdir(dir);
}

/* In the child: the caller's maker writes the page. Its messages go to DIR/errors. Never
 * returns. */
static void make_report(rc_host_t *h, rc__http_t *http, uint32_t pid, const char *dir,
                        rc_report_fn make, void *user)
{
    rc__http_forget(http);
    char path[4200];
    snprintf(path, sizeof path, "%s/errors", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd >= 0) {
        dup2(fd, STDERR_FILENO);
        close(fd);
    }
    int rc = make(user, h, pid, dir);
    fflush(stderr);
    _exit(rc == 0 ? 0 : 1);
}

int rc__report_start(rc__reports_t *rs, rc_host_t *h, rc__http_t *http, int client,
                     uint32_t pid, rc_report_fn make, void *user, char *err, size_t errlen)
{
    if (rs->n == RC__MAX_REPORTS) {
        snprintf(err, errlen, "%d reports are being made; ask again later", RC__MAX_REPORTS);
        return 503;
    }
    rc__report_t *rp = &rs->r[rs->n];
    const char *tmp = getenv("TMPDIR");
    snprintf(rp->dir, sizeof rp->dir, "%s/rheap-report-XXXXXX", tmp && *tmp ? tmp : P_tmpdir);
    if (!mkdtemp(rp->dir)) {
        snprintf(err, errlen, "no directory for the report: %s", strerror(errno));
        return 500;
    }
    fflush(stderr);
    pid_t child = fork();
    if (child == 0)
        make_report(h, http, pid, rp->dir, make, user);
    if (child < 0) {
        remove_report_dir(rp->dir);
        snprintf(err, errlen, "the report could not be started: %s", strerror(errno));
        return 500;
    }
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    rp->client = client;
    rp->child = child;
    rp->due = (double)now.tv_sec + now.tv_nsec / 1e9 + RC__REPORT_S;
    rs->n++;
    rc__http_defer(http, client, RC__REPORT_S);
    return 0;
}

/* Reads a whole small file. NULL when it cannot. */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t cap = 0;
    *len = 0;
    for (;;) {
        if (rheap_grow(&buf, &cap, *len + 65536, 1, 65536 * 2) != 0) {
            free(buf);
            fclose(f);
            return NULL;
        }
        size_t got = fread(buf + *len, 1, cap - *len, f);
        *len += got;
        if (got == 0)
            break;
    }
    fclose(f);
    return buf;
}

void rc__reports_finish(rc__reports_t *rs, rc__http_t *http)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double t = (double)now.tv_sec + now.tv_nsec / 1e9;
    for (size_t i = 0; i < rs->n;) {
        rc__report_t *rp = &rs->r[i];
        int ws = 0;
        pid_t done = waitpid(rp->child, &ws, WNOHANG);
        if (done == 0 && t < rp->due) {
            i++;
            continue;
        }
        if (done == 0) {
            kill(rp->child, SIGKILL);
            waitpid(rp->child, &ws, 0);
            static const char late[] = "the report took too long\n";
            rc__http_respond(http, rp->client, 500, "text/plain; charset=utf-8", late,
                             sizeof late - 1);
        } else {
            char path[4200];
            size_t len = 0;
            int ok = done > 0 && WIFEXITED(ws) && WEXITSTATUS(ws) == 0;
            snprintf(path, sizeof path, "%s/%s", rp->dir, ok ? "report.html" : "errors");
            char *body = slurp(path, &len);
            if (ok && body)
                rc__http_respond(http, rp->client, 200, "text/html; charset=utf-8", body, len);
            else
                rc__http_respond(http, rp->client, 500, "text/plain; charset=utf-8",
                                 body ? body : "the report could not be made\n",
                                 body ? len : strlen("the report could not be made\n"));
            free(body);
        }
        remove_report_dir(rp->dir);
        rs->r[i] = rs->r[--rs->n];
    }
}


void rc__reports_stop(rc__reports_t *rs)
{
    for (size_t i = 0; i < rs->n; i++) {
        kill(rs->r[i].child, SIGKILL);
        waitpid(rs->r[i].child, NULL, 0);
        remove_report_dir(rs->r[i].dir);
    }
    rs->n = 0;
}
