-- threads: how much does each thread allocate and free, and which frees cross threads?
--
-- Per recording and thread (kernel tid, with the name it had last while recording): blocks and
-- bytes it allocated, blocks and bytes it freed (a realloc that moves a block frees the old
-- one), what it allocated and never freed before the process ended (NULL for a recording
-- that stopped while its process went on, a window: its blocks still live then are not known
-- to leak; schema.sql's view recording_ends), how many of its blocks another thread freed
-- (freed_by_other), and how many blocks it freed that another thread had allocated
-- (frees_of_other). Most bytes allocated first.
--
-- param: pid = NULL  (only this process; NULL: every process)
--
-- Columns: tid, name, allocs, alloc_bytes, frees, freed_bytes, leaked_blocks, leaked_bytes,
--          freed_by_other, frees_of_other, recording, pid
-- Run: sqlite3 out.db < queries/threads.sql
SELECT s.tid AS tid,
       (SELECT t.name FROM threads AS t WHERE t.pid = s.pid AND t.recording = s.recording AND t.tid = s.tid
        ORDER BY t.serial DESC LIMIT 1) AS name,
       s.allocs, s.alloc_bytes, s.frees, s.freed_bytes,
       CASE WHEN e.until_exit THEN s.leaked_blocks END AS leaked_blocks,
       CASE WHEN e.until_exit THEN s.leaked_bytes END AS leaked_bytes,
       s.freed_by_other, s.frees_of_other, s.recording AS recording, s.pid AS pid
FROM thread_stats AS s
JOIN recording_ends AS e ON e.pid = s.pid AND e.recording = s.recording
WHERE s.pid = coalesce(:pid, s.pid)
ORDER BY pid, recording, alloc_bytes DESC, allocs DESC, tid;
