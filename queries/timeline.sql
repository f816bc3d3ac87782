-- timeline: live heap and allocation rate over time, ready to plot.
--
-- Each process's recording, from 0 to its last allocation or free, cut into `buckets` equal
-- slices. Per slice: its start and end (ns since the recording started), the live heap at its
-- end (bytes and blocks allocated and not yet freed), and the allocations and frees within it
-- (count and bytes), with the allocation rate per second.
--
-- param: buckets = 50  (number of time slices per recording)
-- param: pid = NULL  (only this process; NULL: every process)
--
-- Columns: bucket, start_ns, end_ns, live_bytes, live_blocks, allocs, alloc_bytes, frees,
--          freed_bytes, allocs_per_s, recording, pid
-- Run: sqlite3 out.db < queries/timeline.sql
WITH n(buckets) AS (
    SELECT max(1, cast(coalesce(:buckets, 50) AS INTEGER))
),
span AS MATERIALIZED (
    SELECT a.pid AS pid, a.recording AS recording,
           max(max(a.alloc_after), coalesce(max(a.dealloc_after), 0)) / n.buckets + 1 AS width
    FROM allocations AS a, n
    WHERE a.pid = coalesce(:pid, a.pid)
    GROUP BY a.pid, a.recording
),
series(i) AS (
    SELECT 0 UNION ALL SELECT i + 1 FROM series, n WHERE i + 1 < n.buckets
),
events(pid, recording, i, allocs, alloc_bytes, frees, freed_bytes) AS (
    SELECT a.pid, a.recording, a.alloc_after / w.width, 1, a.size, 0, 0
    FROM allocations AS a JOIN span AS w ON w.pid = a.pid AND w.recording = a.recording
    UNION ALL
    SELECT a.pid, a.recording, a.dealloc_after / w.width, 0, 0, 1, a.size
    FROM allocations AS a JOIN span AS w ON w.pid = a.pid AND w.recording = a.recording
    WHERE a.dealloc_after IS NOT NULL
),
per_bucket AS (
    SELECT pid, recording, i, sum(allocs) AS allocs, sum(alloc_bytes) AS alloc_bytes, sum(frees) AS frees,
           sum(freed_bytes) AS freed_bytes
    FROM events
    GROUP BY pid, recording, i
)
SELECT s.i AS bucket, s.i * w.width AS start_ns, (s.i + 1) * w.width AS end_ns,
       sum(coalesce(b.alloc_bytes, 0) - coalesce(b.freed_bytes, 0))
           OVER (PARTITION BY w.pid, w.recording ORDER BY s.i) AS live_bytes,
       sum(coalesce(b.allocs, 0) - coalesce(b.frees, 0))
           OVER (PARTITION BY w.pid, w.recording ORDER BY s.i) AS live_blocks,
       coalesce(b.allocs, 0) AS allocs, coalesce(b.alloc_bytes, 0) AS alloc_bytes,
       coalesce(b.frees, 0) AS frees, coalesce(b.freed_bytes, 0) AS freed_bytes,
       CAST(coalesce(b.allocs, 0) * 1000000000.0 / w.width AS INTEGER) AS allocs_per_s,
       w.recording AS recording, w.pid AS pid
FROM span AS w
CROSS JOIN series AS s
LEFT JOIN per_bucket AS b ON b.pid = w.pid AND b.recording = w.recording AND b.i = s.i
ORDER BY pid, recording, bucket;
