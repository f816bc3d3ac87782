/*
 * fuzz_query.c: the query-file header parser (ra_query_parse, analysis/fetch.c) on any text.
 * It must take every text (the header is advice: a line it cannot read is not a parameter),
 * keep the text whole as the query's SQL, give a title, and give each declared parameter a
 * name a query can use (letters, digits and '_', without the leading ':'), a default and a
 * description, none longer than the text.
 *
 * Built with -DRHEAP_LIBFUZZER and -fsanitize=fuzzer it runs under libFuzzer. Built plainly,
 * its main replays the seed files (the query files of queries/) and mutations of them.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"
#include "rheap_analysis.h"

static void fail(const char *what, const char *detail)
{
    fprintf(stderr, "FAIL: %s: %s\n", what, detail ? detail : "(null)");
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ra_query_t q;
    ra_err_t err;
    ra_status_t st = ra_query_parse("fuzz", "fuzz.sql", (const char *)data, size, &q, &err);
    if (st == RA_E_NOMEM)
        return 0;
    if (st != RA_OK)
        fail("a text was refused", err.msg);
    if (!q.sql || strlen(q.sql) != strnlen((const char *)data, size) ||
        memcmp(q.sql, data, strlen(q.sql)) != 0)
        fail("the SQL is not the text", q.sql);
    if (!q.title || strlen(q.title) > size)
        fail("no title, or one longer than the text", q.title);
    for (size_t i = 0; i < q.nparams; i++) {
        const ra_qparam_t *p = &q.params[i];
        if (!p->name || !p->def || !p->desc)
            fail("a parameter without a name, default or description", p->name);
        if (strlen(p->name) + strlen(p->def) + strlen(p->desc) > size)
            fail("a parameter's parts are not from its line", p->name);
        /* A name a user can set as :NAME: letters, digits and '_'. */
        if (!p->name[0] || strspn(p->name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                             "0123456789_") != strlen(p->name))
            fail("a parameter name no query could use", p->name);
    }
    ra_query_free(&q);
    return 0;
}

#ifndef RHEAP_LIBFUZZER
int main(int argc, char **argv)
{
    return fuzz_replay("fuzz_query", argc, argv, 300, "-:=() \n\tparam\xc3");
}
#endif
