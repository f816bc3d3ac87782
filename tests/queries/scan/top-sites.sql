-- top-sites.sql computed from the raw rows: agree.sh puts the common table expressions below in
-- place of those from per_stack to all_ranked of queries/top-sites.sql (the per-stack rows, their
-- sums per site, which the query reads from site_stats, and each site's places, which it reads
-- for every process from the indexes of site_stats) and requires the same rows.
-- replaces: per_stack all_ranked
per_stack AS (
    SELECT a.pid AS pid, a.recording AS recording, a.bt AS bt, count(*) AS blocks,
           sum(a.size) AS bytes
    FROM allocations AS a
    WHERE a.pid = coalesce(:pid, a.pid)
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
    SELECT pid, recording, function, location, sum(blocks) AS blocks, sum(bytes) AS bytes, stack
    FROM sited
    GROUP BY pid, recording, function, location
),
-- Each site's places among all, by ranking every row.
all_ranked AS (
    SELECT *, rank() OVER (ORDER BY bytes DESC) AS bytes_rank,
              rank() OVER (ORDER BY blocks DESC) AS blocks_rank
    FROM per_site
)
