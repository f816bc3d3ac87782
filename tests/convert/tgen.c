/*
 * tgen.c: recording writer and query helpers for the converter tests (see tgen.h).
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tgen.h"

static void die(const char *what)
{
    fprintf(stderr, "tgen: %s: %s\n", what, strerror(errno));
    exit(99);
}

__attribute__((noinline)) void tgen_capture(tgen_stack_t *st)
{
    void *buf[TGEN_MAX_DEPTH + 4];
    int n = backtrace(buf, TGEN_MAX_DEPTH + 4);
    /* The recorded stack starts at this function's caller. Frames before it (this function,
     * and a sanitizer's interceptor of backtrace) are dropped. */
    void *ret = __builtin_return_address(0);
    int first = 1;
    for (int i = 0; i < n; i++)
        if (buf[i] == ret) {
            first = i;
            break;
        }
    st->depth = 0;
    for (int i = first; i < n && st->depth < TGEN_MAX_DEPTH; i++)
        st->ips[st->depth++] = (uint64_t)(uintptr_t)buf[i];
    __asm__ volatile("" ::: "memory"); /* keep this a real call, not a tail call */
}

__attribute__((noinline)) void tgen_capture_at(int depth, tgen_stack_t *st)
{
    if (depth > 1)
        tgen_capture_at(depth - 1, st);
    else
        tgen_capture(st);
    __asm__ volatile("" ::: "memory"); /* no tail call: each level keeps its frame */
}

/* Creates DIR/NAME, empty. */
static int create(const char *dir, const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        die(path);
    return fd;
}

void tgen_open(tgen_file_t *f, const char *dir, const char *name, const rip_header_t *h)
{
    f->fd = create(dir, name);
    size_t fp = rip_writer_footprint(65536);
    if (posix_memalign(&f->mem, 64, fp) != 0)
        die("posix_memalign");
    f->w = rip_writer_init(f->mem, 65536, f->fd, h);
    f->stage = NULL;
}

typedef struct {
    tgen_file_t *f;
    int count_only;
    uint32_t count;
} mod_ctx_t;

static int one_module(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    mod_ctx_t *c = arg;
    rip_segment_t segs[16];
    uint32_t nseg = 0;
    const void *bid = NULL;
    size_t bid_len = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && nseg < 16) {
            segs[nseg].start = info->dlpi_addr + ph->p_vaddr;
            segs[nseg].size = ph->p_memsz;
            segs[nseg].flags = ph->p_flags;
            nseg++;
        } else if (ph->p_type == PT_NOTE) {
            const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr);
            const char *end = p + ph->p_memsz;
            while (p + sizeof(ElfW(Nhdr)) <= end) {
                const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
                const char *nm = p + sizeof *nh;
                const char *desc = nm + ((nh->n_namesz + 3) & ~3u);
                if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && !memcmp(nm, "GNU", 4)) {
                    bid = desc;
                    bid_len = nh->n_descsz;
                }
                p = desc + ((nh->n_descsz + 3) & ~3u);
            }
        }
    }
    if (nseg == 0)
        return 0;
    const char *path = info->dlpi_name;
    char exe[1024];
    if (!path || !path[0]) {
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n < 0)
            die("readlink");
        exe[n] = 0;
        path = exe;
    }
    c->count++;
    if (!c->count_only)
        rip_writer_module(c->f->w, info->dlpi_addr, path, bid, bid_len, segs, nseg);
    return 0;
}

void tgen_modules(tgen_file_t *f, uint64_t t)
{
    mod_ctx_t c = {f, 1, 0};
    dl_iterate_phdr(one_module, &c);
    rip_writer_modules(f->w, t, c.count);
    c.count_only = 0;
    c.count = 0;
    dl_iterate_phdr(one_module, &c);
}

void tgen_flush(tgen_file_t *f)
{
    if (rip_writer_flush(f->w) != RIP_OK)
        die("rip_writer_flush");
}

void tgen_open_staged(tgen_file_t *f, const char *dir, const char *name, const rip_header_t *h)
{
    f->fd = create(dir, name);
    f->stage_size = rip_stage_size(65536);
    if (posix_fallocate(f->fd, 0, (off_t)f->stage_size) != 0)
        die("posix_fallocate");
    f->stage = mmap(NULL, f->stage_size, PROT_READ | PROT_WRITE, MAP_SHARED, f->fd, 0);
    if (f->stage == MAP_FAILED)
        die("mmap");
    if (posix_memalign(&f->mem, 64, rip_writer_footprint_staged(65536)) != 0)
        die("posix_memalign");
    f->w = rip_writer_init_staged(f->mem, 65536, f->fd, h, f->stage);
    tgen_flush(f);
}

void tgen_print_rows(FILE *out, sqlite3_stmt *st)
{
    while (sqlite3_step(st) == SQLITE_ROW) {
        for (int i = 0; i < sqlite3_column_count(st); i++) {
            const unsigned char *v = sqlite3_column_text(st, i);
            fprintf(out, "%s|", v ? (const char *)v : "NULL");
        }
        fputc('\n', out);
    }
}

char *tgen_dump_tables(const char *path)
{
    sqlite3 *db = tgen_db_open(path);
    char *out = NULL;
    size_t len = 0;
    FILE *o = open_memstream(&out, &len);
    sqlite3_stmt *tables;
    if (sqlite3_prepare_v2(db, "SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name",
                           -1, &tables, NULL) != SQLITE_OK)
        exit(99);
    while (sqlite3_step(tables) == SQLITE_ROW) {
        char sql[512];
        const char *name = (const char *)sqlite3_column_text(tables, 0);
        snprintf(sql, sizeof sql, "SELECT * FROM \"%s\"%s", name,
                 strcmp(name, "meta") ? "" : " WHERE key <> 'converted_at'");
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
            fprintf(stderr, "%s: %s\n", sql, sqlite3_errmsg(db));
            exit(99);
        }
        fprintf(o, "== %s\n", name);
        tgen_print_rows(o, st);
        sqlite3_finalize(st);
    }
    sqlite3_finalize(tables);
    sqlite3_close(db);
    fclose(o);
    return out;
}

char *tgen_script_rows(const char *db_path, const char *sql_path)
{
    FILE *f = fopen(sql_path, "r");
    if (!f) {
        perror(sql_path);
        exit(99);
    }
    char *sql = NULL;
    size_t cap = 0;
    ssize_t len = getdelim(&sql, &cap, 0, f);
    fclose(f);
    if (len < 0)
        exit(99);
    sqlite3 *db = tgen_db_open(db_path);
    char *out = NULL;
    size_t olen = 0;
    FILE *o = open_memstream(&out, &olen);
    for (const char *p = sql; *p;) {
        sqlite3_stmt *st;
        const char *tail;
        if (sqlite3_prepare_v2(db, p, -1, &st, &tail) != SQLITE_OK) {
            fprintf(stderr, "%s: %s\n", sql_path, sqlite3_errmsg(db));
            exit(99);
        }
        p = tail;
        if (!st)
            continue;
        tgen_print_rows(o, st);
        sqlite3_finalize(st);
    }
    fclose(o);
    sqlite3_close(db);
    free(sql);
    return out;
}

void tgen_first_difference(const char *what, const char *a, const char *b)
{
    size_t line = 1;
    const char *la = a, *lb = b;
    while (*a && *a == *b) {
        if (*a == '\n') {
            line++;
            la = a + 1;
            lb = b + 1;
        }
        a++;
        b++;
    }
    fprintf(stderr, "%s: line %zu differs:\n  %.*s\n  %.*s\n", what, line,
            (int)strcspn(la, "\n"), la, (int)strcspn(lb, "\n"), lb);
}

void tgen_close(tgen_file_t *f)
{
    tgen_flush(f);
    rip_writer_close(f->w, 0);
    if (f->stage)
        munmap(f->stage, f->stage_size);
    f->stage = NULL;
    close(f->fd);
    free(f->mem);
}

rip_header_t tgen_thread_header(uint32_t pid, uint32_t tid, uint32_t serial, uint64_t start_ns)
{
    rip_header_t h = {0};
    h.is_process = 0;
    h.major = RIP_FORMAT_MAJOR;
    h.minor = RIP_FORMAT_MINOR;
    h.pid = pid;
    h.tid = tid;
    h.recording = 1;
    h.serial = serial;
    h.start_ns = start_ns;
    return h;
}

void tgen_process(const char *dir, uint32_t pid, uint32_t recording, uint64_t start_ns,
                  uint32_t ppid, uint64_t off_t)
{
    rip_header_t h = {0};
    h.is_process = 1;
    h.major = RIP_FORMAT_MAJOR;
    h.minor = RIP_FORMAT_MINOR;
    h.pid = pid;
    h.recording = recording;
    h.start_ns = start_ns;
    tgen_file_t f;
    tgen_open(&f, dir, "process.rip", &h);
    const char *argv[] = {"./testprog", "--flag", "x"};
    rip_writer_process(f.w, ppid, "/usr/bin/testprog", 3, argv, 1700000000000000000ull,
                       "monotonic", 4096);
    rip_writer_config(f.w, 64, 1000000, 1024, 64, 0, ".");
    rip_writer_on(f.w, 0, "env");
    if (off_t)
        rip_writer_off(f.w, off_t, "exit");
    tgen_close(&f);
}

void tgen_fresh_dir(const char *dir)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", dir, dir);
    if (system(cmd) != 0)
        die(cmd);
}

int tgen_run(char *const argv[], char *errbuf, size_t errlen)
{
    int pipefd[2];
    if (pipe(pipefd) != 0)
        die("pipe");
    pid_t pid = fork();
    if (pid < 0)
        die("fork");
    if (pid == 0) {
        dup2(pipefd[1], 2);
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0)
            dup2(devnull, 1);
        close(pipefd[0]);
        close(pipefd[1]);
        execv(argv[0], argv);
        _exit(127);
    }
    close(pipefd[1]);
    size_t got = 0;
    for (;;) {
        char tmp[4096];
        ssize_t n = read(pipefd[0], tmp, sizeof tmp);
        if (n <= 0)
            break;
        size_t k = (size_t)n;
        if (errbuf && got + 1 < errlen) {
            if (k > errlen - 1 - got)
                k = errlen - 1 - got;
            memcpy(errbuf + got, tmp, k);
            got += k;
        }
    }
    if (errbuf && errlen)
        errbuf[got] = 0;
    close(pipefd[0]);
    int st;
    if (waitpid(pid, &st, 0) < 0)
        die("waitpid");
    if (WIFSIGNALED(st)) {
        fprintf(stderr, "tgen: %s died of signal %d\n", argv[0], WTERMSIG(st));
        return 128 + WTERMSIG(st);
    }
    return WEXITSTATUS(st);
}

sqlite3 *tgen_db_open(const char *path)
{
    sqlite3 *db;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        fprintf(stderr, "tgen: cannot open %s\n", path);
        exit(99);
    }
    return db;
}

static sqlite3_stmt *prep(sqlite3 *db, const char *fmt, va_list ap)
{
    char sql[4096];
    vsnprintf(sql, sizeof sql, fmt, ap);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        fprintf(stderr, "tgen: SQL error in '%s': %s\n", sql, sqlite3_errmsg(db));
        exit(99);
    }
    return st;
}

int64_t tgen_int(sqlite3 *db, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sqlite3_stmt *st = prep(db, fmt, ap);
    va_end(ap);
    int64_t v = -999999;
    if (sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_type(st, 0) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

const char *tgen_text(sqlite3 *db, const char *fmt, ...)
{
    static char buf[8][1024];
    static int which;
    char *out = buf[which++ & 7];
    va_list ap;
    va_start(ap, fmt);
    sqlite3_stmt *st = prep(db, fmt, ap);
    va_end(ap);
    if (sqlite3_step(st) == SQLITE_ROW) {
        const unsigned char *t = sqlite3_column_text(st, 0);
        snprintf(out, 1024, "%s", t ? (const char *)t : "(null)");
    } else {
        snprintf(out, 1024, "(no row)");
    }
    sqlite3_finalize(st);
    return out;
}
