/*
 * unit.c: XXH32 against published test vectors, status messages, error formatting and call
 * names.
 */
#include "test_util.h"

int main(void)
{
    CHECK_U(rip_xxh32("", 0, 0), 0x02CC5D05u);
    CHECK_U(rip_xxh32("abc", 3, 0), 0x32D153FFu);
    /* Longer than one 16-byte stripe, with a 4-byte and a 1-byte tail. */
    const char *s = "Nobody inspects the spammish repetition";
    CHECK_U(rip_xxh32(s, strlen(s), 0), 0xE2293B2Fu);
    /* The header checksum byte the lz4 frame uses for FLG 0x70, BD 0x40. */
    CHECK_U((rip_xxh32("\x70\x40", 2, 0) >> 8) & 0xff, 0xAD);   /* as the lz4 command writes it */

    CHECK(strcmp(rip_strerror(RIP_E_TRUNCATED), "truncated file") == 0);
    CHECK(strcmp(rip_strerror(RIP_OK), "ok") == 0);
    CHECK(strcmp(rip_strerror((rip_status_t)999), "unknown status") == 0);

    rip_error_t e = {RIP_E_CORRUPT, 81920, "rip-1/t4711.rip", "block checksum mismatch"};
    char buf[300];
    CHECK(strcmp(rip_error_format(&e, buf, sizeof buf),
                 "rip-1/t4711.rip: offset 81920: block checksum mismatch") == 0);
    e.offset = RIP_NO_OFFSET;
    CHECK(strcmp(rip_error_format(&e, buf, sizeof buf), "rip-1/t4711.rip: block checksum mismatch") == 0);
    rip_error_format(&e, buf, 5);
    CHECK(strcmp(buf, "rip-") == 0);

    static const char *names[] = {"?", "malloc", "calloc", "realloc", "reallocarray",
                                  "posix_memalign", "aligned_alloc", "memalign", "valloc",
                                  "pvalloc", "operator new", "operator new[]", "mallocx",
                                  "rallocx", "xallocx", "tc_malloc"};
    for (int i = 0; i < (int)(sizeof names / sizeof names[0]); i++)
        CHECK(strcmp(rip_call_name((rip_call_t)i), names[i]) == 0);
    CHECK(strcmp(rip_call_name(RIP_CALL_MI_NEW), "mi_new") == 0);
    CHECK(strcmp(rip_call_name(RIP_CALL_MI_REALPATH), "mi_realpath") == 0);
    CHECK(strcmp(rip_call_name(RIP_CALL_POOL_ALLOC), "pool_alloc") == 0);
    CHECK(strcmp(rip_call_name(RIP_CALL_POOL_FREE), "pool_free") == 0);
    CHECK(strcmp(rip_call_name(RIP_CALL_MMAP), "mmap") == 0);
    CHECK(strcmp(rip_call_name(RIP_CALL_LAST), "mremap") == 0);
    CHECK(strcmp(rip_call_name((rip_call_t)(RIP_CALL_LAST + 1)), "?") == 0);
    CHECK(rip_call_resizes(RIP_CALL_REALLOC) && rip_call_resizes(RIP_CALL_RALLOCX) &&
          rip_call_resizes(RIP_CALL_MI_REALLOC_ALIGNED) && !rip_call_resizes(RIP_CALL_NEW) &&
          rip_call_resizes(RIP_CALL_MI_HEAP_REALLOC) && !rip_call_resizes(RIP_CALL_MI_STRDUP) &&
          !rip_call_resizes((rip_call_t)0));
    printf("unit: ok\n");
    return 0;
}
