/*
 * report.c: `rheap report DB`, a summary to read before asking questions in SQL, and the
 * shorter one `rheap run` prints after converting.
 *
 * The totals are one query of their own; every other section is a canned query file (peak,
 * leaks, temporary, top-sites) run through the same loading and binding code as `rheap query`,
 * so the report and `rheap query NAME` always show the same rows.
 */
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "cli.h"

/* Rows shown per section, and recordings with a peak line. */
#define REPORT_ROWS 10
#define RHEAP_STR_(x) #x
#define RHEAP_STR(x) RHEAP_STR_(x)
/* Leak sites shown by the summary of `rheap run`. */
#define BRIEF_ROWS 3

/* Totals from the converter's per-recording summary (recording_stats): no pass over the
 * allocations. */
static const char totals_sql[] =
    "SELECT (SELECT coalesce(sum(allocs), 0) FROM recording_stats WHERE pid = coalesce(:pid, pid)) AS allocations,\n"
    "       (SELECT coalesce(sum(frees), 0) FROM recording_stats WHERE pid = coalesce(:pid, pid)) AS frees,\n"
    "       (SELECT printf('%!.0f', total(alloc_bytes)) FROM recording_stats WHERE pid = coalesce(:pid, pid)) AS bytes,\n"
    /* Never freed: leaks only in the recordings that lasted until their process ended; what a
     * window left live is counted apart (schema.sql's view recording_ends, the one rule). */
    "       (SELECT coalesce(sum(leaked_blocks), 0) FROM recording_stats WHERE pid = coalesce(:pid, pid)\n"
    "            AND (pid, recording) IN (SELECT pid, recording FROM recording_ends WHERE until_exit)) AS leaked_blocks,\n"
    "       (SELECT printf('%!.0f', total(leaked_bytes)) FROM recording_stats WHERE pid = coalesce(:pid, pid)\n"
    "            AND (pid, recording) IN (SELECT pid, recording FROM recording_ends WHERE until_exit)) AS leaked_bytes,\n"
    "       (SELECT coalesce(sum(leaked_blocks), 0) FROM recording_stats WHERE pid = coalesce(:pid, pid)\n"
    "            AND (pid, recording) IN (SELECT pid, recording FROM recording_ends WHERE NOT until_exit)) AS stopped_blocks,\n"
    "       (SELECT printf('%!.0f', total(leaked_bytes)) FROM recording_stats WHERE pid = coalesce(:pid, pid)\n"
    "            AND (pid, recording) IN (SELECT pid, recording FROM recording_ends WHERE NOT until_exit)) AS stopped_bytes,\n"
    "       (SELECT count(*) FROM recording_ends WHERE until_exit AND pid = coalesce(:pid, pid)) AS ended,\n"
    "       (SELECT count(*) FROM recording_ends WHERE NOT until_exit AND pid = coalesce(:pid, pid)) AS windows,\n"
    "       (SELECT count(DISTINCT pid) FROM processes WHERE pid = coalesce(:pid, pid)) AS processes,\n"
    "       (SELECT count(*) FROM (SELECT DISTINCT pid, tid FROM threads WHERE pid = coalesce(:pid, pid))) AS threads,\n"
    /* From the first recording's start to the last event or window end of any recording;
     * each recording's times count from its own start_ns. */
    "       (SELECT max(e.end_ns) - (SELECT min(start_ns) FROM processes WHERE pid = coalesce(:pid, pid)) FROM (\n"
    "            SELECT p.start_ns + max(coalesce((SELECT r.end_ns FROM recording_stats AS r\n"
    "                                              WHERE r.pid = p.pid AND r.recording = p.recording), 0),\n"
    "                                    coalesce((SELECT max(coalesce(off_t, on_t)) FROM windows AS w\n"
    "                                              WHERE w.pid = p.pid AND w.recording = p.recording), 0))\n"
    "                   AS end_ns\n"
    "            FROM processes AS p WHERE p.pid = coalesce(:pid, p.pid)) AS e) AS duration_ns\n";

/* Processes, the ones that allocated most first. A pid counts once however many images it
 * executed (each exec is a recording of the same process); its command is the last image's,
 * cut to fit a line. */
static const char processes_sql[] =
    /* Each process's never-freed bytes summed in one pass over the sums per site (site_stats,
     * a tenth of stack_stats' rows on a process tree), per recording first and then joined
     * with recording_ends. */
    "WITH leaked AS MATERIALIZED (\n"
    "    SELECT s.pid AS pid, sum(s.bytes) AS bytes\n"
    "    FROM (SELECT pid, recording, sum(leaked_bytes) AS bytes FROM site_stats\n"
    "          WHERE pid = coalesce(:pid, pid) GROUP BY pid, recording) AS s\n"
    "    JOIN recording_ends AS e ON e.pid = s.pid AND e.recording = s.recording\n"
    "    WHERE e.until_exit GROUP BY s.pid)\n"
    "SELECT p.pid AS pid, min(p.ppid) AS ppid, count(*) AS images,\n"
    "       coalesce(sum(r.allocs), 0) AS allocations, coalesce(sum(r.alloc_bytes), 0) AS bytes,\n"
    "       coalesce(max(r.peak_bytes), 0) AS peak_bytes,\n"
    /* From site_stats, so that leaks a suppression took out (report's view over it) are out
     * of this column too; NULL for a process recorded only in windows, which cannot tell. */
    "       CASE WHEN EXISTS (SELECT 1 FROM recording_ends AS e WHERE e.pid = p.pid AND e.until_exit)\n"
    "            THEN coalesce((SELECT l.bytes FROM leaked AS l WHERE l.pid = p.pid), 0)\n"
    "            END AS leaked_bytes,\n"
    "       (SELECT CASE WHEN length(q.cmdline) > 40 THEN substr(q.cmdline, 1, 37) || '...'\n"
    "                    ELSE q.cmdline END\n"
    "        FROM processes AS q WHERE q.pid = p.pid ORDER BY q.recording DESC LIMIT 1) AS command\n"
    "FROM processes AS p\n"
    "LEFT JOIN recording_stats AS r ON r.pid = p.pid AND r.recording = p.recording\n"
    "WHERE p.pid = coalesce(:pid, p.pid)\n"
    "GROUP BY p.pid ORDER BY bytes DESC, allocations DESC, p.pid";

/* What the report prints, from the command line. */
typedef struct {
    int raw;          /* exact integers in the tables */
    int chains;       /* call chains under site rows */
    const char *pid;  /* only this process (text, bound as the queries' pid) */
    int full_names;   /* --full-names: names not shortened or clipped */
    const char *skip; /* --skip: more wrapper functions, charged to their callers */
    cli__supp_opts_t supp; /* leak suppressions */
    ra_moment_t mo;   /* --at, --from/--to: a section of what was live then */
} report_opts_t;

/* Processes shown before "... N more rows". */
#define PROCESS_ROWS 20

static long long num(const ra_table_t *t, const char *col)
{
    const char *v = ra_table_cell(t, 0, col);
    return v ? strtoll(v, NULL, 10) : 0;
}

/* A byte total: sizes are unsigned, and from 2^63 on the database holds them as REAL
 * (schema.sql), so they are read as doubles (the totals query prints them with all their
 * digits: SQLite's own text for a REAL keeps 15). */
static double byte_num(const ra_table_t *t, const char *col)
{
    const char *v = ra_table_cell(t, 0, col);
    return v ? strtod(v, NULL) : 0;
}

/* "45760 bytes (44.7 KiB)": the exact number for grep and scripts, the rounded one for people. */
static void bytes(FILE *out, double b)
{
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    fprintf(out, "%.0f bytes", b);
    if (b < 1024)
        return;
    double v = b;
    int u = -1;
    while (v >= 1024 && u < 5) {
        v /= 1024;
        u++;
    }
    fprintf(out, " (%.1f %s)", v, units[u]);
}

/* A recording compacted by rheap serve (rip-format/FORMAT.md section 3b) holds the blocks live
 * at its checkpoint, not what was freed before it: says so, when the database's meta says it
 * was. */
static void compacted_line(sqlite3 *db, FILE *out)
{
    sqlite3_stmt *st;
    long long files = 0, before = 0;
    if (sqlite3_prepare_v2(db,
                           "SELECT (SELECT value FROM meta WHERE key = 'compacted_files'),"
                           " (SELECT value FROM meta WHERE key = 'compacted_before_ns')",
                           -1, &st, NULL) != SQLITE_OK)
        return;
    if (sqlite3_step(st) == SQLITE_ROW) {
        files = sqlite3_column_int64(st, 0);
        before = sqlite3_column_int64(st, 1);
    }
    sqlite3_finalize(st);
    if (files <= 0)
        return;
    fprintf(out, "  compacted        %lld thread files; events before %.1f s were compacted:\n"
                 "                   frees of blocks allocated and freed before then are not in\n"
                 "                   this database\n",
            files, (double)before / 1e9);
}

static void duration(FILE *out, long long ns)
{
    if (ns < 1000000000)
        fprintf(out, "%.3f ms", (double)ns / 1e6);
    else if (ns < 10000000000LL)
        fprintf(out, "%.3f s", (double)ns / 1e9);
    else
        fprintf(out, "%.1f s", (double)ns / 1e9);
}

/* Runs a canned query with the report's row limit when the query takes one. Returns 0 and
 * fills t, or -1 after printing why under the section heading. */
static int run_canned(sqlite3 *db, const char *name, size_t rows, const char *pid,
                      const char *skip, ra_table_t *t, const char *indent, FILE *out)
{
    ra_query_t q;
    FILE *quiet = tmpfile();
    int rc = cli__query_load(name, &q, quiet ? quiet : stderr);
    if (quiet)
        fclose(quiet);
    if (rc != RHEAP_EXIT_OK) {
        char dir[PATH_MAX];
        fprintf(out, "%s(no query file %s.sql in %s)\n", indent, name,
                cli__queries_dir(dir, sizeof dir) ? dir : "any queries directory");
        return -1;
    }
    char limit[32];
    snprintf(limit, sizeof limit, "%zu", rows);
    ra_kv_t kv[3];
    size_t nkv = 0;
    /* A query that limits its own rows (top-sites' `top`) is asked for just as many. */
    for (size_t i = 0; i < q.nparams; i++) {
        if (!strcmp(q.params[i].name, "limit") || !strcmp(q.params[i].name, "top"))
            kv[nkv++] = (ra_kv_t){q.params[i].name, limit};
        else if (pid && !strcmp(q.params[i].name, "pid"))
            kv[nkv++] = (ra_kv_t){"pid", pid};
        else if (skip && !strcmp(q.params[i].name, "skip"))
            kv[nkv++] = (ra_kv_t){"skip", skip};
    }
    ra_err_t why;
    /* Only the rows shown are made into text; the others are counted ("... N more rows"). */
    rc = cli__said(cli__query_rows(db, &q, kv, nkv, rows, t, &why), &why, out);
    ra_query_free(&q);
    return rc == RHEAP_EXIT_OK ? 0 : -1;
}

/* Moves the named columns of src, in that order, into a new table (those src lacks are left
 * out); src keeps the rest. Used to print the columns that fit a summary line. */
static void project(ra_table_t *src, const char *const *cols, ra_table_t *dst)
{
    memset(dst, 0, sizeof *dst);
    size_t idx[16], n = 0;
    for (size_t k = 0; cols[k] && n < 16; k++)
        for (size_t c = 0; c < src->ncols; c++)
            if (!strcmp(src->names[c], cols[k]))
                idx[n++] = c;
    dst->names = calloc(n ? n : 1, sizeof *dst->names);
    dst->cells = calloc(n * src->nrows + 1, sizeof *dst->cells);
    dst->types = calloc(n * src->nrows + 1, 1);
    if (!dst->names || !dst->cells || !dst->types) {
        ra_table_free(dst);
        return;
    }
    dst->ncols = n;
    dst->nrows = src->nrows;
    dst->more = src->more;
    for (size_t k = 0; k < n; k++) {
        dst->names[k] = src->names[idx[k]];
        src->names[idx[k]] = strdup("");
        for (size_t r = 0; r < src->nrows; r++) {
            size_t from = r * src->ncols + idx[k], to = r * n + k;
            dst->cells[to] = src->cells[from];
            dst->types[to] = src->types[from];
            src->cells[from] = NULL;
        }
    }
}

/* The columns of the site queries worth a line in a summary: what, how much, where. */
static const char *const site_cols[] = {"blocks", "bytes", "temporary", "percent",
                                        "temporary_bytes", "avg_size", "function", "location",
                                        "stack", "recording", "pid", NULL};

/* "peak live heap 49856 bytes (48.7 KiB) at 9.630 ms, pid 5866", once per recording of the
 * peak query's rows ("pid 5866 recording 2" for a later recording of the same process). */
static void peak_lines(const ra_table_t *t, const char *prefix, FILE *out)
{
    const char *last_pid = NULL, *last_rec = NULL;
    for (size_t r = 0; r < t->nrows && r < REPORT_ROWS; r++) {
        const char *pid = ra_table_cell(t, r, "pid");
        const char *rec = ra_table_cell(t, r, "recording");
        const char *b = ra_table_cell(t, r, "peak_bytes");
        const char *at = ra_table_cell(t, r, "peak_ns");
        if (!b || !at)
            continue;
        if (r > 0 && pid && last_pid && !strcmp(pid, last_pid) &&
            (!rec || (last_rec && !strcmp(rec, last_rec))))
            continue;
        last_pid = pid;
        last_rec = rec;
        fprintf(out, "%speak live heap ", prefix);
        bytes(out, strtod(b, NULL));
        fprintf(out, " at ");
        duration(out, strtoll(at, NULL, 10));
        fprintf(out, "%s%s", pid ? ", pid " : "", pid ? pid : "");
        if (rec && strcmp(rec, "1") != 0)
            fprintf(out, " recording %s", rec);
        fputc('\n', out);
    }
}

/* The peak of every recording (of process pid, text; NULL: all), the largest first. Processes
 * peak at moments of their own: with more than one, a line says that their peaks, and the
 * sites' bytes at them, were not live at once. */
static void peak_summary(sqlite3 *db, const char *pid, FILE *out)
{
    static const char sql[] =
        "SELECT peak_ns, peak_bytes, pid, recording FROM recording_stats\n"
        "WHERE allocs > 0 AND pid = coalesce(:pid, pid)\n"
        "ORDER BY peak_bytes DESC, pid, recording";
    ra_table_t t;
    ra_err_t why;
    ra_kv_t kv = {"pid", pid};
    if (ra_fetch(db, sql, &kv, pid ? 1 : 0, &t, &why) == RA_OK) {
        peak_lines(&t, "  ", out);
        if (t.nrows > REPORT_ROWS)
            fprintf(out, "  ... %zu more recordings, smaller peaks\n", t.nrows - REPORT_ROWS);
        if (t.nrows > 1)
            fprintf(out, "  (each process's own peak, at a moment of its own: never live at "
                         "once)\n");
    }
    ra_table_free(&t);
}

/* Beside each recording's peak heap: its peak resident memory and how much of it, at least, was
 * not the heap then; and the program's own mappings, which are not in the heap's figures.
 * Recordings without samples or mappings print nothing. Only the recordings with the largest
 * peaks, as many as the peak lines: a build's 2,000 recordings made 8,000 lines, and a look-up
 * each cost 0.8 s. */
static void memory_summary(sqlite3 *db, const char *pid, FILE *out)
{
    static const char sql[] = "SELECT pid, recording FROM recording_stats\n"
                              "WHERE pid = coalesce(:pid, pid) ORDER BY peak_bytes DESC, pid, recording\n"
                              "LIMIT " RHEAP_STR(REPORT_ROWS);
    ra_table_t t;
    ra_err_t why;
    ra_kv_t kv = {"pid", pid};
    if (ra_fetch(db, sql, &kv, pid ? 1 : 0, &t, &why) != RA_OK)
        return;
    for (size_t r = 0; r < t.nrows; r++) {
        const char *p = ra_table_cell(&t, r, "pid"), *rec = ra_table_cell(&t, r, "recording");
        ra_memory_t m;
        if (!p || !rec ||
            ra_memory_load(db, strtoll(p, NULL, 10), strtoll(rec, NULL, 10), 0, &m, &why) != RA_OK)
            continue;
        const char *rec_note = strcmp(rec, "1") != 0 ? " recording " : "";
        if (m.samples > 0) {
            fprintf(out, "  peak resident memory ");
            bytes(out, (double)m.peak_bytes);
            fprintf(out, " at ");
            duration(out, m.peak_t);
            fprintf(out, ", pid %s%s%s\n    live heap then at most ", p, rec_note,
                    *rec_note ? rec : "");
            bytes(out, (double)m.heap_at_peak);
            fputc('\n', out);
            if (m.peak_bytes > m.heap_at_peak) {
                fprintf(out, "    so at least ");
                bytes(out, (double)(m.peak_bytes - m.heap_at_peak));
                fprintf(out, " of it is not the heap\n");
            }
        }
        if (m.maps > 0) {
            fprintf(out, "  own mappings (mmap, not heap), pid %s%s%s: %lld made\n    at most ", p,
                    rec_note, *rec_note ? rec : "", (long long)m.maps);
            bytes(out, (double)m.map_peak_bytes);
            fprintf(out, " mapped at once, at ");
            duration(out, m.map_peak_t);
            fprintf(out, "\n    ");
            bytes(out, (double)m.map_end_bytes);
            fprintf(out, " still mapped at the end\n");
        }
        ra_memory_free(&m);
    }
    ra_table_free(&t);
}

static void section(sqlite3 *db, const report_opts_t *o, const char *heading, const char *name,
                    long long interval, FILE *out)
{
    fprintf(out, "\n%s%s (rheap query %s)\n", heading, interval ? ", estimated" : "", name);
    ra_table_t t, shown;
    if (run_canned(db, name, REPORT_ROWS, o->pid, o->skip, &t, "  ", out) != 0)
        return;
    if (!strcmp(name, "peak")) {
        peak_summary(db, o->pid, out);
        memory_summary(db, o->pid, out);
    }
    project(&t, site_cols, &shown);
    ra_table_t *p = shown.ncols > 0 ? &shown : &t;
    if (!o->raw)
        cli__table_humanize(p);
    if (t.nrows == 0)
        fprintf(out, "  (none)\n");
    else if (o->chains)
        cli__table_print_chains(db, p, REPORT_ROWS, "  ", o->full_names, out);
    else
        cli__table_print_columns(p, REPORT_ROWS, "  ", o->full_names, out);
    ra_table_free(&shown);
    ra_table_free(&t);
}

/* One line per process with an allocator the tracer found and did not record: the figures miss
 * its blocks. Nothing for a database made before processes had the column. */
static void unrecorded_lines(sqlite3 *db, const char *pid, const char *prefix, FILE *out)
{
    static const char sql[] = "SELECT pid, unrecorded FROM processes WHERE unrecorded IS NOT NULL "
                              "AND pid = coalesce(:pid, pid) ORDER BY pid, recording";
    ra_table_t t;
    ra_err_t why;
    ra_kv_t kv = {"pid", pid};
    if (ra_fetch(db, sql, &kv, pid ? 1 : 0, &t, &why) == RA_OK)
        for (size_t r = 0; r < t.nrows; r++)
            fprintf(out,
                    "%swarning: process %s allocates through %s, which rheap does not record: "
                    "its blocks are missing from these figures\n",
                    prefix, ra_table_cell(&t, r, "pid"), ra_table_cell(&t, r, "unrecorded"));
    ra_table_free(&t);
}

/* What "live at stop" means, under its figure: a recording that stopped while its process went
 * on cannot tell a leak from a block the process would have freed later. */
static void window_note(const char *prefix, const char *path, FILE *out)
{
    fprintf(out,
            "%snot leaks: still live when a window's recording stopped while\n"
            "%sits process went on; rheap query growth %s shows what grew\n",
            prefix, prefix, path);
}

static int report(const char *path, const report_opts_t *o, FILE *out)
{
    sqlite3 *db;
    ra_err_t open_err;
    int rc = cli__said(ra_open_read(path, &db, &open_err), &open_err, stderr);
    if (rc != RHEAP_EXIT_OK)
        return rc;
    ra_err_t why;
    if (o->pid &&
        (rc = cli__said(ra_param_check(db, "pid", o->pid, "--pid", &why), &why, stderr)) !=
            RHEAP_EXIT_OK) {
        sqlite3_close(db);
        return rc;
    }
    if (cli__moment_given(&o->mo) &&
        (rc = ra_moment_check(db, &o->mo, &why)) != RA_OK) {
        cli__error(stderr, "%s: %s", path, why.msg);
        sqlite3_close(db);
        return rc;
    }
    /* Suppressed stacks leave the leaks section (its query reads the view ra_supp_shadow
     * puts over stack_stats) and the never-freed total, and get a line of their own. */
    ra_supp_t *supp;
    rc = cli__supp_open(&o->supp, db, &supp, stderr);
    if (rc == RHEAP_EXIT_OK && (rc = ra_supp_shadow(supp, db, &why)) != RA_OK)
        cli__error(stderr, "%s: %s", path, why.msg);
    size_t nr = ra_supp_nrules(supp);
    int64_t *sup_blocks = calloc(nr + 1, sizeof *sup_blocks);
    int64_t *sup_bytes = calloc(nr + 1, sizeof *sup_bytes);
    if (rc == RHEAP_EXIT_OK && (!sup_blocks || !sup_bytes)) {
        cli__error(stderr, "out of memory");
        rc = RHEAP_EXIT_OUTPUT;
    }
    if (rc == RHEAP_EXIT_OK &&
        (rc = ra_supp_totals(supp, db, o->pid, sup_blocks, sup_bytes, &why)) != RA_OK)
        cli__error(stderr, "%s: %s", path, why.msg);
    if (rc != RHEAP_EXIT_OK) {
        free(sup_blocks);
        free(sup_bytes);
        ra_supp_destroy(supp);
        sqlite3_close(db);
        return rc;
    }
    long long sb = 0, sbytes = 0;
    for (size_t r = 0; r < nr; r++) {
        sb += sup_blocks[r];
        sbytes += sup_bytes[r];
    }
    ra_table_t t;
    ra_kv_t pidkv = {"pid", o->pid};
    if ((rc = ra_fetch(db, totals_sql, &pidkv, o->pid ? 1 : 0, &t, &why)) != RA_OK) {
        cli__error(stderr, "%s: %s", path, why.msg);
        ra_table_free(&t);
        free(sup_blocks);
        free(sup_bytes);
        ra_supp_destroy(supp);
        sqlite3_close(db);
        return rc;
    }
    long long interval = ra_sample_interval(db, o->pid);
    const char *est = interval ? " (estimated)" : "";
    fprintf(out, "rheap report: %s%s%s\n", path, o->pid ? ", pid " : "", o->pid ? o->pid : "");
    unrecorded_lines(db, o->pid, "", out);
    fprintf(out, "\nTotals\n");
    if (interval)
        fprintf(out,
                "  mode             profile: about one allocation sampled every %lld bytes;\n"
                "                   allocations and bytes allocated are exact counts, the other\n"
                "                   figures estimates scaled up from the samples\n",
                interval);
    fprintf(out, "  allocations      %lld\n", num(&t, "allocations"));
    fprintf(out, "  frees            %lld%s\n", num(&t, "frees"), est);
    fprintf(out, "  bytes allocated  ");
    bytes(out, byte_num(&t, "bytes"));
    fputc('\n', out);
    /* "never freed" only where it is true: a window's live blocks get words of their own. */
    if (num(&t, "ended") > 0 || num(&t, "windows") == 0) {
        fprintf(out, "  never freed      %lld blocks, ", num(&t, "leaked_blocks") - sb);
        bytes(out, byte_num(&t, "leaked_bytes") - (double)sbytes);
        fprintf(out, "%s\n", est);
    }
    if (num(&t, "windows") > 0) {
        fprintf(out, "  live at stop     %lld blocks, ", num(&t, "stopped_blocks"));
        bytes(out, byte_num(&t, "stopped_bytes"));
        fprintf(out, "%s\n", est);
        window_note("                   ", path, out);
    }
    cli__supp_print(supp, sup_blocks, sup_bytes, "  ", "    ",
                    o->full_names ? 0 : cli__output_width(out), out);
    fprintf(out, "  processes        %lld\n", num(&t, "processes"));
    fprintf(out, "  threads          %lld\n", num(&t, "threads"));
    fprintf(out, "  duration         ");
    duration(out, num(&t, "duration_ns"));
    fputc('\n', out);
    compacted_line(db, out);
    long long ended = num(&t, "ended");
    ra_table_free(&t);

    if (ra_fetch(db, processes_sql, o->pid ? &pidkv : NULL, o->pid ? 1 : 0, &t, &why) == RA_OK) {
        fprintf(out, "\nProcesses, most bytes allocated first\n");
        if (!o->raw)
            cli__table_humanize(&t);
        cli__table_print_columns(&t, PROCESS_ROWS, "  ", o->full_names, out);
    }
    ra_table_free(&t);
    /* Only the leak figures need the suppressions' views (the processes' above, the leaks
     * section below); the other sections read the tables, not a join of every row. */
    ra_supp_views(supp, db, 0, &why);
    section(db, o, "Peak live heap", "peak", interval, out);
    if (cli__moment_given(&o->mo) &&
        (rc = cli__moment_report(db, path, o->pid, o->skip, &o->mo, o->raw, out)) !=
            RHEAP_EXIT_OK) {
        free(sup_blocks);
        free(sup_bytes);
        ra_supp_destroy(supp);
        sqlite3_close(db);
        return rc;
    }
    if (ended > 0) {
        if (ra_supp_views(supp, db, 1, &why) != RA_OK)
            cli__error(stderr, "%s: %s", path, why.msg);
        section(db, o, "Top leaks by site", "leaks", interval, out);
        ra_supp_views(supp, db, 0, &why);
    } else {
        fprintf(out, "\nTop leaks by site (rheap query leaks)\n"
                     "  (none known: no recording lasted until its process ended; see live at stop)\n");
    }
    section(db, o, "Top temporary allocation sites", "temporary", interval, out);
    section(db, o, "Top allocating sites", "top-sites", interval, out);
    fprintf(out, "\nMore: rheap query --list, or sqlite3 %s\n", path);
    free(sup_blocks);
    free(sup_bytes);
    ra_supp_destroy(supp);
    sqlite3_close(db);
    return RHEAP_EXIT_OK; /* main checks that standard output was written */
}

/* Processes shown by the summary of `rheap run` when there are several. */
#define BRIEF_PROCESSES 10

/* The built-in suppression list, as `rheap report` applies it by default: its stacks leave the
 * leaks (a view over stack_stats) and their blocks and bytes are added into *blocks, *bytes.
 * NULL when nothing could be decided (then nothing is left out). */
static ra_supp_t *brief_suppressions(sqlite3 *db, long long *blocks, double *bytes)
{
    cli__supp_opts_t none = {0};
    ra_supp_t *supp = NULL;
    ra_err_t why;
    if (cli__supp_open(&none, db, &supp, stderr) != RHEAP_EXIT_OK)
        return NULL;
    size_t nr = ra_supp_nrules(supp);
    int64_t *b = calloc(nr + 1, sizeof *b), *n = calloc(nr + 1, sizeof *n);
    if (!b || !n || ra_supp_totals(supp, db, NULL, b, n, &why) != RA_OK ||
        ra_supp_shadow(supp, db, &why) != RA_OK) {
        ra_supp_destroy(supp);
        supp = NULL;
    }
    for (size_t r = 0; supp && r < nr; r++) {
        *blocks += b[r];
        *bytes += (double)n[r];
    }
    free(b);
    free(n);
    return supp;
}

void cli__report_brief(sqlite3 *db, const char *path, FILE *out)
{
    ra_table_t t;
    ra_err_t why;
    long long sup_blocks = 0;
    double sup_bytes = 0;
    ra_supp_t *supp = brief_suppressions(db, &sup_blocks, &sup_bytes);
    if (cli__said(ra_fetch(db, totals_sql, NULL, 0, &t, &why), &why, out) != RHEAP_EXIT_OK) {
        ra_table_free(&t);
        ra_supp_unshadow(db);
        ra_supp_destroy(supp);
        return;
    }
    long long nproc = num(&t, "processes");
    long long ended = num(&t, "ended"), windows = num(&t, "windows");
    long long stopped_blocks = num(&t, "stopped_blocks");
    double stopped = byte_num(&t, "stopped_bytes");
    unrecorded_lines(db, NULL, "rheap: ", out);
    long long interval = ra_sample_interval(db, NULL);
    if (interval)
        fprintf(out,
                "rheap: profile mode, about one allocation sampled every %lld bytes: frees, "
                "peak and never freed are estimates\n",
                interval);
    /* One line within the width: the exact byte count goes when there is no room for it. */
    char line[256], human[32];
    int n = snprintf(line, sizeof line, "rheap: %lld %s, %lld allocations, %lld frees, %.0f bytes",
                     nproc, nproc == 1 ? "process" : "processes", num(&t, "allocations"),
                     num(&t, "frees"), byte_num(&t, "bytes"));
    cli__human_bytes((long long)byte_num(&t, "bytes"), human, sizeof human);
    if (byte_num(&t, "bytes") >= 1024) {
        if (n > 0 && (size_t)n + strlen(human) + 3 + sizeof " allocated" - 1 > cli__output_width(out))
            snprintf(line, sizeof line, "rheap: %lld %s, %lld allocations, %lld frees, %s", nproc,
                     nproc == 1 ? "process" : "processes", num(&t, "allocations"), num(&t, "frees"),
                     human);
        else
            snprintf(line + n, sizeof line - (size_t)n, " (%s)", human);
    }
    fprintf(out, "%s allocated\n", line);
    long long leaked_blocks = num(&t, "leaked_blocks") - sup_blocks;
    double leaked = byte_num(&t, "leaked_bytes") - sup_bytes;
    ra_table_free(&t);
    if (nproc > 1 && ra_fetch(db, processes_sql, NULL, 0, &t, &why) == RA_OK) {
        fprintf(out, "rheap: processes, most bytes allocated first:\n");
        cli__table_humanize(&t);
        cli__table_print_columns(&t, BRIEF_PROCESSES, "rheap:   ", 0, out);
    }
    ra_table_free(&t);
    /* The largest peak of any process: with many processes, one line per process would not
     * fit a screen (the report has them all). */
    static const char top_peak_sql[] =
        "SELECT peak_ns, peak_bytes, pid, recording FROM recording_stats\n"
        "ORDER BY peak_bytes DESC, pid, recording LIMIT 1";
    if (ra_fetch(db, top_peak_sql, NULL, 0, &t, &why) == RA_OK)
        peak_lines(&t, "rheap: ", out);
    ra_table_free(&t);
    /* A recording that stopped while its process went on (a toggle, rheap_disable, rheap
     * attach) cannot tell leaks: what is still live then may be freed later. */
    if (windows > 0) {
        fprintf(out, "rheap: live at stop: ");
        bytes(out, stopped);
        fprintf(out, " in %lld blocks\n", stopped_blocks);
        window_note("rheap:   ", path, out);
    }
    if (ended > 0 || windows == 0) {
        fprintf(out, "rheap: never freed: ");
        bytes(out, leaked);
        fprintf(out, " in %lld blocks\n", leaked_blocks);
    }
    if (leaked_blocks > 0) {
        FILE *sink = tmpfile();
        int rc = run_canned(db, "leaks", BRIEF_ROWS, NULL, NULL, &t, "", sink ? sink : out);
        if (sink)
            fclose(sink);
        if (rc == 0) {
            ra_table_t shown;
            project(&t, site_cols, &shown);
            cli__table_humanize(shown.ncols ? &shown : &t);
            cli__table_print_columns(shown.ncols ? &shown : &t, BRIEF_ROWS, "rheap:   ", 0, out);
            ra_table_free(&shown);
            ra_table_free(&t);
        }
    }
    if (sup_blocks > 0) {
        fprintf(out, "rheap: suppressed: ");
        bytes(out, sup_bytes);
        fprintf(out, " in %lld blocks\nrheap:   (rheap report --no-default-suppressions shows them)\n",
                sup_blocks);
    }
    ra_supp_unshadow(db);
    ra_supp_destroy(supp);
}

static void usage_report(FILE *f)
{
    fprintf(f,
            "Usage: rheap report [--raw] [--stacks] [--wide] [--pid PID | --exe GLOB]\n"
            "                    [--skip GLOB] [--at TIME|MARKER | --from A --to B]\n"
            "                    [--suppress FILE]... [--no-default-suppressions] DB\n"
            "       rheap report --html -o FILE [--pid PID] [--at T | --from A --to B]\n"
            "                    [--suppress FILE]... DB\n"
            "                    (one self-contained page)\n"
            "\n"
            "Prints a summary of a database written by rheap run or rheap convert: totals\n"
            "(allocations, frees, bytes, processes, threads, duration), the processes (most\n"
            "bytes allocated first), the peak of the live heap, and the top sites for leaks,\n"
            "temporary allocations and allocations overall. Each section names the canned\n"
            "query it comes from (rheap query NAME DB shows all its rows).\n"
            "\n"
            "Options:\n"
            "  --raw         exact integers (default: KiB, MiB, ... for sizes; us, ms, s)\n"
            "  --stacks      print each site's call chain under it, from the site outwards\n"
            "  --wide, --full-names  every column, whole names (default: tables fit\n"
            "                $COLUMNS, the terminal or 80 columns: columns that carry\n"
            "                nothing left out, template arguments shortened to <...>,\n"
            "                names on a line of their own under their row)\n"
            "  --pid PID     only this process\n"
            "  --exe GLOB    only the processes whose executable or command line matches GLOB\n"
            "                (a shell pattern, e.g. '*python3*'); one report each\n"
            RHEAP_MOMENT_HELP
            RHEAP_SKIP_HELP
            RHEAP_SUPP_HELP
            "  -h, --help    show this help\n"
            "\n"
            "Exit status: 0 success, 1 usage error (or no process matches), 2 the database is\n"
            "missing or not a rheap database.\n");
}

/* The pids whose executable or command line matches glob, as text, in pid order. */
static int exe_pids(const char *path, const char *glob, ra_table_t *t)
{
    sqlite3 *db;
    ra_err_t open_err;
    int rc = cli__said(ra_open_read(path, &db, &open_err), &open_err, stderr);
    if (rc != RHEAP_EXIT_OK)
        return rc;
    ra_err_t why;
    ra_kv_t kv = {"glob", glob};
    if ((rc = ra_fetch(db,
                       "SELECT DISTINCT pid FROM processes\n"
                       "WHERE exe GLOB :glob OR cmdline GLOB :glob ORDER BY pid",
                       &kv, 1, t, &why)) != RA_OK)
        cli__error(stderr, "%s: %s", path, why.msg);
    sqlite3_close(db);
    return rc;
}

int cli__cmd_report(int argc, char **argv)
{
    /* argv[0] is "report"; the page has options of its own (html.c). */
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--html"))
            return cli__cmd_report_html(argc - 1, argv + 1);
    static const struct option longs[] = {
        {"raw", no_argument, NULL, 'R'},
        {"stacks", no_argument, NULL, 'S'},
        {"pid", required_argument, NULL, 'P'},
        {"exe", required_argument, NULL, 'E'},
        {"skip", required_argument, NULL, 'K'},
        {"full-names", no_argument, NULL, 'F'},
        {"wide", no_argument, NULL, 'F'},
        {"help", no_argument, NULL, 'h'},
        RHEAP_SUPP_LONGS,
        RHEAP_MOMENT_LONGS,
        {NULL, 0, NULL, 0},
    };
    const char *exe = NULL;
    report_opts_t o = {0};
    int c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", longs, NULL)) != -1) {
        switch (c) {
        case 'h': usage_report(stdout); return RHEAP_EXIT_OK;
        case 'R': o.raw = 1; break;
        case 'S': o.chains = 1; break;
        case 'P': o.pid = optarg; break;
        case 'E': exe = optarg; break;
        case 'K':
            if (!*optarg) {
                cli__error(stderr, "--skip: expected a pattern; got ''");
                return RHEAP_EXIT_USAGE;
            }
            o.skip = optarg;
            break;
        case 'F': o.full_names = 1; break;
        default: {
            if (cli__moment_option(&o.mo, c, optarg))
                break;
            int sr = cli__supp_option(&o.supp, c, optarg);
            if (sr > 0)
                break;
            if (sr < 0)
                return RHEAP_EXIT_USAGE;
            return cli__option_error(c, argv, longs,
                                     optopt == RHEAP_MOMENT_OPT_AT || optopt == RHEAP_MOMENT_OPT_FROM ||
                                             optopt == RHEAP_MOMENT_OPT_TO
                                         ? "a time or a marker label"
                                         : "a value",
                                     "rheap report --help");
        }
        }
    }
    if (argc - optind > 1) {
        cli__error(stderr, "one database at a time (try rheap report --help)");
        return RHEAP_EXIT_USAGE;
    }
    if (argc - optind < 1) {
        cli__error(stderr, "no database given (rheap report DB)");
        return RHEAP_EXIT_USAGE;
    }
    const char *path = argv[optind];
    if (o.pid) {
        char *end;
        long v = strtol(o.pid, &end, 10);
        if (!*o.pid || *end || v <= 0) {
            cli__error(stderr, "--pid '%s': expected a process id", o.pid);
            return RHEAP_EXIT_USAGE;
        }
    }
    if (!exe)
        return report(path, &o, stdout);
    if (o.pid) {
        cli__error(stderr, "--pid and --exe select processes both ways; give one");
        return RHEAP_EXIT_USAGE;
    }
    ra_table_t pids;
    int rc = exe_pids(path, exe, &pids);
    if (rc != RHEAP_EXIT_OK)
        return rc;
    if (pids.nrows == 0) {
        cli__error(stderr, "%s: no process whose executable or command line matches '%s'", path,
                     exe);
        ra_table_free(&pids);
        return RHEAP_EXIT_USAGE;
    }
    for (size_t r = 0; r < pids.nrows && rc == RHEAP_EXIT_OK; r++) {
        o.pid = ra_table_cell(&pids, r, "pid");
        if (r)
            fputc('\n', stdout);
        rc = report(path, &o, stdout);
    }
    ra_table_free(&pids);
    return rc;
}
