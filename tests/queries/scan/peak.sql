-- peak: when was the most heap live, and which allocation sites held it?
--
-- Per recording: the moment at which the live heap (bytes allocated and not yet freed) was
-- largest, counting every event of the same ns together, and each allocation site's blocks live
-- at that moment, most bytes first. The bytes of the rows of one recording add up to its
-- peak_bytes. When the same largest value was reached at several moments, peak_ns is one of
-- them.
--
-- param: pid = NULL  (only this process; NULL: every process)
-- param: skip = NULL  (GLOB of more function names to skip as allocation wrappers, e.g. 'xmalloc')
--
-- Columns: blocks, bytes, function, location, peak_ns, peak_bytes, recording, pid
-- Run: sqlite3 out.db < queries/peak.sql
WITH site(bt, function, location) AS (
    -- The allocation site of each stack; agree.sh checks the table `stacks` against the rule
    -- applied to the frames once.
    SELECT id, function, location FROM stacks
),
events(pid, recording, t, delta) AS (
    SELECT a.pid, a.recording, a.alloc_after, a.size FROM allocations AS a
    WHERE a.pid = coalesce(:pid, a.pid)
    UNION ALL
    SELECT a.pid, a.recording, a.dealloc_after, -a.size FROM allocations AS a
    WHERE a.dealloc_after IS NOT NULL AND a.pid = coalesce(:pid, a.pid)
),
-- The running sum's default frame takes all events of the same ns at once, so `live` is the
-- heap after that ns. The row holding max() lends its t to the bare column (SQLite's rule for
-- min/max aggregates); one window and one grouping is half the work of first keeping the rows
-- that set a new high.
peak(pid, recording, t, bytes) AS MATERIALIZED (
    SELECT pid, recording, min(t), live
    FROM (SELECT pid, recording, t, live, max(live) OVER (PARTITION BY pid, recording) AS top
          FROM (SELECT pid, recording, t,
                       sum(delta) OVER (PARTITION BY pid, recording ORDER BY t) AS live
                FROM events))
    WHERE live = top
    GROUP BY pid, recording
),
per_stack AS (
    SELECT a.pid AS pid, a.recording AS recording, a.bt AS bt, count(*) AS blocks,
           sum(a.size) AS bytes, p.t AS peak_ns, p.bytes AS peak_bytes
    FROM allocations AS a
    JOIN peak AS p ON p.pid = a.pid AND p.recording = a.recording
    WHERE a.alloc_after <= p.t AND (a.dealloc_after IS NULL OR a.dealloc_after > p.t)
    GROUP BY a.pid, a.recording, a.bt
),
-- Each site's stack with the most bytes stands for the site (rheap stack ID DB prints it).
sited AS (
    SELECT l.*, coalesce(s.function, '(no backtrace)') AS function,
           coalesce(s.location, '??') AS location,
           first_value(l.bt) OVER (PARTITION BY l.pid, l.recording, s.function, s.location
                                   ORDER BY l.bytes DESC, l.bt) AS stack
    FROM per_stack AS l
    LEFT JOIN site AS s ON s.bt = l.bt
)
SELECT sum(blocks) AS blocks, sum(bytes) AS bytes, function, location, peak_ns, peak_bytes, stack,
       recording, pid
FROM sited
GROUP BY pid, recording, function, location
ORDER BY pid, recording, bytes DESC, blocks DESC, function, location;
