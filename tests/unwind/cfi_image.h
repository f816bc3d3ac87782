/*
 * cfi_image.h: builds .eh_frame_hdr + .eh_frame images by hand for the call-frame decoder's
 * tests (cfi_unit.c) and its fuzz corpus: a header with a sorted table, one CIE as gcc writes
 * it for x86-64 (augmentation "zR", code alignment 1, data alignment -8, return address in
 * register 16, FDE addresses pc-relative 4-byte, initial rule CFA = rsp + 8 and the return
 * address at CFA - 8), and FDEs with the CFI instructions a case gives.
 *
 * Code addresses are notional: a function "at" CODE + start lies beyond the image, and only its
 * address is ever computed, never read.
 */
#ifndef CFI_IMAGE_H
#define CFI_IMAGE_H

#include <stdint.h>
#include <string.h>

#define IMG_MAX 4096
#define CODE 0x10000 /* offset from the image of the first notional function */

typedef struct {
    uint8_t b[IMG_MAX];
    size_t n;
    size_t cie;                   /* offset of the CIE */
    unsigned nfde;
    size_t fde[16];               /* offsets of the FDEs */
    uint32_t start[16], len[16];  /* their code, relative to CODE */
} image_t;

static inline void put(image_t *m, const void *p, size_t n) {
    memcpy(m->b + m->n, p, n);
    m->n += n;
}

static inline void put8(image_t *m, uint8_t v) {
    put(m, &v, 1);
}

static inline void put32(image_t *m, uint32_t v) {
    put(m, &v, 4);
}

static inline void set32(image_t *m, size_t at, uint32_t v) {
    memcpy(m->b + at, &v, 4);
}

/* The address the image's bytes will have: the tests decode it where it lies. */
static inline uintptr_t at(const image_t *m, size_t off) {
    return (uintptr_t)m->b + off;
}

/* The header for `nfde` FDEs, the CIE after it with `aug` ("zR", or "zRS" for a signal frame)
 * and the initial instructions `init`. */
static inline void image_begin(image_t *m, unsigned nfde, const char *aug, const uint8_t *init,
                               size_t init_len) {
    memset(m, 0, sizeof *m);
    put8(m, 1);    /* version */
    put8(m, 0x1b); /* eh_frame_ptr: pcrel sdata4 */
    put8(m, 0x03); /* fde_count: udata4 */
    put8(m, 0x3b); /* table: datarel sdata4 */
    put32(m, 0);   /* eh_frame_ptr, set below */
    put32(m, nfde);
    m->n += 8 * nfde; /* the table, filled by image_fde */
    m->cie = m->n;
    set32(m, 4, (uint32_t)(m->cie - 4));
    put32(m, 0); /* length, set below */
    put32(m, 0); /* CIE id */
    put8(m, 1);  /* version */
    put(m, aug, strlen(aug) + 1);
    put8(m, 1);    /* code alignment */
    put8(m, 0x78); /* data alignment -8 */
    put8(m, 16);   /* return address register */
    put8(m, 1);    /* augmentation data: R's one byte (S has none) */
    put8(m, 0x1b);
    put(m, init, init_len);
    while ((m->n - m->cie) % 8)
        put8(m, 0); /* DW_CFA_nop */
    set32(m, m->cie, (uint32_t)(m->n - m->cie - 4));
}

/* The usual initial instructions: CFA = rsp + 8, return address at CFA - 8. */
static const uint8_t CIE_INIT[] = {0x0c, 0x07, 0x08, 0x90, 0x01};

/* An FDE for the code [CODE + start, CODE + start + len) with the instructions `ins`. FDEs must
 * come in order of start: the table is written in the order they are added. */
static inline void image_fde(image_t *m, uint32_t start, uint32_t len, const uint8_t *ins,
                             size_t ins_len) {
    unsigned i = m->nfde++;
    size_t f = m->n;
    m->fde[i] = f;
    m->start[i] = start;
    m->len[i] = len;
    put32(m, 0);                                  /* length, set below */
    put32(m, (uint32_t)(m->n - m->cie));          /* CIE pointer: back from this field */
    put32(m, (uint32_t)(CODE + start - m->n));    /* pc_begin, relative to this field */
    put32(m, len);                                /* pc_range */
    put8(m, 0);                                   /* augmentation data length */
    put(m, ins, ins_len);
    while ((m->n - f) % 8)
        put8(m, 0);
    set32(m, f, (uint32_t)(m->n - f - 4));
    set32(m, 12 + 8 * i, (uint32_t)(CODE + start));
    set32(m, 12 + 8 * i + 4, (uint32_t)f);
}

#endif
