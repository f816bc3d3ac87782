-- lifetimes: how long do the blocks of each allocation site live?
--
-- Per process and allocation site: how many blocks, how many were freed while recording and
-- how many never were, the shortest, mean and longest lifetime of the freed ones (ns from
-- allocation to free), and how many freed blocks fall in each decade of lifetime: under 1 us,
-- 1-10 us, 10-100 us, 100 us-1 ms, 1-10 ms, 10-100 ms, 100 ms-1 s, 1-10 s, 10 s and more. Sites
-- with the most blocks first.
--
-- param: pid = NULL  (only this process; NULL: every process)
-- param: skip = NULL  (GLOB of more function names to skip as allocation wrappers, e.g. 'xmalloc')
--
-- Columns: blocks, freed, never_freed, min_ns, avg_ns, max_ns, under_1us, under_10us,
--          under_100us, under_1ms, under_10ms, under_100ms, under_1s, under_10s, over_10s,
--          function, location, pid
-- Run: sqlite3 out.db < queries/lifetimes.sql
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
    SELECT pid, bt, count(*) AS blocks, count(life) AS freed, sum(life) AS total_ns,
           min(life) AS min_ns, max(life) AS max_ns,
           sum(life < 1000) AS b0, sum(life >= 1000 AND life < 10000) AS b1,
           sum(life >= 10000 AND life < 100000) AS b2, sum(life >= 100000 AND life < 1000000) AS b3,
           sum(life >= 1000000 AND life < 10000000) AS b4,
           sum(life >= 10000000 AND life < 100000000) AS b5,
           sum(life >= 100000000 AND life < 1000000000) AS b6,
           sum(life >= 1000000000 AND life < 10000000000) AS b7, sum(life >= 10000000000) AS b8
    FROM (SELECT a.pid AS pid, a.bt AS bt, a.dealloc_after - a.alloc_after AS life
          FROM allocations AS a
          WHERE a.pid = coalesce(:pid, a.pid))
    GROUP BY pid, bt
)
SELECT sum(l.blocks) AS blocks, sum(l.freed) AS freed, sum(l.blocks) - sum(l.freed) AS never_freed,
       min(l.min_ns) AS min_ns, CAST(sum(l.total_ns) / sum(l.freed) AS INTEGER) AS avg_ns,
       max(l.max_ns) AS max_ns,
       coalesce(sum(l.b0), 0) AS under_1us, coalesce(sum(l.b1), 0) AS under_10us, coalesce(sum(l.b2), 0) AS under_100us,
       coalesce(sum(l.b3), 0) AS under_1ms, coalesce(sum(l.b4), 0) AS under_10ms, coalesce(sum(l.b5), 0) AS under_100ms,
       coalesce(sum(l.b6), 0) AS under_1s, coalesce(sum(l.b7), 0) AS under_10s, coalesce(sum(l.b8), 0) AS over_10s,
       coalesce(s.function, '(no backtrace)') AS function, coalesce(s.location, '??') AS location,
       l.pid AS pid
FROM per_stack AS l
LEFT JOIN site AS s ON s.bt = l.bt
GROUP BY l.pid, 16, 17
ORDER BY blocks DESC, function, location, pid;
