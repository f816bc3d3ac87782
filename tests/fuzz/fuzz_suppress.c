/*
 * fuzz_suppress.c: the suppression parser (ra_supp_parse, analysis/suppress.c) and its pattern
 * matcher on any text. The parser either takes the text, with one rule per `leak:PATTERN` line
 * (counted here independently) each naming the origin, or refuses it with a message naming the
 * origin and a line; never anything else. The matcher, on the input's first line as a pattern
 * and the rest as a name, must end, and agree with strstr when the pattern has no `*`, `^` or
 * `$`.
 *
 * Built with -DRHEAP_LIBFUZZER and -fsanitize=fuzzer it runs under libFuzzer. Built plainly,
 * its main replays the seed files (tests/data/suppress-corpus/) and mutations of them.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"
#include "rheap_analysis.h"

static const char origin[] = "fuzz.supp";

static void fail(const char *what, const char *detail)
{
    fprintf(stderr, "FAIL: %s: %s\n", what, detail);
    abort();
}

/* The rules a text holds, counted the plain way: lines (up to a NUL) that start, after blanks,
 * with "leak:" and something that is not a blank. */
static size_t count_rules(const char *text, size_t size)
{
    size_t rules = 0;
    const char *at = text, *end = text + size;
    while (at < end) {
        const char *eol = memchr(at, '\n', (size_t)(end - at));
        size_t n = eol ? (size_t)(eol - at) : (size_t)(end - at);
        size_t len = strnlen(at, n), i = 0;
        while (i < len && (at[i] == ' ' || at[i] == '\t'))
            i++;
        if (len - i > 5 && !strncmp(at + i, "leak:", 5)) {
            size_t j = i + 5;
            while (j < len && (at[j] == ' ' || at[j] == '\t' || at[j] == '\r'))
                j++;
            rules += j < len;
        }
        at += n + 1;
    }
    return rules;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    ra_supp_t *s = ra_supp_create(0);
    if (!text || !s) {
        free(text);
        ra_supp_destroy(s);
        return 0;
    }
    memcpy(text, data, size);
    text[size] = 0;
    ra_err_t err;
    ra_status_t st = ra_supp_parse(s, origin, text, size, &err);
    if (st == RA_OK) {
        size_t want = count_rules(text, size);
        if (ra_supp_nrules(s) != want) {
            char msg[64];
            snprintf(msg, sizeof msg, "%zu rules, %zu leak: lines", ra_supp_nrules(s), want);
            fail("taken with the wrong number of rules", msg);
        }
        for (size_t r = 0; r < ra_supp_nrules(s); r++) {
            const char *from = NULL, *pat = ra_supp_rule(s, r, &from);
            if (!pat || !*pat || strchr(pat, '\n') || from != origin)
                fail("a rule without its pattern or origin", pat ? pat : "(null)");
        }
    } else if (st == RA_E_USAGE) {
        if (strncmp(err.msg, "fuzz.supp: line ", 16) != 0)
            fail("refused without naming the origin and line", err.msg);
    } else if (st != RA_E_NOMEM) {
        fail("an unexpected status", err.msg);
    }
    ra_supp_destroy(s);

    /* The matcher: the first line as a pattern, the rest as a name. */
    char *nl = strchr(text, '\n');
    if (nl) {
        *nl = 0;
        const char *pat = text, *name = nl + 1;
        int m = ra_supp_match(pat, name);
        if (*pat && *name && !strpbrk(pat, "*^$") && m != (strstr(name, pat) != NULL))
            fail("the matcher and strstr disagree on", pat);
        if (*name && ra_supp_match("*", name) != 1)
            fail("'*' does not match", name);
    }
    free(text);
    return 0;
}

#ifndef RHEAP_LIBFUZZER
int main(int argc, char **argv)
{
    return fuzz_replay("fuzz_suppress", argc, argv, 2000, "leak:*^$# \t\r\nabc_:<>()");
}
#endif
