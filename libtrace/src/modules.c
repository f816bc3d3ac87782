/*
 * modules.c: which shared objects are loaded where, so the converter can symbolize offline.
 *
 * dl_iterate_phdr takes the loader's lock, and dlclose calls free while holding that lock, so
 * the snapshot is taken with no tracer lock held, into the thread's own scratch memory, and
 * written into the thread's file afterwards. dl_iterate_phdr's dlpi_adds/dlpi_subs counters
 * tell when a new snapshot is needed; they also see the loads glibc makes itself (gconv
 * modules, libgcc_s), which a dlopen wrapper would miss.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

#define SNAP_BYTES (256 * 1024)
#define MAX_SEGS 16
#define MAX_BUILD_ID 64

/* Entries, each 8-byte aligned: a head (bias, lengths, segment count), the path and its NUL,
 * the build-id, then (aligned) the segments. Everything is written and read in place, so a
 * snapshot costs the thread's stack nothing beyond a few words. Modules that do not fit are
 * left out of the snapshot; their frames stay unresolved. */
struct rheap__modsnap {
    uint32_t count;
    size_t used;
    _Alignas(8) unsigned char data[SNAP_BYTES];
};

typedef struct {
    uint64_t bias;
    uint16_t path_len;
    uint8_t build_id_len;
    uint8_t nseg;
} entry_head_t;

/* Where an entry's segments start, from the entry's start. */
static size_t segs_at(size_t path_len, size_t build_id_len) {
    return (sizeof(entry_head_t) + path_len + 1 + build_id_len + 7) & ~(size_t)7;
}

size_t rheap__modsnap_size(void) {
    return sizeof(rheap__modsnap_t);
}

static int read_counters(struct dl_phdr_info *info, size_t size, void *arg) {
    unsigned long long *c = arg;
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
        c[0] = info->dlpi_adds;
        c[1] = info->dlpi_subs;
    }
    return 1; /* the counters are the same in every entry: stop at the first */
}

void rheap__modules_counters(unsigned long long *adds, unsigned long long *subs) {
    unsigned long long c[2] = {0, 0};
    dl_iterate_phdr(read_counters, c);
    *adds = c[0];
    *subs = c[1];
}

/* The GNU build-id, read from the PT_NOTE segments already mapped in memory. */
/* True when [vaddr, vaddr + size) lies in the file-backed part of a PT_LOAD segment: only
 * those bytes are surely mapped and readable. */
static int loaded(const struct dl_phdr_info *info, ElfW(Addr) vaddr, ElfW(Xword) size) {
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_R) && vaddr >= ph->p_vaddr &&
            vaddr + size <= ph->p_vaddr + ph->p_filesz)
            return 1;
    }
    return 0;
}

static size_t find_build_id(const struct dl_phdr_info *info, unsigned char *out) {
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE || !loaded(info, ph->p_vaddr, ph->p_memsz))
            continue;
        size_t align = ph->p_align == 8 ? 8 : 4;
        const unsigned char *p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
        const unsigned char *end = p + ph->p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            ElfW(Nhdr) nh;
            memcpy(&nh, p, sizeof nh);
            const unsigned char *name = p + sizeof nh;
            const unsigned char *desc = name + ((nh.n_namesz + align - 1) & ~(align - 1));
            const unsigned char *next = desc + ((nh.n_descsz + align - 1) & ~(align - 1));
            if (next > end || next <= p)
                break;
            if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && memcmp(name, "GNU", 4) == 0 &&
                nh.n_descsz <= MAX_BUILD_ID) {
                memcpy(out, desc, nh.n_descsz);
                return nh.n_descsz;
            }
            p = next;
        }
    }
    return 0;
}

static char exe_path[PATH_MAX];
static size_t exe_len;

/* The executable's path, read once at start-up: snapshots taken by several threads at once
 * only read it. */
void rheap__modules_init(void) {
    ssize_t n = readlink("/proc/self/exe", exe_path, sizeof exe_path - 1);
    exe_len = n > 0 ? (size_t)n : 0;
}

static int add_module(struct dl_phdr_info *info, size_t size, void *arg) {
    (void)size;
    rheap__modsnap_t *s = arg;
    const char *path = info->dlpi_name;
    size_t path_len = path ? strlen(path) : 0;
    if (path_len == 0) {
        /* The main program has an empty name: use the executable's path. */
        path = exe_path;
        path_len = exe_len;
    }
    if (path_len > 4096)
        path_len = 4096;
    uint8_t nseg = 0;
    for (int i = 0; i < info->dlpi_phnum && nseg < MAX_SEGS; i++)
        nseg += info->dlpi_phdr[i].p_type == PT_LOAD;
    if (nseg == 0 ||
        s->used + segs_at(path_len, MAX_BUILD_ID) + nseg * sizeof(rip_segment_t) > SNAP_BYTES)
        return 0;
    unsigned char *p = s->data + s->used;
    size_t bid_len = find_build_id(info, p + sizeof(entry_head_t) + path_len + 1);
    rip_segment_t *segs = (rip_segment_t *)(p + segs_at(path_len, bid_len));
    uint8_t n = 0;
    for (int i = 0; i < info->dlpi_phnum && n < nseg; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        segs[n].start = info->dlpi_addr + ph->p_vaddr;
        segs[n].size = ph->p_memsz;
        segs[n].flags = ph->p_flags & 7;
        n++;
    }
    entry_head_t h = {info->dlpi_addr, (uint16_t)path_len, (uint8_t)bid_len, nseg};
    memcpy(p, &h, sizeof h);
    memcpy(p + sizeof h, path, path_len);
    p[sizeof h + path_len] = 0;
    s->used += segs_at(path_len, bid_len) + nseg * sizeof(rip_segment_t);
    s->count++;
    return 0;
}

int rheap__modsnap_take(rheap__modsnap_t *s) {
    s->count = 0;
    s->used = 0;
    dl_iterate_phdr(add_module, s);
    return s->count ? 0 : -1;
}

rip_status_t rheap__modsnap_write(const rheap__modsnap_t *s, rip_writer_t *w, uint64_t t) {
    rip_status_t st = rip_writer_modules(w, t, s->count);
    const unsigned char *p = s->data;
    for (uint32_t i = 0; i < s->count && st == RIP_OK; i++) {
        const entry_head_t *h = (const entry_head_t *)p;
        const char *path = (const char *)p + sizeof *h;
        const unsigned char *bid = p + sizeof *h + h->path_len + 1;
        const rip_segment_t *segs =
            (const rip_segment_t *)(p + segs_at(h->path_len, h->build_id_len));
        st = rip_writer_module(w, h->bias, path, bid, h->build_id_len, segs, h->nseg);
        p += segs_at(h->path_len, h->build_id_len) + h->nseg * sizeof(rip_segment_t);
    }
    return st;
}

/* ---- dlclose: unloads, for the unwinder ----
 *
 * Each thread's unwinder caches rules by code address (unwind.c). After an unload, another
 * object may be loaded at the same addresses, so every unload bumps this counter and each
 * thread drops its rules at its next walk. glibc's own unloads, which do not go through
 * dlclose, are caught later through dlpi_subs (thread.c). */
_Atomic unsigned rheap__unload_gen;

RHEAP_EXPORT int dlclose(void *handle) {
    static int (*real)(void *);
    int (*f)(void *) = __atomic_load_n(&real, __ATOMIC_ACQUIRE);
    if (!f) {
        int guard = rheap__tl.guard;
        rheap__tl.guard = 1; /* dlsym's own allocations are not the program's */
        f = (int (*)(void *))dlsym(RTLD_NEXT, "dlclose");
        rheap__tl.guard = guard;
        if (!f) {
            errno = ENOSYS;
            return -1;
        }
        __atomic_store_n(&real, f, __ATOMIC_RELEASE);
    }
    int r = f(handle);
    atomic_fetch_add(&rheap__unload_gen, 1);
    return r;
}
