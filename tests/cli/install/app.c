/*
 * app: a program built against an installed rheap (pkg-config or find_package), to check
 * that the installed header and library work. It allocates 6 blocks of 5555 bytes, frees 2,
 * marks the moment, and prints whether recording was on.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rheap.h>

int main(void)
{
    void *p[6];
    for (int i = 0; i < 6; i++) {
        p[i] = malloc(5555);
        memset(p[i], i, 5555);
    }
    free(p[0]);
    free(p[1]);
    rheap_mark("app done");
    printf("app: rheap %s, recording %s\n", RHEAP_VERSION_STRING, rheap_is_enabled() ? "on" : "off");
    return 0;
}
