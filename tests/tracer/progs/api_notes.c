/*
 * api_notes MODE: linked with librheap, the two cases where the recorder says where it writes.
 * "planted": a directory named rip-<pid> is made by the program 50 ms after it started, before
 * its rheap_enable, so the recording goes to rip-<pid>-2. "env": run with RHEAP_ENABLE=1, the
 * program's rheap_enable with an output directory of its own finds a recording under way and
 * fails with EALREADY. Each prints what it saw; the recorder's line goes to stderr.
 */
#include "progs.h"

#include <rheap.h>
#include <sys/stat.h>
#include <time.h>

PROGS_SINK_DEFINITION;

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    if (strcmp(argv[1], "planted") == 0) {
        struct timespec pause = {0, 50 * 1000 * 1000};
        nanosleep(&pause, NULL);
        char name[64];
        snprintf(name, sizeof name, "rip-%d", (int)getpid());
        if (mkdir(name, 0700) != 0)
            return 1;
        if (rheap_enable(NULL) != 0)
            return 1;
        const char *path = rheap_output_path();
        const char *base = strrchr(path, '/');
        say("pid=%d dir=%s\n", (int)getpid(), base ? base + 1 : path);
        void *p = malloc(10);
        SINK(p);
        free(p);
        return rheap_disable() == 0 ? 0 : 1;
    }
    rheap_config cfg = RHEAP_CONFIG_INIT;
    cfg.output_dir = "elsewhere";
    errno = 0;
    int r = rheap_enable(&cfg);
    say("pid=%d enable=%d ealready=%d dir=%s\n", (int)getpid(), r, errno == EALREADY,
        rheap_output_path());
    return 0;
}
