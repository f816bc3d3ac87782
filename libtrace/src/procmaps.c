/*
 * procmaps.c: the process an attach is about, read from outside it: its file-backed mappings
 * (/proc/PID/maps) and the dynamic symbols of a file it maps, from which `rheap attach` finds
 * the functions it calls in the process (rheap_ptrace.h).
 */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rheap_ptrace.h"

/* Room for element n of *m (holding *cap): doubles it. 0, or -1 when out of memory. */
static int grow(rheap__pt_map_t **m, size_t *cap, size_t n, size_t elem, size_t first)
{
    if (n < *cap)
        return 0;
    size_t nc = *cap ? *cap * 2 : first;
    rheap__pt_map_t *g = realloc(*m, nc * elem);
    if (!g)
        return -1;
    *m = g;
    *cap = nc;
    return 0;
}

void rheap__pt_maps_free(rheap__pt_maps_t *ms)
{
    free(ms->m);
    ms->m = NULL;
    ms->n = 0;
}

int rheap__pt_maps_read(pid_t pid, rheap__pt_maps_t *ms)
{
    char path[64], line[PATH_MAX + 128];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
    FILE *f = fopen(path, "r");
    ms->m = NULL;
    ms->n = 0;
    if (!f)
        return -1;
    size_t cap = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long long s, e, off, inode;
        char perms[8];
        int at = 0;
        if (sscanf(line, "%llx-%llx %7s %llx %*s %llu %n", &s, &e, perms, &off, &inode, &at) < 5 ||
            !at)
            continue;
        char *p = line + at;
        p[strcspn(p, "\n")] = 0;
        if (p[0] != '/')
            continue;
        if (grow(&ms->m, &cap, ms->n, sizeof *ms->m, 64) != 0)
            break;
        rheap__pt_map_t *m = &ms->m[ms->n++];
        m->start = s;
        m->end = e;
        m->offset = off;
        m->inode = inode;
        m->exec = perms[2] == 'x';
        snprintf(m->path, sizeof m->path, "%s", p);
    }
    fclose(f);
    return 0;
}

/* Reads len bytes at off of fd. 0 or -1. */
static int read_at(int fd, void *buf, size_t len, uint64_t off)
{
    return pread(fd, buf, len, (off_t)off) == (ssize_t)len ? 0 : -1;
}

int rheap__pt_elf_symbols(const char *path, const char *const *names, uint64_t *values, size_t n,
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
