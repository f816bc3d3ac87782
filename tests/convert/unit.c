/*
 * unit.c: the converter's parts called directly: the merge order, the live map, demangling.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "tgen.h"

static void test_merge(void)
{
    rheap__merge_t *m = rheap__merge_create(3);
    /* Stream 2 frees at t=5, stream 0 allocates at t=5, stream 1 allocates at t=3. */
    rheap__merge_set(m, 0, 5, 1);
    rheap__merge_set(m, 1, 3, 1);
    rheap__merge_set(m, 2, 5, 0);
    CHECK_INT(rheap__merge_top(m), 1);
    rheap__merge_remove(m, 1);
    CHECK_INT(rheap__merge_top(m), 2); /* the free first at equal times */
    rheap__merge_set(m, 2, 9, 1);
    CHECK_INT(rheap__merge_top(m), 0);
    rheap__merge_set(m, 0, 9, 1);
    CHECK_INT(rheap__merge_top(m), 0); /* equal keys: the lower stream index */
    rheap__merge_remove(m, 0);
    CHECK_INT(rheap__merge_top(m), 2);
    rheap__merge_remove(m, 2);
    CHECK_INT(rheap__merge_top(m), -1);
    rheap__merge_destroy(m);

    /* A larger random check: the merge yields keys in order. */
    enum { N = 50 };
    m = rheap__merge_create(N);
    uint64_t key[N], last = 0;
    unsigned seed = 7;
    for (int i = 0; i < N; i++) {
        seed = seed * 1103515245u + 12345u;
        key[i] = seed % 1000;
        rheap__merge_set(m, (size_t)i, key[i], 0);
    }
    for (int k = 0; k < 5000; k++) {
        long top = rheap__merge_top(m);
        if (top < 0)
            break;
        if (key[top] < last) {
            fprintf(stderr, "merge out of order: %llu after %llu\n", (unsigned long long)key[top],
                    (unsigned long long)last);
            tgen_failures++;
            break;
        }
        last = key[top];
        seed = seed * 1103515245u + 12345u;
        if (seed % 10 == 0) {
            rheap__merge_remove(m, (size_t)top);
        } else {
            key[top] += seed % 50;
            rheap__merge_set(m, (size_t)top, key[top], 0);
        }
    }
    rheap__merge_destroy(m);
}

static void test_pairs(void)
{
    rheap__pairs_t *p = rheap__pairs_create();
    enum { N = 100000 };
    rheap__live_t b, out;
    memset(&b, 0, sizeof b);
    for (uint64_t i = 1; i <= N; i++) {
        b.addr = i * 16;
        b.t = i;
        b.size = i % 977;
        CHECK_INT(rheap__pairs_insert(p, &b, &out), 0);
    }
    CHECK_INT(rheap__pairs_count(p), N);
    /* Take every other block; the rest must all still be found with their own data. */
    int bad = 0;
    for (uint64_t i = 1; i <= N; i += 2)
        if (!rheap__pairs_take(p, i * 16, &out) || out.t != i)
            bad++;
    CHECK_INT(bad, 0);
    CHECK_INT(rheap__pairs_take(p, 16, &out), 0);
    CHECK_INT(rheap__pairs_count(p), N / 2);
    for (uint64_t i = 2; i <= N; i += 2)
        if (!rheap__pairs_take(p, i * 16, &out) || out.size != i % 977)
            bad++;
    CHECK_INT(bad, 0);
    CHECK_INT(rheap__pairs_count(p), 0);
    /* Reuse of a live address evicts the old block. */
    b.addr = 0x1000;
    b.t = 1;
    CHECK_INT(rheap__pairs_insert(p, &b, &out), 0);
    b.t = 2;
    CHECK_INT(rheap__pairs_insert(p, &b, &out), 1);
    CHECK_INT(out.t, 1);
    /* Drain: sorted by time. */
    b.addr = 0x2000;
    b.t = 0;
    rheap__pairs_insert(p, &b, &out);
    size_t n;
    rheap__live_t *all = rheap__pairs_drain(p, &n);
    CHECK_INT(n, 2);
    CHECK_INT(all[0].addr, 0x2000);
    CHECK_INT(all[1].addr, 0x1000);
    free(all);
    rheap__pairs_destroy(p);
}

static void check_demangle(const char *in, const char *want)
{
    char *got = rheap__demangle(in);
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

int main(void)
{
    test_merge();
    test_pairs();
    test_demangle();
    if (tgen_failures) {
        fprintf(stderr, "%d check(s) failed\n", tgen_failures);
        return 1;
    }
    printf("ok\n");
    return 0;
}
