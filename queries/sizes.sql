-- sizes: how are the requested sizes distributed?
--
-- Per recording, blocks allocated while recording counted in power-of-two size classes (min_size
-- to max_size bytes, inclusive; size 0 has a class of its own): how many blocks and bytes, and
-- how many of them were never freed. Smallest class first.
--
-- param: pid = NULL  (only this process; NULL: every process)
--
-- Columns: min_size, max_size, blocks, bytes, leaked_blocks, leaked_bytes, recording, pid
-- Run: sqlite3 out.db < queries/sizes.sql
SELECT min_size, CASE WHEN min_size = 0 THEN 0 ELSE 2 * min_size - 1 END AS max_size,
       sum(blocks) AS blocks, sum(bytes) AS bytes, sum(leaked_blocks) AS leaked_blocks,
       sum(leaked_bytes) AS leaked_bytes, recording, pid
FROM stack_sizes
WHERE pid = coalesce(:pid, pid)
GROUP BY pid, recording, min_size
ORDER BY pid, recording, min_size;
