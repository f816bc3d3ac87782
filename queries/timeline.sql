-- timeline: live heap and allocation rate over time, ready to plot.
--
-- One process (pid given, or a database of one process): each of its recordings, from 0 to its
-- last allocation or free, cut into `buckets` slices (fewer when the recording is short) made of
-- whole slices of the table `timeline`, so they are equal to within one of those. Per slice:
-- its start and end (ns since the recording started), the live heap at its end (bytes and
-- blocks allocated and not yet freed), the most bytes live at any moment inside it (so the peak
-- shows at any number of slices), and the allocations and frees within it (count and bytes),
-- with the allocation rate per second.
--
-- A process tree (several processes, no pid): the tree's heap, every recording together, in
-- wall-clock time from the first slice of the table `timeline_totals` (start_ns, end_ns: ns
-- since then), cut the same way; the live heap is that of the recordings under way (a process's
-- heap goes when its recording ends), max_live_bytes the most of it at the end of a slice of
-- `timeline_totals` inside the bucket, and recording and pid are empty. Each process's own:
-- --param pid=P.
--
-- param: buckets = 50  (number of time slices per recording)
-- param: pid = NULL  (only this process; NULL: every process, or the tree's)
--
-- Columns: bucket, start_ns, end_ns, live_bytes, live_blocks, max_live_bytes, allocs,
--          alloc_bytes, frees, freed_bytes, allocs_per_s, recording, pid
-- Run: sqlite3 out.db < queries/timeline.sql
WITH n(buckets) AS (
    SELECT max(1, cast(coalesce(:buckets, 50) AS INTEGER))
),
tree(on_tree) AS MATERIALIZED (
    SELECT :pid IS NULL AND (SELECT count(DISTINCT pid) FROM processes) > 1
),
slices AS MATERIALIZED (
    SELECT pid, recording, max(bucket) + 1 AS count
    FROM timeline
    WHERE pid = coalesce(:pid, pid) AND NOT (SELECT on_tree FROM tree)
    GROUP BY pid, recording
),
per_bucket AS (
    SELECT t.pid AS pid, t.recording AS recording, t.bucket * n.buckets / s.count AS i,
           min(t.start_ns) AS start_ns, max(t.end_ns) AS end_ns,
           max(t.max_live_bytes) AS max_live_bytes, sum(t.allocs) AS allocs,
           sum(t.alloc_bytes) AS alloc_bytes, sum(t.frees) AS frees,
           sum(t.freed_bytes) AS freed_bytes
    FROM timeline AS t
    JOIN slices AS s ON s.pid = t.pid AND s.recording = t.recording, n
    GROUP BY 1, 2, 3
),
tree_span AS MATERIALIZED (
    SELECT max(bucket) + 1 AS count, min(start_wall_ns) AS t0
    FROM timeline_totals
    WHERE (SELECT on_tree FROM tree)
),
tree_bucket AS (
    SELECT t.bucket * n.buckets / s.count AS i, min(t.start_wall_ns) - s.t0 AS start_ns,
           max(t.end_wall_ns) - s.t0 AS end_ns, max(t.live_bytes) AS max_live_bytes,
           sum(t.allocs) AS allocs, sum(t.alloc_bytes) AS alloc_bytes, sum(t.frees) AS frees,
           sum(t.freed_bytes) AS freed_bytes, max(t.bucket) AS last
    FROM timeline_totals AS t, tree_span AS s, n
    WHERE s.count IS NOT NULL
    GROUP BY 1
)
SELECT * FROM (
    SELECT i AS bucket, start_ns, end_ns,
           sum(alloc_bytes - freed_bytes) OVER (PARTITION BY pid, recording ORDER BY i) AS live_bytes,
           sum(allocs - frees) OVER (PARTITION BY pid, recording ORDER BY i) AS live_blocks,
           max_live_bytes, allocs, alloc_bytes, frees, freed_bytes,
           CAST(allocs * 1000000000.0 / (end_ns - start_ns) AS INTEGER) AS allocs_per_s,
           recording, pid
    FROM per_bucket
    UNION ALL
    SELECT b.i, b.start_ns, b.end_ns, l.live_bytes, l.live_blocks, b.max_live_bytes, b.allocs,
           b.alloc_bytes, b.frees, b.freed_bytes,
           CAST(b.allocs * 1000000000.0 / (b.end_ns - b.start_ns) AS INTEGER), NULL, NULL
    FROM tree_bucket AS b JOIN timeline_totals AS l ON l.bucket = b.last
)
ORDER BY pid, recording, bucket;
