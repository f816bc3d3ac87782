/*
 * cfi.c: the DWARF call-frame information decoder (see cfi.h): .eh_frame_hdr lookup, CIE and
 * FDE parsing, and a CFI interpreter for the registers a walk needs.
 *
 * Every read goes through a cursor bounded by the entry it belongs to, and every entry is
 * checked to lie within the range the caller gave before its bytes are read: on bad input the
 * result is RHEAP__CFI_SLOW, never a read out of bounds (tests/fuzz/fuzz_cfi.c checks this).
 */
#include "cfi.h"

#include <string.h>

#include "varint.h"

enum {
    PE_ABSPTR = 0x00, PE_ULEB128 = 0x01, PE_UDATA2 = 0x02, PE_UDATA4 = 0x03, PE_UDATA8 = 0x04,
    PE_SLEB128 = 0x09, PE_SDATA2 = 0x0a, PE_SDATA4 = 0x0b, PE_SDATA8 = 0x0c,
    PE_PCREL = 0x10, PE_DATAREL = 0x30, PE_INDIRECT = 0x80, PE_OMIT = 0xff,
};

typedef rheap__cfi_cursor_t cursor_t;
typedef rheap__cfi_work_t work_t;

/* LEB128 numbers, read with the format's own decoder (varint.h). One longer than ten bytes
 * counts as malformed: no compiler or assembler emits one for the values CFI holds. */
static uint64_t uleb(cursor_t *c) {
    uint64_t v;
    if (c->bad || rip__get_varint(&c->p, c->end, &v) != RIP__VARINT_OK) {
        c->bad = 1;
        return 0;
    }
    return v;
}

static int64_t sleb(cursor_t *c) {
    int64_t v;
    if (c->bad || rip__get_svarint(&c->p, c->end, &v) != RIP__VARINT_OK) {
        c->bad = 1;
        return 0;
    }
    return v;
}

static uint64_t fixed(cursor_t *c, unsigned n) {
    if (c->p > c->end || (size_t)(c->end - c->p) < n) {
        c->bad = 1;
        return 0;
    }
    uint64_t v = 0;
    memcpy(&v, c->p, n); /* little-endian */
    c->p += n;
    return v;
}

static void skip(cursor_t *c, uint64_t n) {
    if (n > (uint64_t)(c->end - c->p))
        c->bad = 1;
    else
        c->p += n;
}

/* A pointer in the encoding `enc`; datarel is relative to `data` (the .eh_frame_hdr). */
static uintptr_t encoded(cursor_t *c, uint8_t enc, uintptr_t data) {
    uintptr_t at = (uintptr_t)c->p, v;
    switch (enc & 0x0f) {
    case PE_ABSPTR: v = (uintptr_t)fixed(c, 8); break;
    case PE_ULEB128: v = (uintptr_t)uleb(c); break;
    case PE_UDATA2: v = (uintptr_t)fixed(c, 2); break;
    case PE_UDATA4: v = (uintptr_t)fixed(c, 4); break;
    case PE_UDATA8: v = (uintptr_t)fixed(c, 8); break;
    case PE_SLEB128: v = (uintptr_t)sleb(c); break;
    case PE_SDATA2: v = (uintptr_t)(int64_t)(int16_t)fixed(c, 2); break;
    case PE_SDATA4: v = (uintptr_t)(int64_t)(int32_t)fixed(c, 4); break;
    case PE_SDATA8: v = (uintptr_t)fixed(c, 8); break;
    default: c->bad = 1; return 0;
    }
    switch (enc & 0x70) {
    case 0: break;
    case PE_PCREL: v += at; break;
    case PE_DATAREL: v += data; break;
    default: c->bad = 1; return 0;
    }
    if (enc & PE_INDIRECT)
        c->bad = 1; /* never used for code addresses */
    return v;
}

/* One length-prefixed .eh_frame entry at address `at`: sets c to its contents, returns where
 * its length field ended (the base of the FDE's CIE pointer), or NULL when the entry does not
 * lie wholly within [lo, hi). */
static const uint8_t *entry(cursor_t *c, uintptr_t at, const uint8_t *lo, const uint8_t *hi) {
    if (at < (uintptr_t)lo || at >= (uintptr_t)hi || (uintptr_t)hi - at < 4)
        return NULL;
    const uint8_t *p = (const uint8_t *)at;
    uint32_t len32;
    memcpy(&len32, p, 4);
    p += 4;
    uint64_t len = len32;
    if (len32 == 0xffffffffu) {
        if (hi - p < 8)
            return NULL;
        memcpy(&len, p, 8);
        p += 8;
    }
    if (len == 0 || len > (1u << 24) || len > (uint64_t)(hi - p))
        return NULL;
    c->p = p;
    c->end = p + len;
    c->bad = 0;
    return p;
}

/* Products wrap instead of overflowing (only malformed CFI gets there). */
static inline int64_t times(int64_t a, int64_t b) {
    return (int64_t)((uint64_t)a * (uint64_t)b);
}

/* A register number; ones beyond any x86-64 register become 255, which no rule uses. */
static uint8_t reg_num(cursor_t *c) {
    uint64_t r = uleb(c);
    return r < 255 ? (uint8_t)r : 255;
}

/* The register state the CFI program describes, for the registers a walk needs. */
typedef rheap__cfi_state_t state_t;

enum { DW_RBP = 6, DW_RSP = 7, DW_RA = 16 };
enum { RA_SAVED, RA_UNDEFINED, RA_OTHER };

/* A DWARF expression block: the one form gcc uses for frames that realign the stack,
 * DW_OP_breg6 k (optionally followed by DW_OP_deref), read as rbp + k. The block's bytes are
 * read in place, not through a cursor of their own: the frame stays small. */
static int breg6(cursor_t *c, int64_t *k, int *deref) {
    uint64_t len = uleb(c);
    if (c->bad || len > (uint64_t)(c->end - c->p))
        return c->bad = 1, 0;
    const uint8_t *p = c->p, *end = p + len;
    c->p = end;
    if (len < 2 || *p++ != 0x76 || rip__get_svarint(&p, end, k) != RIP__VARINT_OK)
        return 0; /* not DW_OP_breg6 k */
    *deref = p < end && *p == 0x06; /* DW_OP_deref */
    return p + *deref == end;
}

/* Runs a CFI program up to `pc` (or to its end when pc is 0) on w->state, with the CIE's
 * alignments and encoding from w; `initial` holds the rules restore returns to. */
static void run_cfi(work_t *w, cursor_t *c, const state_t *initial, uintptr_t *loc, uintptr_t pc) {
    state_t *s = &w->state;
    const uint64_t code_align = w->code_align;
    const int64_t data_align = w->data_align;
    unsigned depth = 0;
    while (c->p < c->end && !c->bad && s->ok) {
        uint8_t op = *c->p++;
        uint64_t reg = op & 0x3f, delta = 0;
        int64_t off;
        int deref;
        switch (op >> 6) {
        case 1:
            delta = reg * code_align;
            goto advance;
        case 2:
            off = times((int64_t)uleb(c), data_align);
            goto save;
        case 3:
            goto restore;
        }
        switch (op) {
        case 0x00: /* nop */
            break;
        case 0x01: /* set_loc */
            *loc = encoded(c, w->fde_enc, 0);
            if (pc && *loc > pc)
                return;
            break;
        case 0x02: delta = fixed(c, 1) * code_align; goto advance;
        case 0x03: delta = fixed(c, 2) * code_align; goto advance;
        case 0x04: delta = fixed(c, 4) * code_align; goto advance;
        case 0x05: /* offset_extended */
            reg = uleb(c);
            off = times((int64_t)uleb(c), data_align);
            goto save;
        case 0x11: /* offset_extended_sf */
            reg = uleb(c);
            off = times(sleb(c), data_align);
            goto save;
        case 0x2f: /* GNU_negative_offset_extended */
            reg = uleb(c);
            off = times((int64_t)(0 - uleb(c)), data_align); /* no negation to overflow */
            goto save;
        case 0x06: /* restore_extended */
            reg = uleb(c);
            goto restore;
        case 0x07: /* undefined */
            reg = uleb(c);
            if (reg == DW_RA)
                s->ra = RA_UNDEFINED;
            else if (reg == DW_RBP)
                s->bp = RHEAP__BP_SAME; /* nothing to restore; rbp is then not used as a base */
            break;
        case 0x08: /* same_value */
            reg = uleb(c);
            if (reg == DW_RBP)
                s->bp = RHEAP__BP_SAME;
            else if (reg == DW_RA)
                s->ra = RA_OTHER;
            break;
        case 0x09: /* register */
            reg = uleb(c);
            (void)uleb(c);
            goto other;
        case 0x14: /* val_offset */
            reg = uleb(c);
            (void)uleb(c);
            goto other;
        case 0x15: /* val_offset_sf */
            reg = uleb(c);
            (void)sleb(c);
            goto other;
        case 0x16: /* val_expression */
            reg = uleb(c);
            skip(c, uleb(c));
            goto other;
        case 0x10: /* expression */
            reg = uleb(c);
            if (breg6(c, &off, &deref) && reg == DW_RBP && !deref) {
                s->bp = RHEAP__BP_AT_RBP;
                s->bp_off = off;
                break;
            }
            goto other;
        case 0x0a: /* remember_state */
            if (depth == RHEAP__CFI_REMEMBER)
                goto bad;
            w->saved[depth++] = *s;
            break;
        case 0x0b: /* restore_state: every rule, the CFA's included */
            if (depth == 0)
                goto bad;
            *s = w->saved[--depth];
            break;
        case 0x0c: /* def_cfa */
            s->cfa_reg = reg_num(c);
            s->cfa_off = (int64_t)uleb(c);
            s->cfa_deref = 0;
            break;
        case 0x12: /* def_cfa_sf */
            s->cfa_reg = reg_num(c);
            s->cfa_off = times(sleb(c), data_align);
            s->cfa_deref = 0;
            break;
        case 0x0d: /* def_cfa_register (meaningless after an expression) */
            if (s->cfa_deref)
                goto bad;
            s->cfa_reg = reg_num(c);
            break;
        case 0x0e: /* def_cfa_offset */
            if (s->cfa_deref)
                goto bad;
            s->cfa_off = (int64_t)uleb(c);
            break;
        case 0x13: /* def_cfa_offset_sf */
            if (s->cfa_deref)
                goto bad;
            s->cfa_off = times(sleb(c), data_align);
            break;
        case 0x0f: /* def_cfa_expression */
            if (!breg6(c, &off, &deref) || !deref)
                goto bad;
            s->cfa_reg = DW_RBP;
            s->cfa_off = off;
            s->cfa_deref = 1;
            break;
        case 0x2e: /* GNU_args_size */
            (void)uleb(c);
            break;
        default:
            goto bad;
        }
        continue;
    advance:
        if (pc && *loc + delta > pc)
            return;
        *loc += delta;
        continue;
    save:
        if (reg == DW_RBP) {
            s->bp = RHEAP__BP_AT_CFA;
            s->bp_off = off;
        } else if (reg == DW_RA) {
            s->ra = RA_SAVED;
            s->ra_off = off;
        }
        continue;
    restore:
        if (reg == DW_RBP) {
            s->bp = initial->bp;
            s->bp_off = initial->bp_off;
        } else if (reg == DW_RA) {
            s->ra = initial->ra;
            s->ra_off = initial->ra_off;
        }
        continue;
    other:
        if (reg == DW_RBP || reg == DW_RA)
            goto bad;
        continue;
    bad:
        s->ok = 0;
        return;
    }
    if (c->bad)
        s->ok = 0;
}

/* Finds the rule for the return address `ra` (the call is at ra - 1). */

static int32_t s32(const uint8_t *p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return (int32_t)v;
}

/* The FDE of pc by the .eh_frame_hdr's table: version, three encodings, the .eh_frame pointer,
 * the count, then (start address, FDE address) pairs sorted by start, both 4-byte offsets from
 * the header. Sets f to the FDE's contents after the length (it reads the header with f before)
 * and returns where its CIE pointer is counted from, or NULL. */
static const uint8_t *find_fde(const uint8_t *lo, const uint8_t *hi, const uint8_t *hdr,
                               uintptr_t pc, cursor_t *f) {
    if (hdr < lo || hdr >= hi || hi - hdr < 4)
        return NULL;
    uintptr_t base = (uintptr_t)hdr;
    if (hdr[0] != 1 || hdr[3] != (PE_DATAREL | PE_SDATA4))
        return NULL;
    *f = (cursor_t){hdr + 4, hi - hdr < 32 ? hi : hdr + 32, 0};
    (void)encoded(f, hdr[1], base);
    uintptr_t count = encoded(f, hdr[2], base);
    if (f->bad || count == 0 || count > (uintptr_t)(hi - f->p) / 8)
        return NULL;
    const uint8_t *table = f->p; /* pairs of 4-byte offsets, maybe unaligned */
    size_t a = 0, b = count;
    while (b - a > 1) {
        size_t mid = a + (b - a) / 2;
        if (base + (uintptr_t)(intptr_t)s32(table + 8 * mid) <= pc)
            a = mid;
        else
            b = mid;
    }
    if (base + (uintptr_t)(intptr_t)s32(table + 8 * a) > pc)
        return NULL;
    return entry(f, base + (uintptr_t)(intptr_t)s32(table + 8 * a + 4), lo, hi);
}

/* Reads the CIE at `at` into w: what its FDEs need, and w->ins set to its initial
 * instructions. 0 when it is one a rule can come from (not a signal frame, the return address
 * in its usual register, every augmentation known). */
static int read_cie(uintptr_t at, const uint8_t *lo, const uint8_t *hi, work_t *w) {
    cursor_t *ci = &w->ins;
    if (!entry(ci, at, lo, hi) || fixed(ci, 4) != 0)
        return -1;
    uint8_t version = (uint8_t)fixed(ci, 1);
    if (ci->bad)
        return -1;
    const char *aug = (const char *)ci->p;
    size_t aug_len = strnlen(aug, (size_t)(ci->end - ci->p));
    if (aug_len == (size_t)(ci->end - ci->p))
        return -1; /* no terminating NUL within the CIE */
    ci->p += aug_len + 1;
    if (version != 1 && version != 3)
        return -1;
    w->code_align = uleb(ci);
    w->data_align = sleb(ci);
    uint64_t ra_reg = version == 1 ? fixed(ci, 1) : uleb(ci);
    w->fde_enc = PE_ABSPTR;
    w->has_z = aug[0] == 'z';
    if (w->has_z) {
        uint64_t len = uleb(ci);
        if (ci->bad || len > (uint64_t)(ci->end - ci->p))
            return -1;
        const uint8_t *after = ci->p + len;
        for (size_t i = 1; i < aug_len && !ci->bad; i++) {
            switch (aug[i]) {
            case 'R': w->fde_enc = (uint8_t)fixed(ci, 1); break;
            case 'L': (void)fixed(ci, 1); break;
            case 'P': {
                uint8_t enc = (uint8_t)fixed(ci, 1);
                if ((enc & 0x70) == PE_PCREL || (enc & 0x70) == 0) {
                    (void)encoded(ci, enc & 0x7f, 0);
                } else {
                    ci->bad = 1;
                }
                break;
            }
            case 'S': return -1; /* a signal frame: libunwind knows the kernel's layout */
            default: return -1;  /* unknown: the data after it cannot be found */
            }
        }
        ci->p = after;
    } else if (aug_len) {
        return -1;
    }
    return ci->bad || ra_reg != DW_RA || ci->p > ci->end ? -1 : 0;
}

rheap__cfi_rule_t rheap__cfi_rule(const uint8_t *lo, const uint8_t *hi, const uint8_t *hdr,
                                  uintptr_t pc, work_t *w) {
    rheap__cfi_rule_t r = {0, 0, RHEAP__CFI_SLOW, RHEAP__BP_SAME};
    cursor_t *f = &w->fde;
    const uint8_t *fde_body = find_fde(lo, hi, hdr, pc, f);
    if (!fde_body)
        return r;
    int32_t cie_delta = (int32_t)fixed(f, 4);
    if (f->bad || cie_delta <= 0 ||
        read_cie((uintptr_t)fde_body - (uintptr_t)cie_delta, lo, hi, w) != 0)
        return r;
    uintptr_t start = encoded(f, w->fde_enc, 0);
    uintptr_t range = encoded(f, w->fde_enc & 0x0f, 0);
    if (f->bad || pc < start || pc - start >= range)
        return r;
    if (w->has_z)
        skip(f, uleb(f));
    if (f->bad)
        return r;

    /* The CIE's initial rules, then the FDE's rows up to pc. */
    const state_t *s = &w->state;
    w->state = (state_t){0, 0, 0, DW_RSP, 0, RHEAP__BP_SAME, RA_OTHER, 1};
    uintptr_t loc = start;
    run_cfi(w, &w->ins, s, &loc, 0);
    w->initial = *s;
    loc = start;
    run_cfi(w, f, &w->initial, &loc, pc);
    if (!s->ok)
        return r;
    if (s->ra == RA_UNDEFINED) {
        r.kind = RHEAP__CFI_END;
        return r;
    }
    if (s->ra != RA_SAVED || s->ra_off != -8 || s->cfa_off < INT32_MIN || s->cfa_off > INT32_MAX ||
        s->bp_off < INT16_MIN || s->bp_off > INT16_MAX)
        return r;
    if (s->cfa_reg == DW_RSP && !s->cfa_deref)
        r.kind = RHEAP__CFA_RSP;
    else if (s->cfa_reg == DW_RBP)
        r.kind = s->cfa_deref ? RHEAP__CFA_DEREF_RBP : RHEAP__CFA_RBP;
    else
        return r;
    r.cfa_off = (int32_t)s->cfa_off;
    r.bp = s->bp;
    r.bp_off = (int16_t)s->bp_off;
    return r;
}
