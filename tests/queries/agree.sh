#!/bin/sh
# agree.sh: the summary tables agree with the raw rows they summarize.
#
#   agree.sh SQLITE3 ROOT DIR LIB RHEAP DB... -- PROG...
#
# Records each PROG (a command line in one word, run by sh) with LIB preloaded and converts it
# with RHEAP into DIR/agree-N.db; then, for those and every DB given, runs each canned query of
# ROOT/queries that reads summaries and its twin in ROOT/tests/queries/scan, which computes the
# same answer from `allocations` and `backtraces` alone, and requires the rows to be identical.
# The summary tables themselves are compared the same way, stack by stack and slice by slice.
set -eu

die() {
    echo "agree.sh: $*" >&2
    exit 1
}

[ $# -ge 6 ] || die "usage: agree.sh SQLITE3 ROOT DIR LIB RHEAP DB... -- PROG..."
sqlite=$1 root=$2 dir=$3 lib=$4 rheap=$5
shift 5
dbs=
while [ $# -gt 0 ] && [ "$1" != -- ]; do
    [ -f "$1" ] || die "$1: no such database (its fixture test makes it)"
    dbs="$dbs $1"
    shift
done
[ $# -gt 0 ] && shift
mkdir -p "$dir"
n=0
for prog in "$@"; do
    n=$((n + 1))
    rec=$dir/agree-rec-$n
    rm -rf "$rec" "$dir/agree-$n.db"
    mkdir -p "$rec"
    RHEAP_DIR=$rec LD_PRELOAD=$lib sh -c "$prog" >/dev/null 2>"$dir/agree-$n.err" ||
        { cat "$dir/agree-$n.err" >&2; die "$prog failed"; }
    "$rheap" convert "$rec"/rip-* -o "$dir/agree-$n.db" 2>>"$dir/agree-$n.err" ||
        { cat "$dir/agree-$n.err" >&2; die "rheap convert of $prog failed"; }
    dbs="$dbs $dir/agree-$n.db"
done

# Each summary table against the same figures computed from the rows; the allocation site of
# each stack against the rule of schema.sql's view `frames` applied to its frames; the stacks'
# lists of distinct frames (stack_frames, unique_frames) decoded against `backtraces`, each
# distinct frame once, numbered from 1 without a gap.
tables_summary='
SELECT id, function, location FROM stacks ORDER BY id;
SELECT pid, recording, bt, blocks, bytes, freed_blocks, freed_bytes, leaked_blocks, leaked_bytes,
       first_ns, last_ns, leak_first_ns, leak_last_ns, min_size, max_size, life_min_ns,
       life_max_ns, life_total_ns
FROM stack_stats ORDER BY pid, recording, bt;
SELECT pid, recording, bt, decade, blocks, bytes FROM stack_lifetimes ORDER BY pid, recording, bt, decade;
SELECT pid, recording, bt, min_size, blocks, bytes, leaked_blocks, leaked_bytes FROM stack_sizes
ORDER BY pid, recording, bt, min_size;
SELECT pid, recording, allocs, alloc_bytes, frees, freed_bytes, leaked_blocks, leaked_bytes, end_ns
FROM recording_stats ORDER BY pid, recording;
SELECT bucket, start_ns, end_ns, max_live_bytes, live_bytes, live_blocks, allocs, alloc_bytes, frees,
       freed_bytes, recording, pid
FROM timeline ORDER BY pid, recording, bucket;
SELECT pid, recording, t, bt, blocks, bytes FROM marker_stacks
WHERE t IN (SELECT t FROM markers AS m WHERE m.pid = marker_stacks.pid AND m.recording = marker_stacks.recording)
ORDER BY pid, recording, t, bt;
SELECT s.pid, s.recording, n.function, n.location, stacks, blocks, bytes, freed_blocks, freed_bytes,
       leaked_blocks, leaked_bytes, first_ns, last_ns, leak_first_ns, leak_last_ns, min_size, max_size,
       life_min_ns, life_max_ns, life_total_ns, bytes_stack, blocks_stack, leak_stack, growth_stack
FROM site_stats AS s JOIN sites AS n ON n.id = s.site ORDER BY s.pid, s.recording, n.function, n.location;
SELECT s.pid, s.recording, n.function, n.location, decade, blocks, bytes
FROM site_lifetimes AS s JOIN sites AS n ON n.id = s.site ORDER BY s.pid, s.recording, n.function, n.location, decade;
SELECT s.pid, s.recording, n.function, n.location, bucket, blocks, bytes
FROM site_leaks AS s JOIN sites AS n ON n.id = s.site ORDER BY s.pid, s.recording, n.function, n.location, bucket;
SELECT pid, recording, min_size, blocks, bytes, leaked_blocks, leaked_bytes FROM recording_sizes
ORDER BY pid, recording, min_size;
SELECT count(*) FROM stacks AS k JOIN sites AS n ON n.id = k.site AND n.function = k.function AND n.location = k.location;
SELECT bt, recordings, blocks, bytes, leaked_blocks, leaked_bytes, stopped_blocks, stopped_bytes
FROM stack_totals ORDER BY bt;
SELECT bt, peak_blocks, peak_bytes, temporary_blocks, temporary_bytes FROM stack_totals ORDER BY bt;
SELECT bt, decade, blocks, bytes FROM stack_lifetime_totals ORDER BY bt, decade;
SELECT bucket, start_wall_ns, end_wall_ns, recordings, allocs, alloc_bytes, frees, freed_bytes,
       ended_blocks, ended_bytes, live_blocks, live_bytes, started
FROM timeline_totals ORDER BY bucket;
SELECT s.id, f.key, u.file, u.line, u.sym, u.module, u.offset, u.inlined,
       sum(f.value > 0) OVER (PARTITION BY s.id ORDER BY f.key) - 1
FROM stack_frames AS s, json_each(s.frames) AS f JOIN unique_frames AS u ON u.id = abs(f.value)
ORDER BY s.id, f.key;
SELECT count(*), min(id), max(id) FROM unique_frames;
SELECT r.pid, r.recording, s.bt, s.blocks, s.leaked_bytes
FROM recording_rows AS r JOIN stack_stats AS s ON s.rowid BETWEEN r.first_row AND r.last_row
ORDER BY s.rowid;
SELECT count(*) FROM recording_rows;
'
tables_scan='
SELECT s.id, s.function, s.location
FROM (SELECT id, coalesce(min(frame_no) FILTER (WHERE NOT plumbing), 0) AS frame_no
      FROM frames GROUP BY id) AS k
JOIN frame_sites AS s ON s.id = k.id AND s.frame_no = k.frame_no
ORDER BY s.id;
SELECT pid, recording, bt, count(*), sum(size), count(dealloc_after), coalesce(sum(size) FILTER (WHERE dealloc_after IS NOT NULL), 0),
       sum(dealloc_after IS NULL), coalesce(sum(size) FILTER (WHERE dealloc_after IS NULL), 0),
       min(alloc_after), max(alloc_after), min(alloc_after) FILTER (WHERE dealloc_after IS NULL),
       max(alloc_after) FILTER (WHERE dealloc_after IS NULL), min(size), max(size),
       min(dealloc_after - alloc_after), max(dealloc_after - alloc_after), sum(dealloc_after - alloc_after)
FROM allocations GROUP BY pid, recording, bt ORDER BY pid, recording, bt;
SELECT pid, recording, bt, d, count(*), sum(size)
FROM (SELECT pid, recording, bt, size, CASE WHEN dealloc_after - alloc_after < 1000 THEN 0
                                      ELSE min(8, length(dealloc_after - alloc_after) - 3) END AS d
      FROM allocations WHERE dealloc_after IS NOT NULL)
GROUP BY pid, recording, bt, d ORDER BY pid, recording, bt, d;
SELECT pid, recording, bt, lo, count(*), sum(size), sum(dealloc_after IS NULL),
       coalesce(sum(size) FILTER (WHERE dealloc_after IS NULL), 0)
FROM (SELECT *, CASE WHEN size = 0 THEN 0 ELSE
        (SELECT max(1 << k) FROM (WITH RECURSIVE b(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM b WHERE k < 62) SELECT k FROM b)
         WHERE (1 << k) <= size) END AS lo FROM allocations)
GROUP BY pid, recording, bt, lo ORDER BY pid, recording, bt, lo;
SELECT pid, recording, count(*), sum(size), count(dealloc_after), coalesce(sum(size) FILTER (WHERE dealloc_after IS NOT NULL), 0),
       sum(dealloc_after IS NULL), coalesce(sum(size) FILTER (WHERE dealloc_after IS NULL), 0),
       max(max(alloc_after), coalesce(max(dealloc_after), 0))
FROM allocations GROUP BY pid, recording ORDER BY pid, recording;
WITH w AS MATERIALIZED (SELECT pid, recording, timeline_width_ns AS width, end_ns FROM recording_stats),
series(pid, recording, i) AS (
    SELECT pid, recording, 0 FROM w
    UNION ALL
    SELECT s.pid, s.recording, s.i + 1 FROM series AS s JOIN w ON w.pid = s.pid AND w.recording = s.recording
    WHERE s.i + 1 <= w.end_ns / w.width),
events(pid, recording, t, d, n) AS (
    SELECT pid, recording, alloc_after, size, 1 FROM allocations
    UNION ALL
    SELECT pid, recording, dealloc_after, -size, -1 FROM allocations WHERE dealloc_after IS NOT NULL),
inst AS (SELECT pid, recording, t, sum(d) AS d FROM events GROUP BY pid, recording, t),
run AS (SELECT pid, recording, t, sum(d) OVER (PARTITION BY pid, recording ORDER BY t) AS live FROM inst),
top AS (SELECT r.pid, r.recording, r.t / w.width AS i, max(r.live) AS mx
        FROM run AS r JOIN w ON w.pid = r.pid AND w.recording = r.recording GROUP BY 1, 2, 3),
counts AS (SELECT e.pid, e.recording, e.t / w.width AS i, sum(n > 0) AS allocs,
                  sum(CASE WHEN n > 0 THEN d ELSE 0 END) AS alloc_bytes, sum(n < 0) AS frees,
                  sum(CASE WHEN n < 0 THEN -d ELSE 0 END) AS freed_bytes
           FROM events AS e JOIN w ON w.pid = e.pid AND w.recording = e.recording GROUP BY 1, 2, 3),
grid AS (
    SELECT s.pid, s.recording, s.i, w.width, coalesce(c.allocs, 0) AS allocs,
           coalesce(c.alloc_bytes, 0) AS alloc_bytes, coalesce(c.frees, 0) AS frees,
           coalesce(c.freed_bytes, 0) AS freed_bytes, m.mx
    FROM series AS s JOIN w ON w.pid = s.pid AND w.recording = s.recording
    LEFT JOIN counts AS c ON c.pid = s.pid AND c.recording = s.recording AND c.i = s.i
    LEFT JOIN top AS m ON m.pid = s.pid AND m.recording = s.recording AND m.i = s.i),
ran AS (
    SELECT *, sum(alloc_bytes - freed_bytes) OVER (PARTITION BY pid, recording ORDER BY i) AS live_bytes,
           sum(allocs - frees) OVER (PARTITION BY pid, recording ORDER BY i) AS live_blocks
    FROM grid)
SELECT i, i * width, (i + 1) * width,
       max(coalesce(mx, live_bytes - alloc_bytes + freed_bytes), live_bytes - alloc_bytes + freed_bytes),
       live_bytes, live_blocks, allocs, alloc_bytes, frees, freed_bytes, recording, pid
FROM ran ORDER BY pid, recording, i;
SELECT a.pid, a.recording, m.t, a.bt, count(*), sum(a.size)
FROM (SELECT DISTINCT pid, recording, t FROM markers) AS m
JOIN allocations AS a ON a.pid = m.pid AND a.recording = m.recording
WHERE a.alloc_after <= m.t AND (a.dealloc_after IS NULL OR a.dealloc_after > m.t)
GROUP BY a.pid, a.recording, m.t, a.bt ORDER BY a.pid, a.recording, m.t, a.bt;
CREATE TEMP TABLE sited AS
SELECT a.pid, a.recording, a.bt, a.size, a.alloc_after, a.dealloc_after,
       a.dealloc_after - a.alloc_after AS life, coalesce(k.function, '\''(no backtrace)'\'') AS function,
       coalesce(k.location, '\''??'\'') AS location
FROM allocations AS a LEFT JOIN stacks AS k ON k.id = a.bt;
WITH per_stack AS (
    SELECT pid, recording, function, location, bt, count(*) AS blocks, sum(size) AS bytes,
           sum(dealloc_after IS NULL) AS leaked, coalesce(sum(size) FILTER (WHERE dealloc_after IS NULL), 0) AS leaked_bytes
    FROM sited GROUP BY pid, recording, function, location, bt),
ranked AS (
    SELECT *, first_value(bt) OVER (PARTITION BY pid, recording, function, location ORDER BY bytes DESC, bt) AS by_bytes,
           first_value(bt) OVER (PARTITION BY pid, recording, function, location ORDER BY blocks DESC, bt) AS by_blocks,
           first_value(bt) OVER (PARTITION BY pid, recording, function, location ORDER BY leaked > 0 DESC, leaked_bytes DESC, bt) AS by_leak
    FROM per_stack),
picks AS (
    SELECT pid, recording, function, location, count(*) AS stacks, min(by_bytes) AS by_bytes, min(by_blocks) AS by_blocks,
           CASE WHEN max(leaked) > 0 THEN min(by_leak) END AS by_leak
    FROM ranked GROUP BY pid, recording, function, location)
SELECT a.pid, a.recording, a.function, a.location, p.stacks, count(*), sum(size), count(dealloc_after),
       coalesce(sum(size) FILTER (WHERE dealloc_after IS NOT NULL), 0), sum(dealloc_after IS NULL),
       coalesce(sum(size) FILTER (WHERE dealloc_after IS NULL), 0), min(alloc_after), max(alloc_after),
       min(alloc_after) FILTER (WHERE dealloc_after IS NULL), max(alloc_after) FILTER (WHERE dealloc_after IS NULL),
       min(size), max(size), min(life), max(life), sum(life), p.by_bytes, p.by_blocks, p.by_leak, p.by_leak
FROM sited AS a JOIN picks AS p ON p.pid = a.pid AND p.recording = a.recording AND p.function = a.function
     AND p.location = a.location
GROUP BY a.pid, a.recording, a.function, a.location ORDER BY a.pid, a.recording, a.function, a.location;
SELECT pid, recording, function, location, d, count(*), sum(size)
FROM (SELECT *, CASE WHEN life < 1000 THEN 0 ELSE min(8, length(life) - 3) END AS d FROM sited WHERE life IS NOT NULL)
GROUP BY pid, recording, function, location, d ORDER BY pid, recording, function, location, d;
SELECT a.pid, a.recording, a.function, a.location, a.alloc_after / r.timeline_width_ns, count(*), sum(a.size)
FROM sited AS a JOIN recording_stats AS r ON r.pid = a.pid AND r.recording = a.recording
WHERE a.dealloc_after IS NULL GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5;
SELECT pid, recording, lo, count(*), sum(size), sum(dealloc_after IS NULL),
       coalesce(sum(size) FILTER (WHERE dealloc_after IS NULL), 0)
FROM (SELECT *, CASE WHEN size = 0 THEN 0 ELSE
        (SELECT max(1 << k) FROM (WITH RECURSIVE b(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM b WHERE k < 62) SELECT k FROM b)
         WHERE (1 << k) <= size) END AS lo FROM sited)
GROUP BY pid, recording, lo ORDER BY pid, recording, lo;
SELECT count(*) FROM stacks;
WITH per AS (
    SELECT pid, recording, bt, count(*) AS blocks, sum(size) AS bytes, sum(dealloc_after IS NULL) AS lb,
           coalesce(sum(size) FILTER (WHERE dealloc_after IS NULL), 0) AS ly
    FROM allocations GROUP BY pid, recording, bt)
SELECT p.bt, count(*), sum(p.blocks), sum(p.bytes), sum(CASE WHEN e.until_exit THEN p.lb ELSE 0 END),
       sum(CASE WHEN e.until_exit THEN p.ly ELSE 0 END), sum(CASE WHEN e.until_exit THEN 0 ELSE p.lb END),
       sum(CASE WHEN e.until_exit THEN 0 ELSE p.ly END)
FROM per AS p JOIN recording_ends AS e ON e.pid = p.pid AND e.recording = p.recording
GROUP BY p.bt ORDER BY p.bt;
SELECT bt, sum(peak_blocks), sum(peak_bytes), sum(temporary_blocks), sum(temporary_bytes)
FROM stack_stats GROUP BY bt ORDER BY bt;
SELECT bt, decade, sum(blocks), sum(bytes) FROM stack_lifetimes GROUP BY bt, decade
ORDER BY bt, decade;
WITH RECURSIVE
recs AS (
    SELECT p.pid, p.recording, coalesce(p.start_wall_ns, 0) AS wall, r.end_ns
    FROM processes AS p JOIN recording_stats AS r ON r.pid = p.pid AND r.recording = p.recording
    WHERE EXISTS (SELECT 1 FROM timeline AS t WHERE t.pid = p.pid AND t.recording = p.recording)),
pts(t, allocs, alloc_bytes, frees, freed_bytes, ended_blocks, ended_bytes, started, ended) AS (
    SELECT r.wall + t.start_ns, t.allocs, t.alloc_bytes, t.frees, t.freed_bytes, 0, 0, t.bucket = 0, 0
    FROM timeline AS t JOIN recs AS r ON r.pid = t.pid AND r.recording = t.recording
    WHERE t.bucket = 0 OR t.allocs <> 0 OR t.alloc_bytes <> 0 OR t.frees <> 0 OR t.freed_bytes <> 0
    UNION ALL
    SELECT r.wall + r.end_ns, 0, 0, 0, 0, sum(t.allocs) - sum(t.frees),
           sum(t.alloc_bytes) - sum(t.freed_bytes), 0, 1
    FROM recs AS r JOIN timeline AS t ON t.pid = r.pid AND t.recording = r.recording
    GROUP BY r.pid, r.recording),
w(width) AS (SELECT 1024 UNION ALL SELECT width * 2 FROM w WHERE width < 4611686018427387904),
grid AS (SELECT min(width) AS width FROM w
         WHERE (SELECT max(t) / w.width - min(t) / w.width FROM pts) < 1024),
lo AS (SELECT min(t) / width AS lo FROM pts, grid),
sums AS (
    SELECT t / width - lo AS i, sum(allocs) AS allocs, sum(alloc_bytes) AS alloc_bytes,
           sum(frees) AS frees, sum(freed_bytes) AS freed_bytes, sum(ended_blocks) AS ended_blocks,
           sum(ended_bytes) AS ended_bytes, sum(started) AS started, sum(ended) AS ended
    FROM pts, grid, lo GROUP BY 1),
series(i) AS (
    SELECT 0 WHERE EXISTS (SELECT 1 FROM sums)
    UNION ALL SELECT i + 1 FROM series WHERE i < (SELECT max(i) FROM sums)),
slots AS (
    SELECT s.i, coalesce(x.allocs, 0) AS allocs, coalesce(x.alloc_bytes, 0) AS alloc_bytes,
           coalesce(x.frees, 0) AS frees, coalesce(x.freed_bytes, 0) AS freed_bytes,
           coalesce(x.ended_blocks, 0) AS ended_blocks, coalesce(x.ended_bytes, 0) AS ended_bytes,
           coalesce(x.started, 0) AS started, coalesce(x.ended, 0) AS ended
    FROM series AS s LEFT JOIN sums AS x ON x.i = s.i)
SELECT i, (lo + i) * width, (lo + i + 1) * width,
       sum(started) OVER win - sum(ended) OVER win + ended, allocs, alloc_bytes, frees,
       freed_bytes, ended_blocks, ended_bytes, sum(allocs - frees - ended_blocks) OVER win,
       sum(alloc_bytes - freed_bytes - ended_bytes) OVER win, started
FROM slots, grid, lo WINDOW win AS (ORDER BY i) ORDER BY i;
SELECT id, frame_no, file, line, sym, module, offset, inlined, ip_index FROM backtraces
ORDER BY id, frame_no;
SELECT count(*), CASE WHEN count(*) > 0 THEN 1 END, CASE WHEN count(*) > 0 THEN count(*) END
FROM (SELECT DISTINCT file, line, sym, module, offset, inlined FROM backtraces);
SELECT pid, recording, bt, blocks, leaked_bytes FROM stack_stats ORDER BY rowid;
SELECT count(*) FROM recording_stats;
'

# The summaries are the heap's: the scans read `allocations` without the program's own mappings
# (calls 46 and 47, schema.sql), through a temporary view of that name, which comes before the
# database's own.
heap_only='CREATE TEMP VIEW allocations AS SELECT * FROM main.allocations WHERE call NOT IN (46, 47);'

compare() { # name db summary-sql scan-sql
    name=$1 db=$2
    printf '%s\n' "$3" >"$dir/agree-sum.sql"
    printf '%s\n%s\n' "$heap_only" "$4" >"$dir/agree-scan.sql"
    "$sqlite" -batch -bail "$db" <"$dir/agree-sum.sql" >"$dir/agree-sum.txt" || die "$db: $name: summary SQL failed"
    "$sqlite" -batch -bail "$db" <"$dir/agree-scan.sql" >"$dir/agree-scan.txt" || die "$db: $name: scan SQL failed"
    if ! diff -u "$dir/agree-scan.txt" "$dir/agree-sum.txt" >"$dir/agree-diff.txt"; then
        head -n 40 "$dir/agree-diff.txt" >&2
        die "$db: $name: the summary differs from the scan (- scan, + summary)"
    fi
    rows=$((rows + $(wc -l <"$dir/agree-sum.txt")))
}

# The twin of a query file: the file with the common table expressions that read summaries
# replaced by the scan file's, which read the raw rows; or the scan file itself when it replaces
# the whole query.
twin() { # query-file scan-file
    names=$(sed -n 's/^-- replaces: //p' "$2")
    [ -n "$names" ] || die "$2: no '-- replaces:' line"
    if [ "$names" = "the whole query" ]; then
        cat "$2"
        return
    fi
    awk -v names="$names" -v frag="$2" '
        BEGIN { n = split(names, r, " "); first = r[1]; last = r[n] }
        !done && !skip && $0 ~ "^" first "(\\(.*\\))? AS" { skip = 1 }
        skip && $0 ~ "^" last "(\\(.*\\))? AS" { inlast = 1 }
        skip && inlast && /^\),?$/ {
            comma = ($0 == "),") ? "," : ""
            while ((getline line < frag) > 0)
                if (line !~ /^-- /) buf = buf line "\n"
            sub(/\)\n$/, ")" comma "\n", buf)
            printf "%s", buf
            skip = 0; done = 1; next
        }
        !skip { print }
        END { if (!done) { print "agree.sh: " first " not found" > "/dev/stderr"; exit 1 } }
    ' "$1"
}

total=0
for db in $dbs; do
    rows=0
    compare tables "$db" "$tables_summary" "$tables_scan"
    for scan in "$root"/tests/queries/scan/*.sql; do
        q=$(basename "$scan")
        twin "$root/queries/$q" "$scan" >"$dir/agree-twin.sql" || die "$scan: cannot make the twin of $q"
        compare "$q" "$db" "$(cat "$root/queries/$q")" "$(cat "$dir/agree-twin.sql")"
    done
    [ $rows -gt 0 ] || die "$db: no rows at all, nothing was compared"
    echo "$(basename "$db"): $rows rows agree"
    total=$((total + rows))
done
echo "agree: $total rows, summaries and scans identical"
