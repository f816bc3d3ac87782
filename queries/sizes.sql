-- sizes: how are the requested sizes distributed?
--
-- Per recording, blocks allocated while recording counted in power-of-two size classes (min_size
-- to max_size bytes, inclusive; size 0 has a class of its own): how many blocks and bytes, and
-- how many of them were never freed before the process ended (NULL for a recording that
-- stopped while its process went on, a window: schema.sql's view recording_ends). Smallest
-- class first.
--
-- param: pid = NULL  (only this process; NULL: every process)
--
-- Columns: min_size, max_size, blocks, bytes, leaked_blocks, leaked_bytes, recording, pid
-- Run: sqlite3 out.db < queries/sizes.sql
-- The converter summed each recording's classes over its stacks (recording_sizes, the sums of
-- stack_sizes), so recording_ends is looked up once per class.
SELECT min_size, CASE WHEN min_size = 0 THEN 0 ELSE 2 * min_size - 1 END AS max_size,
       blocks, bytes,
       CASE WHEN e.until_exit THEN leaked_blocks END AS leaked_blocks,
       CASE WHEN e.until_exit THEN leaked_bytes END AS leaked_bytes, s.recording AS recording,
       s.pid AS pid
FROM (SELECT pid, recording, min_size, blocks, bytes, leaked_blocks, leaked_bytes
      FROM recording_sizes
      WHERE pid = coalesce(:pid, pid)) AS s
JOIN recording_ends AS e ON e.pid = s.pid AND e.recording = s.recording
ORDER BY s.pid, s.recording, min_size;
