/*
 * symbolize.c: offline symbolization of return addresses with libdwfl.
 *
 * Every module file (interned by path and build-id) gets its own Dwfl, reported at its link
 * addresses (bias 0), and is opened only when a stack first points into it. Addresses are
 * therefore looked up relative to the load bias recorded at run time, which makes one
 * resolution valid for every process that mapped the same file, wherever ASLR put it: each
 * distinct (file, offset) is resolved once per conversion.
 *
 * A return address points after the call, possibly into the next line or even the next
 * function, so the lookup uses `offset - 1`. One address becomes one row per function in its
 * inline chain: the innermost inlined function at its own file:line (from the line table), then
 * each function it was inlined into at the line of the call (DW_AT_call_file/DW_AT_call_line of
 * the inlined scope), ending with the real function, named from the ELF symbol table.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <libiberty/demangle.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "converter.h"

enum { MF_UNOPENED, MF_OK, MF_MISSING, MF_MISMATCH };

typedef struct {
    uint64_t lo, hi;
    uint64_t maxhi;      /* the largest hi of this range and those sorted before it */
    size_t order;        /* position in the file, for overlapping ranges */
    Dwarf_Die cu;
} cu_range_t;

/* One symbol of a module's symbol table, as the lookup below needs it. */
typedef struct {
    uint64_t lo, end;    /* [lo, end); end == lo for a sizeless symbol (an assembly label) */
    const char *name;    /* owned by libdw, valid as long as the module's Dwfl */
    uint32_t ndx;        /* index in the table, the order dwfl_module_addrinfo visits them */
    uint8_t bind;        /* 3 global, 2 weak, 1 local, 0 other: higher wins */
    uint8_t global_pass; /* visited in the first (global) pass */
    uint8_t abs;         /* section index >= SHN_LORESERVE: matches only its own address */
} symix_t;

/* An allocated section of the main file, for the sizeless-symbol rule. */
typedef struct {
    uint64_t start, end;
    size_t ndx;
} sect_t;

typedef struct {
    char *path;
    uint8_t *build_id;
    size_t build_id_len;
    int state;
    int used;
    Dwfl *dwfl;
    Dwfl_Module *mod;
    cu_range_t *ranges;  /* CU address ranges, built on the first address .debug_aranges misses */
    size_t nranges;
    int ranges_built;
    /* The symbol index, built on the first lookup: symbols sorted by (address, table index),
     * with the running maximum of their end addresses in each pass. */
    symix_t *syms;
    uint64_t *gmax, *lmax;
    size_t nsyms;
    int first_global;
    int syms_built;
    sect_t *sects;
    size_t nsects;
    cv__scopes_t *scopes; /* function DIEs by address, per CU, built on first use */
} file_t;

struct cv__sym {
    cv__warn_fn warn;
    void *warn_user;
    file_t *files;
    size_t nfiles, capfiles;
    cv__loc_t **locs;
    size_t nlocs, caplocs;
    /* The resolved addresses by key (see key_of): open addressing (hashmap.h), the value the
     * index of the location in locs. */
    uint64_t *slot_keys;
    uint32_t *slot_locs;
    size_t mask, nslots_used;
    unsigned shift;
    Dwfl_Callbacks cb;
    char *debuginfo_path;
};

char *cv__demangle(const char *name)
{
    if (!name)
        return NULL;
    /* Versioned names from .dynsym ("memcpy@@GLIBC_2.14") carry the version after '@'. */
    const char *at = strchr(name, '@');
    char *base = at ? strndup(name, (size_t)(at - name)) : strdup(name);
    if (!base)
        return NULL;
    char *d = cplus_demangle(base, DMGL_PARAMS | DMGL_ANSI);
    if (d) {
        free(base);
        return d;
    }
    return base;
}

cv__sym_t *cv__sym_create(cv__warn_fn warn, void *user)
{
    cv__sym_t *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->debuginfo_path = cv__debuginfo_path();
    s->warn = warn;
    s->warn_user = user;
    s->mask = 4095;
    s->shift = 64 - 12;
    s->slot_keys = calloc(s->mask + 1, sizeof *s->slot_keys);
    s->slot_locs = malloc((s->mask + 1) * sizeof *s->slot_locs);
    if (!s->slot_keys || !s->slot_locs || !s->debuginfo_path) {
        free(s->slot_keys);
        free(s->slot_locs);
        free(s->debuginfo_path);
        free(s);
        return NULL;
    }
    s->cb.find_elf = dwfl_build_id_find_elf;
    s->cb.find_debuginfo = dwfl_standard_find_debuginfo;
    s->cb.section_address = dwfl_offline_section_address;
    /* Separate debug files: by build-id, .gnu_debuglink, and debuginfod only when the user
     * set DEBUGINFOD_URLS (debuginfo.c). */
    s->cb.debuginfo_path = &s->debuginfo_path;
    return s;
}

void cv__sym_destroy(cv__sym_t *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nfiles; i++) {
        file_t *f = &s->files[i];
        if (f->dwfl)
            dwfl_end(f->dwfl);
        free(f->path);
        free(f->build_id);
        free(f->ranges);
        free(f->syms);
        free(f->gmax);
        free(f->lmax);
        free(f->sects);
        cv__scopes_destroy(f->scopes);
    }
    free(s->files);
    for (size_t i = 0; i < s->nlocs; i++) {
        cv__loc_t *l = s->locs[i];
        for (uint32_t j = 0; j < l->nframes; j++) {
            free((char *)l->frames[j].sym);
            free((char *)l->frames[j].file);
        }
        free((void *)l->frames);
        free(l);
    }
    free(s->locs);
    free(s->slot_keys);
    free(s->slot_locs);
    free(s->debuginfo_path);
    free(s);
}

int cv__sym_file(cv__sym_t *s, const char *path, size_t path_len, const uint8_t *build_id,
                    size_t build_id_len)
{
    for (size_t i = 0; i < s->nfiles; i++) {
        file_t *f = &s->files[i];
        if (strlen(f->path) == path_len && memcmp(f->path, path, path_len) == 0 &&
            f->build_id_len == build_id_len &&
            (build_id_len == 0 || memcmp(f->build_id, build_id, build_id_len) == 0))
            return (int)i;
    }
    if (rheap_grow(&s->files, &s->capfiles, s->nfiles, sizeof *s->files, 16) != 0)
        return -1;
    file_t *f = &s->files[s->nfiles];
    memset(f, 0, sizeof *f);
    f->path = strndup(path, path_len);
    f->build_id = build_id_len ? malloc(build_id_len) : NULL;
    if (!f->path || (build_id_len && !f->build_id)) {
        free(f->path);
        free(f->build_id);
        return -1;
    }
    if (build_id_len)
        memcpy(f->build_id, build_id, build_id_len);
    f->build_id_len = build_id_len;
    return (int)s->nfiles++;
}

const char *cv__sym_file_path(const cv__sym_t *s, int file_id)
{
    return file_id >= 0 && (size_t)file_id < s->nfiles ? s->files[file_id].path : NULL;
}

const char *cv__sym_file_status(const cv__sym_t *s, int file_id)
{
    if (file_id < 0 || (size_t)file_id >= s->nfiles)
        return "missing";
    const file_t *f = &s->files[file_id];
    if (!f->used)
        return "unused";
    switch (f->state) {
    case MF_OK: return "ok";
    case MF_MISMATCH: return "mismatch";
    default: return "missing";
    }
}

static void warn(cv__sym_t *s, const char *path, const char *what)
{
    static cv__err_t w; /* 8 KiB kept off the stack; one conversion at a time */
    if (!s->warn)
        return;
    cv__fail(&w, RHEAP_CONVERT_WARNINGS, path, CV__NO_OFFSET, "module %s: %s", path, what);
    s->warn(s->warn_user, &w);
}

/* Pseudo-modules (the vDSO, anonymous code) have no file to read; they stay unresolved
 * without a warning. */
static int is_pseudo(const char *path)
{
    return path[0] == 0 || path[0] == '[' || strncmp(path, "linux-vdso", 10) == 0 ||
           strncmp(path, "linux-gate", 10) == 0;
}

static void open_file(cv__sym_t *s, file_t *f)
{
    f->state = MF_MISSING;
    if (is_pseudo(f->path))
        return;
    /* Only a readable regular file: a recording may name anything, and opening a FIFO or a
     * device would block or read something that is not the module. O_NONBLOCK keeps this open
     * from waiting. */
    int fd = open(f->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    int regular = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    if (fd >= 0)
        close(fd);
    if (fd < 0) {
        warn(s, f->path, "file not found; its frames keep module and offset only");
        return;
    }
    if (!regular) {
        warn(s, f->path, "not a regular file; its frames keep module and offset only");
        return;
    }
    f->dwfl = dwfl_begin(&s->cb);
    if (!f->dwfl) {
        warn(s, f->path, dwfl_errmsg(-1));
        return;
    }
    dwfl_report_begin(f->dwfl);
    f->mod = dwfl_report_elf(f->dwfl, f->path, f->path, -1, 0, true);
    dwfl_report_end(f->dwfl, NULL, NULL);
    if (!f->mod) {
        char msg[512];
        snprintf(msg, sizeof msg, "cannot read it as ELF (%s); its frames keep module and offset only",
                 dwfl_errmsg(-1));
        warn(s, f->path, msg);
        return;
    }
    if (f->build_id_len) {
        const unsigned char *bits = NULL;
        GElf_Addr vaddr;
        int len = dwfl_module_build_id(f->mod, &bits, &vaddr);
        if (len > 0 && ((size_t)len != f->build_id_len || memcmp(bits, f->build_id, (size_t)len) != 0)) {
            warn(s, f->path,
                 "build-id differs from the recorded one (the file changed since recording); "
                 "its frames keep module and offset only");
            f->state = MF_MISMATCH;
            return;
        }
    }
    f->state = MF_OK;
}

static int range_cmp(const void *a, const void *b)
{
    const cu_range_t *x = a, *y = b;
    if (x->lo != y->lo)
        return x->lo < y->lo ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* Without .debug_aranges (clang, rustc) dwfl_module_addrdie finds no CU; walk the CUs'
 * address ranges instead, collected once per file and sorted, so each lookup is a binary
 * search (libc's hand-written assembly misses .debug_aranges too, and it has thousands of
 * ranges). */
static int build_ranges(file_t *f)
{
    f->ranges_built = 1;
    Dwarf_Addr bias;
    size_t cap = 0;
    for (Dwarf_Die *cu = NULL; (cu = dwfl_module_nextcu(f->mod, cu, &bias)) != NULL;) {
        Dwarf_Addr base, lo, hi;
        ptrdiff_t off = 0;
        while ((off = dwarf_ranges(cu, off, &base, &lo, &hi)) > 0) {
            if (rheap_grow(&f->ranges, &cap, f->nranges, sizeof *f->ranges, 64) != 0)
                return -1;
            cu_range_t *r = &f->ranges[f->nranges];
            r->lo = lo + bias;
            r->hi = hi + bias;
            r->cu = *cu;
            r->order = f->nranges++;
        }
    }
    if (f->nranges)
        qsort(f->ranges, f->nranges, sizeof *f->ranges, range_cmp);
    /* maxhi turns "which ranges contain addr" into a short backward scan. */
    uint64_t m = 0;
    for (size_t i = 0; i < f->nranges; i++) {
        if (f->ranges[i].hi > m)
            m = f->ranges[i].hi;
        f->ranges[i].maxhi = m;
    }
    return 0;
}

static Dwarf_Die *find_cu(file_t *f, Dwarf_Addr addr, Dwarf_Addr *bias, Dwarf_Die *store)
{
    Dwarf_Die *cu = dwfl_module_addrdie(f->mod, addr, bias);
    if (cu)
        return cu;
    if (!f->ranges_built)
        build_ranges(f);
    size_t lo = cv__upper_bound(f->ranges, f->nranges, sizeof *f->ranges,
                                   offsetof(cu_range_t, lo), addr);
    /* Overlapping ranges are rare; when they occur, the CU that comes first in the file wins. */
    const cu_range_t *best = NULL;
    for (size_t i = lo; i-- > 0 && f->ranges[i].maxhi > addr;)
        if (addr < f->ranges[i].hi && (!best || f->ranges[i].order < best->order))
            best = &f->ranges[i];
    if (!best)
        return NULL;
    *store = best->cu;
    /* Every CU of a module shares the module's bias; ask for it once more. */
    Dwarf_Addr b = 0;
    dwfl_module_getdwarf(f->mod, &b);
    *bias = b;
    return store;
}

/* ---- The symbol index ----
 *
 * dwfl_module_addrinfo walks the whole symbol table on every call (about 120 us on libc with
 * its debug file). The index sorts the table once per module and answers the same question
 * with a binary search: it applies dwfl_module_addrinfo's own rules, but only to the few
 * symbols that can matter for an address (those containing it, and the labels at the highest
 * address below it), visited in the table order that the rules depend on:
 *
 * - Global symbols are searched first; local ones only when no global symbol contains the
 *   address (and no global label sits exactly at it).
 * - Among symbols with a size that contain the address, the one starting closest below it
 *   wins; a better binding (global > weak > local) also wins; at the same start a larger size
 *   or better binding wins, and otherwise the first in table order stays.
 * - An address inside no sized symbol gets the last label (sizeless symbol) at the highest
 *   address below it, provided no symbol below it reaches past the label and the label lies
 *   in the address's section; otherwise it stays unresolved. */

static int binding_rank(unsigned bind)
{
    switch (bind) {
    case STB_GLOBAL: return 3;
    case STB_WEAK: return 2;
    case STB_LOCAL: return 1;
    default: return 0;
    }
}

static int symix_cmp(const void *a, const void *b)
{
    const symix_t *x = a, *y = b;
    if (x->lo != y->lo)
        return x->lo < y->lo ? -1 : 1;
    return x->ndx < y->ndx ? -1 : x->ndx > y->ndx;
}

static int sect_cmp(const void *a, const void *b)
{
    const sect_t *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

static void build_sections(file_t *f)
{
    GElf_Addr bias = 0;
    Elf *elf = dwfl_module_getelf(f->mod, &bias);
    size_t n = 0;
    if (!elf || elf_getshdrnum(elf, &n) != 0 || n == 0)
        return;
    f->sects = malloc(n * sizeof *f->sects);
    if (!f->sects)
        return;
    for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn)) != NULL;) {
        GElf_Shdr mem;
        GElf_Shdr *sh = gelf_getshdr(scn, &mem);
        if (!sh || !(sh->sh_flags & SHF_ALLOC))
            continue;
        sect_t *t = &f->sects[f->nsects++];
        t->start = sh->sh_addr + bias;
        t->end = t->start + sh->sh_size;
        t->ndx = elf_ndxscn(scn);
    }
    if (f->nsects)
        qsort(f->sects, f->nsects, sizeof *f->sects, sect_cmp);
}

/* The section holding addr (its end counts as inside unless the next section starts there),
 * SHN_UNDEF when none does. */
static size_t section_of(const file_t *f, uint64_t addr)
{
    size_t lo = 0, hi = f->nsects;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (addr < f->sects[mid].start)
            hi = mid;
        else if (addr > f->sects[mid].end)
            lo = mid + 1;
        else {
            if (addr == f->sects[mid].end && mid + 1 < f->nsects && addr == f->sects[mid + 1].start)
                mid++;
            return f->sects[mid].ndx;
        }
    }
    return SHN_UNDEF;
}

static void build_symix(file_t *f)
{
    f->syms_built = 1;
    int n = dwfl_module_getsymtab(f->mod);
    int fg = dwfl_module_getsymtab_first_global(f->mod);
    if (n <= 1 || fg < 0)
        return;
    f->first_global = fg;
    int gstart = fg == 0 ? 1 : fg;
    f->syms = malloc((size_t)n * sizeof *f->syms);
    if (!f->syms)
        return;
    size_t k = 0;
    for (int i = 1; i < n; i++) {
        GElf_Sym sym;
        GElf_Addr value;
        GElf_Word shndx;
        const char *name = dwfl_module_getsym_info(f->mod, i, &sym, &value, &shndx, NULL, NULL);
        int type = GELF_ST_TYPE(sym.st_info);
        if (!name || !name[0] || sym.st_shndx == SHN_UNDEF || type == STT_SECTION ||
            type == STT_FILE || type == STT_TLS)
            continue;
        /* Only the passes dwfl_module_addrinfo makes: globals from gstart, locals below fg. */
        int global = i >= gstart;
        if (!global && !(fg > 1 && i < fg))
            continue;
        symix_t *e = &f->syms[k++];
        e->lo = value;
        e->end = value + sym.st_size;
        e->name = name;
        e->ndx = (uint32_t)i;
        e->bind = (uint8_t)binding_rank(GELF_ST_BIND(sym.st_info));
        e->global_pass = (uint8_t)global;
        e->abs = shndx >= SHN_LORESERVE;
    }
    f->nsyms = k;
    if (!k)
        return;
    qsort(f->syms, k, sizeof *f->syms, symix_cmp);
    f->gmax = malloc(k * sizeof *f->gmax);
    f->lmax = malloc(k * sizeof *f->lmax);
    if (!f->gmax || !f->lmax) {
        free(f->syms);
        f->syms = NULL;
        f->nsyms = 0;
        return;
    }
    uint64_t g = 0, l = 0;
    for (size_t i = 0; i < k; i++) {
        uint64_t *m = f->syms[i].global_pass ? &g : &l;
        if (f->syms[i].end > *m)
            *m = f->syms[i].end;
        f->gmax[i] = g;
        f->lmax[i] = l;
    }
    build_sections(f);
}

#define MAX_CONTAINERS 64

/* The sized symbols of one pass that contain addr, in table order. */
static size_t containers(const file_t *f, size_t hi, uint64_t addr, int global,
                         const symix_t **out)
{
    const uint64_t *max = global ? f->gmax : f->lmax;
    size_t n = 0;
    for (size_t i = hi; i-- > 0 && max[i] > addr;) {
        const symix_t *e = &f->syms[i];
        if (e->global_pass == global && e->end > addr && n < MAX_CONTAINERS)
            out[n++] = e;
    }
    /* Collected backwards by address; the rules need table order. */
    for (size_t i = 1; i < n; i++) {
        const symix_t *e = out[i];
        size_t j = i;
        while (j > 0 && out[j - 1]->ndx > e->ndx) {
            out[j] = out[j - 1];
            j--;
        }
        out[j] = e;
    }
    return n;
}

static const symix_t *best_container(const symix_t *const *c, size_t n)
{
    const symix_t *best = NULL;
    for (size_t i = 0; i < n; i++) {
        const symix_t *e = c[i];
        if (!best || best->lo < e->lo || best->bind < e->bind) {
            best = e;
        } else if (best->lo == e->lo) {
            uint64_t bs = best->end - best->lo, es = e->end - e->lo;
            if ((bs > es && best->bind <= e->bind) || (bs >= es && best->bind < e->bind))
                best = e;
        }
    }
    return best;
}

/* The name dwfl_module_addrinfo gives addr in f, from the index. */
static const char *symix_lookup(file_t *f, uint64_t addr)
{
    if (!f->syms_built)
        build_symix(f);
    /* syms[0, hi) start at or below addr */
    size_t hi = cv__upper_bound(f->syms, f->nsyms, sizeof *f->syms, offsetof(symix_t, lo), addr);
    if (hi == 0)
        return NULL;
    const symix_t *c[MAX_CONTAINERS];
    size_t n = containers(f, hi, addr, 1, c);
    if (n)
        return best_container(c, n)->name;

    /* No global symbol contains addr. A global label exactly at addr ends the search. */
    int label_at_addr = 0;
    for (size_t i = hi; i-- > 0 && f->syms[i].lo == addr;)
        if (f->syms[i].global_pass && f->syms[i].end == f->syms[i].lo)
            label_at_addr = 1;
    int locals = f->first_global > 1 && !label_at_addr;
    if (locals) {
        n = containers(f, hi, addr, 0, c);
        if (n)
            return best_container(c, n)->name;
    }

    /* Labels: the last one visited at the highest start below addr, if nothing visited
     * reaches past it and it lies in addr's section. */
    uint64_t top = f->gmax[hi - 1];
    if (locals && f->lmax[hi - 1] > top)
        top = f->lmax[hi - 1];
    const symix_t *label = NULL;
    size_t addr_sect = SHN_UNDEF;
    int have_sect = 0;
    for (size_t i = hi; i-- > 0 && f->syms[i].lo >= top;) {
        const symix_t *e = &f->syms[i];
        if (e->lo != top || e->end != e->lo || (!e->global_pass && !locals))
            continue;
        int same;
        if (e->abs) {
            same = e->lo == addr;
        } else {
            if (!have_sect) {
                addr_sect = section_of(f, addr);
                have_sect = 1;
            }
            same = section_of(f, e->lo) == addr_sect;
        }
        if (!same)
            continue;
        /* Visiting order: the global pass, then the local one, each by table index. */
        if (!label || (e->global_pass == label->global_pass ? e->ndx > label->ndx
                                                            : !e->global_pass))
            label = e;
    }
    return label ? label->name : NULL;
}

static const char *attr_string(Dwarf_Die *die, unsigned int name)
{
    Dwarf_Attribute a;
    if (!dwarf_attr_integrate(die, name, &a))
        return NULL;
    return dwarf_formstring(&a);
}

/* The name of a function DIE: the demangled linkage name when there is one (C++ qualifies it),
 * else DW_AT_name, following DW_AT_abstract_origin/DW_AT_specification. */
static char *die_name(Dwarf_Die *die)
{
    const char *n = attr_string(die, DW_AT_linkage_name);
    if (!n)
        n = attr_string(die, DW_AT_MIPS_linkage_name);
    if (n)
        return cv__demangle(n);
    n = attr_string(die, DW_AT_name);
    return n ? strdup(n) : NULL;
}

static int has_linkage_name(Dwarf_Die *die)
{
    return attr_string(die, DW_AT_linkage_name) || attr_string(die, DW_AT_MIPS_linkage_name);
}

static int is_cxx(Dwarf_Die *cu)
{
    switch (dwarf_srclang(cu)) {
    case DW_LANG_C_plus_plus:
    case DW_LANG_C_plus_plus_03:
    case DW_LANG_C_plus_plus_11:
    case DW_LANG_C_plus_plus_14:
        return 1;
    default:
        return 0;
    }
}

/* The name of a C++ function whose DWARF has no linkage name, qualified with the scopes its
 * declaration sits in: g++ names an inlined lambda just "operator()" and nests its unnamed
 * closure type in the enclosing function, so the lambda of main reads
 * "main::{lambda}::operator()". NULL when the declaration sits directly in the CU (there
 * is nothing to add) or has no name. */
static char *qualified_name(Dwarf_Die *die)
{
    Dwarf_Die cur = *die, next;
    Dwarf_Attribute a;
    for (int i = 0; i < 8; i++) {
        if ((dwarf_attr(&cur, DW_AT_abstract_origin, &a) || dwarf_attr(&cur, DW_AT_specification, &a)) &&
            dwarf_formref_die(&a, &next)) {
            cur = next;
            continue;
        }
        break;
    }
    const char *name = dwarf_diename(&cur);
    if (!name)
        return NULL;
    Dwarf_Die *scopes = NULL;
    int n = dwarf_getscopes_die(&cur, &scopes);
    if (n <= 2) {
        free(scopes);
        return NULL;
    }
    size_t len = strlen(name) + 1;
    for (int i = 1; i < n - 1; i++) {
        const char *c = dwarf_diename(&scopes[i]);
        len += (c ? strlen(c) : 24) + 2;
    }
    char *q = malloc(len);
    if (q) {
        q[0] = 0;
        for (int i = n - 2; i >= 1; i--) {
            int tag = dwarf_tag(&scopes[i]);
            const char *c = dwarf_diename(&scopes[i]);
            if (tag == DW_TAG_lexical_block)
                continue;
            /* An unnamed class around operator() is a lambda's closure type. */
            if (!c)
                c = tag == DW_TAG_namespace ? "(anonymous namespace)"
                    : strcmp(name, "operator()") == 0 ? "{lambda}" : "{unnamed}";
            strcat(q, c);
            strcat(q, "::");
        }
        strcat(q, name);
    }
    free(scopes);
    return q;
}

static char *call_site_file(Dwarf_Die *cu, Dwarf_Die *inl, uint32_t *line)
{
    Dwarf_Attribute a;
    Dwarf_Word fidx = 0, ln = 0;
    *line = 0;
    if (dwarf_attr(inl, DW_AT_call_line, &a) && dwarf_formudata(&a, &ln) == 0)
        *line = (uint32_t)ln;
    if (!dwarf_attr(inl, DW_AT_call_file, &a) || dwarf_formudata(&a, &fidx) != 0)
        return NULL;
    Dwarf_Files *files;
    size_t nfiles;
    if (dwarf_getsrcfiles(cu, &files, &nfiles) != 0 || fidx >= nfiles)
        return NULL;
    const char *name = dwarf_filesrc(files, fidx, NULL, NULL);
    return name ? strdup(name) : NULL;
}

#define MAX_INLINE 64

/* Fills frames (capacity MAX_INLINE + 1) for `addr` (already minus 1) in file f. */
static uint32_t resolve_in(file_t *f, Dwarf_Addr addr, cv__srcframe_t *fr)
{
    const char *elfname = symix_lookup(f, addr);

    Dwarf_Addr bias = 0;
    Dwarf_Die cu_store;
    Dwarf_Die *cu = find_cu(f, addr, &bias, &cu_store);
    if (!cu) {
        /* No DWARF for this address: the symbol table still names the function. */
        fr[0].sym = elfname ? cv__demangle(elfname) : NULL;
        return 1;
    }
    Dwarf_Die cudie = *cu;

    /* The innermost frame's file:line comes from the CU's line table, which covers the address
     * even where no function DIE does (code the compiler described by lines only). */
    Dwarf_Line *l = dwarf_getsrc_die(&cudie, addr - bias);
    if (l) {
        int lineno = 0;
        const char *src = dwarf_linesrc(l, NULL, NULL);
        fr[0].file = src ? strdup(src) : NULL;
        dwarf_lineno(l, &lineno);
        fr[0].line = lineno > 0 ? (uint32_t)lineno : 0;
    }

    /* With split DWARF (-gsplit-dwarf) the CU found by address is a skeleton holding only the
     * line table; its functions are in the split unit, which libdw reads from the .dwo file
     * (or the .dwp package) beside the module. */
    Dwarf_Die unit = cudie, sub;
    uint8_t unit_type = 0;
    memset(&sub, 0, sizeof sub);
    if (dwarf_cu_info(cudie.cu, NULL, &unit_type, NULL, &sub, NULL, NULL, NULL) == 0 &&
        unit_type == DW_UT_skeleton && sub.addr != NULL)
        unit = sub;

    Dwarf_Die funcs[MAX_INLINE + 1];
    int nf = 0;
    if (!f->scopes)
        f->scopes = cv__scopes_create();
    if (f->scopes)
        nf = cv__scopes_chain(f->scopes, &unit, addr - bias, funcs, MAX_INLINE + 1);
    if (nf <= 0) {
        fr[0].sym = elfname ? cv__demangle(elfname) : NULL;
        return 1;
    }
    for (int k = 0; k < nf; k++) {
        int is_inl = dwarf_tag(&funcs[k]) == DW_TAG_inlined_subroutine;
        fr[k].inlined = is_inl;
        /* Named as addr2line names it: from the DWARF when it describes the function (the
         * source's name, not an alias the symbol table may prefer), else by its symbol. A C++
         * function whose DWARF has no linkage name (g++'s lambdas, for one) would get a bare
         * "operator()"; its mangled symbol carries the qualified name. */
        int bare = !has_linkage_name(&funcs[k]) && is_cxx(&unit);
        if (!is_inl && elfname && bare)
            fr[k].sym = cv__demangle(elfname);
        else if (bare && (fr[k].sym = qualified_name(&funcs[k])) != NULL)
            ;
        else
            fr[k].sym = die_name(&funcs[k]);
        if (!fr[k].sym && !is_inl && elfname)
            fr[k].sym = cv__demangle(elfname);
        if (k + 1 < nf && is_inl)
            fr[k + 1].file = call_site_file(&unit, &funcs[k], &fr[k + 1].line);
    }
    return (uint32_t)nf;
}

/* The table key of an address: user-space addresses fit in 48 bits, the file id takes the bits
 * above. Two addresses may still share a key (an offset beyond 48 bits, or 0 made 1 because 0
 * marks an empty slot), so a lookup also compares the location itself. */
static uint64_t key_of(int file_id, uint64_t offset)
{
    uint64_t key = ((uint64_t)(uint32_t)(file_id + 1) << 48) ^ offset;
    return key ? key : 1;
}

const cv__loc_t *cv__sym_resolve(cv__sym_t *s, int file_id, uint64_t offset)
{
    uint64_t key = key_of(file_id, offset);
    size_t j = cv__hash_slot(key, s->shift);
    for (; s->slot_keys[j]; j = (j + 1) & s->mask) {
        const cv__loc_t *l = s->locs[s->slot_locs[j]];
        if (s->slot_keys[j] == key && l->file_id == file_id && l->offset == offset)
            return l;
    }

    cv__srcframe_t fr[MAX_INLINE + 1];
    memset(fr, 0, sizeof fr);
    uint32_t n = 1;
    if (file_id >= 0 && (size_t)file_id < s->nfiles) {
        file_t *f = &s->files[file_id];
        f->used = 1;
        if (f->state == MF_UNOPENED)
            open_file(s, f);
        if (f->state == MF_OK && offset > 0)
            n = resolve_in(f, offset - 1, fr);
    }

    cv__loc_t *l = calloc(1, sizeof *l);
    cv__srcframe_t *frames = malloc(n * sizeof *frames);
    rheap_grow(&s->locs, &s->caplocs, s->nlocs, sizeof *s->locs, 1024);
    if (!l || !frames || s->nlocs == s->caplocs ||
        ((s->nslots_used + 1) * 2 > s->mask + 1 &&
         cv__hash_grow(&s->slot_keys, &s->slot_locs, sizeof *s->slot_locs, &s->mask,
                          &s->shift) != 0)) {
        free(l);
        free(frames);
        for (uint32_t k = 0; k < n; k++) {
            free((char *)fr[k].sym);
            free((char *)fr[k].file);
        }
        return NULL;
    }
    memcpy(frames, fr, n * sizeof *frames);
    l->id = (uint32_t)s->nlocs;
    l->file_id = file_id;
    l->offset = offset;
    l->nframes = n;
    l->frames = frames;
    s->locs[s->nlocs++] = l;
    j = cv__hash_slot(key, s->shift);
    while (s->slot_keys[j])
        j = (j + 1) & s->mask;
    s->slot_keys[j] = key;
    s->slot_locs[j] = (uint32_t)s->nlocs - 1;
    s->nslots_used++;
    return l;
}

const char *cv__sym_elf_symbol(cv__sym_t *s, int file_id, uint64_t addr)
{
    if (file_id < 0 || (size_t)file_id >= s->nfiles)
        return NULL;
    file_t *f = &s->files[file_id];
    if (f->state == MF_UNOPENED)
        open_file(s, f);
    return f->state == MF_OK ? symix_lookup(f, addr) : NULL;
}
