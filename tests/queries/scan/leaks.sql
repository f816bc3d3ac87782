-- leaks: which allocation sites leave memory behind?
--
-- Blocks never freed while recording, grouped by recording and allocation site (see README.md
-- for how the site is chosen), largest total first: how many blocks, how many bytes, and when
-- the first and the last of them were allocated (ns since the process's recording started).
--
-- param: pid = NULL  (only this process; NULL: every process)
-- param: skip = NULL  (GLOB of more function names to skip as allocation wrappers, e.g. 'xmalloc')
--
-- Columns: blocks, bytes, function, location, first_ns, last_ns, recording, pid
-- Run: sqlite3 out.db < queries/leaks.sql
WITH site(bt, function, location) AS (
    -- The allocation site of each stack; agree.sh checks the table `stacks` against the rule
    -- applied to the frames once.
    SELECT id, function, location FROM stacks
),
per_stack AS (
    SELECT a.pid AS pid, a.recording AS recording, a.bt AS bt, count(*) AS blocks,
           sum(a.size) AS bytes, min(a.alloc_after) AS first_ns, max(a.alloc_after) AS last_ns
    FROM allocations AS a
    WHERE a.dealloc_after IS NULL AND a.pid = coalesce(:pid, a.pid)
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
)
SELECT sum(blocks) AS blocks, sum(bytes) AS bytes, function, location,
       min(first_ns) AS first_ns, max(last_ns) AS last_ns, stack, recording, pid
FROM sited
GROUP BY pid, recording, function, location
ORDER BY bytes DESC, blocks DESC, function, location, pid, recording;
