/*
 * symbols.c: what the library reads from ELF files: the dynamic symbols of the process's libc
 * (its dlopen, dlsym and dlerror, read through /proc/PID/root), and whether an executable is
 * statically linked. librheap reaches a program through the dynamic loader; a statically
 * linked executable has none (no PT_INTERP program header), so its malloc cannot be
 * interposed or redirected.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "inject.h"

/* Reads len bytes at off of fd. 0 or -1. */
static int read_at(int fd, void *buf, size_t len, uint64_t off)
{
    return pread(fd, buf, len, (off_t)off) == (ssize_t)len ? 0 : -1;
}

int ri__elf_symbols(const char *path, const char *const *names, uint64_t *values, size_t n,
                     uint64_t *first_vaddr)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    Elf64_Ehdr eh;
    Elf64_Shdr *sh = NULL;
    Elf64_Sym *syms = NULL;
    char *strs = NULL;
    int rc = -1;
    memset(values, 0, n * sizeof *values);
    if (read_at(fd, &eh, sizeof eh, 0) != 0 || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
        eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(Elf64_Shdr) ||
        eh.e_phentsize != sizeof(Elf64_Phdr))
        goto out;
    *first_vaddr = 0;
    for (unsigned i = 0; i < eh.e_phnum; i++) {
        Elf64_Phdr ph;
        if (read_at(fd, &ph, sizeof ph, eh.e_phoff + (uint64_t)i * sizeof ph) != 0)
            goto out;
        if (ph.p_type == PT_LOAD) {
            *first_vaddr = ph.p_vaddr - ph.p_offset;
            break;
        }
    }
    sh = calloc(eh.e_shnum ? eh.e_shnum : 1, sizeof *sh);
    if (!sh || read_at(fd, sh, (size_t)eh.e_shnum * sizeof *sh, eh.e_shoff) != 0)
        goto out;
    for (unsigned i = 0; i < eh.e_shnum; i++) {
        if (sh[i].sh_type != SHT_DYNSYM || sh[i].sh_link >= eh.e_shnum ||
            sh[i].sh_entsize != sizeof(Elf64_Sym) || sh[i].sh_size > (256u << 20))
            continue;
        const Elf64_Shdr *st = &sh[sh[i].sh_link];
        if (st->sh_size > (256u << 20))
            continue;
        syms = malloc(sh[i].sh_size ? sh[i].sh_size : 1);
        strs = malloc(st->sh_size + 1);
        if (!syms || !strs || read_at(fd, syms, sh[i].sh_size, sh[i].sh_offset) != 0 ||
            read_at(fd, strs, st->sh_size, st->sh_offset) != 0)
            goto out;
        strs[st->sh_size] = 0;
        for (size_t s = 0; s < sh[i].sh_size / sizeof *syms; s++) {
            if (syms[s].st_name >= st->sh_size || syms[s].st_shndx == SHN_UNDEF ||
                !syms[s].st_value || ELF64_ST_TYPE(syms[s].st_info) != STT_FUNC)
                continue;
            for (size_t k = 0; k < n; k++)
                if (!values[k] && !strcmp(strs + syms[s].st_name, names[k]))
                    values[k] = syms[s].st_value;
        }
        rc = 0;
        break;
    }
out:
    free(syms);
    free(strs);
    free(sh);
    close(fd);
    return rc;
}

int ri_exe_is_static(const char *path)
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
        if (read_at(fd, &type, sizeof type, phoff + i * phentsize) != 0)
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
