/*
 * golden.c: the golden files of every format version (tests/data/v1.0-*, v2.0-*, v3.0-*, v3.1-*,
 * v3.2-*, v3.3-*, v3.4-*, v3.6-*; 3.5 changed no record of these files), read by today's reader,
 * must dump to the text stored beside them. A change to the reader or to `rheap dump` that
 * breaks old recordings fails here.
 */
#include "test_util.h"
#include "run_dump.h"

static void check(const char *dir, const char *name)
{
    char rip[1024], txt[1024];
    snprintf(rip, sizeof rip, "%s/%s.rip", dir, name);
    snprintf(txt, sizeof txt, "%s/%s.txt", dir, name);
    size_t len;
    char *expect = (char *)slurp(txt, &len);
    expect = realloc(expect, len + 1);
    expect[len] = 0;

    char *out = NULL, *err = NULL;
    size_t on = 0, en = 0;
    FILE *o = open_memstream(&out, &on), *e = open_memstream(&err, &en);
    int rc = run_dump(rip, o, e);
    fclose(o);
    fclose(e);
    if (rc != 0)
        CHECK_FAIL("%s: rheap dump exited %d: %s", rip, rc, err);
    if (strcmp(out, expect) != 0) {
        /* Name the first line that differs. */
        size_t i = 0, line = 1;
        while (out[i] && out[i] == expect[i]) {
            if (out[i] == '\n')
                line++;
            i++;
        }
        CHECK_FAIL("%s: dump differs from %s at line %zu:\n--- got:\n%s--- expected:\n%s", rip, txt,
              line, out, expect);
    }
    free(out);
    free(err);
    free(expect);
}

int main(int argc, char **argv)
{
    if (argc != 2)
        CHECK_FAIL("usage: golden DATA_DIR");
    check(argv[1], "v1.0-thread");
    check(argv[1], "v1.0-process");
    check(argv[1], "v2.0-thread");
    check(argv[1], "v2.0-process");
    check(argv[1], "v3.0-thread");
    check(argv[1], "v3.0-process");
    check(argv[1], "v3.1-thread");
    check(argv[1], "v3.1-process");
    check(argv[1], "v3.2-thread");
    check(argv[1], "v3.2-process");
    check(argv[1], "v3.3-thread");
    check(argv[1], "v3.3-process");
    check(argv[1], "v3.4-thread");
    check(argv[1], "v3.4-process");
    check(argv[1], "v3.6-thread");
    check(argv[1], "v3.6-process");
    printf("golden: ok\n");
    return 0;
}
