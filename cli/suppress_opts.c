/*
 * suppress_opts.c: leak suppressions as the commands offer them: the --suppress and
 * --no-default-suppressions options, opening the rules they name, and the "suppressed:" line
 * that says what they took away. The rules and their matching are the analysis library's
 * (ra_supp_*).
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int cli__supp_option(cli__supp_opts_t *o, int c, const char *arg)
{
    if (c == RHEAP_SUPP_OPT_FILE) {
        if (o->nfiles == sizeof o->files / sizeof o->files[0]) {
            cli__error(stderr, "at most %zu --suppress files", o->nfiles);
            return -1;
        }
        o->files[o->nfiles++] = arg;
        return 1;
    }
    if (c == RHEAP_SUPP_OPT_NO_DEFAULTS) {
        o->no_defaults = 1;
        return 1;
    }
    return 0;
}

int cli__supp_open(const cli__supp_opts_t *o, struct sqlite3 *db, ra_supp_t **out, FILE *err)
{
    *out = NULL;
    ra_supp_t *s = ra_supp_create(!o->no_defaults);
    if (!s) {
        cli__error(err, "out of memory");
        return RHEAP_EXIT_OUTPUT;
    }
    ra_err_t why;
    for (size_t i = 0; i < o->nfiles; i++) {
        ra_status_t rc = ra_supp_load(s, o->files[i], &why);
        if (rc != RA_OK) {
            /* The file's messages start with its path; the option names where it came from. */
            cli__error(err, "--suppress %s", why.msg);
            ra_supp_destroy(s);
            return (int)rc;
        }
    }
    ra_status_t rc = ra_supp_stacks(s, db, &why);
    if (rc != RA_OK) {
        cli__error(err, "%s", why.msg);
        ra_supp_destroy(s);
        return (int)rc;
    }
    *out = s;
    return RHEAP_EXIT_OK;
}

/* Two rules are named the same when their names are equal and both are built in or both the
 * user's. */
static int same_name(const ra_supp_t *s, size_t a, size_t b)
{
    const char *fa, *fb;
    const char *na = ra_supp_rule(s, a, &fa), *nb = ra_supp_rule(s, b, &fb);
    return !strcmp(na, nb) && !fa == !fb;
}

void cli__supp_print(const ra_supp_t *s, const int64_t *blocks, const int64_t *bytes,
                       const char *prefix, FILE *out)
{
    size_t nrules = ra_supp_nrules(s);
    if (nrules == 0)
        return;
    int64_t tb = 0, tbytes = 0;
    for (size_t r = 0; r < nrules; r++) {
        tb += blocks[r];
        tbytes += bytes[r];
    }
    fprintf(out, "%ssuppressed: %lld blocks, %lld bytes", prefix, (long long)tb, (long long)tbytes);
    /* Named by where the rules came from: the built-in list first, then each file; a rule is
     * named once however many entries share its name, and only when it took something. */
    int any = 0;
    const char *group = "";
    for (size_t r = 0; r < nrules; r++) {
        if (blocks[r] == 0)
            continue;
        const char *from;
        const char *name = ra_supp_rule(s, r, &from);
        if (!from)
            from = "default list";
        int dup = 0;
        for (size_t q = 0; q < r; q++)
            if (blocks[q] && same_name(s, q, r))
                dup = 1;
        if (dup)
            continue;
        if (strcmp(from, group) != 0) {
            fprintf(out, "%s%s: ", any ? "; " : " (", from);
            group = from;
        } else {
            fputs(", ", out);
        }
        fputs(name, out);
        any = 1;
    }
    fputs(any ? ")\n" : "\n", out);
}
