/*
 * suggest.c: "did you mean" for a mistyped command or query name: the known name closest to
 * the word by edit distance, when it is close enough to be a typo rather than another word.
 */
#include <string.h>

#include "cli.h"

/* Longest word compared; a longer one is no typo of a command or query name. */
#define MAX_WORD 64

/* Edits (insert, delete, replace, swap two neighbours) that turn a into b: the optimal string
 * alignment distance, so "qeury" is one edit from "query". Three rows of the usual table. */
static size_t distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    size_t rows[3][MAX_WORD + 1];
    size_t *prev2 = rows[0], *prev = rows[1], *cur = rows[2];
    for (size_t j = 0; j <= lb; j++)
        prev[j] = j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t cost = a[i - 1] != b[j - 1];
            size_t d = prev[j - 1] + cost;
            if (prev[j] + 1 < d)
                d = prev[j] + 1;
            if (cur[j - 1] + 1 < d)
                d = cur[j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                prev2[j - 2] + 1 < d)
                d = prev2[j - 2] + 1;
            cur[j] = d;
        }
        size_t *t = prev2;
        prev2 = prev;
        prev = cur;
        cur = t;
    }
    return prev[lb];
}

const char *cli__suggest(const char *word, const char *const *names, size_t n)
{
    size_t lw = strlen(word);
    if (lw == 0 || lw > MAX_WORD)
        return NULL;
    /* A third of the word's letters may be wrong, at least one and at most two. */
    size_t limit = lw / 3 < 1 ? 1 : lw / 3 > 2 ? 2 : lw / 3;
    const char *best = NULL;
    size_t best_d = limit + 1;
    for (size_t i = 0; i < n; i++) {
        if (strlen(names[i]) > MAX_WORD)
            continue;
        size_t d = distance(word, names[i]);
        if (d < best_d) {
            best = names[i];
            best_d = d;
        }
    }
    return best;
}
