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
-- Each recording's classes are summed first, and only then joined with recording_ends, which
-- is thus looked up once per class instead of once per stack and class.
SELECT min_size, CASE WHEN min_size = 0 THEN 0 ELSE 2 * min_size - 1 END AS max_size,
       blocks, bytes,
       CASE WHEN e.until_exit THEN leaked_blocks END AS leaked_blocks,
       CASE WHEN e.until_exit THEN leaked_bytes END AS leaked_bytes, s.recording AS recording,
       s.pid AS pid
FROM (SELECT pid, recording, min_size, sum(blocks) AS blocks, sum(bytes) AS bytes,
             sum(leaked_blocks) AS leaked_blocks, sum(leaked_bytes) AS leaked_bytes
      FROM stack_sizes
      WHERE pid = coalesce(:pid, pid)
      GROUP BY pid, recording, min_size) AS s
JOIN recording_ends AS e ON e.pid = s.pid AND e.recording = s.recording
ORDER BY s.pid, s.recording, min_size;
