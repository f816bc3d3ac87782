/*
 * close_fds: behaves like a daemon that closes every inherited descriptor, then opens a file
 * of its own (which gets the lowest free number, possibly one the recorder used) and writes to
 * it while allocating enough for the recorder to flush several times. The program's file must
 * hold exactly what the program wrote: the recorder may stop, but never write into it.
 */
#include "progs.h"

#include <fcntl.h>

PROGS_SINK_DEFINITION;

static void churn(int n)
{
    for (int i = 0; i < n; i++) {
        void *p = malloc(16 + (size_t)(i % 500));
        SINK(p);
        free(p);
    }
}

int main(void)
{
    churn(1000);
    for (int fd = 3; fd < 1024; fd++)
        close(fd);
    int fd = open("data.txt", O_CREAT | O_WRONLY | O_TRUNC, 0600);
    if (fd < 0)
        return 1;
    static const char text[] = "the program's own data\n";
    for (int i = 0; i < 100; i++) {
        if (write(fd, text, sizeof text - 1) != (ssize_t)(sizeof text - 1))
            return 1;
        churn(2000);
    }
    close(fd);

    fd = open("data.txt", O_RDONLY);
    char buf[8192];
    ssize_t n = read(fd, buf, sizeof buf);
    close(fd);
    if (n != 100 * (ssize_t)(sizeof text - 1)) {
        say("data.txt has %zd bytes, expected %zu\n", n, 100 * (sizeof text - 1));
        return 1;
    }
    for (int i = 0; i < 100; i++)
        if (memcmp(buf + i * (ssize_t)(sizeof text - 1), text, sizeof text - 1) != 0) {
            say("data.txt corrupted at line %d\n", i);
            return 1;
        }
    say("data intact\n");
    return 0;
}
