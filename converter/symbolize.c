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
#include <libiberty/demangle.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

enum { MF_UNOPENED, MF_OK, MF_MISSING, MF_MISMATCH };

typedef struct {
    uint64_t lo, hi;
    Dwarf_Die cu;
} cu_range_t;

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
} file_t;

typedef struct {
    uint64_t key;
    uint32_t loc;        /* index + 1; 0 = empty slot */
} slot_t;

struct rheap__sym {
    FILE *err;
    int *warnings;
    file_t *files;
    size_t nfiles, capfiles;
    rheap__loc_t **locs;
    size_t nlocs, caplocs;
    slot_t *slots;
    size_t mask, nslots_used;
    Dwfl_Callbacks cb;
    char *debuginfo_path;
};

static char *dup_n(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = 0;
    }
    return d;
}

char *rheap__demangle(const char *name)
{
    if (!name)
        return NULL;
    /* Versioned names from .dynsym ("memcpy@@GLIBC_2.14") carry the version after '@'. */
    const char *at = strchr(name, '@');
    char *base = at ? dup_n(name, (size_t)(at - name)) : strdup(name);
    if (!base)
        return NULL;
    char *d = cplus_demangle(base, DMGL_PARAMS | DMGL_ANSI);
    if (d) {
        free(base);
        return d;
    }
    return base;
}

rheap__sym_t *rheap__sym_create(FILE *err, int *warnings)
{
    /* Symbolization must never reach the network, whatever the user's environment says. */
    unsetenv("DEBUGINFOD_URLS");
    rheap__sym_t *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->err = err;
    s->warnings = warnings;
    s->mask = 4095;
    s->slots = calloc(s->mask + 1, sizeof *s->slots);
    if (!s->slots) {
        free(s);
        return NULL;
    }
    s->cb.find_elf = dwfl_build_id_find_elf;
    s->cb.find_debuginfo = dwfl_standard_find_debuginfo;
    s->cb.section_address = dwfl_offline_section_address;
    s->cb.debuginfo_path = NULL;
    return s;
}

void rheap__sym_destroy(rheap__sym_t *s)
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
    }
    free(s->files);
    for (size_t i = 0; i < s->nlocs; i++) {
        rheap__loc_t *l = s->locs[i];
        for (uint32_t j = 0; j < l->nframes; j++) {
            free((char *)l->frames[j].sym);
            free((char *)l->frames[j].file);
        }
        free((void *)l->frames);
        free(l);
    }
    free(s->locs);
    free(s->slots);
    free(s);
}

int rheap__sym_file(rheap__sym_t *s, const char *path, size_t path_len, const uint8_t *build_id,
                    size_t build_id_len)
{
    for (size_t i = 0; i < s->nfiles; i++) {
        file_t *f = &s->files[i];
        if (strlen(f->path) == path_len && memcmp(f->path, path, path_len) == 0 &&
            f->build_id_len == build_id_len &&
            (build_id_len == 0 || memcmp(f->build_id, build_id, build_id_len) == 0))
            return (int)i;
    }
    if (s->nfiles == s->capfiles) {
        size_t cap = s->capfiles ? s->capfiles * 2 : 16;
        file_t *n = realloc(s->files, cap * sizeof *n);
        if (!n)
            return -1;
        s->files = n;
        s->capfiles = cap;
    }
    file_t *f = &s->files[s->nfiles];
    memset(f, 0, sizeof *f);
    f->path = dup_n(path, path_len);
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

const char *rheap__sym_file_path(const rheap__sym_t *s, int file_id)
{
    return file_id >= 0 && (size_t)file_id < s->nfiles ? s->files[file_id].path : NULL;
}

const char *rheap__sym_file_status(const rheap__sym_t *s, int file_id)
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

static void warn(rheap__sym_t *s, const char *path, const char *what)
{
    fprintf(s->err, "rheap: warning: module %s: %s\n", path, what);
    if (s->warnings)
        (*s->warnings)++;
}

/* Pseudo-modules (the vDSO, anonymous code) have no file to read; they stay unresolved
 * without a warning. */
static int is_pseudo(const char *path)
{
    return path[0] == 0 || path[0] == '[' || strncmp(path, "linux-vdso", 10) == 0 ||
           strncmp(path, "linux-gate", 10) == 0;
}

static void open_file(rheap__sym_t *s, file_t *f)
{
    f->state = MF_MISSING;
    if (is_pseudo(f->path))
        return;
    if (access(f->path, R_OK) != 0) {
        warn(s, f->path, "file not found; its frames keep module and offset only");
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

/* Without .debug_aranges (clang, rustc) dwfl_module_addrdie finds no CU; walk the CUs'
 * address ranges instead, collected once per file. */
static int build_ranges(file_t *f)
{
    f->ranges_built = 1;
    Dwarf_Addr bias;
    size_t cap = 0;
    for (Dwarf_Die *cu = NULL; (cu = dwfl_module_nextcu(f->mod, cu, &bias)) != NULL;) {
        Dwarf_Addr base, lo, hi;
        ptrdiff_t off = 0;
        while ((off = dwarf_ranges(cu, off, &base, &lo, &hi)) > 0) {
            if (f->nranges == cap) {
                cap = cap ? cap * 2 : 64;
                cu_range_t *n = realloc(f->ranges, cap * sizeof *n);
                if (!n)
                    return -1;
                f->ranges = n;
            }
            f->ranges[f->nranges].lo = lo + bias;
            f->ranges[f->nranges].hi = hi + bias;
            f->ranges[f->nranges].cu = *cu;
            f->nranges++;
        }
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
    for (size_t i = 0; i < f->nranges; i++) {
        if (addr >= f->ranges[i].lo && addr < f->ranges[i].hi) {
            *store = f->ranges[i].cu;
            /* Every CU of a module shares the module's bias; ask for it once more. */
            Dwarf_Addr b = 0;
            dwfl_module_getdwarf(f->mod, &b);
            *bias = b;
            return store;
        }
    }
    return NULL;
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
        return rheap__demangle(n);
    n = attr_string(die, DW_AT_name);
    return n ? strdup(n) : NULL;
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
static uint32_t resolve_in(file_t *f, Dwarf_Addr addr, rheap__srcframe_t *fr)
{
    GElf_Off symoff;
    GElf_Sym esym;
    const char *elfname = dwfl_module_addrinfo(f->mod, addr, &symoff, &esym, NULL, NULL, NULL);

    Dwarf_Addr bias = 0;
    Dwarf_Die cu_store;
    Dwarf_Die *cu = find_cu(f, addr, &bias, &cu_store);
    uint32_t n = 0;
    if (cu) {
        Dwarf_Die cudie = *cu;
        Dwarf_Die *scopes = NULL;
        int ns = dwarf_getscopes(&cudie, addr - bias, &scopes);
        /* dwarf_getscopes continues from an inlined function into its abstract definition,
         * not into the function it was inlined into; the physical nesting of the innermost
         * function DIE (dwarf_getscopes_die) gives the real chain of callers. */
        Dwarf_Die *chain = NULL;
        int nc = 0;
        for (int i = 0; i < ns; i++) {
            int tag = dwarf_tag(&scopes[i]);
            if (tag == DW_TAG_inlined_subroutine || tag == DW_TAG_subprogram) {
                nc = dwarf_getscopes_die(&scopes[i], &chain);
                break;
            }
        }
        Dwarf_Die *funcs[MAX_INLINE + 1];
        int nf = 0;
        for (int i = 0; i < nc && nf <= MAX_INLINE; i++) {
            int tag = dwarf_tag(&chain[i]);
            if (tag == DW_TAG_inlined_subroutine) {
                funcs[nf++] = &chain[i];
            } else if (tag == DW_TAG_subprogram) {
                funcs[nf++] = &chain[i];
                break;
            }
        }
        if (nf > 0) {
            Dwarf_Line *l = dwarf_getsrc_die(&cudie, addr - bias);
            int lineno = 0;
            if (l) {
                const char *src = dwarf_linesrc(l, NULL, NULL);
                fr[0].file = src ? strdup(src) : NULL;
                dwarf_lineno(l, &lineno);
            }
            fr[0].line = lineno > 0 ? (uint32_t)lineno : 0;
            for (int k = 0; k < nf; k++) {
                int is_inl = dwarf_tag(funcs[k]) == DW_TAG_inlined_subroutine;
                fr[k].inlined = is_inl;
                if (!is_inl && elfname)
                    fr[k].sym = rheap__demangle(elfname);
                else
                    fr[k].sym = die_name(funcs[k]);
                if (k + 1 < nf && is_inl)
                    fr[k + 1].file = call_site_file(&cudie, funcs[k], &fr[k + 1].line);
            }
            n = (uint32_t)nf;
        }
        free(chain);
        free(scopes);
    }
    if (n == 0) {
        /* No DWARF for this address: the symbol table still names the function. */
        fr[0].sym = elfname ? rheap__demangle(elfname) : NULL;
        n = 1;
    }
    return n;
}

static int grow_slots(rheap__sym_t *s)
{
    size_t cap = (s->mask + 1) * 2;
    slot_t *n = calloc(cap, sizeof *n);
    if (!n)
        return -1;
    for (size_t i = 0; i <= s->mask; i++) {
        if (!s->slots[i].loc)
            continue;
        size_t j = (size_t)((s->slots[i].key * 0x9E3779B97F4A7C15ull) >> 17) & (cap - 1);
        while (n[j].loc)
            j = (j + 1) & (cap - 1);
        n[j] = s->slots[i];
    }
    free(s->slots);
    s->slots = n;
    s->mask = cap - 1;
    return 0;
}

const rheap__loc_t *rheap__sym_resolve(rheap__sym_t *s, int file_id, uint64_t offset)
{
    /* User-space addresses fit in 48 bits; the file id takes the bits above. */
    uint64_t key = ((uint64_t)(uint32_t)(file_id + 1) << 48) ^ offset;
    size_t j = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 17) & s->mask;
    while (s->slots[j].loc) {
        const rheap__loc_t *l = s->locs[s->slots[j].loc - 1];
        if (s->slots[j].key == key && l->file_id == file_id && l->offset == offset)
            return l;
        j = (j + 1) & s->mask;
    }

    rheap__srcframe_t fr[MAX_INLINE + 1];
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

    rheap__loc_t *l = calloc(1, sizeof *l);
    rheap__srcframe_t *frames = malloc(n * sizeof *frames);
    if (s->nlocs == s->caplocs) {
        size_t cap = s->caplocs ? s->caplocs * 2 : 1024;
        rheap__loc_t **nl = realloc(s->locs, cap * sizeof *nl);
        if (nl) {
            s->locs = nl;
            s->caplocs = cap;
        }
    }
    if (!l || !frames || s->nlocs == s->caplocs ||
        ((s->nslots_used + 1) * 2 > s->mask + 1 && grow_slots(s) != 0)) {
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
    j = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 17) & s->mask;
    while (s->slots[j].loc)
        j = (j + 1) & s->mask;
    s->slots[j].key = key;
    s->slots[j].loc = (uint32_t)s->nlocs;
    s->nslots_used++;
    return l;
}
