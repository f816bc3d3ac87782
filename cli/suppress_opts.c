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

/* One message written within a width, a unit at a time: a unit that would pass the last
 * column starts a new line after cont (width 0: never); one wider than a whole line stands
 * alone on its line. */
typedef struct {
    FILE *out;
    const char *cont;
    size_t col, width;
} supp_line_t;

/* Writes a space and the unit pre text post, or a new line and the unit: a new line when the
 * unit and the keep columns that are to follow it on its line would pass the width. */
static void put_unit(supp_line_t *l, const char *pre, const char *text, const char *post,
                     size_t keep)
{
    size_t len = ra_text_columns(pre) + ra_text_columns(text) + ra_text_columns(post);
    size_t cont = ra_text_columns(l->cont);
    if (l->width && l->col + 1 + len + keep > l->width && l->col > cont) {
        fprintf(l->out, "\n%s", l->cont);
        l->col = cont;
    } else {
        fputc(' ', l->out);
        l->col++;
    }
    fprintf(l->out, "%s%s%s", pre, text, post);
    l->col += len;
}

/* Whether rule r took something and no rule before it of the same name did: the rules the
 * line names. */
static int named(const ra_supp_t *s, const int64_t *blocks, size_t r)
{
    if (blocks[r] == 0)
        return 0;
    for (size_t q = 0; q < r; q++)
        if (blocks[q] && same_name(s, q, r))
            return 0;
    return 1;
}

void cli__supp_print(const ra_supp_t *s, const int64_t *blocks, const int64_t *bytes,
                     const char *prefix, const char *cont, size_t width, FILE *out)
{
    size_t nrules = ra_supp_nrules(s);
    if (nrules == 0)
        return;
    int64_t tb = 0, tbytes = 0;
    for (size_t r = 0; r < nrules; r++) {
        tb += blocks[r];
        tbytes += bytes[r];
    }
    supp_line_t l = {out, cont, ra_text_columns(prefix) + sizeof "suppressed:" - 1, width};
    char num[64];
    fprintf(out, "%ssuppressed:", prefix);
    snprintf(num, sizeof num, "%lld blocks,", (long long)tb);
    put_unit(&l, "", num, "", 0);
    snprintf(num, sizeof num, "%lld bytes", (long long)tbytes);
    put_unit(&l, "", num, "", 0);
    /* Named by where the rules came from: the built-in list first, then each file; a rule is
     * named once however many entries share its name, and only when it took something. The
     * line breaks only before a source or a rule, so a rule named in words ("stdio buffers")
     * is never split, and a source and its first rule share a line when one can hold them. */
    const char *group = NULL;
    for (size_t r = 0; r < nrules; r++) {
        if (!named(s, blocks, r))
            continue;
        const char *from;
        const char *name = ra_supp_rule(s, r, &from);
        /* What ends the rule's unit: ")" after the last, "," before another of its source,
         * ";" before another source's. */
        size_t next = r + 1;
        while (next < nrules && !named(s, blocks, next))
            next++;
        const char *source = from ? from : "default list";
        const char *post = ")";
        if (next < nrules) {
            const char *nfrom;
            ra_supp_rule(s, next, &nfrom);
            post = !strcmp(source, nfrom ? nfrom : "default list") ? "," : ";";
        }
        if (!group || strcmp(source, group) != 0) {
            /* A source's name stays on the line of its first rule. */
            put_unit(&l, group ? "" : "(", source, ":",
                     1 + ra_text_columns(name) + strlen(post));
            group = source;
        }
        put_unit(&l, "", name, post, 0);
    }
    fputc('\n', out);
}
