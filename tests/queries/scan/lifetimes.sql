-- lifetimes: how long do the blocks of each allocation site live?
--
-- Per recording and allocation site: how many blocks, how many were freed while recording and
-- how many never were, the shortest, mean and longest lifetime of the freed ones (ns from
-- allocation to free), and how many freed blocks fall in each decade of lifetime: under 1 us,
-- 1-10 us, 10-100 us, 100 us-1 ms, 1-10 ms, 10-100 ms, 100 ms-1 s, 1-10 s, 10 s and more. Sites
-- with the most blocks first.
--
-- param: pid = NULL  (only this process; NULL: every process)
-- param: skip = NULL  (GLOB of more function names to skip as allocation wrappers, e.g. 'xmalloc')
--
-- Columns: blocks, freed, never_freed, min_ns, avg_ns, max_ns, under_1us, under_10us,
--          under_100us, under_1ms, under_10ms, under_100ms, under_1s, under_10s, over_10s,
--          function, location, recording, pid
-- Run: sqlite3 out.db < queries/lifetimes.sql
WITH site(bt, function, location) AS (
    -- The allocation site of each stack; agree.sh checks the table `stacks` against the rule
    -- applied to the frames once.
    SELECT id, function, location FROM stacks
),
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
SELECT sum(l.blocks) AS blocks, coalesce(sum(l.freed), 0) AS freed,
       sum(l.blocks) - coalesce(sum(l.freed), 0) AS never_freed,
       min(l.min_ns) AS min_ns, CAST(sum(l.total_ns) / sum(l.freed) AS INTEGER) AS avg_ns,
       max(l.max_ns) AS max_ns,
       coalesce(sum(l.b0), 0) AS under_1us, coalesce(sum(l.b1), 0) AS under_10us, coalesce(sum(l.b2), 0) AS under_100us,
       coalesce(sum(l.b3), 0) AS under_1ms, coalesce(sum(l.b4), 0) AS under_10ms, coalesce(sum(l.b5), 0) AS under_100ms,
       coalesce(sum(l.b6), 0) AS under_1s, coalesce(sum(l.b7), 0) AS under_10s, coalesce(sum(l.b8), 0) AS over_10s,
       function, location, stack, recording, pid
FROM (SELECT l.*, coalesce(s.function, '(no backtrace)') AS function,
             coalesce(s.location, '??') AS location,
             -- The site's stack with the most blocks stands for it (rheap stack ID DB).
             first_value(l.bt) OVER (PARTITION BY l.pid, l.recording, s.function, s.location
                                     ORDER BY l.blocks DESC, l.bt) AS stack
      FROM per_stack AS l
      LEFT JOIN site AS s ON s.bt = l.bt) AS l
GROUP BY pid, recording, function, location
ORDER BY blocks DESC, function, location, pid, recording;
