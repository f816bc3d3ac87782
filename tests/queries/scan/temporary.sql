-- temporary.sql computed from the raw rows: agree.sh puts the common table expressions below in
-- place of those from per_stack to per_site of queries/temporary.sql (the per-stack rows and their
-- sums per site, which the query reads from site_stats) and requires the same rows.
-- replaces: per_stack per_site
-- Only one of the two branches reads the table: the other's WHERE is false before any row.
-- Equal times count as freed first, as the recorder stamps a free before it happens and an
-- allocation after it returns.
judged AS (
    SELECT pid, recording, bt, size,
           dealloc_after IS NOT NULL AND dealloc_after <= coalesce(next_ns, dealloc_after) AS temp
    FROM (SELECT a.pid AS pid, a.recording AS recording, a.bt AS bt, a.size AS size,
                 a.dealloc_after AS dealloc_after,
                 lead(a.alloc_after) OVER (PARTITION BY a.pid, a.recording, a.alloc_thread
                                           ORDER BY a.alloc_after, a.id) AS next_ns
          FROM allocations AS a
          WHERE :max_ns IS NULL AND a.pid = coalesce(:pid, a.pid))
    UNION ALL
    SELECT a.pid, a.recording, a.bt, a.size,
           a.dealloc_after IS NOT NULL AND a.dealloc_after - a.alloc_after <= cast(:max_ns AS INTEGER)
    FROM allocations AS a
    WHERE :max_ns IS NOT NULL AND a.pid = coalesce(:pid, a.pid)
),
per_stack AS (
    SELECT pid, recording, bt, sum(temp) AS temporary, count(*) AS blocks,
           sum(CASE WHEN temp THEN size ELSE 0 END) AS temporary_bytes
    FROM judged
    GROUP BY pid, recording, bt
),
-- Each site's stack with the most temporary blocks stands for the site (rheap stack ID DB).
sited AS (
    SELECT l.*, coalesce(s.function, '(no backtrace)') AS function,
           coalesce(s.location, '??') AS location,
           first_value(l.bt) OVER (PARTITION BY l.pid, l.recording, s.function, s.location
                                   ORDER BY l.temporary DESC, l.bt) AS stack
    FROM per_stack AS l
    LEFT JOIN site AS s ON s.bt = l.bt
),
per_site AS (
    SELECT pid, recording, function, location, sum(temporary) AS temporary, sum(blocks) AS blocks,
           sum(temporary_bytes) AS temporary_bytes, stack
    FROM sited
    GROUP BY pid, recording, function, location
)
