-- threads.sql as it read every row before the summary tables: agree.sh requires the same rows
-- from both.
-- replaces: the whole query
-- threads: how much does each thread allocate and free, and which frees cross threads?
--
-- Per recording and thread (kernel tid, with the name it had last while recording): blocks and
-- bytes it allocated, blocks and bytes it freed (a realloc that moves a block frees the old
-- one), what it allocated and never freed, how many of its blocks another thread freed
-- (freed_by_other), and how many blocks it freed that another thread had allocated
-- (frees_of_other). Most bytes allocated first.
--
-- param: pid = NULL  (only this process; NULL: every process)
--
-- Columns: tid, name, allocs, alloc_bytes, frees, freed_bytes, leaked_blocks, leaked_bytes,
--          freed_by_other, frees_of_other, recording, pid
-- Run: sqlite3 out.db < queries/threads.sql
WITH by_allocator AS (
    SELECT a.pid AS pid, a.recording AS recording, a.alloc_thread AS tid, count(*) AS allocs, sum(a.size) AS alloc_bytes,
           sum(a.dealloc_after IS NULL) AS leaked_blocks,
           sum(CASE WHEN a.dealloc_after IS NULL THEN a.size ELSE 0 END) AS leaked_bytes,
           sum(a.dealloc_thread IS NOT NULL AND a.dealloc_thread <> a.alloc_thread) AS freed_by_other
    FROM allocations AS a
    WHERE a.pid = coalesce(:pid, a.pid)
    GROUP BY a.pid, a.recording, a.alloc_thread
),
by_freer AS (
    SELECT a.pid AS pid, a.recording AS recording, a.dealloc_thread AS tid, count(*) AS frees, sum(a.size) AS freed_bytes,
           sum(a.dealloc_thread <> a.alloc_thread) AS frees_of_other
    FROM allocations AS a
    WHERE a.dealloc_thread IS NOT NULL AND a.pid = coalesce(:pid, a.pid)
    GROUP BY a.pid, a.recording, a.dealloc_thread
),
ids AS (
    SELECT pid, recording, tid FROM by_allocator UNION SELECT pid, recording, tid FROM by_freer
)
SELECT i.tid AS tid,
       (SELECT t.name FROM threads AS t WHERE t.pid = i.pid AND t.recording = i.recording AND t.tid = i.tid
        ORDER BY t.serial DESC LIMIT 1) AS name,
       coalesce(x.allocs, 0) AS allocs, coalesce(x.alloc_bytes, 0) AS alloc_bytes,
       coalesce(y.frees, 0) AS frees, coalesce(y.freed_bytes, 0) AS freed_bytes,
       coalesce(x.leaked_blocks, 0) AS leaked_blocks, coalesce(x.leaked_bytes, 0) AS leaked_bytes,
       coalesce(x.freed_by_other, 0) AS freed_by_other, coalesce(y.frees_of_other, 0) AS frees_of_other,
       i.recording AS recording, i.pid AS pid
FROM ids AS i
LEFT JOIN by_allocator AS x ON x.pid = i.pid AND x.recording = i.recording AND x.tid = i.tid
LEFT JOIN by_freer AS y ON y.pid = i.pid AND y.recording = i.recording AND y.tid = i.tid
ORDER BY pid, recording, alloc_bytes DESC, allocs DESC, tid;
