-- lifetimes.sql computed from the raw rows: agree.sh puts the common table expressions below in
-- place of those from per_decade to per_site of queries/lifetimes.sql (the per-stack rows and
-- their sums per site, which the query reads from site_stats and site_lifetimes in by_site)
-- and requires the same rows.
-- replaces: per_decade per_site
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
),
-- The query's rows read from site_stats are all computed in per_site here.
by_site AS (
    SELECT * FROM per_site WHERE 0
),
per_site AS (
    SELECT pid, recording, function, location, sum(l.blocks) AS blocks,
           coalesce(sum(l.freed), 0) AS freed, sum(l.total_ns) AS total_ns, min(l.min_ns) AS min_ns,
           max(l.max_ns) AS max_ns, coalesce(sum(l.b0), 0) AS b0, coalesce(sum(l.b1), 0) AS b1,
           coalesce(sum(l.b2), 0) AS b2, coalesce(sum(l.b3), 0) AS b3, coalesce(sum(l.b4), 0) AS b4,
           coalesce(sum(l.b5), 0) AS b5, coalesce(sum(l.b6), 0) AS b6, coalesce(sum(l.b7), 0) AS b7,
           coalesce(sum(l.b8), 0) AS b8, stack
    FROM (SELECT l.*, coalesce(s.function, '(no backtrace)') AS function,
                 coalesce(s.location, '??') AS location,
                 first_value(l.bt) OVER (PARTITION BY l.pid, l.recording, s.function, s.location
                                         ORDER BY l.blocks DESC, l.bt) AS stack
          FROM per_stack AS l
          LEFT JOIN site AS s ON s.bt = l.bt) AS l
    GROUP BY pid, recording, function, location
)
