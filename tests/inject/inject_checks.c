/*
 * inject_checks.c: the injection library's answers where they are known exactly: every status
 * has its sentence; ri_exe_is_static on ELF headers written here (no PT_INTERP: static; one:
 * dynamic; cut short or missing: -1; a script: 0); ri_alive on this process, a zombie and a
 * reaped child; ri_open's refusals (this process itself, a pid that no longer exists, a
 * librheap path that is not there, a child this test traces, with the tracer's pid) and its
 * RI_OK on a running child; ri_place_dir on a directory the child sees at the same path.
 * Usage: inject_checks LIBRHEAP.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rheap_inject.h>

#include "check.h"

static char tmpdir[256]; /* short enough that every path under it fits PATH_MAX */

static void write_file(const char *path, const void *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0755);
    CHECK(fd >= 0);
    CHECK(write(fd, data, len) == (ssize_t)len);
    close(fd);
}

/* An ELF64 header for this machine with nph program headers of type types[i]. */
static void write_elf(const char *path, const uint32_t *types, int nph, size_t cut)
{
    unsigned char buf[sizeof(Elf64_Ehdr) + 4 * sizeof(Elf64_Phdr)] = {0};
    Elf64_Ehdr *eh = (Elf64_Ehdr *)buf;
    memcpy(eh->e_ident, ELFMAG, SELFMAG);
    eh->e_ident[EI_CLASS] = ELFCLASS64;
    eh->e_ident[EI_DATA] = ELFDATA2LSB;
    eh->e_ident[EI_VERSION] = EV_CURRENT;
    eh->e_type = ET_EXEC;
    eh->e_phoff = sizeof *eh;
    eh->e_phentsize = sizeof(Elf64_Phdr);
    eh->e_phnum = (Elf64_Half)nph;
    for (int i = 0; i < nph; i++) {
        Elf64_Phdr ph = {0};
        ph.p_type = types[i];
        memcpy(buf + sizeof *eh + (size_t)i * sizeof ph, &ph, sizeof ph);
    }
    size_t len = sizeof *eh + (size_t)nph * sizeof(Elf64_Phdr);
    write_file(path, buf, cut && cut < len ? cut : len);
}

static void statuses(void)
{
#define NAME(name, text) #name,
    static const char *const names[] = {RI_STATUS_LIST(NAME)};
#undef NAME
    int n = (int)(sizeof names / sizeof names[0]);
    CHECK_INT(RI_OK, 0);
    CHECK_INT(RI_E_NOMEM, n - 1);
    for (int i = 0; i < n; i++) {
        const char *s = ri_status_str(i);
        CHECK(s[0] != 0);
        CHECK(strcmp(s, "unknown status") != 0);
        for (int j = 0; j < i; j++)
            CHECK(strcmp(s, ri_status_str(j)) != 0);
    }
    CHECK_STR(ri_status_str(-1), "unknown status");
    CHECK_STR(ri_status_str(n), "unknown status");
    CHECK_STR(ri_status_str(RI_E_STATIC),
              "the process is statically linked, so its malloc cannot be redirected");
}

static void exe_is_static(void)
{
    char p[PATH_MAX];
    const uint32_t load_only[] = {PT_LOAD, PT_LOAD}, dynamic[] = {PT_PHDR, PT_INTERP, PT_LOAD};
    snprintf(p, sizeof p, "%s/static", tmpdir);
    write_elf(p, load_only, 2, 0);
    CHECK_INT(ri_exe_is_static(p), 1);
    snprintf(p, sizeof p, "%s/dynamic", tmpdir);
    write_elf(p, dynamic, 3, 0);
    CHECK_INT(ri_exe_is_static(p), 0);
    snprintf(p, sizeof p, "%s/cut", tmpdir); /* the PT_INTERP header cut off */
    write_elf(p, dynamic, 3, sizeof(Elf64_Ehdr) + sizeof(Elf64_Phdr) + 2);
    CHECK_INT(ri_exe_is_static(p), -1);
    snprintf(p, sizeof p, "%s/script", tmpdir);
    write_file(p, "#!/bin/sh\nexit 0\n", 17);
    CHECK_INT(ri_exe_is_static(p), 0);
    snprintf(p, sizeof p, "%s/missing", tmpdir);
    CHECK_INT(ri_exe_is_static(p), -1);
    CHECK_INT(ri_exe_is_static("/proc/self/exe"), 0); /* this test is dynamically linked */
}

static pid_t sleeper(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        for (;;)
            pause();
    }
    CHECK(pid > 0);
    return pid;
}

static void end(pid_t pid)
{
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

static void open_checks(const char *lib)
{
    ri_target_t *t = (ri_target_t *)1;
    ri_err_t err;
    CHECK_INT(ri_alive(getpid()), 1);
    CHECK_INT(ri_open(getpid(), lib, &t, &err), RI_E_SELF);
    CHECK(t == NULL);

    pid_t gone = fork();
    if (gone == 0)
        _exit(0);
    siginfo_t si;
    CHECK_INT(waitid(P_PID, (id_t)gone, &si, WEXITED | WNOWAIT), 0); /* ended, not reaped */
    CHECK_INT(ri_alive(gone), 0); /* a zombie */
    waitpid(gone, NULL, 0);
    CHECK_INT(ri_alive(gone), 0);
    CHECK_INT(ri_open(gone, lib, &t, &err), RI_E_NO_PROCESS);
    CHECK_INT(err.status, RI_E_NO_PROCESS);

    pid_t child = sleeper();
    CHECK_INT(ri_alive(child), 1);
    CHECK_INT(ri_open(child, lib, &t, &err), RI_OK);
    CHECK(t != NULL);
    const ri_timings_t *tm = ri_timings(t);
    CHECK_U(tm->borrowed, 0);
    CHECK_U(tm->commit_threads, 0);
    ri_close(t);

    char missing[PATH_MAX];
    snprintf(missing, sizeof missing, "%s/librheap.so", tmpdir);
    CHECK_INT(ri_open(child, missing, &t, &err), RI_E_LIB_UNSEEN);
    CHECK_STR(err.text, missing);

    char ours[PATH_MAX], theirs[PATH_MAX];
    snprintf(ours, sizeof ours, "%s/rec", tmpdir);
    CHECK_INT(mkdir(ours, 0700), 0);
    CHECK_INT(ri_place_dir(child, ours, theirs, sizeof ours, &err), RI_OK);
    CHECK_STR(theirs, ours); /* the same filesystem: the same path */
    rmdir(ours);

    if (ptrace(PTRACE_SEIZE, child, 0, 0) == 0) {
        CHECK_INT(ri_open(child, lib, &t, &err), RI_E_TRACED);
        CHECK_INT(err.id, getpid());
    } else {
        fprintf(stderr, "inject_checks: this machine does not let a test trace its child (%s); "
                        "the traced case is left out\n", strerror(errno));
    }
    end(child);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: inject_checks LIBRHEAP\n");
        return 2;
    }
    const char *base = getenv("TMPDIR");
    int n = snprintf(tmpdir, sizeof tmpdir, "%s/inject-checks-XXXXXX",
                     base && *base ? base : "/tmp");
    if (n < 0 || (size_t)n >= sizeof tmpdir || !mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 2;
    }
    char lib[PATH_MAX];
    if (!realpath(argv[1], lib)) {
        perror(argv[1]);
        return 2;
    }
    statuses();
    exe_is_static();
    open_checks(lib);
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd) != 0)
        CHECK_FAIL("removing %s failed", tmpdir);
    return check_failures ? 1 : 0;
}
