/*
 * open.c: opening a database to read (query, report, stack, export, diff) or to change
 * (resymbolize), with one clear line for everything that can be wrong with the
 * path: missing, a directory, empty, not SQLite, SQLite but not ours, ours but of another
 * schema version, or locked by a writer for longer than the busy timeout.
 *
 * Nothing here creates a file: the path is checked with stat first and SQLite is never given
 * SQLITE_OPEN_CREATE, so a mistyped name leaves no empty database behind.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <sqlite3.h>

#include "analysis.h"
#include "rheap_convert.h"

/* How long a connection waits for a writer (another rheap resymbolize, a sqlite3 shell in a
 * transaction) to let go of its lock before the command gives up. */
#define BUSY_TIMEOUT_MS 5000

/* The message for an SQLite error on the database at path, once it is open. */
static ra_status_t say_sqlite(const char *path, sqlite3 *db, ra_err_t *err)
{
    int code = sqlite3_errcode(db);
    if (code == SQLITE_BUSY || code == SQLITE_LOCKED)
        return ra__fail(err, RA_E_INPUT,
                        "%s: locked by another process for more than %d s; try again when it is "
                        "done",
                        path, BUSY_TIMEOUT_MS / 1000);
    if (code == SQLITE_NOTADB)
        return ra__fail(err, RA_E_INPUT,
                        "%s: not an SQLite database, expected a database made by rheap convert",
                        path);
    if (code == SQLITE_NOMEM)
        return ra__fail(err, RA_E_NOMEM, "%s: out of memory", path);
    return ra__fail(err, RA_E_INPUT, "%s: %s", path, sqlite3_errmsg(db));
}

int ra__has_table(sqlite3 *db, const char *name)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db,
                           "SELECT count(*) FROM sqlite_schema WHERE type IN ('table', 'view') "
                           "AND name = ?1",
                           -1, &st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    int n = rc == SQLITE_ROW ? sqlite3_column_int(st, 0) : -1;
    sqlite3_finalize(st);
    return n < 0 ? -1 : n > 0;
}

/* The schema_version of table meta: its value, 0 when the row is missing or not an integer,
 * -1 on an SQLite error. */
static long long schema_version(sqlite3 *db)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'schema_version'", -1, &st,
                           NULL) != SQLITE_OK)
        return -1;
    int rc = sqlite3_step(st);
    long long v = 0;
    if (rc == SQLITE_ROW && sqlite3_column_type(st, 0) == SQLITE_INTEGER)
        v = sqlite3_column_int64(st, 0);
    else if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        v = -1;
    sqlite3_finalize(st);
    return v;
}

/* Checks that db is a rheap database of the schema this rheap reads. RA_OK, or RA_E_INPUT with
 * the message. */
static ra_status_t check_rheap(const char *path, sqlite3 *db, ra_err_t *err)
{
    int meta = ra__has_table(db, "meta");
    if (meta < 0)
        return say_sqlite(path, db, err);
    if (!meta)
        return ra__fail(err, RA_E_INPUT, "%s: not a rheap database (no table meta)", path);
    long long v = schema_version(db);
    int want = rheap_convert_schema_version();
    if (v < 0)
        return say_sqlite(path, db, err);
    if (v == 0)
        return ra__fail(err, RA_E_INPUT,
                        "%s: not a rheap database (no schema_version in table meta)", path);
    if (v != want)
        return ra__fail(err, RA_E_INPUT,
                        "%s: database schema version %lld (%s rheap), this rheap reads version "
                        "%d; convert the recording again with this rheap (rheap convert RIP... "
                        "-o DB)",
                        path, v, v > want ? "a newer" : "an older", want);
    int allocs = ra__has_table(db, "allocations");
    if (allocs <= 0) {
        if (allocs < 0)
            return say_sqlite(path, db, err);
        return ra__fail(err, RA_E_INPUT, "%s: not a rheap database (no table allocations)", path);
    }
    return RA_OK;
}

static ra_status_t db_open(const char *path, int flags, sqlite3 **out, ra_err_t *err)
{
    *out = NULL;
    struct stat sb;
    if (stat(path, &sb) != 0) {
        if (errno == ENOENT)
            return ra__fail(err, RA_E_INPUT,
                            "%s: no such file; make one with rheap run or rheap convert", path);
        return ra__fail(err, RA_E_INPUT, "%s: %s", path, strerror(errno));
    }
    /* SQLite says "disk I/O error" for a directory and would wait forever on a FIFO. */
    if (!S_ISREG(sb.st_mode))
        return ra__fail(err, RA_E_INPUT, "%s: is a %s, expected a database made by rheap convert",
                        path, S_ISDIR(sb.st_mode) ? "directory" : "special file");
    if (sb.st_size == 0)
        return ra__fail(err, RA_E_INPUT,
                        "%s: empty file, expected a database made by rheap convert", path);
    sqlite3 *db = NULL;
    /* One thread uses a handle at a time: SQLite's own locking of every call is waste (it was
     * a tenth of reading a moment's rows). */
    if (sqlite3_open_v2(path, &db, flags | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
        ra_status_t rc = db ? say_sqlite(path, db, err)
                            : ra__fail(err, RA_E_NOMEM, "%s: out of memory", path);
        sqlite3_close(db);
        return rc;
    }
    sqlite3_busy_timeout(db, BUSY_TIMEOUT_MS);
    ra_status_t rc = check_rheap(path, db, err);
    if (rc != RA_OK) {
        sqlite3_close(db);
        return rc;
    }
    *out = db;
    return RA_OK;
}

ra_status_t ra_open_read(const char *path, sqlite3 **db, ra_err_t *err)
{
    ra_status_t rc = db_open(path, SQLITE_OPEN_READONLY, db, err);
    /* Pages read through the file's mapping instead of copied by pread into SQLite's small
     * cache: an export of a build tree spent a tenth of its CPU in the copies. A database is
     * put in place whole by rename (converter/db.c), never truncated under a reader; SQLite
     * caps the size at its own limit, and a failure leaves plain reads. */
    if (rc == RA_OK)
        sqlite3_exec(*db, "PRAGMA mmap_size = 1099511627776", NULL, NULL, NULL);
    return rc;
}

ra_status_t ra_open_write(const char *path, sqlite3 **db, ra_err_t *err)
{
    return db_open(path, SQLITE_OPEN_READWRITE, db, err);
}

long long ra_sample_interval(sqlite3 *db, const char *pid)
{
    sqlite3_stmt *st = NULL;
    long long v = 0;
    if (sqlite3_prepare_v2(db,
                           "SELECT coalesce(max(sample_interval), 0) FROM processes\n"
                           "WHERE pid = coalesce(?1, pid)",
                           -1, &st, NULL) == SQLITE_OK) {
        if (pid)
            sqlite3_bind_text(st, 1, pid, -1, SQLITE_STATIC);
        if (sqlite3_step(st) == SQLITE_ROW)
            v = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    return v;
}

