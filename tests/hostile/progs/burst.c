/*
 * burst: a program whose recording takes a while to convert after it exits.
 *
 *   burst N FILE   makes N malloc(32) calls in a burst (keeping every block), frees every other
 *                  one, creates FILE and exits 0 at once
 *
 * The blocks live at the end and those freed are all rows of the database: the conversion
 * goes on for a while after the program is gone.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    long n = atol(argv[1]);
    void **blocks = malloc((size_t)n * sizeof *blocks);
    if (!blocks)
        return 3;
    for (long i = 0; i < n; i++)
        blocks[i] = malloc(32);
    for (long i = 0; i < n; i += 2)
        free(blocks[i]);
    int fd = open(argv[2], O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd < 0)
        return 4;
    close(fd);
    return 0;
}
