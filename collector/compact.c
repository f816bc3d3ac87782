/*
 * compact.c: a checkpoint file of a profile-mode recording (rip-format/FORMAT.md section 3b),
 * the live sampled set that replaces closed segments, so that a recording left on for weeks
 * keeps its disk use near the collector's budget.
 *
 * heap.c decides what to compact and gathers the blocks, stacks and modules; this file writes
 * them with the format's writer and makes the result durable before anything is deleted: the
 * file is written under a name no reader looks at, synced, renamed to checkpoint-<K>.rip and the
 * directory synced. A crash at any point leaves either the old state (the temporary file is
 * ignored, and removed by the next checkpoint) or the new checkpoint beside files it lists, which
 * readers skip.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rip.h>

#include "collector.h"

/* Big enough for the checkpoint record (a few bytes a range: about one range per thread file
 * left between compactions) and for any module record; small enough that the writer's memory (a
 * few times this) stays a passing cost of each compaction. */
#define CKPT_BLOCK (256u * 1024u)

/* The checkpoint's time unit, librheap's (4 ns): times are copied from its files unchanged. */
#define CKPT_TIME_SHIFT 2

static rip_status_t write_body(rip_writer_t *w, const rc__ckpt_t *c)
{
    rip_status_t st = rip_writer_checkpoint(w, c->t, c->number, c->ranges, c->nranges);
    if (st == RIP_OK && c->nmods)
        st = rip_writer_modules(w, 0, (uint32_t)c->nmods);
    for (size_t i = 0; st == RIP_OK && i < c->nmods; i++) {
        /* One segment spans every offset the stacks use: readers find a frame's module by it. */
        rip_segment_t seg = {c->mods[i].bias, c->mods[i].size, 5};
        st = rip_writer_module(w, c->mods[i].bias, c->mods[i].path, c->mods[i].build_id,
                               c->mods[i].build_id_len, &seg, 1);
    }
    for (size_t i = 0; st == RIP_OK && i < c->nstacks; i++)
        st = rip_writer_stack(w, i + 1, c->ips + c->stack_at[i],
                              (uint32_t)(c->stack_at[i + 1] - c->stack_at[i]));
    for (size_t i = 0; st == RIP_OK && i < c->nblocks; i++) {
        const rc__ckpt_block_t *b = &c->blocks[i];
        /* The call kept (calloc, realloc, new, mi_malloc, ...); not an aligned call's alignment,
         * nor a realloc's old block (freed before the checkpoint, so in none of its files). */
        st = rip_writer_alloc(w, (rip_call_t)b->call, b->t, b->addr, b->size, b->stack, 0, 0, 0);
    }
    if (st == RIP_OK)
        st = rip_writer_totals(w, c->t, c->allocs, c->bytes, c->frees);
    if (st == RIP_OK)
        st = rip_writer_flush(w);
    return st;
}

size_t rc__checkpoint_mem_size(void)
{
    return (rip_writer_footprint(CKPT_BLOCK) + 15) & ~(size_t)15;
}

int rc__checkpoint_write(const char *dir, const rc__ckpt_t *c, void *mem, char *why,
                         size_t whylen)
{
    char tmp[4200], path[4200];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s/.checkpoint-%" PRIu64 ".tmp", dir, c->number) >=
            sizeof tmp ||
        (size_t)snprintf(path, sizeof path, "%s/checkpoint-%" PRIu64 ".rip", dir, c->number) >=
            sizeof path) {
        snprintf(why, whylen, "%s: path too long", dir);
        return -1;
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        snprintf(why, whylen, "%s: %s", tmp, strerror(errno));
        return -1;
    }
    rip_header_t h = {0, RIP_FORMAT_MAJOR, RIP_FORMAT_MINOR, c->pid, 0, c->recording, 0,
                      c->start_ns, CKPT_TIME_SHIFT, 0, 0};
    rip_writer_t *w = rip_writer_init(mem, CKPT_BLOCK, fd, &h);
    rip_status_t st = write_body(w, c);
    int err = errno;
    if (st != RIP_OK || fsync(fd) != 0) {
        if (st == RIP_OK)
            err = errno;
        close(fd);
        unlink(tmp);
        snprintf(why, whylen, "%s: %s", tmp,
                 st == RIP_E_FULL ? "a record does not fit one block" : strerror(err));
        return -1;
    }
    close(fd);
    if (rename(tmp, path) != 0) {
        snprintf(why, whylen, "%s: %s", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    /* The rename is durable once the directory is: only then may the files it replaces go. */
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0 || fsync(dfd) != 0) {
        snprintf(why, whylen, "%s: %s", dir, strerror(errno));
        if (dfd >= 0)
            close(dfd);
        return -1;
    }
    close(dfd);
    return 0;
}
