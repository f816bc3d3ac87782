/*
 * fuzz_recname.c: the recording-name parser (rip_recording_name_parse, rip-format's recdir.c)
 * on any text. A name it accepts must be exactly the one librheap would write for the numbers it
 * read ("rip-<pid>" for n = 1, "rip-<pid>-<n>" else), so no sign, blank, leading zero or other
 * spelling gets through; a name it refuses leaves the outputs untouched; and the canonical
 * spelling of numbers taken from the input is always accepted with those numbers.
 *
 * Built with -DRHEAP_LIBFUZZER and -fsanitize=fuzzer it runs under libFuzzer. Built plainly,
 * its main replays the seed files (tests/data/recname-corpus/) and mutations of them.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"
#include "rip.h"

static void fail(const char *what, const char *name)
{
    fprintf(stderr, "FAIL: %s: '%s'\n", what, name);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *name = malloc(size + 1);
    if (!name)
        return 0;
    memcpy(name, data, size);
    name[size] = 0;
    uint32_t pid = 7, n = 7;
    if (rip_recording_name_parse(name, &pid, &n) == 0) {
        char again[48];
        if (n == 1)
            snprintf(again, sizeof again, "rip-%u", pid);
        else
            snprintf(again, sizeof again, "rip-%u-%u", pid, n);
        if (pid == 0 || n == 0 || strcmp(again, name) != 0)
            fail("accepted, but not the name librheap writes for its numbers", name);
    } else if (pid != 7 || n != 7) {
        fail("refused, but wrote its outputs", name);
    }
    /* Numbers from the input's bytes, spelled the canonical way. */
    uint32_t a = 0, b = 0;
    for (size_t i = 0; i < size; i++) {
        a = a * 31 + data[i];
        b = b * 17 + data[i];
    }
    a = a ? a : 1;
    b = b < 2 ? 2 : b;
    char canon[48];
    snprintf(canon, sizeof canon, "rip-%u-%u", a, b);
    if (rip_recording_name_parse(canon, &pid, &n) != 0 || pid != a || n != b)
        fail("a canonical name was not read back", canon);
    snprintf(canon, sizeof canon, "rip-%u", a);
    if (rip_recording_name_parse(canon, &pid, &n) != 0 || pid != a || n != 1)
        fail("a canonical name was not read back", canon);
    free(name);
    return 0;
}

#ifndef RHEAP_LIBFUZZER
int main(int argc, char **argv)
{
    return fuzz_replay("fuzz_recname", argc, argv, 2000, "rip-0123456789+ -x\n/");
}
#endif
