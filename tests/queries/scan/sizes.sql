-- sizes.sql as it read every row before the summary tables: agree.sh requires the same rows
-- from both.
-- replaces: the whole query
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
WITH per_size AS (
    SELECT a.pid AS pid, a.recording AS recording, a.size AS size, count(*) AS blocks,
           sum(a.dealloc_after IS NULL) AS leaked
    FROM allocations AS a
    WHERE a.pid = coalesce(:pid, a.pid)
    GROUP BY a.pid, a.recording, a.size
),
-- The class of a size is its highest set bit, found from the number of hex digits and the
-- leading digit, as SQLite 3.40 has no bit-length or log2 function by default.
classed AS (
    SELECT pid, recording, size, blocks, leaked,
           CASE WHEN size <= 0 THEN 0
                ELSE 1 << (4 * (length(printf('%x', size)) - 1)
                           + CASE WHEN size >> (4 * (length(printf('%x', size)) - 1)) >= 8 THEN 3
                                  WHEN size >> (4 * (length(printf('%x', size)) - 1)) >= 4 THEN 2
                                  WHEN size >> (4 * (length(printf('%x', size)) - 1)) >= 2 THEN 1
                                  ELSE 0 END)
           END AS lo
    FROM per_size
)
SELECT lo AS min_size, CASE WHEN lo = 0 THEN 0 ELSE 2 * lo - 1 END AS max_size,
       sum(blocks) AS blocks, sum(blocks * size) AS bytes, sum(leaked) AS leaked_blocks,
       sum(leaked * size) AS leaked_bytes, recording, pid
FROM classed
GROUP BY pid, recording, lo
ORDER BY pid, recording, lo;
