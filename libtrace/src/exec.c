/*
 * exec.c: exec and _exit, where a process image ends without running exit handlers.
 *
 * Before an exec replaces the program, the recording is completed (its buffered events would
 * vanish with the image); the new program, still preloaded through the environment, starts its
 * own recording, rip-<pid>-N/ since the pid is the same. If the exec fails, recording resumes
 * in a new directory. _exit and _Exit flush like exit does.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <unistd.h>

#include "internal.h"

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execvpe_fn)(const char *, char *const[], char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);
typedef void (*exit_fn)(int);
typedef pid_t (*fork_fn)(void);

static void *next(const char *name) {
    rheap__resolve();
    int guard = rheap__guard;
    rheap__guard = 1;
    void *f = dlsym(RTLD_NEXT, name);
    rheap__guard = guard;
    return f;
}

static execve_fn real_execve;
static execvpe_fn real_execvpe;
static fexecve_fn real_fexecve;
static exit_fn real_exit;
static fork_fn real_fork;

/* Resolved once at start-up (from the constructor, with no tracer lock held): a vfork child that
 * calls _exit or exec must not be the first to run dlsym, in memory it shares with its parent. */
void rheap__exec_init(void) {
    real_execve = (execve_fn)next("execve");
    real_execvpe = (execvpe_fn)next("execvpe");
    real_fexecve = (fexecve_fn)next("fexecve");
    real_exit = (exit_fn)next("_exit");
    real_fork = (fork_fn)next("_Fork");
}

/* Runs an exec function: completes the recording first, resumes it if the exec returns. */
#define RUN_EXEC(call)                                                                             \
    do {                                                                                           \
        int was_on = rheap__before_exec();                                                         \
        int r = (call);                                                                            \
        int saved = errno;                                                                         \
        rheap__after_failed_exec(was_on);                                                          \
        errno = saved;                                                                             \
        return r;                                                                                  \
    } while (0)

RHEAP_EXPORT int execve(const char *path, char *const argv[], char *const envp[]) {
    if (!real_execve)
        real_execve = (execve_fn)next("execve");
    RUN_EXEC(real_execve(path, argv, envp));
}

RHEAP_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[]) {
    if (!real_execvpe)
        real_execvpe = (execvpe_fn)next("execvpe");
    RUN_EXEC(real_execvpe(file, argv, envp));
}

RHEAP_EXPORT int execv(const char *path, char *const argv[]) {
    return execve(path, argv, environ);
}

RHEAP_EXPORT int execvp(const char *file, char *const argv[]) {
    return execvpe(file, argv, environ);
}

RHEAP_EXPORT int fexecve(int fd, char *const argv[], char *const envp[]) {
    if (!real_fexecve)
        real_fexecve = (fexecve_fn)next("fexecve");
    RUN_EXEC(real_fexecve(fd, argv, envp));
}

/* The execl family: gather the variadic arguments into an array on the stack. */
#define COLLECT_ARGS(arg0, ap, argv, envp_out)                                                     \
    size_t argc = 1;                                                                               \
    va_start(ap, arg0);                                                                            \
    while (va_arg(ap, const char *))                                                               \
        argc++;                                                                                    \
    va_end(ap);                                                                                    \
    char *argv[argc + 1];                                                                          \
    argv[0] = (char *)arg0;                                                                        \
    va_start(ap, arg0);                                                                            \
    for (size_t i = 1; i <= argc; i++)                                                             \
        argv[i] = va_arg(ap, char *);                                                              \
    envp_out;                                                                                      \
    va_end(ap)

RHEAP_EXPORT int execl(const char *path, const char *arg, ...) {
    va_list ap;
    COLLECT_ARGS(arg, ap, argv, (void)0);
    return execve(path, argv, environ);
}

RHEAP_EXPORT int execlp(const char *file, const char *arg, ...) {
    va_list ap;
    COLLECT_ARGS(arg, ap, argv, (void)0);
    return execvpe(file, argv, environ);
}

RHEAP_EXPORT int execle(const char *path, const char *arg, ...) {
    va_list ap;
    char **envp;
    COLLECT_ARGS(arg, ap, argv, envp = va_arg(ap, char **));
    return execve(path, argv, envp);
}

RHEAP_EXPORT void _exit(int status) {
    if (!real_exit)
        real_exit = (exit_fn)next("_exit");
    rheap__before_exit();
    real_exit(status);
    __builtin_unreachable();
}

/* _Fork is fork without the atfork handlers; glibc's own fork reaches it internally, not
 * through here. A child made by it must not write into its parent's files, so the tracer's
 * fork handling runs around it as around fork. */
RHEAP_EXPORT pid_t _Fork(void) {
    if (!real_fork)
        real_fork = (fork_fn)next("_Fork");
    rheap__fork_prepare();
    pid_t pid = real_fork();
    int saved = errno;
    if (pid == 0)
        rheap__fork_child();
    else
        rheap__fork_parent();
    errno = saved;
    return pid;
}

RHEAP_EXPORT void _Exit(int status) {
    _exit(status);
}
