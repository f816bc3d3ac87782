/*
 * api_cycles: turns recording on and off CYCLES times through the linked control API. In window
 * i (1-based) it allocates i % 7 + 1 blocks of 100 + i bytes and frees all but one; the kept
 * blocks are freed while recording is off. Prints, per window,
 *   window N dir=NAME allocs=A frees=F bytes=B
 * where NAME is the directory rheap_output_path() named, and checks the API's own answers.
 *
 * Usage: api_cycles OUTPUT_DIR [CYCLES]   (default 100)
 */
#include "progs.h"

#include "rheap.h"

PROGS_SINK_DEFINITION;

int main(int argc, char **argv)
{
    if (argc < 2) {
        say("usage: api_cycles OUTPUT_DIR [CYCLES]\n");
        return 2;
    }
    int cycles = argc > 2 ? atoi(argv[2]) : 100;
    if (cycles < 1 || cycles > 10000)
        return 2;
    rheap_config cfg = RHEAP_CONFIG_INIT;
    cfg.output_dir = argv[1];
    void **kept = calloc((size_t)cycles, sizeof *kept);
    void *blocks[8];
    for (int i = 1; i <= cycles; i++) {
        if (rheap_enable(&cfg) != 0 || !rheap_is_enabled()) {
            say("window %d: rheap_enable failed: %s\n", i, strerror(errno));
            return 1;
        }
        if (rheap_enable(&cfg) == 0 || errno != EALREADY) {
            say("window %d: a second rheap_enable did not fail with EALREADY\n", i);
            return 1;
        }
        int n = i % 7 + 1;
        size_t size = 100 + (size_t)i;
        for (int j = 0; j < n; j++) {
            blocks[j] = malloc(size);
            SINK(blocks[j]);
        }
        for (int j = 1; j < n; j++)
            free(blocks[j]);
        kept[i - 1] = blocks[0];
        if (rheap_disable() != 0 || rheap_is_enabled()) {
            say("window %d: rheap_disable failed\n", i);
            return 1;
        }
        const char *path = rheap_output_path();
        const char *name = path ? strrchr(path, '/') : NULL;
        say("window %d dir=%s allocs=%d frees=%d bytes=%zu\n", i, name ? name + 1 : "(none)", n,
            n - 1, (size_t)n * size);
    }
    if (rheap_disable() == 0 || errno != EALREADY) {
        say("rheap_disable while off did not fail with EALREADY\n");
        return 1;
    }
    for (int i = 0; i < cycles; i++)
        free(kept[i]);
    free(kept);
    say("done %d windows\n", cycles);
    return 0;
}
