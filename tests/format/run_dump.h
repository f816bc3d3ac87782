/*
 * run_dump.h: `rheap dump PATH` run as the real command (the binary RHEAP_BIN, given by CMake),
 * its standard output and error copied into the caller's streams. The format tests check the
 * dump's text and exit status this way rather than by linking the command's code.
 */
#ifndef RHEAP_TEST_RUN_DUMP_H
#define RHEAP_TEST_RUN_DUMP_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

/* After test_util.h, whose CHECK it uses. */

/* Copies the whole of f (rewound) into out. */
static inline void run_dump_copy(FILE *f, FILE *out)
{
    char buf[8192];
    size_t n;
    rewind(f);
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        fwrite(buf, 1, n, out);
}

/* Runs `rheap dump path`; returns its exit status (-1 when it did not exit normally). */
static inline int run_dump(const char *path, FILE *out, FILE *err)
{
    FILE *o = tmpfile(), *e = tmpfile();
    CHECK(o && e);
    fflush(NULL);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        dup2(fileno(o), STDOUT_FILENO);
        dup2(fileno(e), STDERR_FILENO);
        execl(RHEAP_BIN, RHEAP_BIN, "dump", path, (char *)NULL);
        _exit(127);
    }
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    run_dump_copy(o, out);
    run_dump_copy(e, err);
    fclose(o);
    fclose(e);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

#endif
