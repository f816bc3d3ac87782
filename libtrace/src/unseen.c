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
 * Either kind, when its entry points are named in the module's symbol table and the allocator
 * is one we know (jemalloc unprefixed or under je_ or _rjem_, tcmalloc, mimalloc), is hooked
 * there (patch.c) and recorded: it is then not unseen. Otherwise, or when the hooking is
 * refused (the reason is said too), it is noted.
 *
 * The scan runs once, at initialization, outside every tracer lock (it lists the modules with
 * dl_iterate_phdr): its finding is written into every recording's process file and said in one
 * line when the first recording starts. It maps the files read-only with raw system calls
 * (symtab.c) and allocates nothing. A stripped executable whose allocator is prefixed has no
 * symbol left to find it by. A library loaded later (dlopen) is looked at when the recording
 * ends at exit or exec (rheap__unseen_rescan, from /proc/self/maps): noted then, never hooked,
 * and the process file gets its unseen record before its `off` record; one loaded and unloaded
 * in between is missed.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

rheap__unseen_t rheap__unseen;

/* Symbol names that say which allocator a module holds. A module that defines the unprefixed
 * name that librheap's wrapper forwards to (libjemalloc.so's mallocx) is the allocator librheap
 * records; any other definition is one it does not, unless patch.c hooks it there, with the
 * names under `prefix` (NULL: a build whose public names are not known). */
static const struct {
    const char *symbol, *allocator, *plain; /* plain: the name librheap's wrapper forwards to */
    const char *prefix;
} signs[] = {
    {"mallocx", "jemalloc", "mallocx", ""},
    {"je_mallocx", "jemalloc", "mallocx", "je_"},
    {"_rjem_mallocx", "jemalloc", "mallocx", "_rjem_"},
    {"_rjem_je_mallocx", "jemalloc", "mallocx", NULL},
    {"tc_malloc", "tcmalloc", "tc_malloc", ""},
    {"TCMallocInternalMalloc", "tcmalloc", "tc_malloc", NULL},
    {"mi_malloc", "mimalloc", "mi_malloc", ""},
};

static void note(const char *allocator, const char *module, const char *symbol, const char *why) {
    rheap__unseen_t *u = &rheap__unseen;
    if (u->found)
        return;
    /* The fields are zero and one byte longer than what is copied: always NUL-terminated. */
    memcpy(u->allocator, allocator, strnlen(allocator, sizeof u->allocator - 1));
    memcpy(u->module, module, strnlen(module, sizeof u->module - 1));
    memcpy(u->symbol, symbol, strnlen(symbol, sizeof u->symbol - 1));
    memcpy(u->refused, why, strnlen(why, sizeof u->refused - 1));
    u->found = 1;
}

/* What the ELF image e holds: the first sign found in its symbol table (.symtab, else .dynsym;
 * an index of signs, or -1) and whether its dynamic symbol table defines malloc. */
static int which_allocator(const rheap__elf_t *e, int *has_malloc) {
    *has_malloc = e->dynsym && rheap__elf_func(e, e->dynsym, "malloc") != NULL;
    const Elf64_Shdr *table = e->symtab ? e->symtab : e->dynsym;
    if (!table)
        return -1;
    for (size_t j = 0; j < sizeof signs / sizeof signs[0]; j++)
        if (rheap__elf_func(e, table, signs[j].symbol))
            return (int)j;
    return -1;
}

/* The modules as dl_iterate_phdr lists them (the dynamic linker's lookup order), copied out so
 * that the files are read and dlsym is called after it returns: inside its callback the loader
 * holds a lock that a dlopen in another thread takes after the one dlsym takes. */
#define MAX_MODULES 512
#define PATHS_BYTES (64 * 1024)
static struct {
    uintptr_t lo, hi;    /* from the lowest PT_LOAD start to the highest end */
    uintptr_t bias;      /* where it is loaded */
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
    mods[nmods].bias = info->dlpi_addr;
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
 * where librheap's wrapper forwards is one librheap does not see. Either is hooked where its
 * entry points are (patch.c) when it is an allocator we know, and noted when it cannot be. */
/* Looks at every module (in the lookup order) for an allocator; hooks what can be hooked. */
void rheap__unseen_scan(void) {
    static char exe[PATH_MAX];
    static char why[256];
    static rheap__elf_t e;
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
        if (path[0] != '/' || rheap__elf_open(&e, path) != 0)
            continue;
        int has_malloc;
        int j = which_allocator(&e, &has_malloc);
        int ahead = has_malloc && (int)i < self;
        /* The unprefixed name, exported by this module and found by librheap's wrapper:
         * recorded. */
        void *found = j >= 0 && !ahead ? dlsym(RTLD_NEXT, signs[j].plain) : NULL;
        if ((ahead || j >= 0) && !(found && module_of((uintptr_t)found) == (int)i)) {
            why[0] = 0;
            if (j < 0 || !rheap__patch_module(&e, mods[i].bias, signs[j].prefix, why, sizeof why))
                note(j >= 0 ? signs[j].allocator : "unknown", path,
                     ahead || j < 0 ? "malloc" : signs[j].symbol, why);
        }
        rheap__elf_close(&e);
    }
}

/* Whether the scan at initialization listed the module whose first mapping starts at lo
 * (mods[] keeps what it listed; a module's first mapping is its lowest segment, page-aligned),
 * or it is librheap itself. Compared by address, not by path: the loader's names may go through
 * symbolic links that /proc/self/maps resolves. */
static int looked_at(uintptr_t lo, uintptr_t hi) {
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t me = (uintptr_t)&rheap__unseen_rescan;
    if (me >= lo && me < hi)
        return 1;
    for (unsigned i = 0; i < nmods; i++)
        if ((mods[i].lo & ~(page - 1)) == lo)
            return 1;
    return 0;
}

/* One module mapped since the scan, [lo, hi) the span of its mappings: noted when it holds an
 * allocator that librheap's wrappers do not reach (their real function, once resolved, lies
 * elsewhere). Never hooked: the program's threads may be running its code. */
static void look_later(const char *path, uintptr_t lo, uintptr_t hi) {
    static rheap__elf_t e;
    if (path[0] != '/' || looked_at(lo, hi) || rheap__elf_open(&e, path) != 0)
        return;
    int has_malloc;
    int j = which_allocator(&e, &has_malloc);
    if (j >= 0) {
        uintptr_t real = (uintptr_t)rheap__families_real(signs[j].plain);
        if (!(real >= lo && real < hi))
            note(signs[j].allocator, path, signs[j].symbol,
                 "it was loaded after start-up (dlopen)");
    }
    rheap__elf_close(&e);
}

/* The modules loaded since the scan, read from /proc/self/maps rather than listed with
 * dl_iterate_phdr: at exit, a thread that a signal handler jumped out of the loader's iteration
 * (or that died in it) may hold the loader's lock for good, and the process must still end.
 * dlsym is not called either, for the same reason. A module's mappings are consecutive lines
 * with its path; one with an executable mapping is looked at when the path changes. */
void rheap__unseen_rescan(void) {
    static char buf[64 * 1024];
    static char cur[PATH_MAX];
    if (rheap__unseen.found)
        return;
    int fd = rheap__sys_open("/proc/self/maps", O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0)
        return;
    size_t have = 0;
    uintptr_t lo = 0, hi = 0;
    int exec = 0;
    cur[0] = 0;
    for (;;) {
        long got = rheap__sys_read(fd, buf + have, sizeof buf - 1 - have);
        if (got <= 0)
            break;
        have += (size_t)got;
        buf[have] = 0;
        char *line = buf, *nl;
        while ((nl = strchr(line, '\n')) != NULL) {
            *nl = 0;
            /* start-end perms offset dev inode path */
            char *end;
            uintptr_t a = (uintptr_t)strtoull(line, &end, 16);
            uintptr_t b = *end == '-' ? (uintptr_t)strtoull(end + 1, &end, 16) : 0;
            const char *perms = end + (*end == ' ');
            const char *path = strchr(perms, '/');
            if (!path)
                path = "";
            if (strcmp(path, cur) != 0) {
                if (cur[0] && exec)
                    look_later(cur, lo, hi);
                size_t len = strnlen(path, sizeof cur - 1);
                memcpy(cur, path, len);
                cur[len] = 0;
                lo = a, hi = b, exec = 0;
            } else if (b > hi) {
                hi = b;
            }
            exec |= perms[0] && perms[1] && perms[2] == 'x';
            line = nl + 1;
        }
        have = (size_t)(buf + have - line);
        memmove(buf, line, have);
        if (have == sizeof buf - 1)
            have = 0; /* a line longer than the buffer: dropped */
    }
    rheap__sys_close(fd);
    if (cur[0] && exec && !rheap__unseen.found)
        look_later(cur, lo, hi);
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
    if (rheap__unseen.refused[0])
        rheap__log("cannot hook ", rheap__unseen.allocator, " in ", rheap__unseen.module, ": ",
                   rheap__unseen.refused, NULL);
    rheap__log(rheap__unseen.module, " allocates through ", rheap__unseen.allocator, " (",
               rheap__unseen.symbol, "), which rheap does not record: its blocks are missing "
               "from the recording", NULL);
}
