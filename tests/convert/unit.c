/*
 * unit.c: the converter's parts called directly: the merge order, the live map, demangling,
 * and the symbol index against dwfl_module_addrinfo.
 */
#define _GNU_SOURCE
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "converter.h"
#include "tgen.h"

/* The symbolizer's warnings, printed and counted. */
static void count_warning(void *user, const char *file, const char *message)
{
    (void)file;
    fprintf(stderr, "warning: %s\n", message);
    ++*(int *)user;
}

static void test_merge(void)
{
    cv__merge_t *m = cv__merge_create(3);
    /* Stream 2 frees at t=5, stream 0 allocates at t=5, stream 1 allocates at t=3. */
    cv__merge_set(m, 0, 5, 1);
    cv__merge_set(m, 1, 3, 1);
    cv__merge_set(m, 2, 5, 0);
    CHECK_INT(cv__merge_top(m), 1);
    cv__merge_remove(m, 1);
    CHECK_INT(cv__merge_top(m), 2); /* the free first at equal times */
    cv__merge_set(m, 2, 9, 1);
    CHECK_INT(cv__merge_top(m), 0);
    cv__merge_set(m, 0, 9, 1);
    CHECK_INT(cv__merge_top(m), 0); /* equal keys: the lower stream index */
    cv__merge_remove(m, 0);
    CHECK_INT(cv__merge_top(m), 2);
    cv__merge_remove(m, 2);
    CHECK_INT(cv__merge_top(m), -1);
    cv__merge_destroy(m);

    /* A larger random check: the merge yields keys in order. */
    enum { N = 50 };
    m = cv__merge_create(N);
    uint64_t key[N], last = 0;
    unsigned seed = 7;
    for (int i = 0; i < N; i++) {
        seed = seed * 1103515245u + 12345u;
        key[i] = seed % 1000;
        cv__merge_set(m, (size_t)i, key[i], 0);
    }
    for (int k = 0; k < 5000; k++) {
        long top = cv__merge_top(m);
        if (top < 0)
            break;
        if (key[top] < last) {
            fprintf(stderr, "merge out of order: %llu after %llu\n", (unsigned long long)key[top],
                    (unsigned long long)last);
            check_failures++;
            break;
        }
        last = key[top];
        seed = seed * 1103515245u + 12345u;
        if (seed % 10 == 0) {
            cv__merge_remove(m, (size_t)top);
        } else {
            key[top] += seed % 50;
            cv__merge_set(m, (size_t)top, key[top], 0);
        }
    }
    cv__merge_destroy(m);
}

static void test_pairs(void)
{
    cv__pairs_t *p = cv__pairs_create();
    enum { N = 100000 };
    cv__live_t b, out;
    memset(&b, 0, sizeof b);
    for (uint64_t i = 1; i <= N; i++) {
        b.addr = i * 16;
        b.t = i;
        b.size = i % 977;
        CHECK_INT(cv__pairs_insert(p, &b, &out), 0);
    }
    CHECK_INT(cv__pairs_count(p), N);
    /* Take every other block; the rest must all still be found with their own data. */
    int bad = 0;
    for (uint64_t i = 1; i <= N; i += 2)
        if (!cv__pairs_take(p, i * 16, &out) || out.t != i)
            bad++;
    CHECK_INT(bad, 0);
    CHECK_INT(cv__pairs_take(p, 16, &out), 0);
    CHECK_INT(cv__pairs_count(p), N / 2);
    for (uint64_t i = 2; i <= N; i += 2)
        if (!cv__pairs_take(p, i * 16, &out) || out.size != i % 977)
            bad++;
    CHECK_INT(bad, 0);
    CHECK_INT(cv__pairs_count(p), 0);
    /* Reuse of a live address evicts the old block. */
    b.addr = 0x1000;
    b.t = 1;
    CHECK_INT(cv__pairs_insert(p, &b, &out), 0);
    b.t = 2;
    CHECK_INT(cv__pairs_insert(p, &b, &out), 1);
    CHECK_INT(out.t, 1);
    /* Drain: sorted by time. */
    b.addr = 0x2000;
    b.t = 0;
    cv__pairs_insert(p, &b, &out);
    size_t n;
    cv__live_t *all = cv__pairs_drain(p, &n);
    CHECK_INT(n, 2);
    CHECK_INT(all[0].addr, 0x2000);
    CHECK_INT(all[1].addr, 0x1000);
    free(all);
    cv__pairs_destroy(p);
}

static void check_demangle(const char *in, const char *want)
{
    char *got = cv__demangle(in);
    CHECK_STR(got ? got : "(null)", want);
    free(got);
}

static void test_demangle(void)
{
    check_demangle("_ZN4demo4PoolIiE4growEm", "demo::Pool<int>::grow(unsigned long)");
    check_demangle("_ZN4demo4leak17h0123456789abcdefE", "demo::leak");
    check_demangle("_RNvCs1234_4demo4leak", "demo::leak");
    check_demangle("_Znwm", "operator new(unsigned long)");
    check_demangle("memcpy@@GLIBC_2.14", "memcpy");
    check_demangle("_ZN4demo4leakEv@GLIBC_PRIVATE", "demo::leak()");
    check_demangle("main", "main");
}

static int find_libc(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    if (strstr(info->dlpi_name, "/libc.so.")) {
        snprintf(data, 1024, "%s", info->dlpi_name);
        return 1;
    }
    return 0;
}

static int cmp_name(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

/* The symbol index must name every address as dwfl_module_addrinfo does: checked on the
 * starts, middles, last bytes and first bytes past the end of a spread of the file's symbols,
 * and on addresses evenly spaced over its code. Returns how many addresses had a name. */
static int compare_index(const char *path)
{
    static const Dwfl_Callbacks cb = {
        .find_elf = dwfl_build_id_find_elf,
        .find_debuginfo = dwfl_standard_find_debuginfo,
        .section_address = dwfl_offline_section_address,
    };
    Dwfl *dwfl = dwfl_begin(&cb);
    dwfl_report_begin(dwfl);
    Dwfl_Module *mod = dwfl_report_elf(dwfl, path, path, -1, 0, true);
    dwfl_report_end(dwfl, NULL, NULL);
    if (!mod) {
        fprintf(stderr, "%s: %s\n", path, dwfl_errmsg(-1));
        check_failures++;
        return 0;
    }
    int warnings = 0;
    cv__sym_t *sym = cv__sym_create(count_warning, &warnings);
    int fid = cv__sym_file(sym, path, strlen(path), NULL, 0);

    enum { MAXA = 2000 };
    static uint64_t addrs[MAXA];
    int na = 0;
    int nsyms = dwfl_module_getsymtab(mod);
    int stride = nsyms / 150 > 0 ? nsyms / 150 : 1;
    for (int i = 1; i < nsyms && na + 4 <= MAXA; i += stride) {
        GElf_Sym s;
        GElf_Addr v;
        if (!dwfl_module_getsym_info(mod, i, &s, &v, NULL, NULL, NULL) || s.st_shndx == SHN_UNDEF)
            continue;
        addrs[na++] = v;
        addrs[na++] = v + s.st_size / 2;
        addrs[na++] = v + (s.st_size ? s.st_size - 1 : 1);
        addrs[na++] = v + s.st_size;
    }
    GElf_Addr bias;
    Elf *elf = dwfl_module_getelf(mod, &bias);
    for (Elf_Scn *scn = NULL; elf && (scn = elf_nextscn(elf, scn)) != NULL;) {
        GElf_Shdr mem, *sh = gelf_getshdr(scn, &mem);
        if (!sh || !(sh->sh_flags & SHF_EXECINSTR) || !sh->sh_size)
            continue;
        for (int k = 0; k < 100 && na < MAXA; k++)
            addrs[na++] = sh->sh_addr + bias + sh->sh_size * (uint64_t)k / 100 + (uint64_t)k % 7;
    }

    int named = 0, bad = 0;
    for (int i = 0; i < na; i++) {
        GElf_Off off;
        GElf_Sym s;
        const char *want = dwfl_module_addrinfo(mod, addrs[i], &off, &s, NULL, NULL, NULL);
        const char *got = cv__sym_elf_symbol(sym, fid, addrs[i]);
        if (!cmp_name(got, want)) {
            if (bad++ < 10)
                fprintf(stderr, "%s: 0x%llx: index says %s, dwfl_module_addrinfo %s\n", path,
                        (unsigned long long)addrs[i], got ? got : "(none)", want ? want : "(none)");
        } else if (want) {
            named++;
        }
    }
    CHECK_INT(bad, 0);
    CHECK_INT(warnings, 0);
    fprintf(stderr, "%s: %d addresses, %d named, %d differ\n", path, na, named, bad);
    cv__sym_destroy(sym);
    dwfl_end(dwfl);
    return named;
}

int main(void);

/* libc (with its debug file when installed) and this program, then an exact answer for
 * this program's own main. */
static void test_symbol_index(void)
{
    char libc[1024] = "";
    dl_iterate_phdr(find_libc, libc);
    CHECK(libc[0] != 0);
    if (libc[0])
        CHECK(compare_index(libc) > 300);
    char self[1024];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    CHECK(n > 0);
    if (n <= 0)
        return;
    self[n] = 0;
    CHECK(compare_index(self) > 100);

    /* main's first byte and the one after it. */
    Dl_info di;
    CHECK(dladdr((void *)main, &di) != 0);
    int warnings = 0;
    cv__sym_t *sym = cv__sym_create(count_warning, &warnings);
    int fid = cv__sym_file(sym, self, (size_t)n, NULL, 0);
    uint64_t off = (uint64_t)(uintptr_t)main - (uint64_t)(uintptr_t)di.dli_fbase;
    const char *got = cv__sym_elf_symbol(sym, fid, off);
    CHECK_STR(got ? got : "(none)", "main");
    got = cv__sym_elf_symbol(sym, fid, off + 1);
    CHECK_STR(got ? got : "(none)", "main");
    cv__sym_destroy(sym);
}

int main(void)
{
    test_merge();
    test_pairs();
    test_demangle();
    test_symbol_index();
    if (check_failures) {
        fprintf(stderr, "%d check(s) failed\n", check_failures);
        return 1;
    }
    printf("ok\n");
    return 0;
}
