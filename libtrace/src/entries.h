/*
 * entries.h: every allocator entry point librheap exports, in one list. Anything that needs to
 * know which functions the recorder wraps (the wrappers themselves, code that redirects a
 * process's calls to them) reads it from here.
 *
 * RHEAP_LIBC_ENTRIES: the C library's functions, wrapped by hand in wrappers.c.
 * RHEAP_FAMILY_ENTRIES: the C++ allocation operators and the functions of the allocators that
 * replace malloc (jemalloc, tcmalloc, mimalloc), wrapped in families.c from this list:
 *
 *   X(slot, symbol, shape, call)
 *
 * `slot` names the entry (RHEAP_E_<slot>), `symbol` is the exported (mangled) name, `call` the
 * rip_call_t it records an allocation under (FREE for the functions that free), and `shape` its
 * signature and what its arguments mean:
 *
 *   N_S     void *(size_t size)                      N_SN    void *(size_t, const nothrow_t &)
 *   N_SA    void *(size_t size, size_t align)        N_SAN   void *(size_t, size_t align, nothrow)
 *   N_AS    void *(size_t align, size_t size)        N_NS    void *(size_t n, size_t size)
 *   N_NSA   void *(size_t n, size_t size, size_t align)
 *   N_X     void *(size_t size, int flags)           jemalloc's flags: MALLOCX_ALIGN in bits 0-5
 *   PM      int (void **out, size_t align, size_t size)
 *   R_PS    void *(void *old, size_t size)           R_PSA   void *(void *, size_t, size_t align)
 *   R_PSX   void *(void *old, size_t size, int flags)
 *   XA      size_t (void *p, size_t size, size_t extra, int flags): resizes in place only
 *   F_P     void (void *)                            F_PS    void (void *, size_t size or align)
 *   F_PN    void (void *, const nothrow_t &)         F_PSA   void (void *, size_t, size_t align)
 *   F_PAN   void (void *, size_t align, nothrow)     F_PI    void (void *, int flags)
 *   F_PSI   void (void *, size_t size, int flags)
 *   N_P     void *(size_t size), page-aligned        R_PNS   void *(void *old, size_t n, size_t)
 *   H_...   mimalloc's per-heap forms: a heap first, then the arguments of the shape after H_
 *   STR     char *(const char *s)                    STRN    char *(const char *s, size_t n)
 *   RP      char *(const char *path, char *buf): allocates when buf is NULL
 *   HD      void (heap): frees every block of the heap (mi_heap_destroy)
 *   HN, HX  void *(void), void (heap): a heap made or dropped; records nothing, inner calls pass
 *
 * Each form of one operator records under one call ("operator new"): its alignment, when it has
 * one, is in the record. When you add an entry: add its row here (and its call to rip.h when
 * it needs a name of its own); families.c generates the rest.
 */
#ifndef RHEAP_ENTRIES_H
#define RHEAP_ENTRIES_H

#define RHEAP_LIBC_ENTRIES(X)                                                                      \
    X(malloc) X(free) X(calloc) X(realloc) X(reallocarray) X(posix_memalign) X(aligned_alloc)      \
    X(memalign) X(valloc) X(pvalloc)

/* The same functions with their shapes (below), as an allocator linked into a module defines
 * them, maybe under a prefix (je_malloc): patch.c hooks them there. RHEAP_LIBC_ENTRIES stays the
 * list of names, which got.c's tables are built from. */
#define RHEAP_LIBC_SHAPED(X)                                                                       \
    X(MALLOC, "malloc", N_S, MALLOC)                                                               \
    X(FREE, "free", F_P, FREE)                                                                     \
    X(CALLOC, "calloc", N_NS, CALLOC)                                                              \
    X(REALLOC, "realloc", R_PS, REALLOC)                                                           \
    X(REALLOCARRAY, "reallocarray", R_PNS, REALLOCARRAY)                                           \
    X(POSIX_MEMALIGN, "posix_memalign", PM, POSIX_MEMALIGN)                                        \
    X(ALIGNED_ALLOC, "aligned_alloc", N_AS, ALIGNED_ALLOC)                                         \
    X(MEMALIGN, "memalign", N_AS, MEMALIGN)                                                        \
    X(VALLOC, "valloc", N_P, VALLOC)                                                               \
    X(PVALLOC, "pvalloc", N_P, PVALLOC)

#define RHEAP_FAMILY_ENTRIES(X)                                                                    \
    /* C++: operator new and new[] in every form, and every operator delete */                     \
    X(NEW, "_Znwm", N_S, NEW)                                                                      \
    X(NEWA, "_Znam", N_S, NEW_ARRAY)                                                               \
    X(NEW_NT, "_ZnwmRKSt9nothrow_t", N_SN, NEW)                                                    \
    X(NEWA_NT, "_ZnamRKSt9nothrow_t", N_SN, NEW_ARRAY)                                             \
    X(NEW_AL, "_ZnwmSt11align_val_t", N_SA, NEW)                                                   \
    X(NEWA_AL, "_ZnamSt11align_val_t", N_SA, NEW_ARRAY)                                            \
    X(NEW_AL_NT, "_ZnwmSt11align_val_tRKSt9nothrow_t", N_SAN, NEW)                                 \
    X(NEWA_AL_NT, "_ZnamSt11align_val_tRKSt9nothrow_t", N_SAN, NEW_ARRAY)                          \
    X(DL, "_ZdlPv", F_P, FREE)                                                                     \
    X(DA, "_ZdaPv", F_P, FREE)                                                                     \
    X(DL_SZ, "_ZdlPvm", F_PS, FREE)                                                                \
    X(DA_SZ, "_ZdaPvm", F_PS, FREE)                                                                \
    X(DL_NT, "_ZdlPvRKSt9nothrow_t", F_PN, FREE)                                                   \
    X(DA_NT, "_ZdaPvRKSt9nothrow_t", F_PN, FREE)                                                   \
    X(DL_AL, "_ZdlPvSt11align_val_t", F_PS, FREE)                                                  \
    X(DA_AL, "_ZdaPvSt11align_val_t", F_PS, FREE)                                                  \
    X(DL_SZ_AL, "_ZdlPvmSt11align_val_t", F_PSA, FREE)                                             \
    X(DA_SZ_AL, "_ZdaPvmSt11align_val_t", F_PSA, FREE)                                             \
    X(DL_AL_NT, "_ZdlPvSt11align_val_tRKSt9nothrow_t", F_PAN, FREE)                                \
    X(DA_AL_NT, "_ZdaPvSt11align_val_tRKSt9nothrow_t", F_PAN, FREE)                                \
    /* jemalloc's non-standard API (sallocx and nallocx allocate nothing: left alone) */           \
    X(MALLOCX, "mallocx", N_X, MALLOCX)                                                            \
    X(RALLOCX, "rallocx", R_PSX, RALLOCX)                                                          \
    X(XALLOCX, "xallocx", XA, XALLOCX)                                                             \
    X(DALLOCX, "dallocx", F_PI, FREE)                                                              \
    X(SDALLOCX, "sdallocx", F_PSI, FREE)                                                           \
    /* gperftools' tcmalloc */                                                                     \
    X(TC_MALLOC, "tc_malloc", N_S, TC_MALLOC)                                                      \
    X(TC_MALLOC_SKIP, "tc_malloc_skip_new_handler", N_S, TC_MALLOC)                                \
    X(TC_CALLOC, "tc_calloc", N_NS, TC_CALLOC)                                                     \
    X(TC_REALLOC, "tc_realloc", R_PS, TC_REALLOC)                                                  \
    X(TC_MEMALIGN, "tc_memalign", N_AS, TC_MEMALIGN)                                               \
    X(TC_POSIX_MEMALIGN, "tc_posix_memalign", PM, TC_POSIX_MEMALIGN)                               \
    X(TC_VALLOC, "tc_valloc", N_S, TC_VALLOC)                                                      \
    X(TC_PVALLOC, "tc_pvalloc", N_S, TC_PVALLOC)                                                   \
    X(TC_FREE, "tc_free", F_P, FREE)                                                               \
    X(TC_CFREE, "tc_cfree", F_P, FREE)                                                             \
    X(TC_FREE_SZ, "tc_free_sized", F_PS, FREE)                                                     \
    X(TC_NEW, "tc_new", N_S, TC_NEW)                                                               \
    X(TC_NEW_NT, "tc_new_nothrow", N_SN, TC_NEW)                                                   \
    X(TC_NEW_AL, "tc_new_aligned", N_SA, TC_NEW)                                                   \
    X(TC_NEW_AL_NT, "tc_new_aligned_nothrow", N_SAN, TC_NEW)                                       \
    X(TC_NEWA, "tc_newarray", N_S, TC_NEWARRAY)                                                    \
    X(TC_NEWA_NT, "tc_newarray_nothrow", N_SN, TC_NEWARRAY)                                        \
    X(TC_NEWA_AL, "tc_newarray_aligned", N_SA, TC_NEWARRAY)                                        \
    X(TC_NEWA_AL_NT, "tc_newarray_aligned_nothrow", N_SAN, TC_NEWARRAY)                            \
    X(TC_DEL, "tc_delete", F_P, FREE)                                                              \
    X(TC_DEL_SZ, "tc_delete_sized", F_PS, FREE)                                                    \
    X(TC_DEL_NT, "tc_delete_nothrow", F_PN, FREE)                                                  \
    X(TC_DEL_AL, "tc_delete_aligned", F_PS, FREE)                                                  \
    X(TC_DEL_SZ_AL, "tc_delete_sized_aligned", F_PSA, FREE)                                        \
    X(TC_DEL_AL_NT, "tc_delete_aligned_nothrow", F_PAN, FREE)                                      \
    X(TC_DELA, "tc_deletearray", F_P, FREE)                                                        \
    X(TC_DELA_SZ, "tc_deletearray_sized", F_PS, FREE)                                              \
    X(TC_DELA_NT, "tc_deletearray_nothrow", F_PN, FREE)                                            \
    X(TC_DELA_AL, "tc_deletearray_aligned", F_PS, FREE)                                            \
    X(TC_DELA_SZ_AL, "tc_deletearray_sized_aligned", F_PSA, FREE)                                  \
    X(TC_DELA_AL_NT, "tc_deletearray_aligned_nothrow", F_PAN, FREE)                                \
    /* mimalloc */                                                                                 \
    X(MI_MALLOC, "mi_malloc", N_S, MI_MALLOC)                                                      \
    X(MI_CALLOC, "mi_calloc", N_NS, MI_CALLOC)                                                     \
    X(MI_ZALLOC, "mi_zalloc", N_S, MI_ZALLOC)                                                      \
    X(MI_REALLOC, "mi_realloc", R_PS, MI_REALLOC)                                                  \
    X(MI_MALLOC_AL, "mi_malloc_aligned", N_SA, MI_MALLOC_ALIGNED)                                  \
    X(MI_ZALLOC_AL, "mi_zalloc_aligned", N_SA, MI_ZALLOC_ALIGNED)                                  \
    X(MI_CALLOC_AL, "mi_calloc_aligned", N_NSA, MI_CALLOC_ALIGNED)                                 \
    X(MI_REALLOC_AL, "mi_realloc_aligned", R_PSA, MI_REALLOC_ALIGNED)                              \
    X(MI_NEW, "mi_new", N_S, MI_NEW)                                                               \
    X(MI_NEW_NT, "mi_new_nothrow", N_S, MI_NEW)                                                    \
    X(MI_NEW_AL, "mi_new_aligned", N_SA, MI_NEW)                                                   \
    X(MI_NEW_AL_NT, "mi_new_aligned_nothrow", N_SA, MI_NEW)                                        \
    X(MI_FREE, "mi_free", F_P, FREE)                                                               \
    X(MI_FREE_SZ, "mi_free_size", F_PS, FREE)                                                      \
    X(MI_FREE_AL, "mi_free_aligned", F_PS, FREE)                                                   \
    X(MI_FREE_SZ_AL, "mi_free_size_aligned", F_PSA, FREE)                                          \
    X(MI_MALLOC_SMALL, "mi_malloc_small", N_S, MI_MALLOC)                                          \
    X(MI_ZALLOC_SMALL, "mi_zalloc_small", N_S, MI_ZALLOC)                                          \
    X(MI_MALLOCN, "mi_mallocn", N_NS, MI_MALLOC)                                                   \
    X(MI_REALLOCN, "mi_reallocn", R_PNS, MI_REALLOC)                                               \
    X(MI_STRDUP, "mi_strdup", STR, MI_STRDUP)                                                      \
    X(MI_STRNDUP, "mi_strndup", STRN, MI_STRNDUP)                                                  \
    X(MI_REALPATH, "mi_realpath", RP, MI_REALPATH)                                                 \
    /* mimalloc's heaps: a block pairs with its free whatever heap and family frees it */          \
    X(MI_HEAP_MALLOC, "mi_heap_malloc", H_S, MI_HEAP_MALLOC)                                       \
    X(MI_HEAP_MALLOC_SMALL, "mi_heap_malloc_small", H_S, MI_HEAP_MALLOC)                           \
    X(MI_HEAP_MALLOCN, "mi_heap_mallocn", H_NS, MI_HEAP_MALLOC)                                    \
    X(MI_HEAP_ZALLOC, "mi_heap_zalloc", H_S, MI_HEAP_ZALLOC)                                       \
    X(MI_HEAP_CALLOC, "mi_heap_calloc", H_NS, MI_HEAP_CALLOC)                                      \
    X(MI_HEAP_REALLOC, "mi_heap_realloc", H_R_PS, MI_HEAP_REALLOC)                                 \
    X(MI_HEAP_REALLOCN, "mi_heap_reallocn", H_R_PNS, MI_HEAP_REALLOC)                              \
    X(MI_HEAP_MALLOC_AL, "mi_heap_malloc_aligned", H_SA, MI_HEAP_MALLOC_ALIGNED)                   \
    X(MI_HEAP_ZALLOC_AL, "mi_heap_zalloc_aligned", H_SA, MI_HEAP_ZALLOC_ALIGNED)                   \
    X(MI_HEAP_CALLOC_AL, "mi_heap_calloc_aligned", H_NSA, MI_HEAP_CALLOC_ALIGNED)                  \
    X(MI_HEAP_REALLOC_AL, "mi_heap_realloc_aligned", H_R_PSA, MI_HEAP_REALLOC_ALIGNED)             \
    X(MI_HEAP_STRDUP, "mi_heap_strdup", H_STR, MI_STRDUP)                                          \
    X(MI_HEAP_STRNDUP, "mi_heap_strndup", H_STRN, MI_STRNDUP)                                      \
    X(MI_HEAP_REALPATH, "mi_heap_realpath", H_RP, MI_REALPATH)                                     \
    X(MI_HEAP_NEW, "mi_heap_new", HN, FREE)                                                        \
    X(MI_HEAP_DELETE, "mi_heap_delete", HX, FREE)                                                  \
    X(MI_HEAP_DESTROY, "mi_heap_destroy", HD, FREE)

/* jemalloc's functions, which a build of it may prefix as it prefixes the C library's names
 * (je_mallocx, _rjem_mallocx): patch.c looks for them under the prefix. */
#define RHEAP_PREFIXABLE(X) X(MALLOCX) X(RALLOCX) X(XALLOCX) X(DALLOCX) X(SDALLOCX)

/* The functions whose presence says that an allocator replacing malloc is loaded: its malloc and
 * free may call its own wrapped functions (wrappers.c's nest_inside). */
#define RHEAP_REPLACING_MARKS(X) X(MALLOCX) X(TC_MALLOC) X(MI_MALLOC)

enum {
#define RHEAP__E_ENUM(slot, symbol, shape, call) RHEAP_E_##slot,
    RHEAP_FAMILY_ENTRIES(RHEAP__E_ENUM)
#undef RHEAP__E_ENUM
    RHEAP_E_COUNT
};

#endif
