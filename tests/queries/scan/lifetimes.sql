-- lifetimes.sql computed from the raw rows: agree.sh puts the common table expressions below in
-- place of per_decade and per_stack of queries/lifetimes.sql and requires the same rows.
-- replaces: per_decade per_stack
-- Rows are first grouped by stack and decade, the decade being the number of decimal digits of
-- the lifetime (NULL: never freed), so that each row is looked at once; the decades are spread
-- into columns afterwards, over few rows.
per_decade AS (
    SELECT pid, recording, bt, CASE WHEN life IS NULL THEN NULL WHEN life < 1000 THEN 0
                         ELSE min(8, length(life) - 3) END AS d,
           count(*) AS blocks, sum(life) AS total_ns, min(life) AS min_ns, max(life) AS max_ns
    FROM (SELECT a.pid AS pid, a.recording AS recording, a.bt AS bt,
                 a.dealloc_after - a.alloc_after AS life
          FROM allocations AS a
          WHERE a.pid = coalesce(:pid, a.pid))
    GROUP BY pid, recording, bt, d
),
per_stack AS (
    SELECT pid, recording, bt, sum(blocks) AS blocks, sum(blocks) FILTER (WHERE d IS NOT NULL) AS freed,
           sum(total_ns) AS total_ns, min(min_ns) AS min_ns, max(max_ns) AS max_ns,
           sum(blocks) FILTER (WHERE d = 0) AS b0, sum(blocks) FILTER (WHERE d = 1) AS b1,
           sum(blocks) FILTER (WHERE d = 2) AS b2, sum(blocks) FILTER (WHERE d = 3) AS b3,
           sum(blocks) FILTER (WHERE d = 4) AS b4, sum(blocks) FILTER (WHERE d = 5) AS b5,
           sum(blocks) FILTER (WHERE d = 6) AS b6, sum(blocks) FILTER (WHERE d = 7) AS b7,
           sum(blocks) FILTER (WHERE d = 8) AS b8
    FROM per_decade
    GROUP BY pid, recording, bt
)
