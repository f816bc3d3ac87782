/*
 * moment.c: the heap at a moment the user picks (`--at 1.8s`, `--at MARKER`), or at the highest
 * point inside a range (`--from A --to B`), per stack and exact, for every picture.
 *
 * The converter keeps checkpoints (schema.sql's table `checkpoints`): at up to 256 cuts of each
 * recording, the live blocks and bytes of every stack, written as a copy of the stacks that
 * changed since the cut before; and for the interval after each cut the rows of `allocations`
 * with an event in it (two ranges of ids and a list). So the heap at T is the checkpoint at or
 * before T, one index seek per stack, plus the blocks of T's interval whose allocation or end
 * falls after the checkpoint and at or before T: about 1/256 of the rows, read by id, never a
 * scan of `allocations`. A block is live at T when it was allocated at or before T and not
 * freed by then, the rule of marker_stacks and of SQL's `alloc_after <= T AND (dealloc_after
 * IS NULL OR dealloc_after > T)`.
 *
 * The highest point of a range: the timeline's slices (their largest live heap, kept by the
 * converter) wholly inside the range name the best slice without reading a row; the two slices
 * the range cuts, and the best one, are swept event by event from their checkpoint. The first
 * instant the heap is highest wins, as for the recording's own peak (queries/peak.sql).
 */
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "analysis.h"

/* One row of `allocations` with an event near the moment: its times decoded (schema.sql's
 * view `allocations`: unscaled when how has 128 set, else in units of 4 ns). */
typedef struct {
    int64_t id, a, e; /* e INT64_MAX: never freed while recording */
    int64_t bt;       /* -1: no backtrace */
    double size;
} mrow_t;

/* A checkpoint row; later points into the statement that read it, or a copy. */
typedef struct {
    int64_t ck, t, free_lo, free_hi, leak_lo, leak_hi;
    double blocks, bytes;
    unsigned char *later;
    size_t nlater;
} ck_t;

typedef struct {
    sqlite3 *db;
    ra_err_t *err;
    int64_t pid, recording;
    double interval; /* profile mode's sampling interval, 0 in a trace */
    mrow_t *rows;
    size_t nrows, caprows;
    ra_status_t status; /* of the failure said */
    int64_t have_lo, have_hi; /* rows holds the intervals of these checkpoints (lo > hi: none) */
    int64_t have_x0, have_x1; /* ... the rows a sweep from have_x0 to have_x1 uses (ROWS_USED) */
} ctx_t;

static int db_fail(ctx_t *c, const char *what)
{
    c->status = ra__fail(c->err, RA_E_INPUT, "%s: %s", what, sqlite3_errmsg(c->db));
    return -1;
}

/* A statement over the recording: ?1 and ?2 are bound to its pid and recording. */
static int prepare(ctx_t *c, const char *sql, sqlite3_stmt **st)
{
    int rc = sqlite3_prepare_v2(c->db, sql, -1, st, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_int64(*st, 1, c->pid);
        sqlite3_bind_int64(*st, 2, c->recording);
    }
    return rc;
}

/* What a sampled block stands for (converter/profile.c's rule): 1 in a trace. */
static double weight(const ctx_t *c, double size)
{
    if (c->interval <= 0 || size <= 0)
        return 1.0;
    return -1.0 / expm1(-size / c->interval);
}

#define CK_COLUMNS "ck, t, free_lo, free_hi, leak_lo, leak_hi, blocks, bytes, later"

/* The checkpoint row st stands on, its list copied. 0, or -1 out of memory (said). */
static int ck_read(ctx_t *c, sqlite3_stmt *st, ck_t *k)
{
    k->ck = sqlite3_column_int64(st, 0);
    k->t = sqlite3_column_int64(st, 1);
    k->free_lo = sqlite3_column_int64(st, 2);
    k->free_hi = sqlite3_column_int64(st, 3);
    k->leak_lo = sqlite3_column_int64(st, 4);
    k->leak_hi = sqlite3_column_int64(st, 5);
    k->blocks = sqlite3_column_double(st, 6);
    k->bytes = sqlite3_column_double(st, 7);
    const void *b = sqlite3_column_blob(st, 8);
    k->nlater = (size_t)sqlite3_column_bytes(st, 8);
    k->later = NULL;
    if (b && k->nlater) {
        if (!(k->later = malloc(k->nlater))) {
            c->status = ra__fail(c->err, RA_E_NOMEM, "out of memory");
            return -1;
        }
        memcpy(k->later, b, k->nlater);
    }
    return 0;
}

/* The checkpoint at or before t (ck 0, at -1, is before every event); free k->later after.
 * 0, or -1 (said). */
static int checkpoint_at(ctx_t *c, int64_t t, ck_t *k)
{
    sqlite3_stmt *st;
    if (prepare(c,
                "SELECT " CK_COLUMNS "\n"
                "FROM checkpoints WHERE pid = ?1 AND recording = ?2 AND t <= ?3\n"
                "ORDER BY ck DESC LIMIT 1",
                &st) != SQLITE_OK)
        return db_fail(c, "checkpoints");
    sqlite3_bind_int64(st, 3, t);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW && ck_read(c, st, k) != 0) {
        sqlite3_finalize(st);
        return -1;
    }
    sqlite3_finalize(st);
    if (rc == SQLITE_ROW)
        return 0;
    if (rc == SQLITE_DONE)
        c->status = ra__fail(c->err, RA_E_INPUT, "checkpoints: no row for process %lld recording %lld; "
                                     "convert the recording again",
                 (long long)c->pid, (long long)c->recording);
    else
        db_fail(c, "checkpoints");
    return -1;
}

/* Appends the rows st returns (id, t, life, how, bt, size). 0, or -1 (said). */
static int read_rows(ctx_t *c, sqlite3_stmt *st)
{
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (rheap_grow(&c->rows, &c->caprows, c->nrows, sizeof *c->rows, 1024) != 0) {
            c->status = ra__fail(c->err, RA_E_NOMEM, "out of memory");
            return -1;
        }
        mrow_t *r = &c->rows[c->nrows++];
        int64_t t = sqlite3_column_int64(st, 1), how = sqlite3_column_int64(st, 3);
        int unscaled = (how & 128) != 0;
        r->id = sqlite3_column_int64(st, 0);
        r->a = unscaled ? t : t * 4;
        if (sqlite3_column_type(st, 2) == SQLITE_NULL)
            r->e = INT64_MAX;
        else
            r->e = unscaled ? t + sqlite3_column_int64(st, 2)
                            : (t + sqlite3_column_int64(st, 2)) * 4;
        r->bt = sqlite3_column_type(st, 4) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 4);
        r->size = sqlite3_column_double(st, 5);
    }
    if (rc != SQLITE_DONE)
        return db_fail(c, "allocations");
    return 0;
}

/* The rows a sweep from x0 to x1 (?5, ?3), starting from the checkpoint at time k (?4), can
 * use: those with an event after k and at or before x1 that are not allocated and ended both
 * between k and x0 (their net effect on x0's heap is nothing). An instant is a sweep with
 * x0 = x1: a block live on both sides of it, or allocated and ended before it, counts for
 * nothing, so of the interval's rows only the few that cross from k to the instant are read.
 * The times are ns in rows with unscaled times (how & 128: ?6 to ?8), else 4 ns units (?3 to
 * ?5). */
#define ROWS_SQL "SELECT id, t, life, how, bt, size FROM allocation_rows WHERE "
#define ROWS_USED                                                                                  \
    " AND CASE WHEN how & 128\n"                                                                   \
    "     THEN t <= ?6 AND (t > ?7 OR t + life <= ?6) AND (t <= ?7 OR life IS NULL OR t + life > ?8)\n" \
    "     ELSE t <= ?3 AND (t > ?4 OR t + life <= ?3) AND (t <= ?4 OR life IS NULL OR t + life > ?5)\n" \
    "     END"

/* ns -> 4 ns units, -1 (before every event) kept. */
static int64_t units(int64_t ns)
{
    return ns < 0 ? -1 : ns / 4;
}

/* Binds ROWS_USED's times. */
static void bind_used(sqlite3_stmt *st, int64_t k, int64_t x0, int64_t x1)
{
    sqlite3_bind_int64(st, 3, units(x1));
    sqlite3_bind_int64(st, 4, units(k));
    sqlite3_bind_int64(st, 5, units(x0));
    sqlite3_bind_int64(st, 6, x1);
    sqlite3_bind_int64(st, 7, k);
    sqlite3_bind_int64(st, 8, x0);
}

/* Adds the rows with an event in the interval after checkpoint ck that a sweep from x0 to x1
 * starting at checkpoint time k uses (ROWS_USED): of the blocks that ended in it, the
 * never-freed ones allocated in it, and those allocated in it that ended later (by id, one seek
 * each). */
static int gather(ctx_t *c, const ck_t *ck, int64_t k, int64_t x0, int64_t x1)
{
    sqlite3_stmt *st;
    for (int i = 0; i < 2; i++) {
        if (sqlite3_prepare_v2(c->db, ROWS_SQL "id >= ?1 AND id < ?2" ROWS_USED, -1, &st,
                               NULL) != SQLITE_OK)
            return db_fail(c, "allocations");
        sqlite3_bind_int64(st, 1, i == 0 ? ck->free_lo : ck->leak_lo);
        sqlite3_bind_int64(st, 2, i == 0 ? ck->free_hi : ck->leak_hi);
        bind_used(st, k, x0, x1);
        int rc = read_rows(c, st);
        sqlite3_finalize(st);
        if (rc != 0)
            return -1;
    }
    if (!ck->nlater)
        return 0;
    if (sqlite3_prepare_v2(c->db, ROWS_SQL "id = ?1" ROWS_USED, -1, &st, NULL) != SQLITE_OK)
        return db_fail(c, "allocations");
    bind_used(st, k, x0, x1);
    uint64_t id = 0;
    for (size_t pos = 0; pos < ck->nlater;) {
        uint64_t d = 0;
        for (unsigned sh = 0; pos < ck->nlater && sh < 64; sh += 7) {
            unsigned char b = ck->later[pos++];
            d |= (uint64_t)(b & 127) << sh;
            if (!(b & 128))
                break;
        }
        id += d;
        sqlite3_bind_int64(st, 1, (sqlite3_int64)id);
        if (read_rows(c, st) != 0) {
            sqlite3_finalize(st);
            return -1;
        }
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    return 0;
}

static int cmp_row(const void *x, const void *y)
{
    const mrow_t *a = x, *b = y;
    return a->id < b->id ? -1 : a->id > b->id;
}

/* Sorts the gathered rows by id and keeps each once: a block listed as ending after its
 * interval may also lie in the free range of the same (merged) interval, or of the next one
 * a sweep reads. */
static void unique_rows(ctx_t *c)
{
    if (!c->nrows)
        return;
    qsort(c->rows, c->nrows, sizeof *c->rows, cmp_row);
    size_t n = 1;
    for (size_t i = 1; i < c->nrows; i++)
        if (c->rows[i].id != c->rows[n - 1].id)
            c->rows[n++] = c->rows[i];
    c->nrows = n;
}

/* The stat of (c's recording, bt) in m, or NULL. m->stats is sorted by pid, recording, bt. */
static ra_stat_t *stat_of(const ctx_t *c, ra_model_t *m, int64_t bt)
{
    size_t lo = 0, hi = m->nstats;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const ra_stat_t *s = &m->stats[mid];
        int before = s->pid != c->pid ? s->pid < c->pid
                     : s->recording != c->recording ? s->recording < c->recording
                                                    : s->bt < bt;
        if (before)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < m->nstats && m->stats[lo].pid == c->pid && m->stats[lo].recording == c->recording &&
        m->stats[lo].bt == bt)
        return &m->stats[lo];
    return NULL;
}

/* Makes c->rows the rows of the intervals of checkpoints lo .. hi that a sweep from x0 to x1
 * uses, each once, sorted by id; nothing when it holds them already: the same first
 * checkpoint and a sweep around this one (a range's sweep, then the heap at an instant in it;
 * more rows than a sweep needs do no harm, as such a row counts for nothing). 0, or -1
 * (said). */
static int load_span(ctx_t *c, int64_t lo, int64_t hi, int64_t x0, int64_t x1)
{
    if (c->have_lo == lo && hi <= c->have_hi && c->have_x0 <= x0 && x1 <= c->have_x1)
        return 0;
    c->nrows = 0;
    c->have_lo = 1;
    c->have_hi = 0;
    sqlite3_stmt *st;
    if (prepare(c,
                "SELECT " CK_COLUMNS "\n"
                "FROM checkpoints WHERE pid = ?1 AND recording = ?2 AND ck BETWEEN ?3 AND ?4",
                &st) != SQLITE_OK)
        return db_fail(c, "checkpoints");
    sqlite3_bind_int64(st, 3, lo);
    sqlite3_bind_int64(st, 4, hi);
    int rc;
    int64_t from = 0;
    for (int first = 1; (rc = sqlite3_step(st)) == SQLITE_ROW; first = 0) {
        ck_t k;
        if (ck_read(c, st, &k) != 0) {
            sqlite3_finalize(st);
            return -1;
        }
        if (first)
            from = k.t;
        int g = gather(c, &k, from, x0, x1);
        free(k.later);
        if (g != 0) {
            sqlite3_finalize(st);
            return -1;
        }
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return db_fail(c, "checkpoints");
    unique_rows(c);
    c->have_lo = lo;
    c->have_hi = hi;
    c->have_x0 = x0;
    c->have_x1 = x1;
    return 0;
}

/* Sets the peak figures of c's recording in m to the heap at t, per stack. 0, or -1 (said). */
static int live_at(ctx_t *c, ra_model_t *m, ra_proc_t *p, int64_t t)
{
    ck_t k;
    if (checkpoint_at(c, t, &k) != 0)
        return -1;
    for (size_t i = 0; i < m->nstats; i++)
        if (m->stats[i].pid == c->pid && m->stats[i].recording == c->recording)
            m->stats[i].peak_blocks = m->stats[i].peak_bytes = 0;
    /* Each stack's latest copy at or before the checkpoint: one seek per stack. */
    sqlite3_stmt *st;
    if (prepare(c,
                "SELECT coalesce(s.bt, -1), c.blocks, c.bytes FROM main.stack_stats AS s\n"
                "JOIN checkpoint_stacks AS c ON c.pid = s.pid AND c.recording = s.recording\n"
                "     AND c.bt IS s.bt\n"
                "     AND c.ck = (SELECT max(d.ck) FROM checkpoint_stacks AS d\n"
                "                 WHERE d.pid = s.pid AND d.recording = s.recording AND d.bt IS s.bt\n"
                "                   AND d.ck <= ?3)\n"
                "WHERE s.pid = ?1 AND s.recording = ?2",
                &st) != SQLITE_OK) {
        free(k.later);
        return db_fail(c, "checkpoint_stacks");
    }
    sqlite3_bind_int64(st, 3, k.ck);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        ra_stat_t *s = stat_of(c, m, sqlite3_column_int64(st, 0));
        if (s) {
            s->peak_blocks = sqlite3_column_int64(st, 1);
            s->peak_bytes = sqlite3_column_int64(st, 2);
        }
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        free(k.later);
        return db_fail(c, "checkpoint_stacks");
    }
    free(k.later);
    if (load_span(c, k.ck, k.ck, t, t) != 0)
        return -1;
    double blocks = k.blocks, bytes = k.bytes;
    for (size_t i = 0; i < c->nrows; i++) {
        const mrow_t *r = &c->rows[i];
        int now = r->a <= t && r->e > t, then = r->a <= k.t && r->e > k.t;
        if (now == then)
            continue;
        double w = weight(c, r->size) * (now - then);
        blocks += w;
        bytes += w * r->size;
        ra_stat_t *s = stat_of(c, m, r->bt);
        if (s) {
            s->peak_blocks += llround(w);
            s->peak_bytes += llround(w * r->size);
        }
    }
    p->peak_t = t;
    p->peak_blocks = llround(blocks);
    p->peak_bytes = llround(bytes);
    return 0;
}

/* One event of a sweep: a block starting (+) or ending (-) at t. */
typedef struct {
    int64_t t;
    double bytes;
} event_t;

static int cmp_event(const void *x, const void *y)
{
    const event_t *a = x, *b = y;
    return a->t < b->t ? -1 : a->t > b->t;
}

/* The highest heap over the instants of [x0, x1] (x0's heap counts), and the first instant
 * that has it, into *best / *best_t when higher than *best already is. The rows come from
 * every checkpoint interval the span touches. 0, or -1 (said). */
static int sweep(ctx_t *c, int64_t x0, int64_t x1, double *best, int64_t *best_t)
{
    ck_t k;
    if (checkpoint_at(c, x0, &k) != 0)
        return -1;
    int64_t kt = k.t;
    double h = k.bytes;
    free(k.later);
    /* The rows of every interval from k's to the one holding x1. */
    sqlite3_stmt *st;
    if (prepare(c,
                "SELECT coalesce(max(ck), ?3) FROM checkpoints\n"
                "WHERE pid = ?1 AND recording = ?2 AND t < ?4",
                &st) != SQLITE_OK)
        return db_fail(c, "checkpoints");
    sqlite3_bind_int64(st, 3, k.ck);
    sqlite3_bind_int64(st, 4, x1);
    int rc = sqlite3_step(st);
    int64_t last = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : k.ck;
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW)
        return db_fail(c, "checkpoints");
    if (load_span(c, k.ck, last < k.ck ? k.ck : last, x0, x1) != 0)
        return -1;
    size_t nev = 0;
    event_t *ev = malloc((2 * c->nrows + 1) * sizeof *ev);
    if (!ev) {
        c->status = ra__fail(c->err, RA_E_NOMEM, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < c->nrows; i++) {
        const mrow_t *r = &c->rows[i];
        double b = weight(c, r->size) * r->size;
        if (r->a > kt && r->a <= x1)
            ev[nev++] = (event_t){r->a, b};
        if (r->e != INT64_MAX && r->e > kt && r->e <= x1)
            ev[nev++] = (event_t){r->e, -b};
    }
    if (nev)
        qsort(ev, nev, sizeof *ev, cmp_event);
    size_t i = 0;
    while (i < nev && ev[i].t <= x0)
        h += ev[i++].bytes;
    if (h > *best) {
        *best = h;
        *best_t = x0;
    }
    while (i < nev) {
        int64_t t = ev[i].t;
        while (i < nev && ev[i].t == t)
            h += ev[i++].bytes;
        if (h > *best) {
            *best = h;
            *best_t = t;
        }
    }
    free(ev);
    return 0;
}

/* The first instant of [from, to] at which the heap of c's recording is highest. 0, or -1
 * (said). */
static int peak_in(ctx_t *c, int64_t from, int64_t to, int64_t *at)
{
    /* The slices of the timeline that meet the range: [start, end) each, its largest heap. */
    sqlite3_stmt *st;
    if (prepare(c,
                "SELECT start_ns, end_ns, max_live_bytes FROM timeline\n"
                "WHERE pid = ?1 AND recording = ?2 AND end_ns > ?3 AND start_ns <= ?4\n"
                "ORDER BY bucket",
                &st) != SQLITE_OK)
        return db_fail(c, "timeline");
    sqlite3_bind_int64(st, 3, from);
    sqlite3_bind_int64(st, 4, to);
    int64_t first_end = -1, last_s = -1;
    double first_mx = 0, last_mx = 0;
    int last_whole = 1;
    double best = -1;
    int64_t best_s = -1, best_e = -1;
    double found = -1;
    int64_t found_t = from;
    int rc, n = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t s = sqlite3_column_int64(st, 0), e = sqlite3_column_int64(st, 1);
        double mx = sqlite3_column_double(st, 2);
        if (n++ == 0) {
            first_end = e; /* the slice holding `from`, swept below */
            first_mx = mx;
            continue;
        }
        last_s = s;
        last_mx = mx;
        last_whole = e - 1 <= to;
        if (last_whole && mx > best) {
            best = mx;
            best_s = s;
            best_e = e;
        }
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return db_fail(c, "timeline");
    /* The slice the range starts in (or the whole range when it meets one slice, or none). */
    int64_t end0 = n == 0 || first_end - 1 >= to ? to : first_end - 1;
    /* A cut slice is swept only when its largest heap could win: the first one even when it
     * ties with a later whole slice (the first instant wins), the last only when higher. */
    if ((best < 0 || first_mx >= best) && sweep(c, from, end0, &found, &found_t) != 0)
        return -1;
    /* The slices wholly inside come next in time: one higher than the start names where to
     * look, and is swept for its first highest instant unless the range's last slice, cut by
     * `to`, goes higher still. */
    int in_slice = best > found;
    if (in_slice)
        found = best;
    if (n > 1 && !last_whole && last_mx > found) {
        double tail = found;
        int64_t tail_t = -1;
        if (sweep(c, last_s - 1, to, &tail, &tail_t) != 0)
            return -1;
        if (tail_t >= 0) {
            found_t = tail_t;
            in_slice = 0;
        }
    }
    if (in_slice) {
        double in = -1;
        if (sweep(c, best_s - 1, best_e - 1, &in, &found_t) != 0)
            return -1;
    }
    *at = found_t;
    return 0;
}

/* ---- The user's texts: a time or a marker label ---- */

/* The time `text` names in recording (pid, recording): a duration ("1.8s", plain ns), else the
 * first marker of the recording with that label. 1 with *t set, 0 when the recording has no
 * such marker, -1 on a database error (said). */
static int time_of(ctx_t *c, const char *text, int64_t *t)
{
    if (ra_duration_ns(text, t) == 0)
        return 1;
    sqlite3_stmt *st;
    if (prepare(c,
                "SELECT min(t) FROM markers WHERE pid = ?1 AND recording = ?2 "
                "AND label = ?3",
                &st) != SQLITE_OK)
        return db_fail(c, "markers");
    sqlite3_bind_text(st, 3, text, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st), found = 0;
    if (rc == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
        *t = sqlite3_column_int64(st, 0);
        found = 1;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW)
        return db_fail(c, "markers");
    return found;
}

/* Checks one text: a time or a label some marker of the database has. */
static ra_status_t check_text(sqlite3 *db, const char *opt, const char *text, ra_err_t *err)
{
    int64_t ns;
    if (ra_duration_ns(text, &ns) == 0)
        return RA_OK;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "SELECT group_concat(label, ', ') FROM "
                               "(SELECT DISTINCT label FROM markers ORDER BY label LIMIT 8)",
                           -1, &st, NULL) != SQLITE_OK)
        return ra__fail(err, RA_E_INPUT, "markers: %s", sqlite3_errmsg(db));
    sqlite3_stmt *has;
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM markers WHERE label = ?1", -1, &has, NULL) !=
        SQLITE_OK) {
        sqlite3_finalize(st);
        return ra__fail(err, RA_E_INPUT, "markers: %s", sqlite3_errmsg(db));
    }
    sqlite3_bind_text(has, 1, text, -1, SQLITE_STATIC);
    int found = sqlite3_step(has) == SQLITE_ROW;
    sqlite3_finalize(has);
    ra_status_t r = RA_OK;
    if (!found) {
        const char *labels = sqlite3_step(st) == SQLITE_ROW
                                 ? (const char *)sqlite3_column_text(st, 0) : NULL;
        r = ra__fail(err, RA_E_USAGE,
                     "%s: expected a time (1.8s, 250ms, 1200us, 40ns or plain ns since the "
                     "recording started) or a marker label of the database (%s); got '%s'",
                     opt, labels ? labels : "it has none", text);
    }
    sqlite3_finalize(st);
    return r;
}

ra_status_t ra_moment_check(sqlite3 *db, const ra_moment_t *mo, ra_err_t *err)
{
    if (!mo->at && !mo->from && !mo->to)
        return RA_OK;
    if (mo->at && (mo->from || mo->to))
        return ra__fail(err, RA_E_USAGE, "--at is one moment, --from/--to a range: give one "
                                         "or the other");
    if (!mo->at && (!mo->from || !mo->to))
        return ra__fail(err, RA_E_USAGE, "%s: expected %s too (a range has both ends)",
                        mo->from ? "--from" : "--to", mo->from ? "--to" : "--from");
    const char *opts[] = {"--at", "--from", "--to"}, *texts[] = {mo->at, mo->from, mo->to};
    for (int i = 0; i < 3; i++)
        if (texts[i]) {
            ra_status_t r = check_text(db, opts[i], texts[i], err);
            if (r != RA_OK)
                return r;
        }
    int64_t a, b;
    if (mo->from && ra_duration_ns(mo->from, &a) == 0 && ra_duration_ns(mo->to, &b) == 0 && a > b)
        return ra__fail(err, RA_E_USAGE, "--from %s is after --to %s: expected a range that "
                                         "starts before it ends", mo->from, mo->to);
    return RA_OK;
}

/* ---- Windows: when a recording was recording ---- */

/* The end of window w of recording p: its off, or for one never turned off (the process was
 * killed, or is still recording) the recording's last event. */
static int64_t window_end(const ra_window_t *w, const ra_proc_t *p)
{
    return w->off_t >= 0 ? w->off_t : (p->end_t > w->on_t ? p->end_t : w->on_t);
}

/* Whether recording p of m was recording at some instant of [a, b] (a == b: one moment), the
 * windows' ends included. A recording without any windows row says nothing of its windows
 * and counts as recording throughout. */
static int recorded(const ra_model_t *m, const ra_proc_t *p, int64_t a, int64_t b)
{
    int any = 0;
    for (size_t i = 0; i < m->nwindows; i++) {
        const ra_window_t *w = &m->windows[i];
        if (w->pid != p->pid || w->recording != p->recording)
            continue;
        any = 1;
        if (w->on_t <= b && a <= window_end(w, p))
            return 1;
    }
    return !any;
}

size_t ra_model_windows_text(const ra_model_t *m, const ra_proc_t *p, char *buf, size_t n)
{
    size_t len = 0, count = 0;
    if (n)
        buf[0] = 0;
    for (size_t i = 0; i < m->nwindows && len < n; i++) {
        const ra_window_t *w = &m->windows[i];
        if (w->pid != p->pid || w->recording != p->recording)
            continue;
        int k = snprintf(buf + len, n - len, "%s%.3f .. %.3f ms", count ? ", " : "",
                         (double)w->on_t / 1e6, (double)window_end(w, p) / 1e6);
        if (k < 0)
            break;
        len += (size_t)k;
        count++;
    }
    return count;
}

/* The error of a moment no recording of m was recording at: the windows of each recording,
 * the first few, so that the user can pick a time inside one. */
static ra_status_t unrecorded_fail(const ra_model_t *m, const ra_moment_t *mo, ra_err_t *err)
{
    char list[768], one[256];
    size_t len = 0, shown = 0;
    list[0] = 0;
    for (size_t i = 0; i < m->nprocs; i++) {
        const ra_proc_t *p = &m->procs[i];
        if (shown == 4) {
            snprintf(list + len, sizeof list - len, "; and %zu more recordings", m->nprocs - i);
            break;
        }
        if (ra_model_windows_text(m, p, one, sizeof one) == 0)
            continue;
        char rec[32] = "";
        if (p->recording > 1)
            snprintf(rec, sizeof rec, " recording %lld", (long long)p->recording);
        int k = snprintf(list + len, sizeof list - len, "%spid %lld%s: %s", shown ? "; " : "",
                         (long long)p->pid, rec, one);
        if (k < 0 || (size_t)k >= sizeof list - len)
            break;
        len += (size_t)k;
        shown++;
    }
    if (mo->at)
        return ra__fail(err, RA_E_USAGE, "--at %s: no recording was on then; expected a time "
                        "inside a window, counted from its recording's start (%s)", mo->at, list);
    return ra__fail(err, RA_E_USAGE, "--from %s --to %s: no recording was on at any time of "
                    "it; expected a range that meets a window, counted from its recording's "
                    "start (%s)", mo->from, mo->to, list);
}

ra_status_t ra_model_moment(sqlite3 *db, ra_model_t *m, const ra_moment_t *mo, ra_err_t *err)
{
    if (!mo->at && !mo->from)
        return RA_OK;
    ra_status_t r = ra_moment_check(db, mo, err);
    if (r != RA_OK)
        return r;
    ctx_t c = {.db = db, .err = err};
    int failed = 0;
    /* One read transaction: each of the many short statements below would otherwise take and
     * drop the file's lock on its own. */
    int began = sqlite3_get_autocommit(db) && sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) == SQLITE_OK;
    for (size_t i = 0; i < m->nprocs && !failed; i++) {
        ra_proc_t *p = &m->procs[i];
        c.pid = p->pid;
        c.recording = p->recording;
        c.interval = (double)p->sample_interval;
        c.have_lo = 1; /* nothing read of this recording yet */
        c.have_hi = 0;
        int64_t t = -1, a = -1, b = -1;
        int got;
        p->moment = mo->at ? RA_MOMENT_AT : RA_MOMENT_RANGE;
        p->moment_unrecorded = 0;
        /* Outside its windows a recording's heap is unknown: blocks live when recording went
         * off may have been freed since, and others allocated unseen. The heap as of the last
         * window's end would pass a guess for a measure, so such a recording shows nothing. */
        if (mo->at) {
            got = time_of(&c, mo->at, &t);
            if (got == 1 && !recorded(m, p, t, t)) {
                got = 0;
                p->moment_unrecorded = 1;
            }
        } else {
            got = time_of(&c, mo->from, &a);
            if (got == 1)
                got = time_of(&c, mo->to, &b);
            if (got == 1 && a > b)
                got = 0; /* the markers of this recording come the other way round */
            if (got == 1 && !recorded(m, p, a, b)) {
                got = 0;
                p->moment_unrecorded = 1;
            }
            if (got == 1)
                got = peak_in(&c, a, b, &t) == 0 ? 1 : -1;
        }
        p->moment_from = mo->at ? t : a;
        p->moment_to = mo->at ? t : b;
        if (got < 0) {
            failed = 1;
        } else if (got == 0) {
            /* The moment is not one of this recording's: nothing of it is shown. */
            p->peak_t = -1;
            p->peak_blocks = p->peak_bytes = 0;
            p->moment_from = p->moment_to = -1;
            for (size_t k = 0; k < m->nstats; k++)
                if (m->stats[k].pid == p->pid && m->stats[k].recording == p->recording)
                    m->stats[k].peak_blocks = m->stats[k].peak_bytes = 0;
        } else if (live_at(&c, m, p, t) != 0) {
            failed = 1;
        }
    }
    free(c.rows);
    if (began)
        sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    if (failed)
        return c.status;
    /* A moment no recording was on at answers nothing: say when they were on instead. */
    size_t on = 0, off = 0;
    for (size_t i = 0; i < m->nprocs; i++) {
        on += m->procs[i].moment_from >= 0;
        off += m->procs[i].moment_unrecorded;
    }
    if (on == 0 && off > 0)
        return unrecorded_fail(m, mo, err);
    return RA_OK;
}
