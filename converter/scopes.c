/*
 * scopes.c: the chain of functions (inlined ones, then the real one) containing an address in
 * one compile unit.
 *
 * libdw's dwarf_getscopes cannot be used for this. It walks the CU's DIE tree and prunes every
 * DIE whose address ranges do not contain the address, and a DW_TAG_namespace, class or
 * structure DIE has no address ranges at all, so everything below it is pruned. gcc places a
 * function's definition at the top of the CU (pointing to its declaration in the namespace with
 * DW_AT_specification), so gcc's output is found; clang puts the definition of a function
 * declared in a namespace inside the namespace DIE, and rustc puts every function inside the
 * DW_TAG_namespace DIEs of its crate, modules and impl blocks, so for them dwarf_getscopes
 * finds nothing. Here each CU's functions are collected once, looking through namespaces, classes
 * and structures, and sorted by address; a lookup is a binary search and then a descent through
 * the one function's inlined scopes.
 */
#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

#include "converter.h"

typedef struct {
    uint64_t lo, hi;
    uint64_t maxhi;      /* the largest hi of this range and those sorted before it */
    Dwarf_Die die;
} fn_range_t;

typedef struct {
    void *cu_addr;       /* the CU DIE's address in the debug data: the key */
    fn_range_t *fns;
    size_t nfns;
} cu_index_t;

struct cv__scopes {
    cu_index_t *cus;
    size_t ncus, capcus;
};

cv__scopes_t *cv__scopes_create(void)
{
    return calloc(1, sizeof(cv__scopes_t));
}

void cv__scopes_destroy(cv__scopes_t *sc)
{
    if (!sc)
        return;
    for (size_t i = 0; i < sc->ncus; i++)
        free(sc->cus[i].fns);
    free(sc->cus);
    free(sc);
}

/* DIEs without addresses of their own that may hold function definitions. */
static int holds_functions(int tag)
{
    switch (tag) {
    case DW_TAG_namespace:
    case DW_TAG_module:
    case DW_TAG_class_type:
    case DW_TAG_structure_type:
    case DW_TAG_union_type:
    case DW_TAG_interface_type:
    case DW_TAG_enumeration_type:
        return 1;
    default:
        return 0;
    }
}

static int add_function(cu_index_t *ix, size_t *cap, Dwarf_Die *die)
{
    Dwarf_Addr base, lo, hi;
    ptrdiff_t off = 0;
    while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
        if (hi <= lo)
            continue;
        if (rheap_grow(&ix->fns, cap, ix->nfns, sizeof *ix->fns, 64) != 0)
            return -1;
        fn_range_t *r = &ix->fns[ix->nfns++];
        r->lo = lo;
        r->hi = hi;
        r->die = *die;
    }
    return 0;
}

/* Collects the function definitions with addresses among the descendants of parent, looking
 * into namespaces and types, and into functions and their blocks too: a class local to a
 * function (a C++ lambda's closure type, for one) is declared inside it, and compilers may place
 * its member functions' definitions there. Variables, parameters and other leaves are skipped
 * without reading their attributes. */
static int collect(cu_index_t *ix, size_t *cap, Dwarf_Die *parent, int depth)
{
    Dwarf_Die child;
    if (depth > 64 || dwarf_child(parent, &child) != 0)
        return 0;
    do {
        int tag = dwarf_tag(&child);
        if (tag == DW_TAG_subprogram && add_function(ix, cap, &child) != 0)
            return -1;
        if ((tag == DW_TAG_subprogram || tag == DW_TAG_lexical_block || holds_functions(tag)) &&
            dwarf_haschildren(&child)) {
            if (collect(ix, cap, &child, depth + 1) != 0)
                return -1;
        }
    } while (dwarf_siblingof(&child, &child) == 0);
    return 0;
}

static int fn_cmp(const void *a, const void *b)
{
    const fn_range_t *x = a, *y = b;
    if (x->lo != y->lo)
        return x->lo < y->lo ? -1 : 1;
    /* The wider range first, so the backward scan of a lookup meets the narrower one first. */
    return x->hi > y->hi ? -1 : x->hi < y->hi;
}

static cu_index_t *index_of(cv__scopes_t *sc, Dwarf_Die *cu)
{
    for (size_t i = 0; i < sc->ncus; i++)
        if (sc->cus[i].cu_addr == cu->addr)
            return &sc->cus[i];
    if (rheap_grow(&sc->cus, &sc->capcus, sc->ncus, sizeof *sc->cus, 16) != 0)
        return NULL;
    cu_index_t *ix = &sc->cus[sc->ncus];
    memset(ix, 0, sizeof *ix);
    size_t cap = 0;
    if (collect(ix, &cap, cu, 0) != 0) {
        free(ix->fns);
        return NULL;
    }
    if (ix->nfns)
        qsort(ix->fns, ix->nfns, sizeof *ix->fns, fn_cmp);
    uint64_t m = 0;
    for (size_t i = 0; i < ix->nfns; i++) {
        if (ix->fns[i].hi > m)
            m = ix->fns[i].hi;
        ix->fns[i].maxhi = m;
    }
    ix->cu_addr = cu->addr;
    sc->ncus++;
    return ix;
}

/* Scopes inside a function that may contain an inlined call. */
static int is_inner_scope(int tag)
{
    switch (tag) {
    case DW_TAG_inlined_subroutine:
    case DW_TAG_lexical_block:
    case DW_TAG_try_block:
    case DW_TAG_catch_block:
    case DW_TAG_with_stmt:
    case DW_TAG_entry_point:
        return 1;
    default:
        return 0;
    }
}

int cv__scopes_chain(cv__scopes_t *sc, Dwarf_Die *cu, uint64_t pc, Dwarf_Die *chain, int max)
{
    if (max < 1)
        return 0;
    cu_index_t *ix = index_of(sc, cu);
    if (!ix)
        return -1;
    size_t lo = 0, hi = ix->nfns;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (ix->fns[mid].lo <= pc)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* The function starting closest below pc that contains it. */
    const fn_range_t *best = NULL;
    for (size_t i = lo; i-- > 0 && ix->fns[i].maxhi > pc;)
        if (pc < ix->fns[i].hi) {
            best = &ix->fns[i];
            break;
        }
    if (!best)
        return 0;

    /* Descend from the function into the innermost scope holding pc, remembering the inlined
     * calls on the way: path[0] is the function, path[k] the k-th inlined call inside it. */
    Dwarf_Die path[64 + 1];
    int np = 0;
    path[np++] = best->die;
    Dwarf_Die cur = best->die;
    for (int depth = 0; depth < 256; depth++) {
        Dwarf_Die child;
        int found = 0;
        if (dwarf_child(&cur, &child) == 0) {
            do {
                int tag = dwarf_tag(&child);
                if (is_inner_scope(tag) && dwarf_haspc(&child, pc) == 1) {
                    if (tag == DW_TAG_inlined_subroutine && np < (int)(sizeof path / sizeof *path))
                        path[np++] = child;
                    cur = child;
                    found = 1;
                    break;
                }
            } while (dwarf_siblingof(&child, &child) == 0);
        }
        if (!found)
            break;
    }
    int n = 0;
    for (int i = np; i-- > 0 && n < max;)
        chain[n++] = path[i];
    return n;
}
