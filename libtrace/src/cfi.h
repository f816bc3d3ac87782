/*
 * cfi.h: the DWARF call-frame information decoder. From an object's .eh_frame_hdr and the
 * .eh_frame entries it points to, it finds the FDE of a code address, runs the CIE's and the
 * FDE's CFI programs up to that address, and reduces the register state to the small rule the
 * unwinder walks with (unwind.c):
 *
 *   CFA = rsp + k | rbp + k | *(rbp + k)       (the caller's stack pointer)
 *   return address at CFA - 8
 *   caller's rbp = unchanged | *(CFA + k) | *(rbp + k)
 *
 * It is a pure function of its inputs: no global state, no allocation, no system call, and it
 * reads no byte outside the range it is given, whatever those bytes hold. So it runs inside
 * malloc, under any lock, and in a fuzzer. Its working memory (cursors, the CIE, the register
 * states and the remember_state stack, about 400 bytes) is the caller's, not the stack's: it
 * runs wherever the program's stack ends.
 */
#ifndef RHEAP_CFI_H
#define RHEAP_CFI_H

#include <stdint.h>

/* How the caller's CFA is found; then the two ends. 0 is no rule at all (an empty cache entry
 * of the unwinder's). */
enum {
    RHEAP__CFA_RSP = 1,       /* rsp + cfa_off */
    RHEAP__CFA_RBP,           /* rbp + cfa_off */
    RHEAP__CFA_DEREF_RBP,     /* *(rbp + cfa_off): a frame that realigned its stack */
    RHEAP__CFI_END,           /* the outermost frame: the return address is undefined */
    RHEAP__CFI_SLOW,          /* no FDE, malformed CFI, or more than a rule can say */
};

/* Where the caller's rbp is. */
enum {
    RHEAP__BP_SAME,           /* unchanged */
    RHEAP__BP_AT_CFA,         /* *(CFA + bp_off) */
    RHEAP__BP_AT_RBP,         /* *(rbp + bp_off) */
};

typedef struct {
    int32_t cfa_off;
    int16_t bp_off;
    uint8_t kind, bp; /* RHEAP__CFA_* / RHEAP__CFI_*, RHEAP__BP_* */
} rheap__cfi_rule_t;

/* The decoder's working memory, given by the caller (the unwinder keeps one per thread). Nothing
 * in it is kept from one call to the next: it may hold anything before a call, and the caller
 * has no use for what it holds after. The types are here so that a caller can hold one. */
typedef struct {
    const uint8_t *p, *end;
    int bad;
} rheap__cfi_cursor_t;

typedef struct {
    int64_t cfa_off, bp_off, ra_off;
    uint8_t cfa_reg, cfa_deref, bp, ra, ok;
} rheap__cfi_state_t;

#define RHEAP__CFI_REMEMBER 8 /* how deep remember_state may nest */

typedef struct {
    rheap__cfi_cursor_t fde, ins; /* the FDE's contents; the CIE's initial instructions */
    uint64_t code_align;
    int64_t data_align;
    uint8_t fde_enc; /* how the FDE's addresses are encoded */
    int has_z;       /* the FDE has augmentation data to skip */
    rheap__cfi_state_t state, initial, saved[RHEAP__CFI_REMEMBER];
} rheap__cfi_work_t;

/* The rule at code address `pc` (for a return address, the call's last byte: ra - 1) in an
 * object whose .eh_frame_hdr starts at `hdr`. The header's table, the FDEs and the CIEs are at
 * the addresses the encodings give, relative to where the bytes lie in memory; every byte read
 * lies in [lo, hi), which must contain hdr (for a loaded object: its mapped range). Anything
 * outside it, malformed, or not expressible as a rule gives kind RHEAP__CFI_SLOW. `work` is the
 * decoder's working memory for the call. */
rheap__cfi_rule_t rheap__cfi_rule(const uint8_t *lo, const uint8_t *hi, const uint8_t *hdr,
                                  uintptr_t pc, rheap__cfi_work_t *work);

#endif
