/*
 * cfi_unit: the call-frame decoder (libtrace/src/cfi.c) on its own.
 *
 * 1. Hand-built .eh_frame_hdr + CIE + FDE images (cfi_image.h) whose rules are known: the
 *    prologue and epilogue of a frame-pointer function, remember/restore_state (also nested as
 *    deep as the decoder keeps states, and one level more), a frame that realigns its stack, the
 *    outermost frame, a signal frame, multi-byte LEB128 operands, the table's binary search, and
 *    images cut or pointing outside their range. The decoder's working memory holds another
 *    byte pattern at each call.
 * 2. LEB128 as varint.h decodes it for the format and for the decoder.
 * 3. This program's own .eh_frame as the loader mapped it: the rule at the entry of each of its
 *    functions, and a walk of its own stack by the decoder's rules, frame by frame equal to
 *    libunwind's backtrace from the same place.
 *
 * `cfi_unit --corpus DIR` writes the images of part 1 and a copy of this program's own CFI as
 * seeds for the decoder's fuzz target (tests/data/cfi-corpus/).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <inttypes.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libunwind.h>

#include "cfi.h"
#include "check.h"
#include "cfi_image.h"
#include "varint.h"

/* A check with a message of its own, through tests/check.h. */
#define EXPECT(cond, fmt, ...)                                                                     \
    do {                                                                                           \
        if (!(cond))                                                                               \
            CHECK_FAIL("check failed: %s: " fmt, #cond, ##__VA_ARGS__);                            \
    } while (0)

static const char *kind_name(int k) {
    static const char *const names[] = {"none", "rsp", "rbp", "*rbp", "end", "slow"};
    return k >= 0 && k <= RHEAP__CFI_SLOW ? names[k] : "?";
}

/* The decoder's working memory, filled with another byte before each call: no rule may depend
 * on what an earlier call left there. */
static rheap__cfi_work_t *work(void) {
    static rheap__cfi_work_t w;
    static unsigned char fill;
    memset(&w, fill += 0x5b, sizeof w);
    return &w;
}

/* The rule at CODE + pc of image m, decoded with the image as the whole readable range. */
static rheap__cfi_rule_t rule_at(const image_t *m, uint32_t pc) {
    return rheap__cfi_rule(m->b, m->b + m->n, m->b, at(m, CODE + pc), work());
}

/* expect_rule: the rule at pc is `kind` with these offsets ("rsp+16 bp@cfa-16"). */
static void expect_rule(const char *what, const image_t *m, uint32_t pc, int kind, int cfa_off,
                        int bp, int bp_off) {
    rheap__cfi_rule_t r = rule_at(m, pc);
    int same = r.kind == kind;
    if (same && kind >= RHEAP__CFA_RSP && kind <= RHEAP__CFA_DEREF_RBP)
        same = r.cfa_off == cfa_off && r.bp == bp && (bp == RHEAP__BP_SAME || r.bp_off == bp_off);
    EXPECT(same, "%s at +%u: got %s %d bp %d %d, expected %s %d bp %d %d", what, pc,
          kind_name(r.kind), r.cfa_off, r.bp, r.bp_off, kind_name(kind), cfa_off, bp, bp_off);
}

static image_t img;

/* An image of one FDE at CODE + 0, 100 bytes long, with these instructions. */
static void one_fde(const uint8_t *ins, size_t n) {
    image_begin(&img, 1, "zR", CIE_INIT, sizeof CIE_INIT);
    image_fde(&img, 0, 100, ins, n);
}

#define ONE_FDE(...)                                                                               \
    do {                                                                                           \
        static const uint8_t ins_[] = {__VA_ARGS__};                                               \
        one_fde(ins_, sizeof ins_);                                                                \
    } while (0)

enum { RSP = RHEAP__CFA_RSP, RBP = RHEAP__CFA_RBP, DEREF = RHEAP__CFA_DEREF_RBP };
enum { SAME = RHEAP__BP_SAME, AT_CFA = RHEAP__BP_AT_CFA, AT_RBP = RHEAP__BP_AT_RBP };

/* What gcc writes for push rbp; mov rbp, rsp; ...; leave; ret (with endbr64 first). */
static void frame_pointer_function(void) {
    ONE_FDE(0x44,             /* advance_loc 4 (endbr64) */
            0x41,             /* advance_loc 1 (push rbp) */
            0x0e, 0x10,       /* def_cfa_offset 16 */
            0x86, 0x02,       /* offset r6 (rbp) at cfa - 16 */
            0x43,             /* advance_loc 3 (mov rbp, rsp) */
            0x0d, 0x06,       /* def_cfa_register rbp */
            0x40 | 20,        /* advance_loc 20 (the body, then leave) */
            0x0c, 0x07, 0x08, /* def_cfa rsp, 8 */
    );
    expect_rule("entry", &img, 0, RSP, 8, SAME, 0);
    expect_rule("before push", &img, 4, RSP, 8, SAME, 0);
    expect_rule("after push", &img, 5, RSP, 16, AT_CFA, -16);
    expect_rule("before mov", &img, 7, RSP, 16, AT_CFA, -16);
    expect_rule("body", &img, 8, RBP, 16, AT_CFA, -16);
    expect_rule("end of body", &img, 27, RBP, 16, AT_CFA, -16);
    expect_rule("after leave", &img, 28, RSP, 8, AT_CFA, -16);
    expect_rule("past the rows", &img, 99, RSP, 8, AT_CFA, -16);
    expect_rule("past the FDE", &img, 100, RHEAP__CFI_SLOW, 0, 0, 0);
}

/* An early return in the middle of a function: the epilogue's rules are undone by
 * restore_state, the CFA's included. */
static void remember_restore(void) {
    ONE_FDE(0x41, 0x0e, 0x10, 0x86, 0x02, /* push rbp */
            0x41, 0x0e, 0x18, 0x83, 0x03, /* push rbx: cfa 24, rbx at cfa - 24 */
            0x4a,                         /* advance 10 */
            0x0a,                         /* remember_state */
            0x41, 0x0e, 0x10,             /* pop rbx */
            0x41, 0x0e, 0x08,             /* pop rbp */
            0xc6,                         /* restore r6: rbp as in the CIE (same value) */
            0x41,                         /* ret */
            0x0b,                         /* restore_state */
            0x45, 0x0e, 0x20,             /* later: cfa 32 */
    );
    expect_rule("pushed", &img, 12, RSP, 24, AT_CFA, -16);
    expect_rule("one popped", &img, 13, RSP, 16, AT_CFA, -16);
    expect_rule("both popped", &img, 14, RSP, 8, SAME, 0);
    expect_rule("restored", &img, 15, RSP, 24, AT_CFA, -16);
    expect_rule("after restore", &img, 20, RSP, 32, AT_CFA, -16);
}

/* remember_state nested as deep as the decoder keeps states (RHEAP__CFI_REMEMBER): CFA offsets
 * 16, 24, ... remembered in turn, then restored one per byte of code; one level more is beyond
 * it. */
static void remember_depth(void) {
    for (int extra = 0; extra < 2; extra++) {
        uint8_t ins[6 * RHEAP__CFI_REMEMBER + 8];
        size_t n = 0;
        for (int i = 0; i < RHEAP__CFI_REMEMBER + extra; i++) {
            ins[n++] = 0x0e; /* def_cfa_offset */
            ins[n++] = (uint8_t)(16 + 8 * i);
            ins[n++] = 0x0a; /* remember_state */
        }
        ins[n++] = 0x0e;
        ins[n++] = 0x7f;
        for (int i = 0; i < RHEAP__CFI_REMEMBER + extra; i++) {
            ins[n++] = 0x41; /* advance 1 */
            ins[n++] = 0x0b; /* restore_state */
        }
        one_fde(ins, n);
        if (extra) {
            expect_rule("remembered once too often", &img, 0, RHEAP__CFI_SLOW, 0, 0, 0);
            continue;
        }
        expect_rule("all remembered", &img, 0, RSP, 0x7f, SAME, 0);
        for (int i = 1; i <= RHEAP__CFI_REMEMBER; i++)
            expect_rule("restored in turn", &img, (uint32_t)i, RSP,
                        16 + 8 * (RHEAP__CFI_REMEMBER - i), SAME, 0);
    }
}

/* gcc's realigned frame without frame pointers: CFA = *(rbp - 8), rbp found at rbp + 0. */
static void realigned(void) {
    ONE_FDE(0x45,                         /* advance 5 */
            0x0f, 0x03, 0x76, 0x78, 0x06, /* def_cfa_expression: breg6 -8; deref */
            0x10, 0x06, 0x02, 0x76, 0x00, /* expression r6: breg6 0 */
            0x4a,                         /* advance 10 */
            0x0c, 0x07, 0x08,             /* def_cfa rsp, 8 */
    );
    expect_rule("before", &img, 4, RSP, 8, SAME, 0);
    expect_rule("realigned", &img, 5, DEREF, -8, AT_RBP, 0);
    expect_rule("after", &img, 15, RSP, 8, AT_RBP, 0);
    /* An expression other than breg6 [deref] is beyond a rule. */
    ONE_FDE(0x45, 0x0f, 0x02, 0x77, 0x08); /* breg7 */
    expect_rule("breg7 expression", &img, 4, RSP, 8, SAME, 0);
    expect_rule("breg7 expression", &img, 5, RHEAP__CFI_SLOW, 0, 0, 0);
    ONE_FDE(0x45, 0x0f, 0x02, 0x76, 0x78); /* breg6 without deref: not a CFA form gcc uses */
    expect_rule("no deref", &img, 5, RHEAP__CFI_SLOW, 0, 0, 0);
}

/* Operands of more than one LEB128 byte, signed and unsigned, and the wider advances. */
static void leb_operands(void) {
    ONE_FDE(0x41, 0x0e, 0xac, 0x02,       /* def_cfa_offset 300 */
            0x02, 0x05,                   /* advance_loc1 5 */
            0x11, 0x06, 0x7e,             /* offset_extended_sf r6, -2 * -8 = cfa + 16 */
            0x03, 0x10, 0x00,             /* advance_loc2 16 */
            0x12, 0x06, 0x7f,             /* def_cfa_sf rbp, -1 * -8 = 8 */
            0x04, 0x20, 0x00, 0x00, 0x00, /* advance_loc4 32 */
            0x0c, 0x07, 0x80, 0x01,       /* def_cfa rsp, 128 */
    );
    expect_rule("cfa 300", &img, 1, RSP, 300, SAME, 0);
    expect_rule("rbp above the cfa", &img, 6, RSP, 300, AT_CFA, 16);
    expect_rule("def_cfa_sf", &img, 22, RBP, 8, AT_CFA, 16);
    expect_rule("def_cfa 128", &img, 54, RSP, 128, AT_CFA, 16);
    expect_rule("before it", &img, 53, RBP, 8, AT_CFA, 16);
    ONE_FDE(0x41, 0x2f, 0x06, 0x02); /* GNU_negative_offset_extended r6, -(2 * -8) */
    expect_rule("negative offset", &img, 1, RSP, 8, AT_CFA, 16);
    /* 2^60 times -8 is INT64_MIN, whose negation would overflow: the offset does not fit a
     * rule. */
    ONE_FDE(0x41, 0x2f, 0x06, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x10);
    expect_rule("huge negative offset", &img, 1, RHEAP__CFI_SLOW, 0, 0, 0);
}

/* Rules a walk cannot use: the return address elsewhere, rbp in another register, unknown
 * opcodes, a signal frame; and the outermost frame. */
static void not_rules(void) {
    ONE_FDE(0x41, 0x07, 0x10); /* undefined r16 */
    expect_rule("ra undefined", &img, 1, RHEAP__CFI_END, 0, 0, 0);
    ONE_FDE(0x41, 0x09, 0x06, 0x03); /* register r6 in r3 */
    expect_rule("rbp in rbx", &img, 1, RHEAP__CFI_SLOW, 0, 0, 0);
    ONE_FDE(0x41, 0x09, 0x03, 0x06); /* rbx in rbp: no matter to the walk */
    expect_rule("rbx in rbp", &img, 1, RSP, 8, SAME, 0);
    ONE_FDE(0x41, 0x90, 0x02); /* ra at cfa - 16 */
    expect_rule("ra not at cfa - 8", &img, 1, RHEAP__CFI_SLOW, 0, 0, 0);
    ONE_FDE(0x41, 0x0c, 0x03, 0x08); /* cfa = rbx + 8 */
    expect_rule("cfa from rbx", &img, 1, RHEAP__CFI_SLOW, 0, 0, 0);
    ONE_FDE(0x41, 0x3f); /* an opcode nobody emits */
    expect_rule("unknown opcode", &img, 0, RSP, 8, SAME, 0);
    expect_rule("unknown opcode", &img, 1, RHEAP__CFI_SLOW, 0, 0, 0);
    ONE_FDE(0x41, 0x0b); /* restore_state without remember_state */
    expect_rule("restore nothing", &img, 1, RHEAP__CFI_SLOW, 0, 0, 0);

    static const uint8_t ins[] = {0x41, 0x0e, 0x10};
    image_begin(&img, 1, "zRS", CIE_INIT, sizeof CIE_INIT);
    image_fde(&img, 0, 100, ins, sizeof ins);
    expect_rule("signal frame", &img, 0, RHEAP__CFI_SLOW, 0, 0, 0);
}

/* Three FDEs with gaps: each address finds its own, or none. */
static void table_search(void) {
    static const uint8_t a[] = {0x41, 0x0e, 0x10}, b[] = {0x41, 0x0e, 0x20}, c[] = {0x41, 0x0e, 0x30};
    image_begin(&img, 3, "zR", CIE_INIT, sizeof CIE_INIT);
    image_fde(&img, 0, 50, a, sizeof a);
    image_fde(&img, 100, 50, b, sizeof b);
    image_fde(&img, 200, 50, c, sizeof c);
    expect_rule("first", &img, 10, RSP, 16, SAME, 0);
    expect_rule("second", &img, 110, RSP, 32, SAME, 0);
    expect_rule("third", &img, 249, RSP, 48, SAME, 0);
    expect_rule("gap", &img, 60, RHEAP__CFI_SLOW, 0, 0, 0);
    expect_rule("beyond", &img, 250, RHEAP__CFI_SLOW, 0, 0, 0);
    rheap__cfi_rule_t r = rheap__cfi_rule(img.b, img.b + img.n, img.b, at(&img, CODE) - 1, work());
    EXPECT(r.kind == RHEAP__CFI_SLOW, "before the first FDE: %s", kind_name(r.kind));
}

/* Images that point outside the range they are given: nothing outside is read (the fuzz
 * target checks that under ASan), and the answer is "slow". */
static void out_of_range(void) {
    ONE_FDE(0x41, 0x0e, 0x10);
    size_t full = img.n;
    /* The FDE cut short by the range's end. */
    rheap__cfi_rule_t r =
        rheap__cfi_rule(img.b, img.b + full - 4, img.b, at(&img, CODE + 1), work());
    EXPECT(r.kind == RHEAP__CFI_SLOW, "FDE past the end: %s", kind_name(r.kind));
    /* The header before the range's start. */
    r = rheap__cfi_rule(img.b + 4, img.b + full, img.b, at(&img, CODE + 1), work());
    EXPECT(r.kind == RHEAP__CFI_SLOW, "header outside: %s", kind_name(r.kind));
    /* A table longer than the image. */
    set32(&img, 8, 1000000);
    expect_rule("huge count", &img, 1, RHEAP__CFI_SLOW, 0, 0, 0);
    set32(&img, 8, 1);
    expect_rule("count restored", &img, 1, RSP, 16, SAME, 0);
    /* An FDE pointer before the image, and one at its very end. */
    set32(&img, 16, (uint32_t)-64);
    expect_rule("FDE before", &img, 1, RHEAP__CFI_SLOW, 0, 0, 0);
    set32(&img, 16, (uint32_t)(full - 2));
    expect_rule("FDE at the end", &img, 1, RHEAP__CFI_SLOW, 0, 0, 0);
    set32(&img, 16, (uint32_t)img.fde[0]);
    /* A CIE pointer to before the image. */
    set32(&img, img.fde[0] + 4, (uint32_t)(img.fde[0] + 4 + 64));
    expect_rule("CIE before", &img, 1, RHEAP__CFI_SLOW, 0, 0, 0);
    /* A header of another version or table encoding. */
    ONE_FDE(0x41, 0x0e, 0x10);
    img.b[0] = 2;
    expect_rule("version 2", &img, 1, RHEAP__CFI_SLOW, 0, 0, 0);
    ONE_FDE(0x41, 0x0e, 0x10);
    img.b[3] = 0x03;
    expect_rule("absolute table", &img, 1, RHEAP__CFI_SLOW, 0, 0, 0);
    /* Three bytes: not even a header. */
    r = rheap__cfi_rule(img.b, img.b + 3, img.b, at(&img, CODE + 1), work());
    EXPECT(r.kind == RHEAP__CFI_SLOW, "3 bytes: %s", kind_name(r.kind));
    /* An operand that runs off the FDE's end. */
    ONE_FDE(0x41, 0x0e, 0x80, 0x80, 0x80, 0x80, 0x80); /* def_cfa_offset, continued in nops */
    expect_rule("LEB128 off the end", &img, 1, RHEAP__CFI_SLOW, 0, 0, 0);
}

static void leb128(void) {
    static const struct {
        uint8_t b[11];
        unsigned n;
        int64_t s;
        uint64_t u;
    } cases[] = {
        {{0x00}, 1, 0, 0},
        {{0x3f}, 1, 63, 63},
        {{0x40}, 1, -64, 64},
        {{0x7f}, 1, -1, 127},
        {{0x80, 0x7f}, 2, -128, 16256},
        {{0xc0, 0x00}, 2, 64, 64},
        {{0xac, 0x02}, 2, 300, 300},
        {{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}, 10, INT64_MIN,
         (uint64_t)1 << 63},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const uint8_t *p = cases[i].b;
        int64_t s = 0;
        uint64_t u = 0;
        int st = rip__get_svarint(&p, cases[i].b + cases[i].n, &s);
        EXPECT(st == RIP__VARINT_OK && p == cases[i].b + cases[i].n && s == cases[i].s,
              "case %zu: signed: status %d, %" PRId64 " in %td bytes", i, st, s, p - cases[i].b);
        p = cases[i].b;
        st = rip__get_varint(&p, cases[i].b + cases[i].n, &u);
        EXPECT(st == RIP__VARINT_OK && u == cases[i].u, "case %zu: unsigned: %d, %" PRIu64, i, st, u);
        /* One byte short: nothing read. */
        p = cases[i].b;
        st = rip__get_svarint(&p, cases[i].b + cases[i].n - 1, &s);
        EXPECT(st == RIP__VARINT_SHORT && p == cases[i].b, "case %zu: short: %d", i, st);
    }
    static const uint8_t eleven[11] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0};
    const uint8_t *p = eleven;
    int64_t s;
    EXPECT(rip__get_svarint(&p, eleven + 11, &s) == RIP__VARINT_LONG, "eleven bytes");
}

/* ---- This program's own CFI ---- */

static int self_rule(uintptr_t pc, rheap__cfi_rule_t *r) {
    struct dl_find_object fo;
    if (_dl_find_object((void *)pc, &fo) != 0 || !fo.dlfo_eh_frame)
        return -1;
    *r = rheap__cfi_rule(fo.dlfo_map_start, fo.dlfo_map_end, fo.dlfo_eh_frame, pc, work());
    return 0;
}

#define FRAMES 64
static uintptr_t walked[FRAMES], unwound[FRAMES + 1];
static int nwalked, nunwound, walk_end, kinds[RHEAP__CFI_SLOW + 1];

/* Walks the stack from the caller of `here` (its return address, stack pointer after the return
 * and rbp, as librheap's RHEAP__CALLER takes them) by the decoder's rules, and takes libunwind's
 * backtrace from the same place. */
__attribute__((noinline, no_sanitize_address)) static void here(void) {
    uintptr_t ip = (uintptr_t)__builtin_return_address(0);
    uintptr_t sp = (uintptr_t)__builtin_frame_address(0) + 16;
    uintptr_t bp = *(const uintptr_t *)__builtin_frame_address(0);
    nunwound = unw_backtrace((void **)unwound, FRAMES + 1);
    nwalked = 0;
    walk_end = RHEAP__CFI_SLOW;
    while (nwalked < FRAMES && ip) {
        walked[nwalked++] = ip;
        rheap__cfi_rule_t r;
        if (self_rule(ip - 1, &r) != 0) {
            walk_end = -1;
            return;
        }
        kinds[r.kind]++;
        uintptr_t cfa;
        if (r.kind == RHEAP__CFA_RSP)
            cfa = sp + (uintptr_t)(intptr_t)r.cfa_off;
        else if (r.kind == RHEAP__CFA_RBP)
            cfa = bp + (uintptr_t)(intptr_t)r.cfa_off;
        else if (r.kind == RHEAP__CFA_DEREF_RBP)
            cfa = *(const uintptr_t *)(bp + (uintptr_t)(intptr_t)r.cfa_off);
        else {
            walk_end = r.kind;
            return;
        }
        uintptr_t next = *(const uintptr_t *)(cfa - 8);
        if (r.bp == RHEAP__BP_AT_CFA)
            bp = *(const uintptr_t *)(cfa + (uintptr_t)(intptr_t)r.bp_off);
        else if (r.bp == RHEAP__BP_AT_RBP)
            bp = *(const uintptr_t *)(bp + (uintptr_t)(intptr_t)r.bp_off);
        sp = cfa;
        ip = next;
    }
    walk_end = ip ? RHEAP__CFI_SLOW : RHEAP__CFI_END;
}

static volatile int sink;

__attribute__((noinline)) static void leaf(int n) {
    here();
    sink = n;
}

/* A frame that realigns its stack: gcc, built without frame pointers (see CMakeLists.txt),
 * finds its CFA through *(rbp - 8). */
__attribute__((noinline)) static void aligned_frame(int n) {
    _Alignas(64) volatile char buf[64];
    volatile char *v = __builtin_alloca((size_t)n);
    buf[0] = 1;
    v[0] = 2;
    leaf(n + buf[0] + v[0]);
    sink = buf[0];
}

__attribute__((noinline)) static void recurse(int n) {
    if (n == 0)
        aligned_frame(8);
    else
        recurse(n - 1);
    sink = n;
}

static void own_cfi(void) {
    /* At a function's first instruction the CFA is rsp + 8 and nothing is saved yet. */
    void (*const fns[])(void) = {here, (void (*)(void))leaf, (void (*)(void))aligned_frame,
                                 (void (*)(void))recurse, own_cfi};
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
        rheap__cfi_rule_t r;
        EXPECT(self_rule((uintptr_t)fns[i], &r) == 0, "function %zu: no object", i);
        EXPECT(r.kind == RHEAP__CFA_RSP && r.cfa_off == 8 && r.bp == RHEAP__BP_SAME,
              "function %zu at entry: %s %d bp %d", i, kind_name(r.kind), r.cfa_off, r.bp);
    }
    recurse(5);
    /* unwound[0] is inside here() itself; the rules' walk starts at its caller. */
    EXPECT(nwalked >= 10, "the rules walked %d frames", nwalked);
#if !defined(__clang__)
    /* gcc realigns through a register; clang keeps a frame pointer there (CFA = rbp + 16). */
    EXPECT(kinds[RHEAP__CFA_DEREF_RBP] == 1, "%d frames with CFA = *(rbp + k), expected 1 (aligned_frame)",
          kinds[RHEAP__CFA_DEREF_RBP]);
#endif
    EXPECT(walk_end == RHEAP__CFI_END, "the walk by rules stopped with %s", kind_name(walk_end));
    EXPECT(nunwound - 1 == nwalked, "libunwind has %d frames after here(), the rules %d",
          nunwound - 1, nwalked);
    for (int i = 0; i < nwalked && i + 1 < nunwound; i++)
        EXPECT(walked[i] == unwound[i + 1], "frame %d: rules %#" PRIxPTR ", libunwind %#" PRIxPTR, i,
              walked[i], unwound[i + 1]);
}

/* ---- The fuzz corpus ---- */

static void write_seed(const char *dir, const char *name, const uint8_t *b, size_t n, int32_t pc) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(&pc, 4, 1, f) != 1 || fwrite(b, 1, n, f) != n || fclose(f) != 0) {
        perror(path);
        exit(1);
    }
}

/* The end of the loaded segment that holds addr: the bytes up to it are mapped. */
struct segment {
    uintptr_t addr, end;
};

static int segment_end(struct dl_phdr_info *info, size_t size, void *arg) {
    (void)size;
    struct segment *s = arg;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t start = info->dlpi_addr + ph->p_vaddr, end = start + ph->p_memsz;
        if (ph->p_type == PT_LOAD && s->addr >= start && s->addr < end) {
            s->end = end;
            return 1;
        }
    }
    return 0;
}

/* Seeds: an input is a 4-byte pc offset from the image's start, then the image (fuzz_cfi.c). */
static void write_corpus(const char *dir) {
    frame_pointer_function();
    write_seed(dir, "frame-pointer", img.b, img.n, CODE + 8);
    remember_restore();
    write_seed(dir, "remember-restore", img.b, img.n, CODE + 15);
    realigned();
    ONE_FDE(0x45, 0x0f, 0x03, 0x76, 0x78, 0x06, 0x10, 0x06, 0x02, 0x76, 0x00, 0x4a, 0x0c, 0x07,
            0x08);
    write_seed(dir, "realigned", img.b, img.n, CODE + 5);
    ONE_FDE(0x41, 0x0e, 0xac, 0x02, 0x02, 0x05, 0x11, 0x06, 0x7e, 0x03, 0x10, 0x00, 0x12, 0x06,
            0x7f, 0x04, 0x20, 0x00, 0x00, 0x00, 0x0c, 0x07, 0x80, 0x01);
    write_seed(dir, "leb-operands", img.b, img.n, CODE + 22);
    table_search();
    write_seed(dir, "three-fdes", img.b, img.n, CODE + 110);
    /* This program's own .eh_frame_hdr and what follows it in its segment (.eh_frame). */
    struct dl_find_object fo;
    if (_dl_find_object((void *)(uintptr_t)own_cfi, &fo) != 0) {
        fprintf(stderr, "no CFI for this program\n");
        exit(1);
    }
    const uint8_t *hdr = fo.dlfo_eh_frame;
    struct segment seg = {(uintptr_t)hdr, 0};
    dl_iterate_phdr(segment_end, &seg);
    size_t n = seg.end > seg.addr ? seg.end - seg.addr : 0;
    if (n > 16384)
        n = 16384;
    write_seed(dir, "own-cfi", hdr, n, (int32_t)((uintptr_t)recurse + 4 - (uintptr_t)hdr));
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "--corpus") == 0) {
        write_corpus(argv[2]);
        return 0;
    }
    frame_pointer_function();
    remember_restore();
    remember_depth();
    realigned();
    leb_operands();
    not_rules();
    table_search();
    out_of_range();
    leb128();
    own_cfi();
    if (check_failures) {
        fprintf(stderr, "cfi_unit: %d failures\n", check_failures);
        return 1;
    }
    printf("cfi_unit: all passed\n");
    return 0;
}
