/*
 * e2e.c: end to end with the real tracer. The same program is the traced workload (mode
 * `program`, run with librheap preloaded) and the driver that runs it, converts the recording
 * with `rheap` and checks the database; being one source, the driver knows every __LINE__.
 * Usage: convert_e2e RHEAP LIBRHEAP DIR
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tgen.h"

void e2e_cxx_site(void);
extern int e2e_cxx_line;

#define N_LEAKS 7
#define LEAK_SIZE 48

static void *volatile keep[64];
static int line_leak, line_inl_in, line_inl_call, line_xalloc, line_r0, line_r1, line_r2, line_rust;

__attribute__((noinline)) static void leak_site(void)
{
    for (int i = 0; i < N_LEAKS; i++) {
        keep[i] = malloc(LEAK_SIZE); line_leak = __LINE__;
    }
}

static inline __attribute__((always_inline)) void inl_alloc(void)
{
    keep[10] = malloc(33); line_inl_in = __LINE__;
}

__attribute__((noinline)) static void outer_inl(void)
{
    inl_alloc(); line_inl_call = __LINE__;
}

static void *freer(void *p)
{
    free(p);
    return NULL;
}

__attribute__((noinline)) static void cross_thread(void)
{
    void *p = malloc(77); line_xalloc = __LINE__;
    pthread_t th;
    pthread_create(&th, NULL, freer, p);
    pthread_join(th, NULL);
}

__attribute__((noinline)) static void realloc_chain(void)
{
    char *p = malloc(10); line_r0 = __LINE__;
    p[0] = 1;
    p = realloc(p, 2000); line_r1 = __LINE__;
    p = realloc(p, 100000); line_r2 = __LINE__;
    free(p);
}

/* Calls that fail record nothing: the database holds the one block that exists, freed, and the
 * realloc that failed leaves it allocated. A realloc from NULL is a realloc (through a volatile
 * pointer: gcc compiles a literal realloc(NULL, n) as malloc(n)). */
static void *volatile no_block;
static volatile size_t huge = SIZE_MAX - 7;
__attribute__((noinline)) static void failed_calls(void)
{
    char *p = malloc(40);
    keep[20] = malloc(huge);
    void *q = NULL;
    keep[21] = posix_memalign(&q, 64, huge) == 0 ? q : NULL;
    keep[22] = aligned_alloc(64, huge - 57);
    keep[23] = calloc(huge / 2, 4);
    char *r = realloc(p, huge);
    if (r)
        keep[24] = r;
    else
        free(p);
    keep[25] = realloc(no_block, 50);
}

void rust_leak(void) __asm__("_ZN4demo4leak17h0123456789abcdefE");
__attribute__((noinline)) void rust_leak(void)
{
    keep[11] = malloc(55); line_rust = __LINE__;
}

static void workload(void)
{
    leak_site();
    outer_inl();
    cross_thread();
    realloc_chain();
    rust_leak();
    e2e_cxx_site();
    failed_calls();
}

static const char *base(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

#define SITE(cond) "(SELECT bt FROM allocation_sites WHERE " cond ")"

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "program")) {
        workload();
        return 0;
    }
    if (argc != 4) {
        fprintf(stderr, "usage: %s RHEAP LIBRHEAP DIR\n", argv[0]);
        return 2;
    }
    const char *rheap = argv[1], *lib = argv[2];
    char dir[1024], rec[1100], db[1100], err[8192];
    snprintf(dir, sizeof dir, "%s/e2e", argv[3]);
    tgen_fresh_dir(dir);

    /* The lines are set by running the workload; run it here untraced to learn them. */
    workload();

    pid_t pid = fork();
    if (pid == 0) {
        setenv("LD_PRELOAD", lib, 1);
        setenv("RHEAP_DIR", dir, 1);
        execl("/proc/self/exe", argv[0], "program", (char *)NULL);
        _exit(127);
    }
    int st;
    waitpid(pid, &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "traced program failed: status %d\n", st);
        return 1;
    }
    snprintf(rec, sizeof rec, "%s/rip-%d", dir, (int)pid);
    snprintf(db, sizeof db, "%s/out.db", dir);
    char *cargv[] = {(char *)rheap, "--no-progress", rec, db, NULL};
    int rc = tgen_run(cargv, err, sizeof err);
    if (rc != 0) {
        fprintf(stderr, "rheap exited %d:\n%s", rc, err);
        return 1;
    }
    sqlite3 *d = tgen_db_open(db);

    /* N_LEAKS leaks of LEAK_SIZE bytes at leak_site, with the line of the malloc call. */
    CHECK_INT(tgen_int(d, "SELECT blocks FROM leaks WHERE sym = 'leak_site'"), N_LEAKS);
    CHECK_INT(tgen_int(d, "SELECT bytes FROM leaks WHERE sym = 'leak_site'"), N_LEAKS * LEAK_SIZE);
    CHECK_INT(tgen_int(d, "SELECT line FROM leaks WHERE sym = 'leak_site'"), line_leak);
    CHECK_STR(base(tgen_text(d, "SELECT file FROM leaks WHERE sym = 'leak_site'")), "e2e.c");
    CHECK_INT(tgen_int(d, "SELECT count(*) FROM allocations WHERE pid = %d", (int)pid) >= N_LEAKS + 6, 1);
    CHECK_STR(tgen_text(d, "SELECT sym FROM backtraces WHERE id = " SITE("sym = 'leak_site'") " AND frame_no = 1"), "workload");

    /* Inlined frames. */
    CHECK_INT(tgen_int(d, "SELECT size FROM allocation_sites WHERE sym = 'inl_alloc'"), 33);
    CHECK_INT(tgen_int(d, "SELECT line FROM allocation_sites WHERE sym = 'inl_alloc'"), line_inl_in);
    CHECK_INT(tgen_int(d, "SELECT inlined FROM backtraces WHERE id = " SITE("sym = 'inl_alloc'") " AND frame_no = 0"), 1);
    CHECK_STR(tgen_text(d, "SELECT sym FROM backtraces WHERE id = " SITE("sym = 'inl_alloc'") " AND frame_no = 1"), "outer_inl");
    CHECK_INT(tgen_int(d, "SELECT line FROM backtraces WHERE id = " SITE("sym = 'inl_alloc'") " AND frame_no = 1"), line_inl_call);

    /* A block freed by another thread shows both threads. */
    CHECK_INT(tgen_int(d, "SELECT alloc_thread FROM allocation_sites WHERE sym = 'cross_thread'"), (int)pid);
    CHECK_INT(tgen_int(d, "SELECT dealloc_thread != alloc_thread FROM allocation_sites WHERE sym = 'cross_thread'"), 1);
    CHECK_INT(tgen_int(d, "SELECT count(*) FROM threads WHERE tid = (SELECT dealloc_thread FROM allocation_sites WHERE sym = 'cross_thread')"), 1);
    CHECK_INT(tgen_int(d, "SELECT line FROM allocation_sites WHERE sym = 'cross_thread'"), line_xalloc);

    /* The realloc chain 10 -> 2000 -> 100000, linked, each at its own line. */
    CHECK_INT(tgen_int(d, "SELECT count(*) FROM allocation_sites WHERE sym = 'realloc_chain'"), 3);
    CHECK_INT(tgen_int(d, "SELECT line FROM allocation_sites WHERE sym = 'realloc_chain' AND size = 10"), line_r0);
    CHECK_INT(tgen_int(d, "SELECT line FROM allocation_sites WHERE sym = 'realloc_chain' AND size = 2000"), line_r1);
    CHECK_INT(tgen_int(d, "SELECT line FROM allocation_sites WHERE sym = 'realloc_chain' AND size = 100000"), line_r2);
    CHECK_STR(tgen_text(d, "SELECT name FROM calls WHERE id = (SELECT call FROM allocation_sites WHERE sym = 'realloc_chain' AND size = 100000)"), "realloc");
    CHECK_INT(tgen_int(d, "SELECT b.size FROM allocations a JOIN allocations b ON b.id = a.realloc_of WHERE a.size = 100000 AND a.pid = %d", (int)pid), 2000);
    CHECK_INT(tgen_int(d, "SELECT b.size FROM allocations a JOIN allocations b ON b.id = a.realloc_of WHERE a.size = 2000 AND a.pid = %d", (int)pid), 10);
    CHECK_INT(tgen_int(d, "SELECT dealloc_after IS NOT NULL FROM allocation_sites WHERE sym = 'realloc_chain' AND size = 100000"), 1);

    /* Demangled names: Rust legacy, and C++ calling operator new[]: recorded under that call,
     * with the program's frame innermost. */
    CHECK_INT(tgen_int(d, "SELECT size FROM allocation_sites WHERE sym = 'demo::leak'"), 55);
    CHECK_INT(tgen_int(d, "SELECT line FROM allocation_sites WHERE sym = 'demo::leak'"), line_rust);
    CHECK_INT(tgen_int(d, "SELECT count(*) FROM allocations a JOIN backtraces b ON b.id = a.bt "
                          "WHERE a.size = 66 AND b.sym = 'demo::Pool<int>::grow(unsigned long)' AND b.line = %d", e2e_cxx_line), 1);
    CHECK_INT(tgen_int(d, "SELECT count(*) FROM allocations a JOIN backtraces b ON b.id = a.bt AND b.frame_no = 0 "
                          "JOIN calls c ON c.id = a.call WHERE a.size = 66 AND c.name = 'operator new[]' "
                          "AND b.sym = 'demo::Pool<int>::grow(unsigned long)'"), 1);

    /* Failed calls: nothing recorded, the block a failed realloc kept freed by free. */
    CHECK_INT(tgen_int(d, "SELECT count(*) FROM allocations WHERE size < 0 OR size > 1e15"), 0);
    CHECK_INT(tgen_int(d, "SELECT count(*) FROM allocation_sites WHERE sym = 'failed_calls'"), 2);
    CHECK_INT(tgen_int(d, "SELECT dealloc_after IS NOT NULL FROM allocation_sites WHERE sym = "
                          "'failed_calls' AND size = 40"), 1);
    CHECK_STR(tgen_text(d, "SELECT c.name FROM allocation_sites a JOIN calls c ON c.id = a.call "
                           "WHERE sym = 'failed_calls' AND size = 50"), "realloc");
    CHECK_INT(tgen_int(d, "SELECT realloc_of IS NULL FROM allocation_sites WHERE sym = "
                          "'failed_calls' AND size = 50"), 1);

    CHECK_INT(tgen_int(d, "SELECT count(*) FROM processes WHERE pid = %d", (int)pid), 1);
    CHECK_INT(tgen_int(d, "SELECT count(*) FROM modules WHERE status = 'mismatch'"), 0);
    sqlite3_close(d);
    if (check_failures) {
        fprintf(stderr, "%d check(s) failed; rheap said:\n%s", check_failures, err);
        return 1;
    }
    printf("ok\n");
    return 0;
}
