-- top-sites: which allocation sites allocate the most, by bytes and by number of blocks?
--
-- Every allocation made while recording (freed or not), grouped by recording and allocation
-- site. A site is listed when it is among the `top` sites of its recording by bytes or among
-- the `top` by blocks; bytes_rank and blocks_rank give both places (1 is the largest).
--
-- param: by = 'bytes'  (order of the rows: 'bytes' or 'blocks')
-- param: top = 20  (how many sites per recording and per ranking)
-- param: pid = NULL  (only this process; NULL: every process)
-- param: skip = NULL  (GLOB of more function names to skip as allocation wrappers, e.g. 'xmalloc')
--
-- Columns: blocks, bytes, avg_size, function, location, bytes_rank, blocks_rank, recording, pid
-- Run: sqlite3 out.db < queries/top-sites.sql
WITH plumbing(kind, pattern) AS (
    -- Modules and function names that allocate on their caller's behalf (README.md).
    VALUES ('module', '*/libc.so*'), ('module', '*/libc-*.so'), ('module', '*/ld-linux*'),
           ('module', '*/libstdc++.so*'), ('module', '*/libc++.so*'), ('module', '*/libc++abi.so*'),
           ('name', 'operator new*'), ('name', 'std::*'), ('name', '* std::*'),
           ('name', '__gnu_cxx::*'), ('name', '* __gnu_cxx::*'), ('name', 'alloc::*'),
           ('name', '* alloc::*'), ('name', '__rust_*'), ('name', '__rdl_*'), ('name', '__rg_*'),
           ('name', 'strdup'), ('name', '__strdup'), ('name', 'strndup'), ('name', '__strndup'),
           ('name', 'asprintf'), ('name', 'vasprintf'), ('name', '__*asprintf*')
    UNION ALL SELECT 'name', :skip WHERE :skip IS NOT NULL
),
site(bt, function, location) AS (
    -- Per stack, its first frame that is not plumbing, or frame 0 when every frame is.
    SELECT f.id, coalesce(f.sym, '??'),
           coalesce(f.file, f.module, '??') || ':' || coalesce(f.line, printf('0x%x', f.offset))
    FROM (SELECT b.id AS id,
                 coalesce(min(b.frame_no) FILTER (WHERE NOT EXISTS (
                     SELECT 1 FROM plumbing AS p
                     WHERE (p.kind = 'module' AND b.module GLOB p.pattern)
                        OR (p.kind = 'name' AND substr(ltrim(b.sym, '<'), 1,
                                min(instr(ltrim(b.sym, '<') || '<', '<'),
                                    instr(ltrim(b.sym, '<') || '(', '(')) - 1) GLOB p.pattern))),
                          0) AS frame_no
          FROM backtraces AS b GROUP BY b.id) AS k
    JOIN backtraces AS f ON f.id = k.id AND f.frame_no = k.frame_no
),
per_stack AS (
    SELECT a.pid AS pid, a.recording AS recording, a.bt AS bt, count(*) AS blocks,
           sum(a.size) AS bytes
    FROM allocations AS a
    WHERE a.pid = coalesce(:pid, a.pid)
    GROUP BY a.pid, a.recording, a.bt
),
per_site AS (
    SELECT l.pid AS pid, l.recording AS recording, coalesce(s.function, '(no backtrace)') AS function,
           coalesce(s.location, '??') AS location, sum(l.blocks) AS blocks, sum(l.bytes) AS bytes
    FROM per_stack AS l
    LEFT JOIN site AS s ON s.bt = l.bt
    GROUP BY 1, 2, 3, 4
),
ranked AS (
    SELECT *, rank() OVER (PARTITION BY pid, recording ORDER BY bytes DESC) AS bytes_rank,
              rank() OVER (PARTITION BY pid, recording ORDER BY blocks DESC) AS blocks_rank
    FROM per_site
)
SELECT blocks, bytes, bytes / blocks AS avg_size, function, location, bytes_rank, blocks_rank,
       recording, pid
FROM ranked
WHERE bytes_rank <= cast(coalesce(:top, 20) AS INTEGER)
   OR blocks_rank <= cast(coalesce(:top, 20) AS INTEGER)
ORDER BY pid, recording,
         CASE coalesce(:by, 'bytes') WHEN 'blocks' THEN blocks_rank ELSE bytes_rank END,
         CASE coalesce(:by, 'bytes') WHEN 'blocks' THEN bytes_rank ELSE blocks_rank END,
         function, location;
