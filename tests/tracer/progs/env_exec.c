/*
 * env_exec CHILD: starts CHILD (exec_child) with environments of the program's own, none of
 * which names librheap: execle, execve, fexecve and execveat with a one-variable list in a fork
 * child, posix_spawn with an empty list, posix_spawnp with PATH only; and once with an
 * LD_PRELOAD that leaves librheap out on purpose ("optout"). It prints each child's pid and
 * way; each child prints what it allocates.
 */
#include "progs.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

PROGS_SINK_DEFINITION;

static int wait_ok(pid_t pid)
{
    int status;
    return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
           WEXITSTATUS(status) == 0;
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    const char *child = argv[1];
    const char *ways[] = {"execle", "execve", "fexecve", "execveat", "optout"};
    for (int w = 0; w < 5; w++) {
        char *args[] = {"exec_child", (char *)ways[w], NULL};
        char *env[] = {"ENV_EXEC=1", NULL};
        char *optout[] = {"LD_PRELOAD=", NULL};
        pid_t pid = fork();
        if (pid == 0) {
            if (w == 0) {
                execle(child, "exec_child", ways[w], (char *)NULL, env);
            } else if (w == 1) {
                execve(child, args, env);
            } else if (w == 2) {
                int fd = open(child, O_RDONLY | O_CLOEXEC);
                fexecve(fd, args, env);
            } else if (w == 3) {
                execveat(AT_FDCWD, child, args, env, 0);
            } else {
                execve(child, args, optout);
            }
            _exit(127);
        }
        if (!wait_ok(pid))
            return 1;
        say("way=%s pid=%d\n", ways[w], (int)pid);
    }
    char *none[] = {NULL};
    char *path_only[] = {"PATH=/usr/bin:/bin", NULL};
    char *sargs[] = {"exec_child", "posix_spawn", NULL};
    pid_t pid;
    if (posix_spawn(&pid, child, NULL, NULL, sargs, none) != 0 || !wait_ok(pid))
        return 1;
    say("way=posix_spawn pid=%d\n", (int)pid);
    char *pargs[] = {"exec_child", "posix_spawnp", NULL};
    if (posix_spawnp(&pid, child, NULL, NULL, pargs, path_only) != 0 || !wait_ok(pid))
        return 1;
    say("way=posix_spawnp pid=%d\n", (int)pid);
    return 0;
}
