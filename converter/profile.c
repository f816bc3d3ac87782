/*
 * profile.c: recordings made in profile mode (libtrace/src/sample.c), where only a sample of the
 * allocations has records. Each sampled block stands for the blocks it was drawn from: the
 * tracer samples every allocated byte with probability 1/interval, so a block of `size` bytes
 * was sampled with probability p = 1 - exp(-size/interval) and counts as 1/p blocks and size/p
 * bytes. Those are unbiased estimates of what the program allocated at the block's stack, the
 * weights pprof's heap profiles carry for the same kind of sample.
 */
#include <math.h>


#include "converter.h"

double cv__profile_weight(uint64_t size, uint64_t interval)
{
    if (!interval || !size)
        return 1.0; /* trace mode: every block is there; a 0-byte block is never sampled */
    return -1.0 / expm1(-(double)size / (double)interval);
}

int cv__profile_process(cv__db_t *db, uint32_t pid, uint32_t recording, uint64_t interval)
{
    return cv__db_update_process(db, pid, recording, "mode = 'profile', sample_interval = ?3",
                                 NULL, (int64_t)interval);
}
