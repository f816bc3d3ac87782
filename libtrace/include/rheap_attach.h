/*
 * rheap_attach.h: what `rheap attach` and librheap share about an attach (got.c in the process,
 * the injection library's inject/target.c outside it). The control block lives in librheap,
 * in the attached process; rheap attach reads it and writes its heartbeat through its memory
 * (process_vm_readv/writev), so its layout is fixed-width and the same on both sides: one
 * build of rheap and librheap go together, and the magic number says which layout this is.
 */
#ifndef RHEAP_ATTACH_H
#define RHEAP_ATTACH_H

#include <stdint.h>

#define RHEAP__ATTACH_MAGIC 0x72686174u /* "rhat", layout 1 */

/* The functions rheap attach calls in the process, by these names (dlsym). */
#define RHEAP__ATTACH_PREPARE "rheap__attach_prepare"
#define RHEAP__ATTACH_COMMIT "rheap__attach_commit"
#define RHEAP__ATTACH_RELEASE "rheap__attach_release"

/* The attach's state, in order. */
enum {
    RHEAP__ATTACH_IDLE,      /* never attached */
    RHEAP__ATTACH_PREPARED,  /* recording started, slots found, not yet redirected */
    RHEAP__ATTACH_COMMITTED, /* slots redirected: recording */
    RHEAP__ATTACH_RELEASING, /* slots restored; the attach thread is ending the recording */
    RHEAP__ATTACH_STOPPED,   /* recording ended: its files are complete */
};

typedef struct {
    uint32_t magic;
    _Atomic int32_t state;
    int32_t error;              /* why prepare refused (an errno value), 0 when it did not */
    uint32_t modules;           /* modules scanned by prepare */
    uint32_t found;             /* slots found by prepare */
    uint32_t slots;             /* slots redirected (commit, and modules loaded since) */
    uint32_t skipped;           /* slots bound to another definition, left alone */
    uint32_t restored;          /* slots put back by release */
    _Atomic uint64_t heartbeat; /* rheap attach adds to it at least every second */
    char message[512];          /* prepare's refusal, one line */
} rheap__attach_ctl_t;

#endif
