-- leaks: which allocation sites leave memory behind?
--
-- Blocks never freed before their process ended, grouped by recording and allocation site (see
-- README.md for how the site is chosen), largest total first: how many blocks, how many bytes,
-- and when the first and the last of them were allocated (ns since the process's recording
-- started). Only recordings that lasted until their process ended are read (the view
-- recording_ends in schema.sql): what a window (a toggle, rheap_disable, rheap attach, a
-- recording stopped by an error) left live was still live when it stopped, not leaked;
-- growth.sql shows which sites grew during a window.
--
-- param: pid = NULL  (only this process; NULL: every process)
-- param: skip = NULL  (GLOB of more function names to skip as allocation wrappers, e.g. 'xmalloc')
--
-- Columns: blocks, bytes, function, location, first_ns, last_ns, stack, recording, pid
-- Run: sqlite3 out.db < queries/leaks.sql
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
per_stack AS (
    SELECT pid, recording, bt, leaked_blocks AS blocks, leaked_bytes AS bytes,
           leak_first_ns AS first_ns, leak_last_ns AS last_ns
    FROM stack_stats
    WHERE :skip IS NOT NULL AND leaked_blocks > 0 AND pid = coalesce(:pid, pid)
      AND (pid, recording) IN (SELECT pid, recording FROM recording_ends WHERE until_exit)
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
-- Without :skip, the converter's sums per site (site_stats).
per_site AS (
    SELECT s.leaked_blocks AS blocks, s.leaked_bytes AS bytes, n.function AS function,
           n.location AS location, s.leak_first_ns AS first_ns, s.leak_last_ns AS last_ns,
           s.leak_stack AS stack, s.recording AS recording, s.pid AS pid
    FROM site_stats AS s
    JOIN sites AS n ON n.id = s.site
    WHERE :skip IS NULL AND s.leaked_blocks > 0 AND s.pid = coalesce(:pid, s.pid)
      AND (s.pid, s.recording) IN (SELECT pid, recording FROM recording_ends WHERE until_exit)
    UNION ALL
    SELECT sum(blocks) AS blocks, sum(bytes) AS bytes, function, location,
           min(first_ns) AS first_ns, max(last_ns) AS last_ns, stack, recording, pid
    FROM sited
    GROUP BY pid, recording, function, location
)
SELECT blocks, bytes, function, location, first_ns, last_ns, stack, recording, pid
FROM per_site
ORDER BY bytes DESC, blocks DESC, function, location, pid, recording;
