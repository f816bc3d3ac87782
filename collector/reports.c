/*
 * reports.c: /report?pid=P of `rheap serve`: `rheap report --html`'s page of a running process,
 * made on demand. A report needs a conversion, seconds for a big recording, so a child process
 * makes it (fork; the child closes its copies of the sockets, converts the process's recordings
 * as far as they are written into a private temporary directory, as `rheap snapshot -o DB`
 * does, and writes the page there), and the collector's loop goes on meanwhile; a failure costs
 * the child only. The loop polls the children and answers with the page, or with the child's
 * messages and 500; a child past its time is killed.
 */
#define _GNU_SOURCE /* mkdtemp */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "collector.h"

static void remove_report_dir(const char *dir)
{
    static const char *const files[] = {"report.db", "report.html", "errors"};
    char path[4200];
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        unlink(path);
    }
    rmdir(dir);
}

/* In the child: the recordings of pid converted as far as they are written, then the page.
 * Its messages go to DIR/errors. Never returns. */
static void make_report(sv__host_t *h, sv__http_t *http, uint32_t pid, const char *dir)
{
    sv__http_forget(http);
    char path[4200];
    snprintf(path, sizeof path, "%s/errors", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd >= 0) {
        dup2(fd, STDERR_FILENO);
        close(fd);
    }
    char db[4200], html[4200];
    snprintf(db, sizeof db, "%s/report.db", dir);
    snprintf(html, sizeof html, "%s/report.html", dir);
    int rc = sv__convert_pid(h, pid, db, 1);
    if (rc == RHEAP_EXIT_OK || rc == RHEAP_EXIT_WARNINGS) {
        char *args[] = {(char *)"--html", (char *)"-o", html, db, NULL};
        rc = cli__cmd_report_html(4, args);
    }
    fflush(stderr);
    _exit(rc == RHEAP_EXIT_OK ? 0 : 1);
}

int sv__report_start(sv__reports_t *rs, sv__host_t *h, sv__http_t *http, int client,
                     uint32_t pid, char *err, size_t errlen)
{
    if (rs->n == SV_MAX_REPORTS) {
        snprintf(err, errlen, "%d reports are being made; ask again later", SV_MAX_REPORTS);
        return 503;
    }
    sv__report_t *rp = &rs->r[rs->n];
    const char *tmp = getenv("TMPDIR");
    snprintf(rp->dir, sizeof rp->dir, "%s/rheap-report-XXXXXX", tmp && *tmp ? tmp : P_tmpdir);
    if (!mkdtemp(rp->dir)) {
        snprintf(err, errlen, "no directory for the report: %s", strerror(errno));
        return 500;
    }
    fflush(stderr);
    pid_t child = fork();
    if (child == 0)
        make_report(h, http, pid, rp->dir);
    if (child < 0) {
        remove_report_dir(rp->dir);
        snprintf(err, errlen, "the report could not be started: %s", strerror(errno));
        return 500;
    }
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    rp->client = client;
    rp->child = child;
    rp->due = (double)now.tv_sec + now.tv_nsec / 1e9 + SV_REPORT_S;
    rs->n++;
    sv__http_defer(http, client, SV_REPORT_S);
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
        if (cli__grow(&buf, &cap, *len + 65536, 1, 65536 * 2) != 0) {
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

void sv__reports_finish(sv__reports_t *rs, sv__http_t *http)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double t = (double)now.tv_sec + now.tv_nsec / 1e9;
    for (size_t i = 0; i < rs->n;) {
        sv__report_t *rp = &rs->r[i];
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
            sv__http_respond(http, rp->client, 500, "text/plain; charset=utf-8", late,
                             sizeof late - 1);
        } else {
            char path[4200];
            size_t len = 0;
            int ok = done > 0 && WIFEXITED(ws) && WEXITSTATUS(ws) == 0;
            snprintf(path, sizeof path, "%s/%s", rp->dir, ok ? "report.html" : "errors");
            char *body = slurp(path, &len);
            if (ok && body)
                sv__http_respond(http, rp->client, 200, "text/html; charset=utf-8", body, len);
            else
                sv__http_respond(http, rp->client, 500, "text/plain; charset=utf-8",
                                 body ? body : "the report could not be made\n",
                                 body ? len : strlen("the report could not be made\n"));
            free(body);
        }
        remove_report_dir(rp->dir);
        rs->r[i] = rs->r[--rs->n];
    }
}


void sv__reports_stop(sv__reports_t *rs)
{
    for (size_t i = 0; i < rs->n; i++) {
        kill(rs->r[i].child, SIGKILL);
        waitpid(rs->r[i].child, NULL, 0);
        remove_report_dir(rs->r[i].dir);
    }
    rs->n = 0;
}
