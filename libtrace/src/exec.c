/*
 * exec.c: exec, posix_spawn and _exit, where a process image ends or another begins.
 *
 * Before an exec replaces the program, the recording is completed (its buffered events would
 * vanish with the image); the new program, still preloaded through the environment, starts its
 * own recording, rip-<pid>-N/ since the pid is the same. If the exec fails, recording resumes
 * in a new directory. _exit and _Exit flush like exit does.
 *
 * Following: when librheap was preloaded, every program started by exec or posix_spawn is
 * preloaded too, even when the caller hands it an environment of its own (execve, execle,
 * posix_spawn with a short list): the LD_PRELOAD entry naming librheap and the RHEAP_*
 * variables the process started with are added where that environment lacks them. A program
 * that sets LD_PRELOAD without librheap in it keeps its child untraced on purpose; that child is
 * named in one stderr line. The new list is built on the stack (or, when long, in a mapping),
 * never with malloc: a vfork child may be the caller.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <spawn.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execvpe_fn)(const char *, char *const[], char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);
typedef int (*execveat_fn)(int, const char *, char *const[], char *const[], int);
typedef int (*spawn_fn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
                        const posix_spawnattr_t *, char *const[], char *const[]);
typedef void (*exit_fn)(int);
typedef pid_t (*fork_fn)(void);

void *rheap__next(const char *name) {
    rheap__resolve();
    int guard = rheap__tl.guard;
    rheap__tl.guard = 1;
    void *f = dlsym(RTLD_NEXT, name);
    rheap__tl.guard = guard;
    return f;
}

static execve_fn real_execve;
static execvpe_fn real_execvpe;
static fexecve_fn real_fexecve;
static execveat_fn real_execveat;
static spawn_fn real_spawn, real_spawnp;
static exit_fn real_exit;
static fork_fn real_fork;

/* ---- Following: what a child's environment must hold ---- */

#define FOLLOW_VARS 32

/* "LD_PRELOAD=<librheap's entry>" and the RHEAP_* variables, copied from the environment the
 * process started with; count 0 when librheap was not preloaded (nothing to follow). */
static struct {
    unsigned count;
    const char *var[FOLLOW_VARS]; /* var[0] is the LD_PRELOAD one */
    char text[8192];
} follow;

/* Whether `entry` ("NAME=VALUE") sets the variable named by name_eq ("NAME="). */
static int sets(const char *entry, const char *name_eq) {
    size_t n = strlen(name_eq);
    return strncmp(entry, name_eq, n) == 0;
}

/* The entry of an LD_PRELOAD value (separated by ':' or ' ') naming librheap, copied into `out`
 * as "LD_PRELOAD=<entry>"; 0 when there is none or it does not fit. */
static int preload_entry(const char *value, char *out, size_t cap) {
    const char *hit = strstr(value, "librheap");
    if (!hit)
        return 0;
    const char *start = hit, *end = hit;
    while (start > value && start[-1] != ':' && start[-1] != ' ')
        start--;
    while (*end && *end != ':' && *end != ' ')
        end++;
    static const char prefix[] = "LD_PRELOAD=";
    size_t len = (size_t)(end - start);
    if (sizeof prefix + len > cap)
        return 0;
    memcpy(out, prefix, sizeof prefix - 1);
    memcpy(out + sizeof prefix - 1, start, len);
    out[sizeof prefix - 1 + len] = 0;
    return 1;
}

static void follow_init(void) {
    size_t used = 0;
    for (char **e = environ; e && *e; e++)
        if (sets(*e, "LD_PRELOAD=") &&
            preload_entry(*e + strlen("LD_PRELOAD="), follow.text, sizeof follow.text)) {
            follow.var[0] = follow.text;
            used = strlen(follow.text) + 1;
            follow.count = 1;
        }
    if (!follow.count)
        return;
    for (char **e = environ; *e && follow.count < FOLLOW_VARS; e++) {
        size_t len = strlen(*e) + 1;
        if (!sets(*e, "RHEAP_") || used + len > sizeof follow.text)
            continue;
        memcpy(follow.text + used, *e, len);
        follow.var[follow.count++] = follow.text + used;
        used += len;
    }
}

/* Whether envp (a NULL-terminated list, or NULL) sets the variable of `var` ("NAME=..."). */
static int has_var(char *const envp[], const char *var) {
    size_t n = (size_t)(strchr(var, '=') - var) + 1;
    for (char *const *e = envp; e && *e; e++)
        if (strncmp(*e, var, n) == 0)
            return 1;
    return 0;
}

static size_t env_len(char *const envp[]) {
    size_t n = 0;
    while (envp && envp[n])
        n++;
    return n;
}

/* Pointers of a child's environment that the caller's stack holds (env_space[STACK_ENV]); a
 * longer list is mapped. */
#define STACK_ENV 128

/* The environment to start `what` with: envp itself when it needs nothing (not following,
 * everything there, or untraced on purpose: then one line says so), else a copy with what is
 * missing added, in `space` or in a mapping that env_done releases. When no mapping can be had,
 * envp, and a line says the child is not recorded. errno is kept. */
static char *const *env_for(char *const envp[], char **space, const char *what) {
    if (!follow.count)
        return envp;
    int saved = errno;
    char *const *env = envp;
    for (char *const *e = envp; e && *e; e++)
        if (sets(*e, "LD_PRELOAD=")) {
            if (!strstr(*e, "librheap")) {
                rheap__log(what, ": started with an LD_PRELOAD without librheap: not recorded",
                           NULL);
                goto done;
            }
            break;
        }
    size_t n = env_len(envp), missing = 0;
    for (unsigned i = 0; i < follow.count; i++)
        missing += !has_var(envp, follow.var[i]);
    if (!missing)
        goto done;
    size_t total = n + missing + 1;
    char **out = space;
    if (total > STACK_ENV) {
        void *m = mmap(NULL, total * sizeof *out, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) {
            rheap__log(what, ": no memory to add librheap to its environment: not recorded", NULL);
            goto done;
        }
        out = m;
    }
    size_t k = 0;
    for (unsigned i = 0; i < follow.count; i++)
        if (!has_var(envp, follow.var[i]))
            out[k++] = (char *)follow.var[i];
    for (size_t i = 0; i < n; i++)
        out[k++] = envp[i];
    out[k] = NULL;
    env = out;
done:
    errno = saved;
    return env;
}

/* After a start that returned (a spawn, or an exec that failed): a mapped list is released. */
static void env_done(char *const *env, char *const envp[], char **space) {
    if (env != envp && env != space)
        munmap((void *)env, (env_len(env) + 1) * sizeof *env);
}

/* Resolved once at start-up (from the constructor, with no tracer lock held): a vfork child that
 * calls _exit or exec must not be the first to run dlsym, in memory it shares with its parent. */
void rheap__exec_init(void) {
    real_execve = (execve_fn)rheap__next("execve");
    real_execvpe = (execvpe_fn)rheap__next("execvpe");
    real_fexecve = (fexecve_fn)rheap__next("fexecve");
    real_execveat = (execveat_fn)rheap__next("execveat");
    real_spawn = (spawn_fn)rheap__next("posix_spawn");
    real_spawnp = (spawn_fn)rheap__next("posix_spawnp");
    real_exit = (exit_fn)rheap__next("_exit");
    real_fork = (fork_fn)rheap__next("_Fork");
    follow_init();
}

/* Runs an exec function with the environment `env` (built from envp by env_for): completes the
 * recording first, resumes it if the exec returns. */
#define RUN_EXEC(call)                                                                             \
    do {                                                                                           \
        int was_on = rheap__before_exec();                                                         \
        int r = (call);                                                                            \
        int saved = errno;                                                                         \
        env_done(env, envp, env_space);                                                            \
        rheap__after_failed_exec(was_on);                                                          \
        errno = saved;                                                                             \
        return r;                                                                                  \
    } while (0)

RHEAP_EXPORT int execve(const char *path, char *const argv[], char *const envp[]) {
    if (!real_execve)
        real_execve = (execve_fn)rheap__next("execve");
    char *env_space[STACK_ENV];
    char *const *env = env_for(envp, env_space, path);
    RUN_EXEC(real_execve(path, argv, env));
}

RHEAP_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[]) {
    if (!real_execvpe)
        real_execvpe = (execvpe_fn)rheap__next("execvpe");
    char *env_space[STACK_ENV];
    char *const *env = env_for(envp, env_space, file);
    RUN_EXEC(real_execvpe(file, argv, env));
}

RHEAP_EXPORT int execv(const char *path, char *const argv[]) {
    return execve(path, argv, environ);
}

RHEAP_EXPORT int execvp(const char *file, char *const argv[]) {
    return execvpe(file, argv, environ);
}

RHEAP_EXPORT int fexecve(int fd, char *const argv[], char *const envp[]) {
    if (!real_fexecve)
        real_fexecve = (fexecve_fn)rheap__next("fexecve");
    char *env_space[STACK_ENV];
    char *const *env = env_for(envp, env_space, "the program of fexecve");
    RUN_EXEC(real_fexecve(fd, argv, env));
}

RHEAP_EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
                          int flags) {
    if (!real_execveat)
        real_execveat = (execveat_fn)rheap__next("execveat");
    if (!real_execveat) {
        errno = ENOSYS;
        return -1;
    }
    char *env_space[STACK_ENV];
    char *const *env = env_for(envp, env_space, path);
    RUN_EXEC(real_execveat(dirfd, path, argv, env, flags));
}

/* posix_spawn runs no fork handler and the child execs at once: only its environment matters
 * here. */
static int spawn(spawn_fn real, pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
                 const posix_spawnattr_t *attr, char *const argv[], char *const envp[]) {
    char *env_space[STACK_ENV];
    char *const *env = env_for(envp, env_space, path);
    int r = real(pid, path, fa, attr, argv, env);
    int saved = errno;
    env_done(env, envp, env_space);
    errno = saved;
    return r;
}

RHEAP_EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
                             const posix_spawnattr_t *attr, char *const argv[],
                             char *const envp[]) {
    if (!real_spawn)
        real_spawn = (spawn_fn)rheap__next("posix_spawn");
    return spawn(real_spawn, pid, path, fa, attr, argv, envp);
}

RHEAP_EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
                              const posix_spawnattr_t *attr, char *const argv[],
                              char *const envp[]) {
    if (!real_spawnp)
        real_spawnp = (spawn_fn)rheap__next("posix_spawnp");
    return spawn(real_spawnp, pid, file, fa, attr, argv, envp);
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
        real_exit = (exit_fn)rheap__next("_exit");
    rheap__before_exit();
    real_exit(status);
    __builtin_unreachable();
}

/* _Fork is fork without the atfork handlers; glibc's own fork reaches it internally, not
 * through here. A child made by it must not write into its parent's files, so the tracer's
 * fork handling runs around it as around fork. */
RHEAP_EXPORT pid_t _Fork(void) {
    if (!real_fork)
        real_fork = (fork_fn)rheap__next("_Fork");
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
