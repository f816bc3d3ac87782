-- timeline: live heap and allocation rate over time, ready to plot.
--
-- Each process's recording, from 0 to its last allocation or free, cut into `buckets` slices
-- (fewer when the recording is short) made of whole slices of the table `timeline`, so they
-- are equal to within one of those. Per slice: its start and end (ns since the recording
-- started), the live heap at its end (bytes and blocks allocated and not yet freed), the most
-- bytes live at any moment inside it (so the peak shows at any number of slices), and the
-- allocations and frees within it (count and bytes), with the allocation rate per second.
--
-- param: buckets = 50  (number of time slices per recording)
-- param: pid = NULL  (only this process; NULL: every process)
--
-- Columns: bucket, start_ns, end_ns, live_bytes, live_blocks, max_live_bytes, allocs,
--          alloc_bytes, frees, freed_bytes, allocs_per_s, recording, pid
-- Run: sqlite3 out.db < queries/timeline.sql
WITH n(buckets) AS (
    SELECT max(1, cast(coalesce(:buckets, 50) AS INTEGER))
),
slices AS MATERIALIZED (
    SELECT pid, recording, max(bucket) + 1 AS count
    FROM timeline
    WHERE pid = coalesce(:pid, pid)
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
)
SELECT i AS bucket, start_ns, end_ns,
       sum(alloc_bytes - freed_bytes) OVER (PARTITION BY pid, recording ORDER BY i) AS live_bytes,
       sum(allocs - frees) OVER (PARTITION BY pid, recording ORDER BY i) AS live_blocks,
       max_live_bytes, allocs, alloc_bytes, frees, freed_bytes,
       CAST(allocs * 1000000000.0 / (end_ns - start_ns) AS INTEGER) AS allocs_per_s,
       recording, pid
FROM per_bucket
ORDER BY pid, recording, bucket;
