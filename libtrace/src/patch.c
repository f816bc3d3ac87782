/*
 * patch.c: an allocator linked statically into a module (the executable, or a library that
 * carries its own copy), hooked at its entry points so that its blocks are recorded as a shared
 * allocator's are.
 *
 * Such an allocator is out of the dynamic linker's reach: the executable's own malloc comes
 * before any preloaded library in the lookup order, and a module's calls into a copy linked
 * into it (prefixed or hidden) bind inside the module. What remains is the code itself. Each
 * entry point of entries.h that the module defines (under the allocator's prefix for the C
 * library's names and jemalloc's: je_malloc, _rjem_mallocx) gets its first instructions
 * replaced by a 5-byte jump to a stub near the module, which jumps on to a hook here. The hook
 * is generated from the entry's row exactly as families.c generates an exported wrapper
 * (shapes.h): it records once, under the call the program made, and calls the real function
 * through a trampoline, which runs the instructions the jump replaced, relocated, and jumps back
 * to the first one it left in place. The stub sits within 2 GiB of the module, so that the
 * jump at the entry is the shortest one (5 bytes, the least code to relocate) and the
 * trampoline's rip-relative operands still reach what they read.
 *
 * Why entry patching rather than the allocator's own hooks: jemalloc's `experimental.hooks`
 * report its allocations without their call, alignment or the program's frame, and are set
 * through mallctl, which a prefixed or stripped-down copy may not export under a name we know;
 * gperftools' MallocHook and mimalloc have nothing alike in a static copy either. Patching
 * works the same on all of them and keeps one recording path (shapes.h) for every family.
 *
 * Rules, since this rewrites the program's code:
 *   - all or nothing: every entry is decoded and its trampoline written before the first jump
 *     is; an entry that cannot be relocated safely makes the whole allocator refused (a
 *     program recorded at its malloc but not at its free would show false leaks), with the
 *     reason, and unseen.c's warning stays;
 *   - refused: a function shorter than the jump (or without a size), a call among the replaced
 *     instructions (its return address would point into the trampoline, which no unwinder
 *     knows), a branch we do not relocate (loop, jrcxz), a rip-relative operand or a branch
 *     target out of 32-bit reach, and any jump, in the function or its .cold part, into the
 *     replaced bytes past the first;
 *   - the text page is made writable only while the jump is written and given its protection
 *     back at once; signals are blocked meanwhile;
 *   - only while the process has one thread: preloaded or linked, this runs before main, when
 *     nothing else can execute the entry while it changes; loaded later (rheap attach) into a
 *     process with threads, the allocator is refused and said so;
 *   - capstone decodes the instructions, its memory taken from a static arena here (nothing
 *     is allocated from the allocator being hooked).
 */
#define _GNU_SOURCE
#include <capstone/capstone.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "entries.h"
#include "internal.h"

enum {
#define H_ENUM(slot, symbol, shape, call) H_##slot,
    RHEAP_LIBC_SHAPED(H_ENUM) RHEAP_FAMILY_ENTRIES(H_ENUM)
#undef H_ENUM
        H_COUNT
};

/* Each hook's real function: its trampoline, set before any entry jumps to the hook. */
static void *tramp[H_COUNT];

#define SHAPE_DECL(slot, symbol, ret, params) static ret h_##slot params
#define SHAPE_REAL(slot) tramp[H_##slot]
#define SHAPE_LATE(slot) NULL
/* The module's mi_heap_visit_blocks, for mi_heap_destroy's hook, found with its entry points. */
static rheap__visit_t visit_blocks;
#define SHAPE_VISIT() visit_blocks
#include "shapes.h"

#define GENERATE(slot, symbol, shape, call) RHEAP_SHAPE_##shape(slot, symbol, call)
RHEAP_LIBC_SHAPED(GENERATE)
RHEAP_FAMILY_ENTRIES(GENERATE)
#undef GENERATE

static const struct {
    const char *symbol;
    void *hook;
} entries[H_COUNT] = {
#define ROW(slot, symbol, shape, call) [H_##slot] = {symbol, (void *)h_##slot},
    RHEAP_LIBC_SHAPED(ROW) RHEAP_FAMILY_ENTRIES(ROW)
#undef ROW
};

/* Whether the entry's name takes the allocator's prefix: the C library's and jemalloc's do; the
 * C++ operators, tcmalloc's tc_ and mimalloc's mi_ names are their own. */
static int prefixable(int slot)
{
#define LIBC(slot, symbol, shape, call) case H_##slot:
#define JE(slot) case H_##slot:
    switch (slot) {
    RHEAP_LIBC_SHAPED(LIBC)
    RHEAP_PREFIXABLE(JE)
        return 1;
    default:
        return 0;
    }
#undef LIBC
#undef JE
}

/* ---- capstone's memory: a static arena, emptied after each use ---- */

static _Alignas(16) unsigned char arena[512 * 1024];
static size_t arena_used;

static void *arena_malloc(size_t n)
{
    size_t start = (arena_used + 16 + 15) & ~(size_t)15;
    if (n > sizeof arena || start > sizeof arena - n)
        return NULL;
    memcpy(arena + start - sizeof n, &n, sizeof n);
    arena_used = start + n;
    return arena + start;
}

static void *arena_calloc(size_t n, size_t size)
{
    size_t total;
    if (__builtin_mul_overflow(n, size, &total))
        return NULL;
    void *p = arena_malloc(total);
    if (p)
        memset(p, 0, total);
    return p;
}

static void *arena_realloc(void *old, size_t n)
{
    void *p = arena_malloc(n);
    if (p && old) {
        size_t was;
        memcpy(&was, (unsigned char *)old - sizeof was, sizeof was);
        memcpy(p, old, was < n ? was : n);
    }
    return p;
}

static void arena_free(void *p)
{
    (void)p;
}

/* ---- the plan: one site per entry point found ---- */

#define JUMP 5        /* jmp rel32 */
#define ABS 14        /* jmp [rip+0]; .quad target */
#define STUB 128      /* per site: the jump to the hook, then the trampoline */
#define TRAMP_AT 16

typedef struct {
    int slot;
    uintptr_t at;             /* the entry */
    uint64_t size;            /* the function's size (symbol table) */
    unsigned len;             /* bytes of whole instructions relocated, at least JUMP */
    unsigned char saved[8];   /* the bytes the jump replaces */
    unsigned char *stub;
    const Elf64_Phdr *seg;
} site_t;

static site_t sites[H_COUNT];
static unsigned nsites;
static int hooked;

static void say(char *why, size_t whylen, const char *a, const char *b, const char *c)
{
    snprintf(why, whylen, "%s%s%s", a, b ? b : "", c ? c : "");
}

static void put_abs(unsigned char *to, uintptr_t target)
{
    to[0] = 0xff;
    to[1] = 0x25;
    memset(to + 2, 0, 4);
    memcpy(to + 6, &target, 8);
}

static int fits32(int64_t v)
{
    return v >= INT32_MIN && v <= INT32_MAX;
}

/* The target of a branch with an immediate operand, or 0 for any other instruction. */
static uint64_t branch_target(csh cs, const cs_insn *in)
{
    const cs_x86 *x = &in->detail->x86;
    if (!(cs_insn_group(cs, in, CS_GRP_JUMP) || cs_insn_group(cs, in, CS_GRP_CALL)))
        return 0;
    if (x->op_count != 1 || x->operands[0].type != X86_OP_IMM)
        return 0;
    return (uint64_t)x->operands[0].imm;
}

static int is_jcc(unsigned id)
{
    switch (id) {
    case X86_INS_JAE: case X86_INS_JA: case X86_INS_JBE: case X86_INS_JB: case X86_INS_JE:
    case X86_INS_JGE: case X86_INS_JG: case X86_INS_JLE: case X86_INS_JL: case X86_INS_JNE:
    case X86_INS_JNO: case X86_INS_JNP: case X86_INS_JNS: case X86_INS_JO: case X86_INS_JP:
    case X86_INS_JS:
        return 1;
    default:
        return 0;
    }
}

/* Relocates the first instructions of site s (at least JUMP bytes of them) into its trampoline
 * at s->stub + TRAMP_AT, followed by the jump back. 0, or -1 with the reason. */
static int relocate(csh cs, cs_insn *in, site_t *s, const char *name, char *why, size_t whylen)
{
    if (s->size < JUMP) {
        say(why, whylen, name, s->size ? " is shorter than a jump" : " has no size", NULL);
        return -1;
    }
    const uint8_t *code = (const uint8_t *)s->at;
    size_t left = s->size;
    uint64_t addr = s->at;
    unsigned char *out = s->stub + TRAMP_AT, *end = s->stub + STUB - ABS;
    int ended = 0;
    s->len = 0;
    while (s->len < JUMP) {
        uint64_t old = addr;
        if (!cs_disasm_iter(cs, &code, &left, &addr, in)) {
            say(why, whylen, name, ": its first instructions do not decode", NULL);
            return -1;
        }
        unsigned n = in->size;
        uint64_t target = branch_target(cs, in);
        const cs_x86 *x = &in->detail->x86;
        if (out + n + 2 + ABS > end) {
            say(why, whylen, name, ": its first instructions are too long to relocate", NULL);
            return -1;
        }
        if (cs_insn_group(cs, in, CS_GRP_CALL)) {
            say(why, whylen, name, ": a call among its first instructions", NULL);
            return -1;
        }
        if (target && in->id == X86_INS_JMP) {
            put_abs(out, target);
            out += ABS;
            ended = 1;
        } else if (target && is_jcc(in->id)) {
            /* The opposite condition skips an absolute jump to the target. */
            unsigned cc = in->bytes[0] == 0x0f ? in->bytes[1] & 15u : in->bytes[0] & 15u;
            if (!((in->bytes[0] >= 0x70 && in->bytes[0] <= 0x7f) ||
                  (in->bytes[0] == 0x0f && in->bytes[1] >= 0x80 && in->bytes[1] <= 0x8f))) {
                say(why, whylen, name, ": a prefixed conditional jump among its first "
                    "instructions", NULL);
                return -1;
            }
            out[0] = (unsigned char)(0x70 | (cc ^ 1));
            out[1] = ABS;
            put_abs(out + 2, target);
            out += 2 + ABS;
        } else if (target || cs_insn_group(cs, in, CS_GRP_BRANCH_RELATIVE)) {
            say(why, whylen, name, ": a branch among its first instructions that cannot be "
                "relocated", NULL);
            return -1;
        } else {
            memcpy(out, in->bytes, n);
            for (int i = 0; i < x->op_count; i++) {
                if (x->operands[i].type != X86_OP_MEM || x->operands[i].mem.base != X86_REG_RIP)
                    continue;
                if (x->encoding.disp_size != 4 || x->encoding.disp_offset + 4u > n) {
                    say(why, whylen, name, ": a rip-relative operand of an unexpected form", NULL);
                    return -1;
                }
                int64_t t = (int64_t)(old + n) + x->operands[i].mem.disp;
                int64_t d = t - (int64_t)((uintptr_t)out + n);
                if (!fits32(d)) {
                    say(why, whylen, name, ": a rip-relative operand out of reach", NULL);
                    return -1;
                }
                int32_t d32 = (int32_t)d;
                memcpy(out + x->encoding.disp_offset, &d32, 4);
            }
            out += n;
        }
        s->len += n;
        if (ended)
            break;
    }
    if (s->len < JUMP || s->len > s->size) {
        say(why, whylen, name, " ends before a jump fits", NULL);
        return -1;
    }
    if (!ended)
        put_abs(out, s->at + s->len);
    return 0;
}

/* Whether any branch in [lo, lo + size) lands inside the bytes the jump replaces, past the
 * entry. An instruction that does not decode stops the look with a refusal. */
static int jumps_into(csh cs, cs_insn *in, const site_t *s, uint64_t lo, uint64_t size)
{
    const uint8_t *code = (const uint8_t *)lo;
    size_t left = size;
    uint64_t addr = lo;
    while (left > 0) {
        if (!cs_disasm_iter(cs, &code, &left, &addr, in))
            return 1;
        uint64_t t = branch_target(cs, in);
        if (t > s->at && t < s->at + s->len)
            return 1;
    }
    return 0;
}

/* An anonymous mapping of len bytes within reach of [lo, hi): tried below the module first
 * (above it lies the program's break, which it should keep room to grow). */
static unsigned char *near_area(uintptr_t lo, uintptr_t hi, size_t len)
{
    const uintptr_t step = (uintptr_t)1 << 20, reach = (uintptr_t)1 << 30;
    for (uintptr_t d = step; d < reach; d += step) {
        uintptr_t cand[2] = {(lo & ~(step - 1)) - d, ((hi + step - 1) & ~(step - 1)) + d};
        for (int k = 0; k < 2; k++) {
            if (k == 0 && (lo & ~(step - 1)) < d + step)
                continue;
            void *p = mmap((void *)cand[k], len, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
            if (p == MAP_FAILED)
                continue;
            if ((uintptr_t)p == cand[k])
                return p;
            munmap(p, len); /* a kernel without MAP_FIXED_NOREPLACE took it for a hint */
        }
    }
    return NULL;
}

/* The number of threads of the process (/proc/self/status), or -1. */
static int threads_now(void)
{
    static char buf[4096];
    int fd = rheap__sys_open("/proc/self/status", O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    long n = rheap__sys_read(fd, buf, sizeof buf - 1);
    rheap__sys_close(fd);
    if (n <= 0)
        return -1;
    buf[n] = 0;
    const char *t = strstr(buf, "\nThreads:");
    if (!t)
        return -1;
    t += sizeof "\nThreads:" - 1;
    while (*t == ' ' || *t == '\t')
        t++;
    int v = 0;
    while (*t >= '0' && *t <= '9')
        v = v * 10 + (*t++ - '0');
    return v;
}

/* Writes the jump of site s (or, undo, its saved bytes back), with the text page writable only
 * meanwhile. 0 or an errno value. */
static int write_entry(const site_t *s, int undo)
{
    uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t page = s->at & ~(pg - 1);
    size_t span = ((s->at + JUMP + pg - 1) & ~(pg - 1)) - page;
    int prot = PROT_READ | PROT_EXEC | (s->seg->p_flags & PF_W ? PROT_WRITE : 0);
    if (mprotect((void *)page, span, PROT_READ | PROT_WRITE | PROT_EXEC) != 0 &&
        mprotect((void *)page, span, PROT_READ | PROT_WRITE) != 0)
        return errno;
    unsigned char bytes[8];
    memcpy(bytes, s->saved, sizeof bytes);
    if (!undo) {
        int32_t rel = (int32_t)((intptr_t)s->stub - (intptr_t)(s->at + JUMP));
        bytes[0] = 0xe9;
        memcpy(bytes + 1, &rel, 4);
        /* The rest of the replaced instructions: int3, never run (nothing jumps there). */
        for (unsigned i = JUMP; i < s->len && i < sizeof bytes; i++)
            bytes[i] = 0xcc;
    }
    memcpy((void *)s->at, bytes, s->len < sizeof bytes ? s->len : sizeof bytes);
    mprotect((void *)page, span, prot);
    return 0;
}

int rheap__patch_module(const rheap__elf_t *e, uintptr_t bias, const char *prefix, char *why,
                        size_t whylen)
{
    why[0] = 0;
    if (hooked) {
        say(why, whylen, "another allocator is hooked already", NULL, NULL);
        return 0;
    }
    if (!prefix) {
        say(why, whylen, "its names are not the ones of a build rheap knows", NULL, NULL);
        return 0;
    }
    int threads = threads_now();
    if (threads != 1) {
        say(why, whylen, "the process has threads running", NULL, NULL);
        return 0;
    }
    /* The sites: every entry the module defines, in its symbol table or else its dynamic one. */
    static char name[128];
    nsites = 0;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (int slot = 0; slot < H_COUNT; slot++) {
        const char *p = prefixable(slot) ? prefix : "";
        if (strlen(p) + strlen(entries[slot].symbol) >= sizeof name)
            continue;
        strcpy(name, p);
        strcat(name, entries[slot].symbol);
        const Elf64_Sym *sym = rheap__elf_func(e, e->symtab, name);
        if (!sym)
            sym = rheap__elf_func(e, e->dynsym, name);
        if (!sym)
            continue;
        const Elf64_Phdr *seg = rheap__elf_segment(e, sym->st_value);
        if (!seg || !(seg->p_flags & PF_X) || sym->st_size > seg->p_vaddr + seg->p_memsz -
                                                                 sym->st_value) {
            say(why, whylen, name, " is not in the module's code", NULL);
            return 0;
        }
        /* The code in memory must be the file's: a file replaced since the program started
         * would give addresses that are no longer entry points. */
        uint64_t at_file = seg->p_offset + (sym->st_value - seg->p_vaddr);
        size_t cmp = sym->st_size < 32 ? (size_t)sym->st_size : 32;
        if (at_file > e->size || cmp > e->size - at_file ||
            memcmp(e->m + at_file, (const void *)(bias + sym->st_value), cmp) != 0) {
            say(why, whylen, name, ": its code in memory differs from its file", NULL);
            return 0;
        }
        /* Two names of one function (static tcmalloc's tc_malloc is its malloc, tc_newarray its
         * tc_new) get one hook: the first in entries.h's order, whose call it records. */
        int alias = 0;
        for (unsigned k = 0; k < nsites; k++)
            alias |= sites[k].at == bias + sym->st_value;
        if (alias)
            continue;
        site_t *s = &sites[nsites++];
        s->slot = slot;
        s->at = bias + sym->st_value;
        s->size = sym->st_size;
        s->seg = seg;
        uint64_t room = seg->p_vaddr + seg->p_memsz - sym->st_value;
        memcpy(s->saved, (const void *)s->at, room < 8 ? room : 8);
        if (s->at < lo)
            lo = s->at;
        if (s->at > hi)
            hi = s->at;
    }
    const Elf64_Sym *v = rheap__elf_func(e, e->symtab, "mi_heap_visit_blocks");
    if (!v)
        v = rheap__elf_func(e, e->dynsym, "mi_heap_visit_blocks");
    const Elf64_Phdr *vseg = v ? rheap__elf_segment(e, v->st_value) : NULL;
    visit_blocks = vseg && (vseg->p_flags & PF_X) ? (rheap__visit_t)(bias + v->st_value) : NULL;
    if (nsites == 0) {
        say(why, whylen, "none of its entry points was found", NULL, NULL);
        return 0;
    }
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    size_t len = (nsites * STUB + pg - 1) & ~(pg - 1);
    unsigned char *area = near_area(lo, hi, len);
    if (!area) {
        say(why, whylen, "no room for its trampolines within reach of its code", NULL, NULL);
        return 0;
    }

    /* Decode and relocate every site before any is changed. */
    static const cs_opt_mem mem = {arena_malloc, arena_calloc, arena_realloc, arena_free,
                                   vsnprintf};
    arena_used = 0;
    csh cs;
    int ok = cs_option(0, CS_OPT_MEM, (size_t)&mem) == CS_ERR_OK &&
             cs_open(CS_ARCH_X86, CS_MODE_64, &cs) == CS_ERR_OK;
    if (!ok) {
        munmap(area, len);
        say(why, whylen, "the disassembler did not start", NULL, NULL);
        return 0;
    }
    cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
    cs_insn *in = cs_malloc(cs);
    if (!in) {
        say(why, whylen, "the disassembler has no memory", NULL, NULL);
        ok = 0;
    }
    for (unsigned i = 0; i < nsites && ok; i++) {
        site_t *s = &sites[i];
        const char *p = prefixable(s->slot) ? prefix : "";
        snprintf(name, sizeof name, "%s%s", p, entries[s->slot].symbol);
        s->stub = area + i * STUB;
        put_abs(s->stub, (uintptr_t)entries[s->slot].hook);
        if (relocate(cs, in, s, name, why, whylen) != 0) {
            ok = 0;
            break;
        }
        /* The function itself, and its cold part where the compiler moved one. */
        static char cold[160];
        snprintf(cold, sizeof cold, "%s.cold", name);
        const Elf64_Sym *c = rheap__elf_func(e, e->symtab, cold);
        if (jumps_into(cs, in, s, s->at, s->size) ||
            (c && c->st_size && rheap__elf_segment(e, c->st_value) &&
             jumps_into(cs, in, s, bias + c->st_value, c->st_size))) {
            say(why, whylen, name, ": a jump into its first instructions, or code that does "
                "not decode", NULL);
            ok = 0;
        }
    }
    cs_close(&cs);
    arena_used = 0;
    if (!ok || mprotect(area, len, PROT_READ | PROT_EXEC) != 0) {
        if (ok)
            say(why, whylen, "its trampolines cannot be made executable", NULL, NULL);
        munmap(area, len);
        return 0;
    }
    for (unsigned i = 0; i < nsites; i++)
        tramp[sites[i].slot] = sites[i].stub + TRAMP_AT;

    /* The jumps. No signal handler runs in the middle (it could call the entry being
     * written); a failure puts back the ones written. */
    sigset_t old;
    rheap__sys_block_signals(&old);
    int err = 0;
    unsigned done;
    for (done = 0; done < nsites; done++)
        if ((err = write_entry(&sites[done], 0)) != 0)
            break;
    if (err)
        while (done-- > 0)
            write_entry(&sites[done], 1);
    rheap__sys_restore_signals(&old);
    if (err) {
        say(why, whylen, "its code cannot be made writable: ", strerrordesc_np(err), NULL);
        return 0;
    }
    hooked = 1;
    return 1;
}
