-- peak: when was the most heap live, and which allocation sites held it?
--
-- Per recording: the moment at which the live heap (bytes allocated and not yet freed) was
-- largest, counting every event of the same ns together, and each allocation site's blocks live
-- at that moment. The bytes of the rows of one recording add up to its peak_bytes. When the same
-- largest value was reached at several moments, peak_ns is the first of them. Rows come most
-- bytes first across every process, so the sites that held most at their process's peak lead
-- whatever process holds them; each process peaks at a moment of its own, so rows of different
-- processes were not live at once and their bytes do not add up to one moment's heap.
--
-- param: pid = NULL  (only this process; NULL: every process)
-- param: skip = NULL  (GLOB of more function names to skip as allocation wrappers, e.g. 'xmalloc')
--
-- Columns: blocks, bytes, function, location, peak_ns, peak_bytes, stack, recording, pid
-- Run: sqlite3 out.db < queries/peak.sql
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
    SELECT s.pid AS pid, s.recording AS recording, s.bt AS bt, s.peak_blocks AS blocks,
           s.peak_bytes AS bytes, r.peak_ns AS peak_ns, r.peak_bytes AS peak_bytes
    FROM stack_stats AS s
    JOIN recording_stats AS r ON r.pid = s.pid AND r.recording = s.recording
    WHERE :skip IS NOT NULL AND s.peak_blocks > 0 AND s.pid = coalesce(:pid, s.pid)
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
    SELECT s.peak_blocks AS blocks, s.peak_bytes AS bytes, n.function AS function,
           n.location AS location, r.peak_ns AS peak_ns, r.peak_bytes AS peak_bytes,
           s.peak_stack AS stack, s.recording AS recording, s.pid AS pid
    FROM site_stats AS s
    JOIN sites AS n ON n.id = s.site
    JOIN recording_stats AS r ON r.pid = s.pid AND r.recording = s.recording
    WHERE :skip IS NULL AND s.peak_blocks > 0 AND s.pid = coalesce(:pid, s.pid)
    UNION ALL
    SELECT sum(blocks) AS blocks, sum(bytes) AS bytes, function, location, peak_ns, peak_bytes,
           stack, recording, pid
    FROM sited
    GROUP BY pid, recording, function, location
)
SELECT blocks, bytes, function, location, peak_ns, peak_bytes, stack, recording, pid
FROM per_site
ORDER BY bytes DESC, blocks DESC, function, location, pid, recording;
