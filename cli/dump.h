/*
 * dump.h: `rheap dump`, one text line per record of a recording or a single .rip file.
 */
#ifndef RHEAP_DUMP_H
#define RHEAP_DUMP_H

#include <stdio.h>

/* Prints every record of `path` (a recording directory: process.rip first, then the thread
 * files in order; or one .rip file) to `out`, one stable, greppable line each. Returns
 * RHEAP_EXIT_OK (0) when everything read cleanly; RHEAP_EXIT_WARNINGS (3) when a file is
 * truncated (the records before the cut are printed, "rheap: warning: PATH: offset N: DETAIL"
 * goes to `err`, the other files are still dumped); RHEAP_EXIT_INPUT (2) for a missing path or
 * invalid or corrupt input (one line "rheap: error: PATH: offset N: DETAIL" on `err`; dumping
 * stops). */
int cli__dump(const char *path, FILE *out, FILE *err);

#endif
