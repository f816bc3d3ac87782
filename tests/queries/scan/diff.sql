-- diff.sql computed from the raw rows: agree.sh puts the common table expressions below in
-- place of those from per_stack to per_site of queries/diff.sql (the per-stack rows and their
-- sums per site, which the query reads from site_stats as rows of its answer, by_site_rows)
-- and requires the same rows.
-- replaces: per_stack per_site
per_stack AS (
    SELECT pid, recording, bt, sum(at_a) AS blocks_a, sum(at_a * size) AS bytes_a, sum(at_b) AS blocks_b,
           sum(at_b * size) AS bytes_b
    FROM (SELECT a.pid AS pid, a.recording AS recording, a.bt AS bt, a.size AS size,
                 a.alloc_after <= m.a_ns AND (a.dealloc_after IS NULL OR a.dealloc_after > m.a_ns) AS at_a,
                 a.alloc_after <= m.b_ns AND (a.dealloc_after IS NULL OR a.dealloc_after > m.b_ns) AS at_b
          FROM allocations AS a
          JOIN moments AS m ON m.pid = a.pid AND m.recording = a.recording
          WHERE a.alloc_after <= max(m.a_ns, m.b_ns)
            AND (a.dealloc_after IS NULL OR a.dealloc_after > min(m.a_ns, m.b_ns)))
    WHERE at_a OR at_b
    GROUP BY pid, recording, bt
),
-- Each site's stack whose bytes changed most stands for the site (rheap stack ID DB).
sited AS (
    SELECT l.*, coalesce(s.function, '(no backtrace)') AS function,
           coalesce(s.location, '??') AS location,
           first_value(l.bt) OVER (PARTITION BY l.pid, l.recording, s.function, s.location
                                   ORDER BY abs(l.bytes_b - l.bytes_a) DESC, l.bt) AS stack
    FROM per_stack AS l
    LEFT JOIN site AS s ON s.bt = l.bt
),
-- No rows from the sums per site: every site comes from the rows above.
by_site_rows AS (
    SELECT 0 AS blocks_a, 0 AS bytes_a, 0 AS blocks_b, 0 AS bytes_b, 0 AS delta_blocks,
           0 AS delta_bytes, '' AS function, '' AS location, 0 AS a_ns, 0 AS b_ns, 0 AS stack,
           0 AS recording, 0 AS pid
    WHERE 0
),
per_site AS (
    SELECT pid, recording, function, location, sum(blocks_a) AS blocks_a, sum(bytes_a) AS bytes_a,
           sum(blocks_b) AS blocks_b, sum(bytes_b) AS bytes_b, stack
    FROM sited
    GROUP BY pid, recording, function, location
)
