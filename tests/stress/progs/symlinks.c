/*
 * symlinks: with the linked API, starts a recording, plants a symbolic link at the name its own
 * thread file will get (t<tid>.rip) pointing at VICTIM, then allocates: the recorder must not
 * write through the link. Prints "dir PATH" and "planted NAME".
 *
 * Usage: symlinks OUTPUT_DIR VICTIM
 */
#include "progs.h"

#include "rheap.h"

PROGS_SINK_DEFINITION;

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    rheap_config cfg = RHEAP_CONFIG_INIT;
    cfg.output_dir = argv[1];
    if (rheap_enable(&cfg) != 0) {
        say("rheap_enable: %s\n", strerror(errno));
        return 1;
    }
    char link[4096];
    snprintf(link, sizeof link, "%s/t%ld.rip", rheap_output_path(), (long)gettid());
    if (symlink(argv[2], link) != 0) {
        say("symlink: %s\n", strerror(errno));
        return 1;
    }
    for (int i = 0; i < 100; i++)
        free(malloc(100 + (size_t)i));
    rheap_disable();
    say("dir %s\nplanted %s\n", rheap_output_path(), strrchr(link, '/') + 1);
    return 0;
}
