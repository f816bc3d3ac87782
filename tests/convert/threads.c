/*
 * threads.c: a program that ran many threads, traced and converted under a small limit of open
 * files (`ulimit -n 64`, far fewer descriptors than it leaves thread files). As `program N` it
 * runs N threads, BATCH at a time, each allocating and freeing ROUNDS blocks of FREED_SIZE
 * bytes and keeping one of LEAK_SIZE, and prints its own ground truth; as the driver it runs
 * `rheap run` on itself in a shell with the low limit and checks the database against what the
 * program printed. Usage: convert_threads RHEAP DIR
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tgen.h"

#define THREADS 200
#define BATCH 8
#define ROUNDS 10
#define FREED_SIZE 4242
#define LEAK_SIZE 4243

static void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        char *volatile p = malloc(FREED_SIZE);
        p[0] = 1;
        free(p);
    }
    return malloc(LEAK_SIZE);
}

static int program(int n)
{
    int done = 0;
    while (done < n) {
        pthread_t th[BATCH];
        int k = n - done < BATCH ? n - done : BATCH;
        for (int i = 0; i < k; i++)
            if (pthread_create(&th[i], NULL, worker, NULL) != 0)
                return 1;
        for (int i = 0; i < k; i++)
            pthread_join(th[i], NULL); /* the worker's block stays allocated: never freed */
        done += k;
    }
    printf("threads=%d freed=%d leaked=%d\n", n, n * ROUNDS, n);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "program"))
        return program(atoi(argv[2]));
    if (argc != 3) {
        fprintf(stderr, "usage: %s RHEAP DIR\n", argv[0]);
        return 2;
    }
    char dir[1024], db[1100], cmd[4096], self[1024];
    snprintf(dir, sizeof dir, "%s/threads", argv[2]);
    tgen_fresh_dir(dir);
    snprintf(db, sizeof db, "%s/out.db", dir);
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return 99;
    self[n] = 0;
    /* The limit is set for rheap run, the traced program and the conversion alike. */
    snprintf(cmd, sizeof cmd,
             "ulimit -n 64 && exec '%s' run -q --no-progress -o '%s' --dir '%s' -- '%s' "
             "program %d",
             argv[1], db, dir, self, THREADS);
    FILE *p = popen(cmd, "r");
    if (!p)
        return 99;
    int threads = 0, freed = 0, leaked = 0;
    CHECK_INT(fscanf(p, "threads=%d freed=%d leaked=%d", &threads, &freed, &leaked), 3);
    CHECK_INT(pclose(p), 0); /* the program's status, which rheap run passes on: 0 */
    CHECK_INT(threads, THREADS);

    sqlite3 *d = tgen_db_open(db);
    CHECK_INT(tgen_int(d, "SELECT count(*) FROM allocations WHERE size = %d AND dealloc_after IS "
                          "NOT NULL", FREED_SIZE), freed);
    CHECK_INT(tgen_int(d, "SELECT count(*) FROM allocations WHERE size = %d AND dealloc_after IS "
                          "NULL", LEAK_SIZE), leaked);
    CHECK_INT(tgen_int(d, "SELECT count(DISTINCT alloc_thread) FROM allocations WHERE size = %d",
                       LEAK_SIZE), threads);
    /* One thread file per worker, plus the main thread's: every one converted. */
    CHECK_INT(tgen_int(d, "SELECT count(*) FROM threads"), threads + 1);
    sqlite3_close(d);
    if (check_failures) {
        fprintf(stderr, "%d check(s) failed\n", check_failures);
        return 1;
    }
    printf("ok\n");
    return 0;
}
