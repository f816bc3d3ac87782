/*
 * shorten.c: function names and locations made shorter for a table (rheap_analysis.h).
 *
 * Demangled C++ names carry every template argument, so one frame of std::vector::push_back
 * can take 200 columns. The shortener replaces each template argument list with <...>, finding
 * the lists' brackets in one pass (a stack of open '<'), so its time stays linear however
 * deeply the templates nest or however many brackets stay unclosed. Operators whose names hold
 * '<' or '>' are the trap: `operator<<` opens no list, and a loop that stops at the word
 * `operator` must still move on when the word is followed by `()`, `[]` or ` new`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"

static int is_word(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '$';
}

/* Characters that may end a name a template argument list follows: an identifier, or the
 * closing bracket of an earlier list, index or closure marker (`{closure}<T>`). */
static int ends_name(char c)
{
    return is_word(c) || c == '>' || c == ']' || c == '}';
}

/* How many characters at s[i] belong to an operator's name when s[i] comes right after the
 * keyword `operator` (not after an identifier that merely ends with it, as `my_operator`):
 * the run of '<', '=', '>' (operator<<, operator<=>, operator>) or "->". 0 otherwise. */
static size_t operator_chars(const char *s, size_t i)
{
    if (i < 8 || strncmp(s + i - 8, "operator", 8) != 0 || (i > 8 && is_word(s[i - 9])))
        return 0;
    if (s[i] == '-' && s[i + 1] == '>')
        return 2;
    size_t k = 0;
    while (s[i + k] == '<' || s[i + k] == '=' || s[i + k] == '>')
        k++;
    return k;
}

char *ra_name_short(const char *name)
{
    size_t n = strlen(name);
    char *out = malloc(n + 1);
    /* close[i]: the index of the '>' closing the '<' at i, or 0 when it is not closed. An
     * operator's characters and the '>' of "->" take no part in the bracket structure. */
    size_t *close = calloc(n + 1, sizeof *close);
    size_t *open = malloc((n + 1) * sizeof *open);
    if (!out || !close || !open) {
        free(out);
        free(close);
        free(open);
        return NULL;
    }
    size_t depth = 0;
    for (size_t i = 0; i < n; i++) {
        size_t op = operator_chars(name, i);
        if (op) {
            i += op - 1;
        } else if (name[i] == '<') {
            open[depth++] = i;
        } else if (name[i] == '>' && !(i > 0 && name[i - 1] == '-') && depth > 0) {
            close[open[--depth]] = i;
        }
    }
    free(open);

    size_t o = 0;
    for (size_t i = 0; i < n;) {
        size_t op = operator_chars(name, i);
        if (op) {
            memcpy(out + o, name + i, op);
            o += op;
            i += op;
            continue;
        }
        /* A template argument list follows a name; a leading '<' or one after a blank is part
         * of the name itself and only has its insides shortened. "<...>" replaces at least six
         * characters, so the text never grows. */
        size_t end = close[i];
        if (name[i] == '<' && i > 0 && ends_name(name[i - 1]) && end != 0 && end - i - 1 > 3) {
            memcpy(out + o, "<...>", 5);
            o += 5;
            i = end + 1;
            continue;
        }
        out[o++] = name[i++];
    }
    out[o] = 0;
    free(close);
    return out;
}

char *ra_name_without_params(const char *name)
{
    /* Back over the qualifiers a member function's parameter list may carry. */
    static const char *const quals[] = {" const", " volatile", " &&", " &", " noexcept"};
    size_t end = strlen(name);
    for (int again = 1; again;) {
        again = 0;
        for (size_t q = 0; q < sizeof quals / sizeof *quals; q++) {
            size_t l = strlen(quals[q]);
            if (end >= l && strncmp(name + end - l, quals[q], l) == 0) {
                end -= l;
                again = 1;
            }
        }
    }
    /* The list is the text from the '(' that matches the last ')', when something precedes it. */
    size_t cut = end;
    if (end > 0 && name[end - 1] == ')') {
        size_t depth = 0, i = end;
        while (i-- > 0) {
            if (name[i] == ')') {
                depth++;
            } else if (name[i] == '(' && --depth == 0) {
                break;
            }
        }
        /* The "()" of operator() is the operator's name, not its parameters. */
        if (depth == 0 && i > 0 && i != (size_t)-1 && !(i >= 8 && strncmp(name + i - 8, "operator", 8) == 0))
            cut = i;
    }
    if (cut == end)
        cut = strlen(name);
    char *out = malloc(cut + 1);
    if (!out)
        return NULL;
    memcpy(out, name, cut);
    out[cut] = 0;
    return out;
}

size_t ra_text_columns(const char *s)
{
    size_t w = 0;
    for (; *s; s++)
        w += ((unsigned char)*s & 0xC0) != 0x80;
    return w;
}

char *ra_text_clip(const char *s, size_t keep, int from_end)
{
    size_t w = ra_text_columns(s);
    if (w <= keep || keep < 4)
        return strdup(s);
    size_t take = keep - 3, n = strlen(s);
    char *out = malloc(n + 4);
    if (!out)
        return NULL;
    if (from_end) {
        /* Skip w - take code points from the front. */
        size_t skip = w - take, i = 0;
        for (size_t cp = 0; i < n; i++) {
            if (((unsigned char)s[i] & 0xC0) != 0x80 && cp++ == skip)
                break;
        }
        memcpy(out, "...", 3);
        strcpy(out + 3, s + i);
    } else {
        size_t i = 0;
        for (size_t cp = 0; i < n; i++) {
            if (((unsigned char)s[i] & 0xC0) != 0x80 && cp++ == take)
                break;
        }
        memcpy(out, s, i);
        strcpy(out + i, "...");
    }
    return out;
}

void ra_human_bytes(long long b, char *buf, size_t len)
{
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
    if (b < 10240 && b > -10240) {
        snprintf(buf, len, "%lld", b);
        return;
    }
    double v = (double)b;
    int u = -1;
    while ((v >= 1024 || v <= -1024) && u < 4) {
        v /= 1024;
        u++;
    }
    snprintf(buf, len, "%.1f %s", v, units[u]);
}
