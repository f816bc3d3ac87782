/*
 * plug_je: a library carrying its own copy of jemalloc, linked statically under the prefix je_
 * (the objcopy-renamed libjemalloc_pic.a), which a program loads with dlopen after start-up.
 * plug_je_work(n) makes n blocks of 48 bytes with je_mallocx and frees them with je_sdallocx.
 */
#define JEMALLOC_NO_RENAME
#define JEMALLOC_MANGLE
#include <jemalloc/jemalloc.h>

__attribute__((visibility("default"))) int plug_je_work(int n)
{
    int made = 0;
    for (int i = 0; i < n; i++) {
        void *p = mallocx(48, 0);
        if (p) {
            made++;
            sdallocx(p, 48, 0);
        }
    }
    return made;
}
