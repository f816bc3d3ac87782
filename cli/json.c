/*
 * json.c: JSON strings that any JSON reader accepts, whatever bytes the database holds. Thread
 * names, paths and command lines come from the traced program and the file system, which do
 * not promise UTF-8; JSON text must be UTF-8 (RFC 8259). So each byte that does not belong to a
 * well-formed UTF-8 sequence (Unicode's table 3-7: no overlong forms, no surrogates, nothing
 * above U+10FFFF) is written as \ufffd, the replacement character, one per byte; control
 * characters are escaped, and well-formed sequences are copied as they are.
 */
#include "cli.h"

/* The length of the well-formed UTF-8 sequence at p (1 to 4), or 0 when the byte at p does not
 * start one. p is NUL-terminated, so a sequence cut short by the end fails on the NUL. */
static int utf8_len(const unsigned char *p)
{
    unsigned char c = p[0];
    if (c < 0x80)
        return 1;
    /* The allowed range of the second byte depends on the first; later bytes are 80..BF. */
    unsigned char lo = 0x80, hi = 0xBF;
    int n;
    if (c >= 0xC2 && c <= 0xDF)
        n = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0)
            lo = 0xA0; /* below: overlong */
        else if (c == 0xED)
            hi = 0x9F; /* above: UTF-16 surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0)
            lo = 0x90; /* below: overlong */
        else if (c == 0xF4)
            hi = 0x8F; /* above: beyond U+10FFFF */
    } else
        return 0;
    if (p[1] < lo || p[1] > hi)
        return 0;
    for (int i = 2; i < n; i++)
        if (p[i] < 0x80 || p[i] > 0xBF)
            return 0;
    return n;
}

void cli__json_string(FILE *f, const char *s, int html)
{
    if (!s) {
        fputs("null", f);
        return;
    }
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        int n = utf8_len(p);
        if (n == 0) {
            fputs("\\ufffd", f);
            p++;
            continue;
        }
        if (n > 1) {
            fwrite(p, 1, (size_t)n, f);
            p += n;
            continue;
        }
        unsigned char c = *p++;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c == '\n')
            fputs("\\n", f);
        else if (c == '\t')
            fputs("\\t", f);
        else if (c < 0x20 || c == 0x7f || (html && (c == '<' || c == '>' || c == '&')))
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}
