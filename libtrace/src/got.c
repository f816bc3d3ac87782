/*
 * got.c: recording a process that was started without librheap, through its GOT slots.
 * `rheap attach PID` loads this library into the running process with the process's own dlopen
 * (through ptrace, see inject/target.c) and then calls the three functions below, each as a call
 * made on one of the process's threads:
 *
 *   rheap__attach_prepare  (the other threads run; the thread was stopped where it holds none
 *                           of the allocator's or loader's locks) checks that the process can
 *                           be recorded, finds every GOT slot of the allocator entry points in
 *                           every loaded module, starts the recording and a thread of its
 *                           own, the attach thread;
 *   rheap__attach_commit   (every thread stopped) points those slots at librheap's wrappers;
 *   rheap__attach_release  (every thread stopped) puts the old values back and wakes the
 *                           attach thread, which ends the recording once the threads run
 *                           again.
 *
 * Why the slots and not the symbols: a running process has bound its calls already, and a
 * library loaded now comes after the executable and libc in the lookup order, so its
 * definitions would never be found; the slots (R_X86_64_JUMP_SLOT and GLOB_DAT relocations,
 * the ones calls go through) are what the calls read. A slot is one aligned word, so a thread
 * that calls malloc while it changes reads either the old value or the new one; the threads are
 * stopped all the same while the slots change, so that a recording starts and ends at one
 * instant for the whole process, and so that no module is being loaded or unloaded under the
 * patcher (the loader's own state says so: _r_debug.r_state, walked without its lock since
 * every thread is stopped).
 *
 * The attach thread patches the modules loaded after the attach (it compares dl_iterate_phdr's
 * load counter every 10 ms, which also sees the loads glibc makes itself), ends the recording
 * when released, and also when `rheap attach` stops beating (killed, or stopped for 5 s): then
 * it restores the slots itself, under the loader's lock, with the threads running.
 *
 * Detached, librheap stays mapped (it is linked -z nodelete) and inert: its wrappers are no
 * longer in any slot, and one that a thread entered before the release finishes its call into
 * the real allocator. Blocks allocated while attached are plain glibc blocks (the wrappers add
 * no header), so whoever frees them later frees them as any other.
 *
 * Nothing here runs inside a wrapper; the attach thread holds the guard, so what it allocates
 * (nothing, apart from starting and stopping the recording) is not recorded.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <semaphore.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "rheap_attach.h"
#include "internal.h"
#include "rheap_settings.h"

/* The entry points whose slots are redirected: librheap's wrapper of each name replaces the
 * definition the process bound. Only names whose wrapper calls the same definition through
 * rheap__real belong here (checked in prepare): a wrapper that reached another allocator than
 * the one the slot held would free blocks it never allocated. */
#define ATTACH_ENTRIES(X)                                                                          \
    X(malloc)                                                                                      \
    X(free) X(calloc) X(realloc) X(reallocarray) X(posix_memalign) X(aligned_alloc) X(memalign)    \
        X(valloc) X(pvalloc)

enum {
#define ENTRY_ID(name) E_##name,
    ATTACH_ENTRIES(ENTRY_ID)
#undef ENTRY_ID
        E_COUNT
};

static const char *const entry_names[E_COUNT] = {
#define ENTRY_NAME(name) #name,
    ATTACH_ENTRIES(ENTRY_NAME)
#undef ENTRY_NAME
};

#define MAX_MODULES 1024
#define MAX_SLOTS 8192

typedef struct {
    uintptr_t bias;               /* dlpi_addr */
    uintptr_t ld;                 /* address of its dynamic section: link_map.l_ld */
    uintptr_t relro_lo, relro_hi; /* pages the loader made read-only after relocation */
    uintptr_t lo, hi;             /* the span of its PT_LOAD segments, for lazy PLT stubs */
    int present;                  /* found in the loader's list by the last check */
} module_t;

typedef struct {
    _Atomic uintptr_t *slot;
    uintptr_t old; /* the value before the attach */
    uint16_t entry;
    uint16_t module;
} slot_t;

static struct {
    uintptr_t wrapper[E_COUNT];   /* librheap's own definitions */
    uintptr_t bound[E_COUNT];     /* the process's definitions (global lookup) */
    uintptr_t canonical[E_COUNT]; /* the executable's PLT entry standing for one, or 0 */
    module_t mods[MAX_MODULES];
    slot_t slots[MAX_SLOTS];
    unsigned nmods, nslots;
    unsigned long long adds; /* dl_iterate_phdr's load counter at the last scan */
    uintptr_t self_bias, ldso_bias;
    struct r_debug *rd;
    _Atomic int busy; /* the table is being changed (by the attach thread, or a stopped world) */
    sem_t wake;
    int sem_ok;
    long page;
} att;

rheap__attach_ctl_t rheap__attach_ctl = {.magic = RHEAP__ATTACH_MAGIC};

static int try_busy(void) {
    int expected = 0;
    return atomic_compare_exchange_strong(&att.busy, &expected, 1);
}

static void unbusy(void) {
    atomic_store(&att.busy, 0);
}

/* Sets prepare's refusal: errno value `error` and the message made of up to four parts (NULL
 * ends them early). */
static void say(int error, const char *a, const char *b, const char *c, const char *d) {
    rheap__attach_ctl_t *k = &rheap__attach_ctl;
    k->error = error;
    size_t n = 0;
    const char *parts[4] = {a, b, c, d};
    for (int i = 0; i < 4 && parts[i]; i++)
        for (const char *s = parts[i]; s && *s && n + 1 < sizeof k->message; s++)
            k->message[n++] = *s;
    k->message[n] = 0;
}

/* ---- Slots ---- */

/* A pointer from a dynamic entry: the loader has added the bias to most of them in place (not
 * in the vDSO); a value below the bias is still a file address. */
static uintptr_t dyn_ptr(uintptr_t bias, uintptr_t v) {
    return v < bias ? v + bias : v;
}

/* Writes value into a slot, making a read-only (RELRO) page writable for the moment. A single
 * aligned store: a thread that calls through the slot meanwhile reads the old or the new. */
static int write_slot(const slot_t *s, uintptr_t value) {
    const module_t *m = &att.mods[s->module];
    uintptr_t a = (uintptr_t)s->slot;
    int ro = a >= m->relro_lo && a < m->relro_hi;
    uintptr_t page = a & ~(uintptr_t)(att.page - 1);
    if (ro && mprotect((void *)page, (size_t)att.page, PROT_READ | PROT_WRITE) != 0)
        return -1;
    atomic_store_explicit(s->slot, value, memory_order_release);
    if (ro)
        mprotect((void *)page, (size_t)att.page, PROT_READ);
    return 0;
}

static int entry_of(const char *name) {
    for (int i = 0; i < E_COUNT; i++)
        if (att.wrapper[i] && strcmp(name, entry_names[i]) == 0)
            return i;
    return -1;
}

/* Adds the slots of relocation table [rela, rela + size) of module m. */
static void scan_relocs(unsigned m, const ElfW(Rela) * rela, size_t size, const ElfW(Sym) * symtab,
                        const char *strtab) {
    const module_t *mod = &att.mods[m];
    for (size_t i = 0; i < size / sizeof *rela; i++) {
        unsigned type = (unsigned)ELF64_R_TYPE(rela[i].r_info);
        if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT)
            continue;
        const ElfW(Sym) *sym = &symtab[ELF64_R_SYM(rela[i].r_info)];
        int e = entry_of(strtab + sym->st_name);
        if (e < 0)
            continue;
        _Atomic uintptr_t *slot = (_Atomic uintptr_t *)(mod->bias + rela[i].r_offset);
        uintptr_t v = atomic_load_explicit(slot, memory_order_relaxed);
        /* Bound to the process's definition, or not bound yet (lazy binding: the slot points
         * at the module's own PLT stub, which binds on the first call). Anything else is a
         * definition of the module's own choosing (another allocator), left alone. */
        if (v != att.bound[e] && (!att.canonical[e] || v != att.canonical[e]) &&
            (v < mod->lo || v >= mod->hi)) {
            rheap__attach_ctl.skipped++;
            continue;
        }
        if (att.nslots == MAX_SLOTS) {
            rheap__attach_ctl.skipped++;
            continue;
        }
        att.slots[att.nslots++] = (slot_t){slot, v, (uint16_t)e, (uint16_t)m};
    }
}

/* Records module `info` and its slots (not yet written). 0, or -1 when the table is full. */
static int add_module(const struct dl_phdr_info *info) {
    if (att.nmods == MAX_MODULES)
        return -1;
    unsigned m = att.nmods;
    module_t *mod = &att.mods[m];
    memset(mod, 0, sizeof *mod);
    mod->bias = info->dlpi_addr;
    mod->lo = UINTPTR_MAX;
    const ElfW(Dyn) *dyn = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t start = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)start;
        else if (ph->p_type == PT_GNU_RELRO) {
            mod->relro_lo = start & ~(uintptr_t)(att.page - 1);
            mod->relro_hi = (start + ph->p_memsz) & ~(uintptr_t)(att.page - 1);
        } else if (ph->p_type == PT_LOAD) {
            if (start < mod->lo)
                mod->lo = start;
            if (start + ph->p_memsz > mod->hi)
                mod->hi = start + ph->p_memsz;
        }
    }
    if (!dyn)
        return 0; /* nothing bound through slots */
    mod->ld = (uintptr_t)dyn;
    att.nmods++;
    const ElfW(Sym) *symtab = NULL;
    const char *strtab = NULL;
    const ElfW(Rela) *jmprel = NULL, *rela = NULL;
    size_t jmprel_size = 0, rela_size = 0;
    for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++) {
        switch (d->d_tag) {
        case DT_SYMTAB: symtab = (const ElfW(Sym) *)dyn_ptr(mod->bias, d->d_un.d_ptr); break;
        case DT_STRTAB: strtab = (const char *)dyn_ptr(mod->bias, d->d_un.d_ptr); break;
        case DT_JMPREL: jmprel = (const ElfW(Rela) *)dyn_ptr(mod->bias, d->d_un.d_ptr); break;
        case DT_PLTRELSZ: jmprel_size = d->d_un.d_val; break;
        case DT_RELA: rela = (const ElfW(Rela) *)dyn_ptr(mod->bias, d->d_un.d_ptr); break;
        case DT_RELASZ: rela_size = d->d_un.d_val; break;
        case DT_PLTREL:
            if (d->d_un.d_val != DT_RELA)
                return 0; /* x86-64 uses RELA only */
            break;
        default: break;
        }
    }
    if (!symtab || !strtab)
        return 0;
    if (jmprel)
        scan_relocs(m, jmprel, jmprel_size, symtab, strtab);
    if (rela)
        scan_relocs(m, rela, rela_size, symtab, strtab);
    return 0;
}

static int known_module(uintptr_t bias, uintptr_t ld) {
    for (unsigned i = 0; i < att.nmods; i++)
        if (att.mods[i].bias == bias && att.mods[i].ld == ld)
            return (int)i;
    return -1;
}

static uintptr_t dynamic_of(const struct dl_phdr_info *info) {
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
            return info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
    return 0;
}

/* Modules whose slots are never redirected: librheap itself (its own calls go to the real
 * allocator), the dynamic loader (it allocates through libc's functions directly) and the
 * vDSO (no relocations). */
static int excluded(const struct dl_phdr_info *info) {
    return info->dlpi_addr == att.self_bias || info->dlpi_addr == att.ldso_bias ||
           !info->dlpi_name || (info->dlpi_name[0] && strstr(info->dlpi_name, "linux-vdso"));
}

/* Whether a module is in the loader's main list (not in a namespace of dlmopen's, which has a
 * libc of its own). Called with the loader's lock held, or with every thread stopped. */
static int in_base_namespace(const struct dl_phdr_info *info) {
    uintptr_t ld = dynamic_of(info);
    for (struct link_map *l = att.rd ? att.rd->r_map : NULL; l; l = l->l_next)
        if (l->l_addr == info->dlpi_addr && (uintptr_t)l->l_ld == ld)
            return 1;
    return 0;
}

/* dl_iterate_phdr callback (the loader's lock held: no module comes or goes): adds the
 * modules not in the table yet; with *write, also redirects their slots at once. */
static int scan_new(struct dl_phdr_info *info, size_t size, void *arg) {
    (void)size;
    int write = *(int *)arg;
    if (excluded(info) || known_module(info->dlpi_addr, dynamic_of(info)) >= 0)
        return 0;
    if (write && !in_base_namespace(info))
        return 0; /* dlmopen's: another libc, whose malloc the wrappers do not call */
    unsigned first = att.nslots;
    if (add_module(info) != 0)
        return 0;
    if (write)
        for (unsigned i = first; i < att.nslots; i++)
            if (write_slot(&att.slots[i], att.wrapper[att.slots[i].entry]) == 0)
                rheap__attach_ctl.slots++;
    return 0;
}

/* Marks which modules of the table the loader still lists. Every thread is stopped: the list
 * is only read when the loader was not in the middle of changing it. 0, or -1 when it was. */
static int check_modules(void) {
    if (!att.rd || att.rd->r_state != RT_CONSISTENT)
        return -1;
    for (unsigned i = 0; i < att.nmods; i++)
        att.mods[i].present = 0;
    for (struct link_map *l = att.rd->r_map; l; l = l->l_next) {
        int m = known_module(l->l_addr, (uintptr_t)l->l_ld);
        if (m >= 0)
            att.mods[m].present = 1;
    }
    return 0;
}

/* dl_iterate_phdr callback: marks the listed modules present (the loader's lock held). */
static int mark_present(struct dl_phdr_info *info, size_t size, void *arg) {
    (void)size;
    (void)arg;
    int m = known_module(info->dlpi_addr, dynamic_of(info));
    if (m >= 0)
        att.mods[m].present = 1;
    return 0;
}

/* Puts back the old value of every slot that still holds librheap's wrapper, in the modules
 * marked present; returns how many. A slot that holds something else was changed by someone
 * else since (the lazy binder, the program) and keeps that. */
static unsigned restore_present(void) {
    unsigned n = 0;
    for (unsigned i = 0; i < att.nslots; i++) {
        const slot_t *s = &att.slots[i];
        if (att.mods[s->module].present &&
            atomic_load_explicit(s->slot, memory_order_relaxed) == att.wrapper[s->entry] &&
            write_slot(s, s->old) == 0)
            n++;
    }
    return n;
}

/* dl_iterate_phdr callback for the attach thread's own release: the whole restore under the
 * loader's lock, so no module goes away while its slots are written. Runs once, on the first
 * entry. */
static int restore_locked(struct dl_phdr_info *info, size_t size, void *arg) {
    (void)info;
    (void)size;
    for (unsigned i = 0; i < att.nmods; i++)
        att.mods[i].present = 0;
    dl_iterate_phdr(mark_present, NULL); /* the loader's lock is recursive */
    *(unsigned *)arg = restore_present();
    return 1;
}

/* ---- The attach thread ---- */

static void stop_recording(const char *how) {
    rheap__ctl_lock();
    if (atomic_load(&rheap__word) & RHEAP__ON)
        rheap__stop(how);
    rheap__ctl_unlock();
}

static void *attach_thread_main(void *arg) {
    (void)arg;
    rheap__tl.guard = 1;
    prctl(PR_SET_NAME, "rheap-attach", 0, 0, 0);
    rheap__attach_ctl_t *k = &rheap__attach_ctl;
    uint64_t beat = atomic_load(&k->heartbeat);
    unsigned still = 0; /* 10 ms ticks since the beat last moved */
    const char *how = "detach";
    for (;;) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 10 * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        sem_timedwait(&att.wake, &until);
        int state = atomic_load(&k->state);
        if (state == RHEAP__ATTACH_RELEASING)
            break;
        if (state != RHEAP__ATTACH_COMMITTED && state != RHEAP__ATTACH_PREPARED)
            continue;
        uint64_t b = atomic_load(&k->heartbeat);
        still = b == beat ? still + 1 : 0;
        beat = b;
        if (still >= 500 && try_busy()) {
            /* rheap attach went away (killed) or stopped answering: undo the attach here. */
            if (atomic_load(&k->state) == RHEAP__ATTACH_COMMITTED) {
                unsigned n = 0;
                dl_iterate_phdr(restore_locked, &n);
            }
            atomic_store(&k->state, RHEAP__ATTACH_RELEASING);
            unbusy();
            how = "error: rheap attach stopped answering";
            rheap__log("rheap attach stopped answering: recording ended, allocator restored", NULL);
            break;
        }
        if (state != RHEAP__ATTACH_COMMITTED)
            continue;
        unsigned long long adds, subs;
        rheap__modules_counters(&adds, &subs);
        if (adds != att.adds && try_busy()) {
            /* The state is read again under the flag: a release may have come meanwhile. */
            if (atomic_load(&k->state) == RHEAP__ATTACH_COMMITTED) {
                int write = 1;
                dl_iterate_phdr(scan_new, &write);
                att.adds = adds;
            }
            unbusy();
        }
    }
    stop_recording(how);
    atomic_store(&k->state, RHEAP__ATTACH_STOPPED);
    return NULL;
}

/* ---- A fork while attached ---- */

int rheap__attach_forked(void) {
    int state = atomic_load(&rheap__attach_ctl.state);
    if (state != RHEAP__ATTACH_COMMITTED && state != RHEAP__ATTACH_PREPARED &&
        state != RHEAP__ATTACH_RELEASING)
        return 0;
    /* The child has no attach thread and no rheap attach watching it: it must not record. Its one
     * thread runs this, so the table is the parent's as it stood, and the loader's list is read
     * without its lock, which a thread of the parent may have held at the fork. */
    if (state == RHEAP__ATTACH_COMMITTED) {
        if (check_modules() == 0) {
            restore_present();
        } else {
            unsigned n = 0; /* the parent was loading or unloading: under the lock, then */
            dl_iterate_phdr(restore_locked, &n);
        }
    }
    atomic_store(&rheap__attach_ctl.state, RHEAP__ATTACH_STOPPED);
    return 1;
}

/* ---- The three calls ---- */

/* The settings rheap attach passes: "NAME=VALUE" strings, each ended by a NUL, the list by an
 * empty one; NAME is a librheap environment variable, its value read by the settings parser. */
static int read_settings(const char *list, rheap__config_t *c) {
    for (const char *s = list; *s; s += strlen(s) + 1) {
        const char *eq = strchr(s, '=');
        int id = -1;
        for (int i = 0; eq && i < RHEAP__SET_COUNT; i++)
            if (strlen(rheap__settings[i].env) == (size_t)(eq - s) &&
                strncmp(s, rheap__settings[i].env, (size_t)(eq - s)) == 0)
                id = i;
        uint64_t v;
        if (id < 0 ||
            rheap__setting_parse((rheap__setting_id_t)id, eq + 1, &v) != RHEAP__SETTING_OK) {
            say(EINVAL, "bad setting ", s, NULL, NULL);
            return -1;
        }
        switch (id) {
        case RHEAP__SET_DEPTH: c->depth = (unsigned)v; break;
        case RHEAP__SET_SAMPLE_RATE: c->sample_ppm = (uint32_t)v; break;
        case RHEAP__SET_MODE: c->profile = (int)v; break;
        case RHEAP__SET_SAMPLE_INTERVAL: c->interval = v; break;
        case RHEAP__SET_SEGMENT_KB: c->segment_kb = v; break;
        case RHEAP__SET_DIR: memcpy(c->dir, eq + 1, v + 1); break;
        default: say(EINVAL, "setting not taken by attach: ", s, NULL, NULL); return -1;
        }
    }
    return 0;
}

/* Where a PLT entry at `at` jumps: the value of the slot it jumps through, or 0 when the code
 * there is no PLT entry (jmp *slot(%rip), maybe after endbr64 and with a bnd prefix). */
static uintptr_t plt_target(uintptr_t at) {
    const unsigned char *p = (const unsigned char *)at;
    if (!at)
        return 0;
    if (p[0] == 0xf3 && p[1] == 0x0f && p[2] == 0x1e && p[3] == 0xfa)
        p += 4; /* endbr64 */
    if (p[0] == 0xf2)
        p++; /* bnd */
    if (p[0] != 0xff || p[1] != 0x25)
        return 0;
    int32_t disp;
    memcpy(&disp, p + 2, sizeof disp);
    const _Atomic uintptr_t *slot = (const _Atomic uintptr_t *)(p + 6 + disp);
    return atomic_load_explicit(slot, memory_order_relaxed);
}

static int ldso_bias_of(struct dl_phdr_info *info, size_t size, void *arg) {
    (void)size;
    uintptr_t *want = arg; /* in: an address inside the loader; out: its bias */
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t start = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && *want >= start && *want < start + ph->p_memsz) {
            *want = info->dlpi_addr;
            return 1;
        }
    }
    return 0;
}

static rheap__attach_ctl_t *prepare(const char *settings) {
    rheap__attach_ctl_t *k = &rheap__attach_ctl;
    int state = atomic_load(&k->state);
    k->error = 0;
    k->message[0] = 0;
    if (state != RHEAP__ATTACH_IDLE && state != RHEAP__ATTACH_STOPPED) {
        say(EBUSY, "another rheap attach is attached to this process", NULL, NULL, NULL);
        return k;
    }
    if (atomic_load(&rheap__word) & RHEAP__ON) {
        say(EALREADY, "it is already recording (into ", rheap__rec.path, ")", NULL);
        return k;
    }
    att.page = sysconf(_SC_PAGESIZE);
    /* librheap's own definitions: looked up in its own scope, where it comes first. */
    Dl_info self;
    void *me = NULL;
    if (dladdr((void *)prepare, &self) && self.dli_fname)
        me = dlopen(self.dli_fname, RTLD_NOW | RTLD_NOLOAD);
    if (!me) {
        say(ENOENT, "librheap cannot find itself: ", dlerror(), NULL, NULL);
        return k;
    }
    att.self_bias = (uintptr_t)self.dli_fbase;
    uintptr_t real[E_COUNT] = {
        [E_malloc] = (uintptr_t)rheap__real.malloc,
        [E_free] = (uintptr_t)rheap__real.free,
        [E_calloc] = (uintptr_t)rheap__real.calloc,
        [E_realloc] = (uintptr_t)rheap__real.realloc,
        [E_posix_memalign] = (uintptr_t)rheap__real.posix_memalign,
        [E_aligned_alloc] = (uintptr_t)rheap__real.aligned_alloc,
        [E_memalign] = (uintptr_t)rheap__real.memalign,
        [E_valloc] = (uintptr_t)rheap__real.valloc,
        [E_pvalloc] = (uintptr_t)rheap__real.pvalloc,
        /* reallocarray's wrapper calls the real realloc; glibc's own is realloc with an
         * overflow check, so whichever libc the process bound is the one it reaches. */
        [E_reallocarray] = (uintptr_t)dlsym(RTLD_NEXT, "reallocarray"),
    };
    for (int i = 0; i < E_COUNT; i++) {
        att.canonical[i] = 0;
        att.wrapper[i] = (uintptr_t)dlsym(me, entry_names[i]);
        att.bound[i] = (uintptr_t)dlsym(RTLD_DEFAULT, entry_names[i]);
        if (att.bound[i] && att.bound[i] == att.wrapper[i]) {
            say(EEXIST,
                "librheap is already preloaded in this process: turn recording on "
                "with its toggle signal (RHEAP_SIGNAL) or rheap_enable() instead",
                NULL, NULL, NULL);
            dlclose(me);
            return k;
        }
        if (att.bound[i] != real[i] && plt_target(att.bound[i]) == real[i]) {
            /* An executable that takes the function's address makes its own PLT entry the
             * function's address for everyone (a canonical PLT entry, as in python3): data
             * slots hold that entry, which jumps through the executable's own slot. */
            att.canonical[i] = att.bound[i];
            att.bound[i] = real[i];
        }
        if (att.bound[i] != real[i] && i != E_malloc && i != E_free && i != E_calloc &&
            i != E_realloc) {
            /* A definition of the program's own (a compatibility reallocarray, say) over
             * libc's malloc: its slots are left alone, and what it allocates comes from the
             * functions that are redirected. */
            att.wrapper[i] = 0;
            continue;
        }
        if (att.bound[i] != real[i]) {
            /* The process allocates with another allocator than the one librheap's wrappers
             * would call: redirecting its slots would mix the two. */
            Dl_info who;
            int named = att.bound[i] && dladdr((void *)att.bound[i], &who) && who.dli_fname;
            say(ENOTSUP, "it allocates with an allocator rheap attach cannot hook: its ",
                entry_names[i], " comes from ", named ? who.dli_fname : "no loaded module");
            dlclose(me);
            return k;
        }
    }
    dlclose(me); /* the reference rheap attach's dlopen took keeps it loaded */
    /* The loader's list of modules; the loader itself is the module that holds it. */
    att.rd = (struct r_debug *)dlsym(RTLD_DEFAULT, "_r_debug");
    uintptr_t in_ldso = (uintptr_t)att.rd;
    if (!att.rd) {
        say(ENOTSUP, "its dynamic loader does not export _r_debug", NULL, NULL, NULL);
        return k;
    }
    dl_iterate_phdr(ldso_bias_of, &in_ldso);
    if (in_ldso == (uintptr_t)att.rd) {
        say(ENOTSUP, "its dynamic loader is not among its modules", NULL, NULL, NULL);
        return k;
    }
    att.ldso_bias = in_ldso;

    /* unseen.c's scan, run when dlopen loaded librheap, takes libc for an allocator ahead of
     * librheap (every module loaded before it comes first in the lookup order). Attached, the
     * slots are what reach the wrappers, and the process's malloc was just checked to be the one
     * they call: that finding does not hold here. */
    if (rheap__unseen.found && strcmp(rheap__unseen.symbol, "malloc") == 0)
        memset(&rheap__unseen, 0, sizeof rheap__unseen);

    static rheap__config_t c; /* 4 KiB: off the borrowed thread's stack */
    c = rheap__env_cfg;
    c.signal = 0;
    if (read_settings(settings, &c) != 0)
        return k;

    rheap__ctl_lock();
    int started = rheap__start(&c, "attach");
    int err = errno;
    rheap__ctl_unlock();
    if (started != 0) {
        say(err, "cannot start recording in ", c.dir[0] ? c.dir : ".", ": ", strerrordesc_np(err));
        return k;
    }
    /* The table: every module loaded now. */
    att.nmods = att.nslots = 0;
    k->slots = k->skipped = 0;
    unsigned long long subs;
    rheap__modules_counters(&att.adds, &subs);
    int write = 0;
    dl_iterate_phdr(scan_new, &write);
    k->modules = att.nmods;
    k->found = att.nslots;
    if (!att.sem_ok)
        att.sem_ok = sem_init(&att.wake, 0, 0) == 0;
    atomic_store(&k->state, RHEAP__ATTACH_PREPARED);
    /* The attach thread takes no signal of the program's. */
    pthread_t th;
    pthread_attr_t attr;
    sigset_t all, old;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int made = att.sem_ok && pthread_create(&th, &attr, attach_thread_main, NULL) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
    if (!made) {
        atomic_store(&k->state, RHEAP__ATTACH_STOPPED);
        stop_recording("error: no attach thread");
        say(EAGAIN, "cannot start librheap's attach thread in it", NULL, NULL, NULL);
    }
    return k;
}

RHEAP_EXPORT rheap__attach_ctl_t *rheap__attach_prepare(const char *settings) {
    int guard = rheap__tl.guard;
    rheap__tl.guard = 1; /* whatever this allocates is librheap's, not the program's */
    int saved = errno;
    rheap__attach_ctl_t *k = prepare(settings);
    errno = saved;
    rheap__tl.guard = guard;
    return k;
}

RHEAP_EXPORT long rheap__attach_commit(void) {
    rheap__attach_ctl_t *k = &rheap__attach_ctl;
    if (atomic_load(&k->state) != RHEAP__ATTACH_PREPARED)
        return -EINVAL;
    if (!try_busy())
        return -EAGAIN;
    int saved = errno;
    if (check_modules() != 0) {
        unbusy();
        return -EAGAIN;
    }
    unsigned n = 0;
    for (unsigned i = 0; i < att.nslots; i++) {
        const slot_t *s = &att.slots[i];
        if (att.mods[s->module].present && write_slot(s, att.wrapper[s->entry]) == 0)
            n++;
    }
    k->slots = n;
    atomic_store(&k->state, RHEAP__ATTACH_COMMITTED);
    unbusy();
    errno = saved;
    return (long)n;
}

RHEAP_EXPORT long rheap__attach_release(void) {
    rheap__attach_ctl_t *k = &rheap__attach_ctl;
    int state = atomic_load(&k->state);
    if (state != RHEAP__ATTACH_COMMITTED && state != RHEAP__ATTACH_PREPARED)
        return -EINVAL;
    if (!try_busy())
        return -EAGAIN;
    int saved = errno;
    unsigned n = 0;
    if (state == RHEAP__ATTACH_COMMITTED) {
        if (check_modules() != 0) {
            unbusy();
            return -EAGAIN;
        }
        n = restore_present();
    }
    k->restored = n;
    atomic_store(&k->state, RHEAP__ATTACH_RELEASING);
    unbusy();
    sem_post(&att.wake);
    errno = saved;
    return (long)n;
}
