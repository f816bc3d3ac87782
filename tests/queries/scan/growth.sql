-- growth.sql computed from the raw rows: agree.sh puts the common table expressions below in
-- place of those from per_stack to site_stack of queries/growth.sql (the per-stack rows and
-- their sums per site and phase, which the query reads from site_leaks) and requires the same rows.
-- replaces: per_stack site_stack
-- The query's default read from site_growth is computed here from the rows too.
fast(yes) AS (
    SELECT 0
),
per_stack AS (
    -- Every never-freed block, put in its phase by its own time.
    SELECT a.pid AS pid, a.recording AS recording, a.bt AS bt,
           a.alloc_after / r.timeline_width_ns * w.n / w.slices AS k, count(*) AS blocks,
           sum(a.size) AS bytes, min(a.alloc_after) AS first_ns, max(a.alloc_after) AS last_ns
    FROM allocations AS a
    JOIN span AS w ON w.pid = a.pid AND w.recording = a.recording
    JOIN recording_stats AS r ON r.pid = a.pid AND r.recording = a.recording
    WHERE a.dealloc_after IS NULL
    GROUP BY 1, 2, 3, 4
),
per_site_phase AS (
    SELECT l.pid AS pid, l.recording AS recording,
           coalesce(s.function, '(no backtrace)') AS function,
           coalesce(s.location, '??') AS location, l.k AS k, sum(l.blocks) AS blocks,
           sum(l.bytes) AS bytes, min(l.first_ns) AS first_ns, max(l.last_ns) AS last_ns
    FROM per_stack AS l
    LEFT JOIN site AS s ON s.bt = l.bt
    GROUP BY 1, 2, 3, 4, 5
),
-- Every phase of the recording, with 0 where the site leaked nothing, in phase order.
grid AS (
    SELECT x.pid AS pid, x.recording AS recording, x.function AS function,
           x.location AS location, p.k AS k, coalesce(y.bytes, 0) AS bytes
    FROM (SELECT DISTINCT pid, recording, function, location FROM per_site_phase) AS x
    JOIN phase AS p ON p.pid = x.pid AND p.recording = x.recording
    LEFT JOIN per_site_phase AS y
           ON y.pid = x.pid AND y.recording = x.recording AND y.function = x.function
          AND y.location = x.location AND y.k = p.k
),
-- A window, not GROUP BY: only a window's ORDER BY fixes the order group_concat sees.
strip AS (
    SELECT DISTINCT pid, recording, function, location,
           group_concat(bytes, ',') OVER (PARTITION BY pid, recording, function, location ORDER BY k
                                          ROWS BETWEEN UNBOUNDED PRECEDING
                                                   AND UNBOUNDED FOLLOWING) AS per_phase
    FROM grid
),
per_site AS (
    SELECT pid, recording, function, location, sum(blocks) AS leaked_blocks,
           sum(bytes) AS leaked_bytes, count(*) AS phases_leaking, min(first_ns) AS first_ns,
           max(last_ns) AS last_ns
    FROM per_site_phase
    GROUP BY pid, recording, function, location
),
-- The site's stack with the most never-freed bytes stands for it (rheap stack ID DB).
site_stack AS (
    SELECT DISTINCT l.pid AS pid, l.recording AS recording,
           coalesce(s.function, '(no backtrace)') AS function, coalesce(s.location, '??') AS location,
           first_value(l.bt) OVER (PARTITION BY l.pid, l.recording, s.function, s.location
                                   ORDER BY l.bytes DESC, l.bt) AS stack
    FROM (SELECT pid, recording, bt, sum(bytes) AS bytes FROM per_stack GROUP BY pid, recording, bt) AS l
    LEFT JOIN site AS s ON s.bt = l.bt
)
