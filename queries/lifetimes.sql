-- lifetimes: how long do the blocks of each allocation site live?
--
-- Per recording and allocation site: how many blocks, how many were freed while recording and
-- how many never were before the process ended (never_freed is NULL for a recording that
-- stopped while its process went on, a window: schema.sql's view recording_ends), the shortest, mean and longest lifetime of the freed ones (ns from
-- allocation to free), and how many freed blocks fall in each decade of lifetime: under 1 us,
-- 1-10 us, 10-100 us, 100 us-1 ms, 1-10 ms, 10-100 ms, 100 ms-1 s, 1-10 s, 10 s and more. Sites
-- with the most blocks first.
--
-- param: pid = NULL  (only this process; NULL: every process)
-- param: skip = NULL  (GLOB of more function names to skip as allocation wrappers, e.g. 'xmalloc')
--
-- Columns: blocks, freed, never_freed, min_ns, avg_ns, max_ns, under_1us, under_10us,
--          under_100us, under_1ms, under_10ms, under_100ms, under_1s, under_10s, over_10s,
--          function, location, stack, recording, pid
-- Run: sqlite3 out.db < queries/lifetimes.sql
WITH site(bt, function, location) AS (
    -- Per stack, its allocation site: the first frame that is neither allocator plumbing (the
    -- table plumbing_patterns in schema.sql) nor matched by :skip, or frame 0 when every frame
    -- is, named as the view frame_sites says. Without :skip the converter chose it already
    -- (the table `stacks`); with it, the frames are read again.
    SELECT id, function, location FROM stacks WHERE :skip IS NULL
    UNION ALL
    SELECT s.id, s.function, s.location
    FROM (SELECT id, coalesce(min(frame_no) FILTER (
                     WHERE NOT plumbing AND NOT coalesce(name GLOB :skip, 0)), 0) AS frame_no
          FROM frames WHERE :skip IS NOT NULL GROUP BY id) AS k
    JOIN frame_sites AS s ON s.id = k.id AND s.frame_no = k.frame_no
),
-- With :skip the stacks' rows are added up per site here; without, the converter added them up
-- already (site_stats, site_lifetimes). Only one of the two is read: the other's WHERE is false
-- before any row.
per_decade AS (
    SELECT pid, recording, bt,
           sum(blocks) FILTER (WHERE decade = 0) AS b0, sum(blocks) FILTER (WHERE decade = 1) AS b1,
           sum(blocks) FILTER (WHERE decade = 2) AS b2, sum(blocks) FILTER (WHERE decade = 3) AS b3,
           sum(blocks) FILTER (WHERE decade = 4) AS b4, sum(blocks) FILTER (WHERE decade = 5) AS b5,
           sum(blocks) FILTER (WHERE decade = 6) AS b6, sum(blocks) FILTER (WHERE decade = 7) AS b7,
           sum(blocks) FILTER (WHERE decade = 8) AS b8
    FROM stack_lifetimes
    WHERE :skip IS NOT NULL AND pid = coalesce(:pid, pid)
    GROUP BY pid, recording, bt
),
per_stack AS (
    SELECT s.pid AS pid, s.recording AS recording, s.bt AS bt, s.blocks AS blocks,
           s.freed_blocks AS freed, s.life_total_ns AS total_ns, s.life_min_ns AS min_ns,
           s.life_max_ns AS max_ns, d.b0, d.b1, d.b2, d.b3, d.b4, d.b5, d.b6, d.b7, d.b8
    FROM stack_stats AS s
    LEFT JOIN per_decade AS d ON d.pid = s.pid AND d.recording = s.recording AND d.bt IS s.bt
    WHERE :skip IS NOT NULL AND s.pid = coalesce(:pid, s.pid)
),
-- Without :skip, the converter's sums per site (site_stats, site_lifetimes), read row by row
-- in their own order: no intermediate table of every site (0.5 s less on a build's tree).
d AS (
    SELECT pid, recording, site,
           sum(blocks) FILTER (WHERE decade = 0) AS b0, sum(blocks) FILTER (WHERE decade = 1) AS b1,
           sum(blocks) FILTER (WHERE decade = 2) AS b2, sum(blocks) FILTER (WHERE decade = 3) AS b3,
           sum(blocks) FILTER (WHERE decade = 4) AS b4, sum(blocks) FILTER (WHERE decade = 5) AS b5,
           sum(blocks) FILTER (WHERE decade = 6) AS b6, sum(blocks) FILTER (WHERE decade = 7) AS b7,
           sum(blocks) FILTER (WHERE decade = 8) AS b8
    FROM site_lifetimes
    WHERE :skip IS NULL AND pid = coalesce(:pid, pid)
    GROUP BY pid, recording, site
),
by_site AS (
    SELECT s.pid AS pid, s.recording AS recording, n.function AS function,
           n.location AS location, s.blocks AS blocks, s.freed_blocks AS freed,
           s.life_total_ns AS total_ns, s.life_min_ns AS min_ns, s.life_max_ns AS max_ns,
           coalesce(d.b0, 0) AS b0, coalesce(d.b1, 0) AS b1, coalesce(d.b2, 0) AS b2,
           coalesce(d.b3, 0) AS b3, coalesce(d.b4, 0) AS b4, coalesce(d.b5, 0) AS b5,
           coalesce(d.b6, 0) AS b6, coalesce(d.b7, 0) AS b7, coalesce(d.b8, 0) AS b8,
           s.blocks_stack AS stack
    FROM site_stats AS s
    JOIN sites AS n ON n.id = s.site
    LEFT JOIN d ON d.pid = s.pid AND d.recording = s.recording AND d.site = s.site
    WHERE :skip IS NULL AND s.pid = coalesce(:pid, s.pid)
),
-- With :skip, the stacks' rows added up per site.
per_site AS (
    SELECT pid, recording, function, location, sum(l.blocks) AS blocks,
           coalesce(sum(l.freed), 0) AS freed, sum(l.total_ns) AS total_ns, min(l.min_ns) AS min_ns,
           max(l.max_ns) AS max_ns, coalesce(sum(l.b0), 0) AS b0, coalesce(sum(l.b1), 0) AS b1,
           coalesce(sum(l.b2), 0) AS b2, coalesce(sum(l.b3), 0) AS b3, coalesce(sum(l.b4), 0) AS b4,
           coalesce(sum(l.b5), 0) AS b5, coalesce(sum(l.b6), 0) AS b6, coalesce(sum(l.b7), 0) AS b7,
           coalesce(sum(l.b8), 0) AS b8, stack
    FROM (SELECT l.*, coalesce(s.function, '(no backtrace)') AS function,
                 coalesce(s.location, '??') AS location,
                 -- The site's stack with the most blocks stands for it (rheap stack ID DB).
                 first_value(l.bt) OVER (PARTITION BY l.pid, l.recording, s.function, s.location
                                         ORDER BY l.blocks DESC, l.bt) AS stack
          FROM per_stack AS l
          LEFT JOIN site AS s ON s.bt = l.bt) AS l
    GROUP BY pid, recording, function, location
),
ends AS MATERIALIZED (
    SELECT pid, recording, until_exit FROM recording_ends WHERE pid = coalesce(:pid, pid)
)
SELECT l.blocks AS blocks, l.freed AS freed,
       CASE WHEN e.until_exit THEN l.blocks - l.freed END AS never_freed, l.min_ns AS min_ns,
       CAST(l.total_ns / l.freed AS INTEGER) AS avg_ns, l.max_ns AS max_ns, l.b0 AS under_1us,
       l.b1 AS under_10us, l.b2 AS under_100us, l.b3 AS under_1ms, l.b4 AS under_10ms,
       l.b5 AS under_100ms, l.b6 AS under_1s, l.b7 AS under_10s, l.b8 AS over_10s,
       l.function AS function, l.location AS location, l.stack AS stack,
       l.recording AS recording, l.pid AS pid
FROM by_site AS l
JOIN ends AS e ON e.pid = l.pid AND e.recording = l.recording
UNION ALL
SELECT l.blocks, l.freed, CASE WHEN e.until_exit THEN l.blocks - l.freed END, l.min_ns,
       CAST(l.total_ns / l.freed AS INTEGER), l.max_ns, l.b0, l.b1, l.b2, l.b3, l.b4, l.b5, l.b6,
       l.b7, l.b8, l.function, l.location, l.stack, l.recording, l.pid
FROM per_site AS l
JOIN ends AS e ON e.pid = l.pid AND e.recording = l.recording
ORDER BY 1 DESC, 16, 17, 20, 19;
