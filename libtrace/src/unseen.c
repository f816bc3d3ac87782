/*
 * unseen.c: finding an allocator in the process that librheap does not record, so that a
 * recording never looks complete when it is not.
 *
 * librheap sees the calls that reach its exported functions. Two kinds of allocator escape it:
 *
 *   - one defined ahead of librheap in the symbol lookup order: the executable itself (an
 *     allocator linked statically, unprefixed, exports malloc from the executable, which the
 *     dynamic linker searches before any preloaded library), or a library that comes before
 *     librheap when librheap is linked rather than preloaded: a module listed before librheap
 *     whose dynamic symbol table defines malloc. Its module is named;
 *   - one whose entry points are not the names librheap wraps: jemalloc built with a prefix
 *     (je_mallocx, _rjem_mallocx as Rust's tikv-jemallocator builds it), or mimalloc or
 *     tcmalloc linked statically (mi_malloc, tc_malloc inside the executable, never reached
 *     through a dynamic symbol). These are found by name in each module's symbol table
 *     (.symtab, else .dynsym), read from its file.
 *
 * The scan runs once, at initialization, outside every tracer lock (it lists the modules with
 * dl_iterate_phdr): its finding is written into every recording's process file and said in one
 * line when the first recording starts. It maps the files read-only with raw system calls and allocates nothing. A
 * stripped executable whose allocator is prefixed has no symbol left to find it by; a library
 * loaded later (dlopen) is not scanned.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

rheap__unseen_t rheap__unseen;

/* Symbol names that say which allocator a module holds. A module that defines the unprefixed
 * name that librheap's wrapper forwards to (libjemalloc.so's mallocx) is the allocator librheap
 * records; any other definition is one it does not. */
static const struct {
    const char *symbol, *allocator, *plain; /* plain: the name librheap's wrapper forwards to */
} signs[] = {
    {"mallocx", "jemalloc", "mallocx"},
    {"je_mallocx", "jemalloc", "mallocx"},
    {"_rjem_mallocx", "jemalloc", "mallocx"},
    {"_rjem_je_mallocx", "jemalloc", "mallocx"},
    {"tc_malloc", "tcmalloc", "tc_malloc"},
    {"TCMallocInternalMalloc", "tcmalloc", "tc_malloc"},
    {"mi_malloc", "mimalloc", "mi_malloc"},
};

static void note(const char *allocator, const char *module, const char *symbol) {
    rheap__unseen_t *u = &rheap__unseen;
    if (u->found)
        return;
    /* The fields are zero and one byte longer than what is copied: always NUL-terminated. */
    memcpy(u->allocator, allocator, strnlen(allocator, sizeof u->allocator - 1));
    memcpy(u->module, module, strnlen(module, sizeof u->module - 1));
    memcpy(u->symbol, symbol, strnlen(symbol, sizeof u->symbol - 1));
    u->found = 1;
}

/* Whether the symbol table `s` of the image `m` (`size` bytes, section headers `sh`, `nsh` of
 * them) defines the function `name`. */
static int defines(const unsigned char *m, size_t size, const Elf64_Shdr *sh, unsigned nsh,
                   const Elf64_Shdr *s, const char *name, size_t len) {
    if (s->sh_link >= nsh || s->sh_entsize != sizeof(Elf64_Sym))
        return 0;
    const Elf64_Shdr *str = &sh[s->sh_link];
    if (s->sh_offset > size || s->sh_size > size - s->sh_offset || str->sh_offset > size ||
        str->sh_size > size - str->sh_offset)
        return 0;
    const Elf64_Sym *syms = (const Elf64_Sym *)(m + s->sh_offset);
    const char *names = (const char *)(m + str->sh_offset);
    for (size_t k = 0, n = s->sh_size / sizeof(Elf64_Sym); k < n; k++) {
        /* An undefined symbol may still have a value (a program that takes a function's address
         * gets a PLT entry that stands for it): only a defined one is an allocator's. */
        if (syms[k].st_shndx == SHN_UNDEF || ELF64_ST_TYPE(syms[k].st_info) != STT_FUNC ||
            syms[k].st_name >= str->sh_size || str->sh_size - syms[k].st_name <= len)
            continue;
        const char *sym = names + syms[k].st_name;
        if (sym[0] == name[0] && memcmp(sym, name, len + 1) == 0)
            return 1;
    }
    return 0;
}

/* What the ELF image `m` (`size` bytes) holds: the first sign found in its symbol table
 * (.symtab, else .dynsym; an index of signs, or -1) and whether its dynamic symbol table defines
 * malloc. Every offset is checked against the size: a file that is not what it seems is simply
 * not recognized. */
static int which_allocator(const unsigned char *m, size_t size, int *has_malloc) {
    *has_malloc = 0;
    if (size < sizeof(Elf64_Ehdr) || memcmp(m, ELFMAG, SELFMAG) != 0 || m[EI_CLASS] != ELFCLASS64)
        return -1;
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)m;
    if (eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shoff > size ||
        (size - eh->e_shoff) / sizeof(Elf64_Shdr) < eh->e_shnum)
        return -1;
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(m + eh->e_shoff);
    const Elf64_Shdr *symtab = NULL, *dynsym = NULL;
    for (unsigned i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_type == SHT_SYMTAB && !symtab)
            symtab = &sh[i];
        if (sh[i].sh_type == SHT_DYNSYM && !dynsym)
            dynsym = &sh[i];
    }
    if (dynsym)
        *has_malloc = defines(m, size, sh, eh->e_shnum, dynsym, "malloc", 6);
    const Elf64_Shdr *table = symtab ? symtab : dynsym;
    if (!table)
        return -1;
    for (size_t j = 0; j < sizeof signs / sizeof signs[0]; j++)
        if (defines(m, size, sh, eh->e_shnum, table, signs[j].symbol, strlen(signs[j].symbol)))
            return (int)j;
    return -1;
}

/* The sign of the allocator in the file at `path` and whether it exports malloc, mapped
 * read-only for the look; -1 for no sign. */
static int file_allocator(const char *path, int *has_malloc) {
    *has_malloc = 0;
    int fd = rheap__sys_open(path, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct stat st;
    int a = -1;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
        void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m != MAP_FAILED) {
            a = which_allocator(m, (size_t)st.st_size, has_malloc);
            munmap(m, (size_t)st.st_size);
        }
    }
    rheap__sys_close(fd);
    return a;
}

/* The modules as dl_iterate_phdr lists them (the dynamic linker's lookup order), copied out so
 * that the files are read and dlsym is called after it returns: inside its callback the loader
 * holds a lock that a dlopen in another thread takes after the one dlsym takes. */
#define MAX_MODULES 512
#define PATHS_BYTES (64 * 1024)
static struct {
    uintptr_t lo, hi;    /* from the lowest PT_LOAD start to the highest end */
    unsigned path;       /* offset in paths; 0: none (the vDSO, or no room left) */
} mods[MAX_MODULES];
static char paths[PATHS_BYTES];
static unsigned nmods, paths_used;

static int list_module(struct dl_phdr_info *info, size_t size, void *arg) {
    (void)size, (void)arg;
    if (nmods == MAX_MODULES)
        return 1;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t start = info->dlpi_addr + ph->p_vaddr;
        if (start < lo)
            lo = start;
        if (start + ph->p_memsz > hi)
            hi = start + ph->p_memsz;
    }
    const char *name = info->dlpi_name ? info->dlpi_name : "";
    size_t len = strlen(name);
    unsigned at = 0;
    if (name[0] == 0 && nmods == 0) {
        at = 1; /* the executable, whose path is read apart */
    } else if (name[0] == '/' && len + 1 <= PATHS_BYTES - 2 - paths_used) {
        at = 2 + paths_used;
        memcpy(paths + at, name, len + 1);
        paths_used += (unsigned)len + 1;
    }
    mods[nmods].lo = lo;
    mods[nmods].hi = hi;
    mods[nmods].path = at;
    nmods++;
    return 0;
}

static int module_of(uintptr_t addr) {
    for (unsigned i = 0; i < nmods; i++)
        if (addr >= mods[i].lo && addr < mods[i].hi)
            return (int)i;
    return -1;
}

/* Modules come in the dynamic linker's lookup order: one before librheap that exports malloc
 * takes the program's calls from it; any module holding an allocator's names elsewhere than
 * where librheap's wrapper forwards is one librheap does not see. */
void rheap__unseen_scan(void) {
    static char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    nmods = 0;
    paths_used = 0;
    dl_iterate_phdr(list_module, NULL);
    int self = module_of((uintptr_t)&rheap__unseen_scan);
    for (unsigned i = 0; i < nmods && !rheap__unseen.found; i++) {
        if ((int)i == self || mods[i].path == 0)
            continue;
        const char *path = mods[i].path == 1 ? exe : paths + mods[i].path;
        if (path[0] != '/')
            continue;
        int has_malloc;
        int j = file_allocator(path, &has_malloc);
        if (has_malloc && (int)i < self) {
            note(j >= 0 ? signs[j].allocator : "unknown", path, "malloc");
            break;
        }
        if (j < 0)
            continue;
        /* The unprefixed name, exported by this module and found by librheap's wrapper:
         * recorded. */
        void *found = dlsym(RTLD_NEXT, signs[j].plain);
        if (found && module_of((uintptr_t)found) == (int)i)
            continue;
        note(signs[j].allocator, path, signs[j].symbol);
    }
}

/* Said when the first recording starts rather than at the scan: when `rheap attach` loads
 * librheap with dlopen, every module loaded before it comes first in the lookup order, so the
 * scan takes libc for an allocator ahead of it; attaching clears that finding (got.c) before
 * recording starts, and nothing false reaches the program's stderr. */
void rheap__unseen_say(void)
{
    static int said;
    if (!rheap__unseen.found || said)
        return;
    said = 1;
    rheap__log(rheap__unseen.module, " allocates through ", rheap__unseen.allocator, " (",
               rheap__unseen.symbol, "), which rheap does not record: its blocks are missing "
               "from the recording", NULL);
}
