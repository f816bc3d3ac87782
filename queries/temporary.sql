-- temporary: which allocation sites make short-lived blocks?
--
-- A block is temporary when it is freed before the thread that allocated it allocates again
-- (a block a thread allocates last counts when it is freed at all), or, when max_ns is given,
-- when it is freed at most max_ns ns after it was allocated. Listed per recording and allocation
-- site, sites with the most temporary blocks first, with all the blocks the site allocated and
-- the temporary share in percent.
--
-- param: max_ns = NULL  (lifetime limit in ns; NULL: freed before the thread's next allocation)
-- param: pid = NULL  (only this process; NULL: every process)
-- param: skip = NULL  (GLOB of more function names to skip as allocation wrappers, e.g. 'xmalloc')
--
-- Columns: temporary, blocks, percent, temporary_bytes, function, location, stack, recording, pid
-- Run: sqlite3 out.db < queries/temporary.sql
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
-- Only one of the two branches is read: the other's WHERE is false before any row. The
-- default rule was applied by the converter (stack_stats); a lifetime limit reads every block.
per_stack AS (
    SELECT pid, recording, bt, temporary_blocks AS temporary, blocks, temporary_bytes
    FROM stack_stats
    WHERE :max_ns IS NULL AND :skip IS NOT NULL AND pid = coalesce(:pid, pid)
    UNION ALL
    SELECT pid, recording, bt, sum(temp), count(*), sum(CASE WHEN temp THEN size ELSE 0 END)
    FROM (SELECT a.pid AS pid, a.recording AS recording, a.bt AS bt, a.size AS size,
                 a.dealloc_after IS NOT NULL
                     AND a.dealloc_after - a.alloc_after <= cast(:max_ns AS INTEGER) AS temp
          FROM allocations AS a
          WHERE :max_ns IS NOT NULL AND a.pid = coalesce(:pid, a.pid)
            AND a.call NOT IN (46, 47)) -- the heap: not the program's own mappings
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
-- Without :skip and :max_ns, the converter's sums per site (site_stats).
per_site AS (
    SELECT s.pid AS pid, s.recording AS recording, n.function AS function,
           n.location AS location, s.temporary_blocks AS temporary, s.blocks AS blocks,
           s.temporary_bytes AS temporary_bytes, s.temporary_stack AS stack
    FROM site_stats AS s
    JOIN sites AS n ON n.id = s.site
    WHERE :max_ns IS NULL AND :skip IS NULL AND s.pid = coalesce(:pid, s.pid)
    UNION ALL
    SELECT pid, recording, function, location, sum(temporary) AS temporary, sum(blocks) AS blocks,
           sum(temporary_bytes) AS temporary_bytes, stack
    FROM sited
    GROUP BY pid, recording, function, location
)
SELECT temporary, blocks, round(100.0 * temporary / blocks, 1) AS percent, temporary_bytes,
       function, location, stack, recording, pid
FROM per_site
WHERE temporary > 0
ORDER BY temporary DESC, temporary_bytes DESC, function, location, pid, recording;
