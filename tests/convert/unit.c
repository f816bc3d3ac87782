/*
 * unit.c: the converter's parts called directly: the merge order, the live map, demangling,
 * and the symbol index against dwfl_module_addrinfo.
 */
#define _GNU_SOURCE
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <dlfcn.h>
#include <dirent.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "converter.h"
#include "tgen.h"

/* The symbolizer's warnings, printed and counted. */
/* The symbolizer's warnings: each a cv__err_t with the warning status, the module's file and
 * no offset. */
static void count_warning(void *user, const cv__err_t *w)
{
    fprintf(stderr, "warning: %s\n", w->message);
    if (w->status != RHEAP_CONVERT_WARNINGS || w->offset != CV__NO_OFFSET || !w->file[0] ||
        strncmp(w->message, "module ", 7) != 0) {
        fprintf(stderr, "FAIL: a symbolizer warning with status %d, offset %llu, file '%s'\n",
                (int)w->status, (unsigned long long)w->offset, w->file);
        exit(1);
    }
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

/* The live-block store against a plain array of the same blocks: random inserts (some at a
 * live address), takes and a drain, with fields of every width, so that both the packed blocks
 * and the ones kept whole go through every path. */
static uint64_t next_rand(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void random_block(uint64_t *seed, uint64_t addr, cv__live_t *b)
{
    memset(b, 0, sizeof *b);
    b->addr = addr;
    b->t = (next_rand(seed) % 1000000000) * 4;
    b->thread = (uint32_t)(next_rand(seed) % 40);
    b->tid = 5000 + b->thread;
    b->size = next_rand(seed) % 4096;
    b->bt = next_rand(seed) % 3000;
    b->call = (uint8_t)(1 + next_rand(seed) % 9);
    if (next_rand(seed) % 8 == 0)
        b->realloc_of = next_rand(seed) % (1ull << 40);
    if (next_rand(seed) % 8 == 0)
        b->align = 1ull << (next_rand(seed) % 20);
    /* One in twenty does not pack: each field that can overflow, in turn. */
    switch (next_rand(seed) % 100) {
    case 0: b->t += 1; break;                        /* not in 4 ns units */
    case 1: b->size = 1ull << 41; break;             /* 2 TiB */
    case 2: b->bt = (1ull << 24) + 5; break;         /* more stacks than packed ids */
    case 3: b->align = 24; break;                    /* not a power of two */
    case 4: b->realloc_of = 1ull << 41; break;
    }
}

static int same_block(const cv__live_t *a, const cv__live_t *b)
{
    return a->addr == b->addr && a->t == b->t && a->size == b->size && a->bt == b->bt &&
           a->align == b->align && a->realloc_of == b->realloc_of && a->tid == b->tid &&
           a->thread == b->thread && a->call == b->call;
}

static int by_drain_order(const void *x, const void *y)
{
    const cv__live_t *a = x, *b = y;
    if (a->t != b->t)
        return a->t < b->t ? -1 : 1;
    if (a->tid != b->tid)
        return a->tid < b->tid ? -1 : 1;
    return a->addr < b->addr ? -1 : a->addr > b->addr;
}

/* An insert of b where the model's slot says what is live at its address: *bad counts the
 * answers that differ from the model's. */
static void insert_vs_model(cv__pairs_t *p, cv__live_t *slot, const cv__live_t *b, size_t *live,
                            int *bad)
{
    cv__live_t out;
    int rc = cv__pairs_insert(p, b, &out);
    *bad += rc != (slot->addr != 0) || (rc == 1 && !same_block(&out, slot));
    *live += rc == 0;
    *slot = *b;
}

/* A take at addr, against the model's slot the same way; returns the store's answer. */
static int take_vs_model(cv__pairs_t *p, cv__live_t *slot, uint64_t addr, cv__live_t *out,
                         size_t *live, int *bad)
{
    int rc = cv__pairs_take(p, addr, out);
    *bad += rc != (slot->addr != 0) || (rc == 1 && !same_block(out, slot));
    *live -= rc == 1;
    slot->addr = 0;
    return rc;
}

/* The drain gives exactly the model's live blocks (addr 0: not live), in (t, tid, addr) order,
 * and ends without an error. */
static void check_drain(cv__pairs_t *p, const cv__live_t *model, size_t nmodel)
{
    cv__live_t *want = malloc((nmodel + 1) * sizeof *want);
    size_t n = 0, got = 0;
    for (size_t k = 0; k < nmodel; k++)
        if (model[k].addr)
            want[n++] = model[k];
    qsort(want, n, sizeof *want, by_drain_order);
    CHECK_INT(cv__pairs_drain_begin(p), 0);
    int bad = 0, more;
    cv__live_t b;
    while ((more = cv__pairs_drain_next(p, &b)) > 0) {
        if (got >= n || !same_block(&b, &want[got]))
            bad++;
        got++;
    }
    CHECK_INT(more, 0);
    CHECK_INT(got, n);
    CHECK_INT(bad, 0);
    free(want);
}

static void test_pairs(void)
{
    enum { NADDR = 60000, OPS = 400000 };
    cv__pairs_t *p = cv__pairs_create();
    cv__live_t *model = calloc(NADDR, sizeof *model); /* addr 0: not live */
    uint64_t seed = 88172645463325252ull;
    size_t live = 0;
    int bad = 0;
    for (int op = 0; op < OPS; op++) {
        size_t k = next_rand(&seed) % NADDR;
        /* 16-byte aligned addresses, and 8-byte aligned ones as small-size allocators give. */
        uint64_t addr = 0x7f0000000000ull + k * 24 + (k % 2) * 8;
        cv__live_t b, out;
        if (next_rand(&seed) % 3 != 0) {
            random_block(&seed, addr, &b);
            insert_vs_model(p, &model[k], &b, &live, &bad);
        } else {
            take_vs_model(p, &model[k], addr, &out, &live, &bad);
        }
    }
    CHECK_INT(bad, 0);
    CHECK_INT(cv__pairs_count(p), live);
    CHECK_INT(cv__pairs_take(p, 0, &(cv__live_t){0}), 0);
    check_drain(p, model, NADDR);
    CHECK_INT(cv__pairs_count(p), 0);
    free(model);

    /* The drain's sort on times that span every byte of a packed time, in runs of equal times
     * (ordered by thread id, then address), the threads numbered against their tids' order. */
    enum { NTIE = 30000 };
    cv__live_t *tied = malloc(NTIE * sizeof *tied);
    for (uint64_t i = 0; i < NTIE; i++) {
        cv__live_t b = {.addr = 0x7e0000000000ull + (next_rand(&seed) % (1ull << 30)) * 16,
                        .t = ((i % 97) * (1ull << 40) + (i % 3) * 257) * 4,
                        .size = 1 + i % 50, .bt = 1 + i % 7, .call = 1};
        b.thread = (uint32_t)(next_rand(&seed) % 5);
        b.tid = 9000 - b.thread;
        cv__live_t out;
        if (cv__pairs_insert(p, &b, &out) == 1) {
            for (uint64_t k = 0; k < i; k++)
                if (tied[k].addr == b.addr)
                    tied[k].addr = 0; /* replaced at a reused address */
        }
        tied[i] = b;
    }
    size_t n = 0;
    for (uint64_t i = 0; i < NTIE; i++)
        n += tied[i].addr != 0;
    CHECK_INT(cv__pairs_count(p), n);
    check_drain(p, tied, NTIE);
    free(tied);

    /* Memory: 3 M small blocks, as a program with a big heap of small objects holds them, cost
     * at most 48 bytes each at the store's peak, growth included (design: 46). */
    enum { BIG = 3000000 };
    for (uint64_t i = 1; i <= BIG; i++) {
        cv__live_t b = {.addr = 0x560000000000ull + i * 48, .t = i * 40, .size = 16 + i % 100,
                           .bt = 1 + i % 500, .tid = 7, .thread = 0, .call = 1};
        cv__live_t out;
        if (cv__pairs_insert(p, &b, &out) != 0)
            bad++;
    }
    CHECK_INT(bad, 0);
    size_t bytes, peak;
    cv__pairs_memory(p, &bytes, &peak);
    printf("live-block store: %d blocks, %.1f bytes per block now, %.1f at the peak\n", BIG,
           (double)bytes / BIG, (double)peak / BIG);
    CHECK(peak <= (size_t)48 * BIG);
    /* Shards this large live in the store's regions of 2 MiB pages: every block comes back out
     * of them, whole and in allocation order. */
    CHECK_INT(cv__pairs_drain_begin(p), 0);
    uint64_t i = 0;
    for (cv__live_t b; cv__pairs_drain_next(p, &b) > 0;) {
        i++;
        if (b.addr != 0x560000000000ull + i * 48 || b.t != i * 40 || b.size != 16 + i % 100 ||
            b.bt != 1 + i % 500 || b.tid != 7 || b.call != 1)
            bad++;
    }
    CHECK_INT(i, BIG);
    CHECK_INT(bad, 0);
    CHECK_INT(cv__pairs_count(p), 0);
    cv__pairs_destroy(p);
}

/* Shards of 2 MiB and more grow in place, in address space the store reserves, their blocks
 * moved where they are, and bring in their next pages on a thread of their own: 2 M addresses
 * (some 1.1 M blocks live, shards of 3 MiB before the first spill) against a model, inserts
 * (some at live addresses) and takes in turn, then the drain; over the budget of 40 MiB the
 * shards in place are cut down and rebuilt where they are as their oldest blocks go to disk.
 * (Growth in place without a budget: test_pairs's 3 M blocks.) */
static void test_pairs_in_place(void)
{
    const uint64_t budget = 40u << 20;
    enum { NADDR = 2000000, OPS = 4000000 };
    char dir[] = "/tmp/rheap-inplace-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char near[64];
    snprintf(near, sizeof near, "%s/out.db", dir);
    cv__pairs_t *p = cv__pairs_create();
    cv__pairs_spill(p, budget, near);
    cv__live_t *model = calloc(NADDR, sizeof *model);
    uint64_t seed = 0x9E3779B97F4A7C15ull;
    size_t live = 0;
    int bad = 0;
    for (uint64_t op = 0; op < OPS; op++) {
        size_t k = next_rand(&seed) % NADDR;
        uint64_t addr = 0x7f0000000000ull + k * 48;
        cv__live_t b, out;
        if (next_rand(&seed) % 3 != 0) {
            random_block(&seed, addr, &b);
            /* allocations come in time order, as the merge applies them */
            b.t = op * 8 + (b.t & 7);
            insert_vs_model(p, &model[k], &b, &live, &bad);
        } else {
            take_vs_model(p, &model[k], addr, &out, &live, &bad);
        }
    }
    CHECK_INT(bad, 0);
    CHECK(cv__pairs_failure(p) == NULL);
    CHECK_INT(cv__pairs_count(p), live);
    uint64_t spilled, file;
    cv__pairs_spilled(p, &spilled, &file);
    size_t bytes, peak;
    cv__pairs_memory(p, &bytes, &peak);
    printf("in place: %zu live, %llu spilled, the store's peak %zu bytes\n", live,
           (unsigned long long)spilled, peak);
    CHECK(live > 1100000);
    CHECK(spilled > 500000);
    check_drain(p, model, NADDR);
    cv__pairs_destroy(p);
    free(model);
    rmdir(dir);
}

/* Shards in place are built again where they are, block by block, without a copy: against a
 * model, 2.5 M addresses inserted at random with takes between (about 1.4 M blocks live, every
 * shard grown in place a few times, some blocks landing on old slots not yet moved), then a
 * churn at that size, takes and inserts in turn, whose freed slots in full groups make the
 * shards rebuild at their size (from the bottom up); every answer and the drain as the
 * model's. */
static void test_pairs_rehash(void)
{
    enum { NADDR = 2500000, GROW = 3000000, CHURN = 2000000 };
    cv__pairs_t *p = cv__pairs_create();
    cv__live_t *model = calloc(NADDR, sizeof *model);
    uint64_t seed = 0xD1B54A32D192ED03ull;
    size_t live = 0;
    int bad = 0;
    for (uint64_t op = 0; op < GROW + CHURN; op++) {
        size_t k = next_rand(&seed) % NADDR;
        /* In the churn, a live block goes and a new one comes in turn, at an address not live. */
        int put = op < GROW ? next_rand(&seed) % 5 != 0 : op % 2 == 0;
        while (op >= GROW && (model[k].addr != 0) == put)
            k = next_rand(&seed) % NADDR;
        uint64_t addr = 0x7f3000000000ull + k * 32;
        cv__live_t b, out;
        if (put) {
            random_block(&seed, addr, &b);
            insert_vs_model(p, &model[k], &b, &live, &bad);
        } else {
            take_vs_model(p, &model[k], addr, &out, &live, &bad);
        }
    }
    CHECK_INT(bad, 0);
    CHECK_INT(cv__pairs_count(p), live);
    CHECK(live > 1350000);
    /* The range search reads the tags, not what freed slots still hold. */
    uint64_t lo = 0x7f3000000000ull + 1000000 * 32, hi = lo + 6000 * 32, addrs[6000];
    size_t n = cv__pairs_find_range(p, lo, hi, addrs, 6000), want = 0;
    for (size_t i = 0; i < n; i++) {
        size_t k = (size_t)((addrs[i] - 0x7f3000000000ull) / 32);
        bad += addrs[i] < lo || addrs[i] >= hi || model[k].addr != addrs[i];
    }
    for (size_t k = 1000000; k < 1006000; k++)
        want += model[k].addr != 0;
    CHECK_INT(bad, 0);
    CHECK_INT(n, want);
    check_drain(p, model, NADDR);
    cv__pairs_destroy(p);
    free(model);
}

/* A store over a budget of 64 KiB against a model: most of its blocks live on disk, and every
 * take (of spilled blocks too), insert at a live spilled address, range search and the drain
 * gives what a store without a budget gives. Then a write error: the spill file is named. */
static void test_spill(void)
{
    enum { NADDR = 60000, OPS = 300000, BUDGET = 64 * 1024 };
    char dir[] = "/tmp/rheap-spill-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char near[64];
    snprintf(near, sizeof near, "%s/out.db", dir);
    cv__pairs_t *p = cv__pairs_create();
    cv__pairs_spill(p, BUDGET, near);
    cv__live_t *model = calloc(NADDR, sizeof *model);
    uint64_t seed = 0x2545F4914F6CDD1Dull;
    size_t live = 0, old_takes = 0;
    int bad = 0;
    for (uint64_t op = 0; op < OPS; op++) {
        size_t k = next_rand(&seed) % NADDR;
        uint64_t addr = 0x7f0000000000ull + k * 32;
        cv__live_t b, out;
        if (next_rand(&seed) % 3 != 0) {
            random_block(&seed, addr, &b);
            b.t = op * 8 + (b.t & 7); /* allocations come in time order, as the merge applies them */
            insert_vs_model(p, &model[k], &b, &live, &bad);
        } else {
            int rc = take_vs_model(p, &model[k], addr, &out, &live, &bad);
            /* A block older than the last 4096 allocations can only have come from disk. */
            old_takes += rc == 1 && out.t + 4096 * 8 * 3 / 2 < op * 8;
        }
        if (op % 50000 == 0) {
            /* A pool's range: the live addresses in it, from memory and from disk. */
            uint64_t lo = 0x7f0000000000ull + (op % NADDR) * 32, hi = lo + 2000 * 32;
            uint64_t addrs[4096];
            size_t n = cv__pairs_find_range(p, lo, hi, addrs, 4096), want = 0;
            for (size_t j = 0; j < NADDR; j++)
                want += model[j].addr >= lo && model[j].addr < hi;
            CHECK_INT(n, want);
        }
    }
    CHECK_INT(bad, 0);
    CHECK(cv__pairs_failure(p) == NULL);
    CHECK_INT(cv__pairs_count(p), live);
    uint64_t spilled, file;
    cv__pairs_spilled(p, &spilled, &file);
    size_t bytes, peak;
    cv__pairs_memory(p, &bytes, &peak);
    printf("spill: %zu live of %d addresses, %llu blocks spilled (%llu file bytes), %zu takes "
           "of old blocks; the store's peak %zu bytes\n", live, NADDR, (unsigned long long)spilled,
           (unsigned long long)file, old_takes, peak);
    CHECK(spilled > 100000);
    CHECK_INT(file, spilled * 32);
    CHECK(old_takes > 10000);
    /* The floor of 4096 packed blocks, the side table's unpackable blocks (one in twenty here,
     * never spilled: some 2000 in a table of 64-byte slots at most half full), the buffer and
     * the runs' filters: 786,432 bytes, where the 40,000 live blocks alone take 1.6 MiB in a
     * store without a budget. */
    CHECK(peak < 1024 * 1024);
    check_drain(p, model, NADDR);
    cv__pairs_destroy(p);
    free(model);

    /* The file is never in the directory. */
    DIR *d = opendir(dir);
    int entries = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        entries += e->d_name[0] != '.';
    if (d)
        closedir(d);
    CHECK_INT(entries, 0);

    /* A file size limit of 64 KiB: the spill's write fails, the error names the file. */
    pid_t child = fork();
    if (child == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit rl = {64 * 1024, 64 * 1024};
        setrlimit(RLIMIT_FSIZE, &rl);
        cv__pairs_t *q = cv__pairs_create();
        cv__pairs_spill(q, BUDGET, near);
        int rc = 0;
        for (uint64_t i = 1; i <= 100000 && rc >= 0; i++) {
            cv__live_t x = {.addr = i * 64, .t = i * 4, .size = 24, .bt = 1, .call = 1}, out;
            rc = cv__pairs_insert(q, &x, &out);
        }
        const char *why = cv__pairs_failure(q);
        printf("spill write error: %s\n", why ? why : "(none)");
        int ok = rc < 0 && why && strstr(why, "out.db.spill") && strstr(why, "File too large");
        cv__pairs_destroy(q);
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    CHECK(waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(rmdir(dir) == 0);
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
    test_pairs_in_place();
    test_pairs_rehash();
    test_spill();
    test_demangle();
    test_symbol_index();
    if (check_failures) {
        fprintf(stderr, "%d check(s) failed\n", check_failures);
        return 1;
    }
    printf("ok\n");
    return 0;
}
