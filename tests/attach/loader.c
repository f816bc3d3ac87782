/*
 * loader.c: 4,000 iterations of 500 us, each a malloc/free pair of 100 bytes; from iteration
 * 1,500 on (0.75 s in), also a pair of 7,777 bytes made by a library it loads then with dlopen
 * (plugin.c, the path in argv[1]). Prints "ok" at the end.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    void *(*plugin_alloc)(void) = NULL;
    if (argc != 2)
        return 2;
    for (int i = 0; i < 4000; i++) {
        if (i == 1500) {
            void *h = dlopen(argv[1], RTLD_NOW);
            if (!h || !(plugin_alloc = (void *(*)(void))dlsym(h, "plugin_alloc"))) {
                fprintf(stderr, "%s\n", dlerror());
                return 2;
            }
        }
        free(malloc(100));
        if (plugin_alloc)
            free(plugin_alloc());
        usleep(500);
    }
    printf("ok\n");
    return 0;
}
