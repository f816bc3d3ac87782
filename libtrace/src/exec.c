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

static void *next(const char *name) {
    rheap__resolve();
    int guard = rheap__guard;
    rheap__guard = 1;
    void *f = dlsym(RTLD_NEXT, name);
    rheap__guard = guard;
    return f;
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
    static execve_fn real;
    if (!real)
        real = (execve_fn)next("execve");
    RUN_EXEC(real(path, argv, envp));
}

RHEAP_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[]) {
    static execvpe_fn real;
    if (!real)
        real = (execvpe_fn)next("execvpe");
    RUN_EXEC(real(file, argv, envp));
}

RHEAP_EXPORT int execv(const char *path, char *const argv[]) {
    return execve(path, argv, environ);
}

RHEAP_EXPORT int execvp(const char *file, char *const argv[]) {
    return execvpe(file, argv, environ);
}

RHEAP_EXPORT int fexecve(int fd, char *const argv[], char *const envp[]) {
    static fexecve_fn real;
    if (!real)
        real = (fexecve_fn)next("fexecve");
    RUN_EXEC(real(fd, argv, envp));
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
    static exit_fn real;
    if (!real)
        real = (exit_fn)next("_exit");
    rheap__before_exit();
    real(status);
    __builtin_unreachable();
}

RHEAP_EXPORT void _Exit(int status) {
    _exit(status);
}
