-- canonical.sql: a database's content with its ids replaced by what they stand for, in a fixed
-- order, so that two conversions of the same recordings compare equal whatever ids they handed
-- out (stacks, threads and rows are numbered in the order the converter met them).
-- Usage: sqlite3 -readonly DB < canonical.sql
CREATE TEMP TABLE stack_text AS
SELECT id, group_concat(coalesce(sym, '?') || '@' || coalesce(file, '?') || ':' ||
                        coalesce(line, 0) || '/' || coalesce(module, '?') || '+' || offset ||
                        (CASE WHEN inlined THEN 'i' ELSE '' END), ' ') AS text
FROM (SELECT * FROM backtraces ORDER BY id, frame_no) GROUP BY id;
-- Rows name a stack by its rank among the stacks' texts.
CREATE TEMP TABLE stack_rank AS
SELECT id, row_number() OVER (ORDER BY text) AS n FROM stack_text;
CREATE TEMP TABLE thread_key AS
SELECT id, pid || '.' || recording || '.' || tid || '.' || serial AS k FROM threads;

SELECT 'allocation', a.pid, a.recording, a.alloc_after, a.dealloc_after, a.size, a.addr,
       a.alloc_thread, a.dealloc_thread, a.call, a.align, s.n,
       (SELECT o.alloc_after || '/' || o.addr FROM allocations AS o WHERE o.id = a.realloc_of)
FROM allocations AS a LEFT JOIN stack_rank AS s ON s.id = a.bt
ORDER BY 2, 3, 4, 5, 7, 6, 8, 12;
SELECT 'stack', r.n, s.function, s.location, s.frames, s.site_frame, t.text
FROM stacks AS s JOIN stack_text AS t ON t.id = s.id JOIN stack_rank AS r ON r.id = s.id
ORDER BY 2;
SELECT 'stack_stats', x.pid, x.recording, t.n, blocks, bytes, freed_blocks, freed_bytes,
       leaked_blocks, leaked_bytes, temporary_blocks, temporary_bytes, first_ns, last_ns,
       leak_first_ns, leak_last_ns, min_size, max_size, life_min_ns, life_max_ns, life_total_ns,
       peak_blocks, peak_bytes
FROM stack_stats AS x LEFT JOIN stack_rank AS t ON t.id = x.bt ORDER BY 2, 3, 4;
SELECT 'stack_totals', t.n, recordings, blocks, bytes, leaked_blocks, leaked_bytes,
       stopped_blocks, stopped_bytes, peak_blocks, peak_bytes, temporary_blocks, temporary_bytes
FROM stack_totals AS x LEFT JOIN stack_rank AS t ON t.id = x.bt ORDER BY 2;
SELECT 'stack_lifetime_totals', t.n, decade, blocks, bytes
FROM stack_lifetime_totals AS x LEFT JOIN stack_rank AS t ON t.id = x.bt ORDER BY 2, 3;
SELECT 'stack_lifetimes', x.pid, x.recording, t.n, decade, blocks, bytes
FROM stack_lifetimes AS x LEFT JOIN stack_rank AS t ON t.id = x.bt ORDER BY 2, 3, 4, 5;
SELECT 'stack_sizes', x.pid, x.recording, t.n, min_size, blocks, bytes, leaked_blocks,
       leaked_bytes
FROM stack_sizes AS x LEFT JOIN stack_rank AS t ON t.id = x.bt ORDER BY 2, 3, 4, 5;
SELECT 'stack_leaks', x.pid, x.recording, t.n, bucket, blocks, bytes
FROM stack_leaks AS x LEFT JOIN stack_rank AS t ON t.id = x.bt ORDER BY 2, 3, 4, 5;
SELECT 'marker_stacks', x.pid, x.recording, x.t, t.n, blocks, bytes
FROM marker_stacks AS x LEFT JOIN stack_rank AS t ON t.id = x.bt ORDER BY 2, 3, 4, 5;
SELECT 'thread_stats', * FROM thread_stats ORDER BY 2, 3, 4;
SELECT 'timeline', * FROM timeline ORDER BY 2, 3, 4;
SELECT 'recording_stats', * FROM recording_stats ORDER BY 2, 3;
SELECT 'process', pid, recording, ppid, exe, cmdline, start_ns, start_wall_ns, page_size,
       stack_depth, sample_ppm, dir, unmatched_frees, lost_events, mode, sample_interval
FROM processes ORDER BY 2, 3;
SELECT 'thread', pid, recording, tid, name, serial, file, events, lost_events, addr_base
FROM threads ORDER BY 2, 3, 4, 6;
SELECT 'frees', k.k, count(*) FROM allocation_frees AS f JOIN thread_key AS k ON k.id = f.thread
GROUP BY 2 ORDER BY 2;
SELECT 'module', * FROM modules ORDER BY 2, 3, 4, 5;
SELECT 'marker', * FROM markers ORDER BY 2, 3, 5, 4;
SELECT 'window', * FROM windows ORDER BY 2, 3, 4;
SELECT 'meta', key, value FROM meta
WHERE key NOT IN ('converted_at', 'warnings', 'live_events', 'overlapped_recordings') ORDER BY 2;
