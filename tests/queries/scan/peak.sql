-- peak.sql computed from the raw rows: agree.sh puts the common table expressions below in
-- place of those from per_stack to per_site of queries/peak.sql (the per-stack rows and their
-- sums per site, which the query reads from site_stats) and requires the same rows.
-- replaces: per_stack per_site
events(pid, recording, t, delta) AS (
    SELECT a.pid, a.recording, a.alloc_after, a.size FROM allocations AS a
    WHERE a.pid = coalesce(:pid, a.pid)
    UNION ALL
    SELECT a.pid, a.recording, a.dealloc_after, -a.size FROM allocations AS a
    WHERE a.dealloc_after IS NOT NULL AND a.pid = coalesce(:pid, a.pid)
),
-- The running sum's default frame takes all events of the same ns at once, so `live` is the
-- heap after that ns; the peak is the first ns at which it is largest.
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
),
per_site AS (
    SELECT sum(blocks) AS blocks, sum(bytes) AS bytes, function, location, peak_ns, peak_bytes,
           stack, recording, pid
    FROM sited
    GROUP BY pid, recording, function, location
)
