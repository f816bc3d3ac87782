/*
 * alloc_api: a C program calling an allocator's own functions, built once per allocator
 * (-DUSE_JEMALLOC with -ljemalloc, -DUSE_TCMALLOC with -ltcmalloc, -DUSE_MIMALLOC with
 * -lmimalloc; jemalloc also linked statically, and statically under the prefix je_ with
 * -DJEMALLOC_NO_RENAME -DJEMALLOC_MANGLE, whose header then maps every name used here, malloc
 * and free too, to the prefixed one). Between the markers "begin" and "end" of the main thread
 * it allocates with the allocator's calls (aligned ones too), resizes blocks in a chain, and
 * frees blocks with another family than the one that made them (free() of an allocator block, the allocator's free of a
 * malloc block; with mimalloc, a heap of its own destroyed with blocks left in it, and the
 * string functions); it prints the exact event list riptally must print, as "expect-list" lines.
 *
 * Then `threads` workers (argument 1) each allocate `per` blocks (argument 2) in `worker_site`
 * with the allocator's plain call and free every other one at once, with the allocator's free;
 * the main thread frees the rest with free(): the database must hold threads * per blocks of
 * worker_site, all freed, half of them by the main thread.
 */
#include "progs.h"

#include <pthread.h>

#if defined(USE_JEMALLOC)
#include <jemalloc/jemalloc.h>
#define NAME "jemalloc"
#define PLAIN(n) mallocx((n), 0)
#define PLAIN_CALL "mallocx"
#define RELEASE(p) dallocx((p), 0)
#elif defined(USE_TCMALLOC)
#include <gperftools/tcmalloc.h>
/* Declared by the header for C++ only. */
void *tc_new(size_t size);
void *tc_newarray(size_t size);
void tc_delete(void *p);
void tc_deletearray(void *p);
#define NAME "tcmalloc"
#define PLAIN(n) tc_malloc(n)
#define PLAIN_CALL "tc_malloc"
#define RELEASE(p) tc_free(p)
#elif defined(USE_MIMALLOC)
#include <mimalloc.h>
#define NAME "mimalloc"
#define PLAIN(n) mi_malloc(n)
#define PLAIN_CALL "mi_malloc"
#define RELEASE(p) mi_free(p)
#else
#error "build with USE_JEMALLOC, USE_TCMALLOC or USE_MIMALLOC"
#endif

PROGS_SINK_DEFINITION;

static char lines[64][128];
static int n;
#define EXPECT(...) snprintf(lines[n++], sizeof lines[0], __VA_ARGS__)

static int per;

#if defined(USE_MIMALLOC)
/* The blocks left in the heap the program destroys, and their names as riptally shows them. */
static void *heap_blocks[3];
static const char *const heap_names[3] = {"mi_heap_realloc:4000", "mi_heap_malloc_aligned:24",
                                          "mi_strndup:4"};
static int left;

static bool visit_left(const mi_heap_t *heap, const mi_heap_area_t *area, void *block,
                       size_t size, void *arg)
{
    (void)heap, (void)area, (void)size, (void)arg;
    for (int i = 0; block && i < 3; i++)
        if (block == heap_blocks[i]) {
            EXPECT("free of=%s", heap_names[i]);
            left++;
        }
    return true;
}
#endif
static void *blocks[16][4096];

__attribute__((noinline)) static void worker_site(int k, int i)
{
    blocks[k][i] = PLAIN(24 + (size_t)i % 100);
}

static void *worker(void *arg)
{
    int k = (int)(intptr_t)arg;
    for (int i = 0; i < per; i++) {
        worker_site(k, i);
        if (i % 2 == 0) {
            RELEASE(blocks[k][i]);
            blocks[k][i] = NULL;
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 4;
    per = argc > 2 ? atoi(argv[2]) : 1000;
    if (threads < 1 || threads > 16 || per < 1 || per > 4096)
        return 2;

    progs_mark("begin");
#if defined(USE_JEMALLOC)
    void *a = mallocx(100, 0);
    EXPECT("alloc call=mallocx size=100 in=exe");
    void *b = mallocx(300, MALLOCX_ALIGN(4096));
    EXPECT("alloc call=mallocx size=300 align=4096 in=exe");
    void *c = mallocx(50, MALLOCX_ZERO);
    EXPECT("alloc call=mallocx size=50 in=exe");
    /* A chain: each rallocx releases the block before it. */
    a = rallocx(a, 1000, 0);
    EXPECT("alloc call=rallocx size=1000 in=exe old=mallocx:100");
    a = rallocx(a, 100000, 0);
    EXPECT("alloc call=rallocx size=100000 in=exe old=rallocx:1000");
    /* Grown in place within its size class: xallocx reaches the size asked for. */
    size_t got = xallocx(c, 56, 0, 0);
    if (got >= 56)
        EXPECT("alloc call=xallocx size=56 in=exe old=mallocx:50");
    sdallocx(a, 100000, 0);
    EXPECT("free of=rallocx:100000");
    free(b); /* another family's free */
    EXPECT("free of=mallocx:300");
    dallocx(c, 0);
    EXPECT("free of=%s", got >= 56 ? "xallocx:56" : "mallocx:50");
    void *m = malloc(77);
    EXPECT("alloc call=malloc size=77 in=exe");
    dallocx(m, 0); /* the allocator's free of a malloc block */
    EXPECT("free of=malloc:77");
#elif defined(USE_TCMALLOC)
    void *a = tc_malloc(100);
    EXPECT("alloc call=tc_malloc size=100 in=exe");
    void *b = tc_calloc(10, 30);
    EXPECT("alloc call=tc_calloc size=300 in=exe");
    void *c = tc_memalign(256, 40);
    EXPECT("alloc call=tc_memalign size=40 align=256 in=exe");
    void *d = NULL;
    if (tc_posix_memalign(&d, 64, 70) == 0)
        EXPECT("alloc call=tc_posix_memalign size=70 align=64 in=exe");
    a = tc_realloc(a, 1000);
    EXPECT("alloc call=tc_realloc size=1000 in=exe old=tc_malloc:100");
    a = tc_realloc(a, 100000);
    EXPECT("alloc call=tc_realloc size=100000 in=exe old=tc_realloc:1000");
    void *e = tc_new(33);
    EXPECT("alloc call=tc_new size=33 in=exe");
    void *f = tc_newarray(44);
    EXPECT("alloc call=tc_newarray size=44 in=exe");
    tc_free(a);
    EXPECT("free of=tc_realloc:100000");
    free(b);
    EXPECT("free of=tc_calloc:300");
    tc_free_sized(c, 40);
    EXPECT("free of=tc_memalign:40");
    tc_free(d);
    EXPECT("free of=tc_posix_memalign:70");
    tc_delete(e);
    EXPECT("free of=tc_new:33");
    tc_deletearray(f);
    EXPECT("free of=tc_newarray:44");
    void *m = malloc(77);
    EXPECT("alloc call=malloc size=77 in=exe");
    tc_free(m);
    EXPECT("free of=malloc:77");
#else
    void *a = mi_malloc(100);
    EXPECT("alloc call=mi_malloc size=100 in=exe");
    void *b = mi_zalloc(200);
    EXPECT("alloc call=mi_zalloc size=200 in=exe");
    void *c = mi_calloc(10, 30);
    EXPECT("alloc call=mi_calloc size=300 in=exe");
    void *d = mi_malloc_aligned(40, 256);
    EXPECT("alloc call=mi_malloc_aligned size=40 align=256 in=exe");
    void *e = mi_calloc_aligned(4, 8, 64);
    EXPECT("alloc call=mi_calloc_aligned size=32 align=64 in=exe");
    a = mi_realloc(a, 1000);
    EXPECT("alloc call=mi_realloc size=1000 in=exe old=mi_malloc:100");
    a = mi_realloc(a, 100000);
    EXPECT("alloc call=mi_realloc size=100000 in=exe old=mi_realloc:1000");
    d = mi_realloc_aligned(d, 5000, 256);
    EXPECT("alloc call=mi_realloc_aligned size=5000 in=exe old=mi_malloc_aligned:40");
    void *g = mi_new(33);
    EXPECT("alloc call=mi_new size=33 in=exe");
    mi_free(a);
    EXPECT("free of=mi_realloc:100000");
    free(b);
    EXPECT("free of=mi_zalloc:200");
    mi_free_size(c, 300);
    EXPECT("free of=mi_calloc:300");
    mi_free_aligned(d, 256);
    EXPECT("free of=mi_realloc_aligned:5000");
    mi_free(e);
    EXPECT("free of=mi_calloc_aligned:32");
    mi_free(g);
    EXPECT("free of=mi_new:33");
    void *m = malloc(77);
    EXPECT("alloc call=malloc size=77 in=exe");
    mi_free(m);
    EXPECT("free of=malloc:77");
    /* A heap of its own, its blocks resized and freed across heaps, then destroyed with three
     * blocks in it: each is recorded as freed by the destroy, in the order mimalloc visits them
     * (which the program asks mimalloc itself, before). And the string functions. */
    mi_heap_t *h = mi_heap_new();
    void *ha = mi_heap_malloc(h, 40);
    EXPECT("alloc call=mi_heap_malloc size=40 in=exe");
    void *hb = mi_heap_calloc(h, 3, 20);
    EXPECT("alloc call=mi_heap_calloc size=60 in=exe");
    void *hc = mi_heap_malloc_aligned(h, 24, 128);
    EXPECT("alloc call=mi_heap_malloc_aligned size=24 align=128 in=exe");
    ha = mi_heap_realloc(h, ha, 4000);
    EXPECT("alloc call=mi_heap_realloc size=4000 in=exe old=mi_heap_malloc:40");
    char *hs = mi_heap_strndup(h, "abcdefgh", 3);
    EXPECT("alloc call=mi_strndup size=4 in=exe");
    char *s1 = mi_strdup("hello");
    EXPECT("alloc call=mi_strdup size=6 in=exe");
    char *rp = mi_realpath("/", NULL);
    EXPECT("alloc call=mi_realpath size=2 in=exe");
    static char buf[4096];
    SINK(mi_realpath("/", buf)); /* into the caller's buffer: no block */
    mi_free(s1);
    EXPECT("free of=mi_strdup:6");
    mi_free(rp);
    EXPECT("free of=mi_realpath:2");
    mi_free(hb);
    EXPECT("free of=mi_heap_calloc:60");
    left = 0;
    heap_blocks[0] = ha, heap_blocks[1] = hc, heap_blocks[2] = hs;
    mi_heap_visit_blocks(h, true, visit_left, NULL);
    mi_heap_destroy(h);
#endif
    progs_mark("end");

    pthread_t t[16];
    for (int k = 0; k < threads; k++)
        if (pthread_create(&t[k], NULL, worker, (void *)(intptr_t)k) != 0)
            return 1;
    for (int k = 0; k < threads; k++)
        pthread_join(t[k], NULL);
    for (int k = 0; k < threads; k++)
        for (int i = 0; i < per; i++)
            free(blocks[k][i]);

    say("expect-list thread tid=%d\n", (int)gettid());
    for (int i = 0; i < n; i++)
        say("expect-list %s\n", lines[i]);
    say("expect-call %s\n", PLAIN_CALL);
    say("expect-name %s\n", NAME);
    return 0;
}
