/*
 * api_region: records only a region of a program with the control API (link with librheap).
 *
 * The program allocates before, inside and after a region. Only the region, between
 * rheap_enable() and rheap_disable(), is recorded: 200 blocks of 64 bytes, 150 of them freed
 * inside the region, and two markers that name its phases. The recording goes into the
 * directory given as the first argument (default: the current directory).
 *
 *     ./api_region [DIR]
 *     rheap rip-<pid> out.db
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rheap.h"

static void *blocks[200];

static void churn(int count, size_t size)
{
    for (int i = 0; i < count; i++) {
        void *p = malloc(size);
        memset(p, 0, size);
        free(p);
    }
}

int main(int argc, char **argv)
{
    churn(50, 100); /* before the region: not recorded */

    rheap_config config = RHEAP_CONFIG_INIT;
    config.output_dir = argc > 1 ? argv[1] : NULL;
    if (rheap_enable(&config) != 0) {
        fprintf(stderr, "api_region: rheap_enable: %s\n", strerror(errno));
        return 1;
    }
    rheap_mark("fill");
    for (int i = 0; i < 200; i++)
        blocks[i] = malloc(64);
    rheap_mark("drain");
    for (int i = 0; i < 150; i++)
        free(blocks[i]);
    rheap_disable();

    churn(50, 100); /* after the region: not recorded */
    for (int i = 150; i < 200; i++)
        free(blocks[i]);
    printf("recorded into %s\n", rheap_output_path());
    return 0;
}
