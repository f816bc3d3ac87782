-- diff.sql computed from the raw rows: agree.sh puts the common table expressions below in
-- place of per_stack of queries/diff.sql and requires the same rows.
-- replaces: per_stack
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
)
