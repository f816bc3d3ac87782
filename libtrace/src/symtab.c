/*
 * symtab.c: a module's symbol tables, read from its file. unseen.c looks in them for the names
 * that identify an allocator, patch.c for the entry points it hooks. The file is mapped
 * read-only with raw system calls (nothing is allocated, which matters at initialization, when
 * the allocator may be one the tracer cannot see yet) and every offset is checked against its
 * size: a file that is not what it seems is simply not recognized.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "internal.h"

int rheap__elf_open(rheap__elf_t *e, const char *path)
{
    memset(e, 0, sizeof *e);
    int fd = rheap__sys_open(path, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct stat st;
    void *m = MAP_FAILED;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
        m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    rheap__sys_close(fd);
    if (m == MAP_FAILED)
        return -1;
    e->m = m;
    e->size = (size_t)st.st_size;
    const Elf64_Ehdr *eh = m;
    if (e->size < sizeof *eh || memcmp(e->m, ELFMAG, SELFMAG) != 0 ||
        e->m[EI_CLASS] != ELFCLASS64 || eh->e_shentsize != sizeof(Elf64_Shdr) ||
        eh->e_shoff > e->size || (e->size - eh->e_shoff) / sizeof(Elf64_Shdr) < eh->e_shnum ||
        (eh->e_phnum && (eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phoff > e->size ||
                         (e->size - eh->e_phoff) / sizeof(Elf64_Phdr) < eh->e_phnum))) {
        rheap__elf_close(e);
        return -1;
    }
    e->sh = (const Elf64_Shdr *)(e->m + eh->e_shoff);
    e->nsh = eh->e_shnum;
    e->ph = (const Elf64_Phdr *)(e->m + eh->e_phoff);
    e->nph = eh->e_phnum;
    for (unsigned i = 0; i < e->nsh; i++) {
        if (e->sh[i].sh_type == SHT_SYMTAB && !e->symtab)
            e->symtab = &e->sh[i];
        if (e->sh[i].sh_type == SHT_DYNSYM && !e->dynsym)
            e->dynsym = &e->sh[i];
    }
    return 0;
}

void rheap__elf_close(rheap__elf_t *e)
{
    if (e->m)
        munmap((void *)e->m, e->size);
    memset(e, 0, sizeof *e);
}

const Elf64_Sym *rheap__elf_func(const rheap__elf_t *e, const Elf64_Shdr *s, const char *name)
{
    if (!s || s->sh_link >= e->nsh || s->sh_entsize != sizeof(Elf64_Sym))
        return NULL;
    const Elf64_Shdr *str = &e->sh[s->sh_link];
    if (s->sh_offset > e->size || s->sh_size > e->size - s->sh_offset ||
        str->sh_offset > e->size || str->sh_size > e->size - str->sh_offset)
        return NULL;
    size_t len = strlen(name);
    const Elf64_Sym *syms = (const Elf64_Sym *)(e->m + s->sh_offset);
    const char *names = (const char *)(e->m + str->sh_offset);
    for (size_t k = 0, n = s->sh_size / sizeof(Elf64_Sym); k < n; k++) {
        /* An undefined symbol may still have a value (a program that takes a function's address
         * gets a PLT entry that stands for it): only a defined one is an allocator's. */
        if (syms[k].st_shndx == SHN_UNDEF || ELF64_ST_TYPE(syms[k].st_info) != STT_FUNC ||
            syms[k].st_name >= str->sh_size || str->sh_size - syms[k].st_name <= len)
            continue;
        const char *sym = names + syms[k].st_name;
        if (sym[0] == name[0] && memcmp(sym, name, len + 1) == 0)
            return &syms[k];
    }
    return NULL;
}

const Elf64_Phdr *rheap__elf_segment(const rheap__elf_t *e, uint64_t vaddr)
{
    for (unsigned i = 0; i < e->nph; i++)
        if (e->ph[i].p_type == PT_LOAD && vaddr >= e->ph[i].p_vaddr &&
            vaddr - e->ph[i].p_vaddr < e->ph[i].p_memsz)
            return &e->ph[i];
    return NULL;
}
