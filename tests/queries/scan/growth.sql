-- growth.sql computed from the raw rows: agree.sh puts the common table expressions below in
-- place of per_stack of queries/growth.sql and requires the same rows.
-- replaces: per_stack
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
)
