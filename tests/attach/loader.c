/*
 * loader.c: a program that loads a library while rheap attach records it.
 *
 *   attach_loader PLUGIN DIR
 *
 * Every 500 us a malloc/free pair of 100 bytes, until DIR/go exists; then it loads PLUGIN
 * (plugin.c) with dlopen, and each iteration also makes a pair of 7,777 bytes in the library's
 * own function. After 1,000 such iterations it writes DIR/loaded and stops allocating, waiting
 * for DIR/stop; then prints "ok". The test creates the files when what it waits for has
 * happened, so the order holds on any machine: the window opens, the library is loaded and
 * allocates, the window closes while the program allocates nothing.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int exists(const char *dir, const char *name)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return access(path, F_OK) == 0;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    const char *dir = argv[2];
    while (!exists(dir, "go")) {
        free(malloc(100));
        usleep(500);
    }
    void *h = dlopen(argv[1], RTLD_NOW);
    void *(*plugin_alloc)(void) = h ? (void *(*)(void))dlsym(h, "plugin_alloc") : NULL;
    if (!plugin_alloc) {
        fprintf(stderr, "%s\n", dlerror());
        return 2;
    }
    for (int i = 0; i < 1000; i++) {
        free(malloc(100));
        free(plugin_alloc());
        usleep(500);
    }
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/loaded", dir);
    FILE *f = fopen(path, "w");
    if (!f)
        return 2;
    fclose(f);
    while (!exists(dir, "stop"))
        usleep(1000);
    printf("ok\n");
    return 0;
}
