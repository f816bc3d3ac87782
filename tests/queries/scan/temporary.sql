-- temporary.sql computed from the raw rows: agree.sh puts the common table expressions below in
-- place of per_stack of queries/temporary.sql and requires the same rows.
-- replaces: per_stack
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
)
