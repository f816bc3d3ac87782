/*
 * elf.c: what `rheap run` learns from the program's file before blaming itself for an empty
 * recording. librheap reaches a program through LD_PRELOAD, which only the dynamic loader
 * reads; a statically linked executable has no loader (no PT_INTERP program header), so its
 * malloc cannot be interposed and nothing is ever recorded.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

/* An executable regular file, as execvp would take it. */
static int runnable(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && access(path, X_OK) == 0;
}

int cli__exe_find(const char *name, char *buf, size_t len)
{
    if (strchr(name, '/')) {
        int n = snprintf(buf, len, "%s", name);
        return n > 0 && (size_t)n < len && runnable(buf) ? 0 : -1;
    }
    /* execvp's search: each PATH entry in turn, an empty one meaning the current directory,
     * and glibc's default list when PATH is unset. */
    const char *path = getenv("PATH");
    if (!path)
        path = "/bin:/usr/bin";
    for (const char *p = path;; p++) {
        const char *end = strchr(p, ':');
        size_t dl = end ? (size_t)(end - p) : strlen(p);
        int n =
            dl ? snprintf(buf, len, "%.*s/%s", (int)dl, p, name) : snprintf(buf, len, "%s", name);
        if (n > 0 && (size_t)n < len && runnable(buf))
            return 0;
        if (!end)
            return -1;
        p = end;
    }
}

/* Reads len bytes at off; 0 or -1. */
static int read_at(int fd, void *buf, size_t len, off_t off)
{
    return pread(fd, buf, len, off) == (ssize_t)len ? 0 : -1;
}

int cli__exe_is_static(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    unsigned char ident[EI_NIDENT];
    int result = 0;
    if (read_at(fd, ident, sizeof ident, 0) != 0 || memcmp(ident, ELFMAG, SELFMAG) != 0) {
        close(fd); /* not ELF: a script, whose interpreter is another file */
        return 0;
    }
    /* The program headers of the file's own class, read in this machine's byte order: a file
     * of the other order could not have run here with librheap preloaded anyway. */
    uint64_t phoff;
    size_t phnum, phentsize, want;
    if (ident[EI_CLASS] == ELFCLASS64) {
        Elf64_Ehdr eh;
        if (read_at(fd, &eh, sizeof eh, 0) != 0)
            goto bad;
        phoff = eh.e_phoff, phnum = eh.e_phnum, phentsize = eh.e_phentsize;
        want = sizeof(Elf64_Phdr);
    } else if (ident[EI_CLASS] == ELFCLASS32) {
        Elf32_Ehdr eh;
        if (read_at(fd, &eh, sizeof eh, 0) != 0)
            goto bad;
        phoff = eh.e_phoff, phnum = eh.e_phnum, phentsize = eh.e_phentsize;
        want = sizeof(Elf32_Phdr);
    } else {
        goto bad;
    }
    if (phentsize < want)
        goto bad;
    result = 1;
    for (size_t i = 0; i < phnum && result == 1; i++) {
        uint32_t type; /* p_type is the first field of both classes */
        if (read_at(fd, &type, sizeof type, (off_t)(phoff + i * phentsize)) != 0)
            goto bad;
        if (type == PT_INTERP)
            result = 0;
    }
    close(fd);
    return result;
bad:
    close(fd);
    return -1;
}
