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
-- Columns: temporary, blocks, percent, temporary_bytes, function, location, recording, pid
-- Run: sqlite3 out.db < queries/temporary.sql
WITH site(bt, function, location) AS (
    -- The allocation site of each stack; agree.sh checks the table `stacks` against the rule
    -- applied to the frames once.
    SELECT id, function, location FROM stacks
),
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
SELECT temporary, blocks, round(100.0 * temporary / blocks, 1) AS percent, temporary_bytes,
       function, location, stack, recording, pid
FROM per_site
WHERE temporary > 0
ORDER BY temporary DESC, temporary_bytes DESC, function, location, pid, recording;
