/*
 * file_limit: a program that meets a file size limit (RLIMIT_FSIZE) while it is recorded.
 *
 *   file_limit lower   allocates once (the recording starts), lowers its own limit to 1 KiB,
 *                      then makes 200,000 malloc/free pairs
 *   file_limit churn   the 200,000 pairs alone (run it under `ulimit -f 0`)
 *   file_limit data    closes stderr, opens its data file data.txt (it gets descriptor 2),
 *                      writes one line there, lowers the limit and churns as `lower`
 *
 * Untraced, each exits 0 and prints "pairs 200000". The limit kills with SIGXFSZ whoever writes
 * past it, so the recorder must stop short of it, and must not write its message into data.txt.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#define PAIRS 200000

static void lower(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_FSIZE, &rl) != 0)
        exit(2);
    rl.rlim_cur = 1024;
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
        exit(2);
}

static void churn(void)
{
    for (int i = 0; i < PAIRS; i++) {
        void *volatile p = malloc((size_t)(i % 200) + 1);
        free(p);
    }
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    void *volatile first = malloc(10);
    if (!strcmp(mode, "data")) {
        close(2);
        int fd = open("data.txt", O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd != 2)
            return 3;
        static const char line[] = "program data\n";
        if (write(fd, line, sizeof line - 1) != (ssize_t)sizeof line - 1)
            return 4;
    }
    if (strcmp(mode, "churn"))
        lower();
    churn();
    free(first);
    printf("pairs %d\n", PAIRS);
    return 0;
}
