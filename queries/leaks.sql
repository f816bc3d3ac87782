-- leaks: which allocation sites leave memory behind?
--
-- Blocks never freed while recording, grouped by allocation site, largest total first, with
-- how many, how many bytes, and when the first and the last of them were allocated (ns since
-- the recording started).
--
-- The allocation site is the first frame of the stack that is not allocator plumbing: libc's
-- own allocating helpers (strdup, asprintf, ...), C++ operator new, and Rust's alloc:: layer
-- are skipped, so a leak shows the code that asked for the memory.
--
-- Parameters: none. Runs as is in the sqlite3 shell: sqlite3 out.db < queries/leaks.sql
WITH plumbing(pattern) AS (
    VALUES ('operator new*'), ('strdup'), ('strndup'), ('__strdup'), ('__strndup'),
           ('asprintf'), ('vasprintf'), ('__vasprintf*'), ('open_memstream'),
           ('alloc::*'), ('<alloc::*'), ('__rust_alloc*'), ('__rust_realloc*'),
           ('__rdl_alloc*'), ('__rdl_realloc*'), ('__rg_alloc*'), ('__rg_realloc*')
),
site AS (
    SELECT b.id AS bt, min(b.frame_no) AS frame_no
    FROM backtraces AS b
    WHERE NOT EXISTS (SELECT 1 FROM plumbing AS p WHERE coalesce(b.sym, '') GLOB p.pattern)
    GROUP BY b.id
)
SELECT count(*)                              AS blocks,
       sum(a.size)                           AS bytes,
       coalesce(f.sym, '??')                 AS function,
       coalesce(f.file, f.module, '??') || ':' || coalesce(f.line, printf('0x%x', f.offset)) AS location,
       min(a.alloc_after)                    AS first_ns,
       max(a.alloc_after)                    AS last_ns
FROM allocations AS a
LEFT JOIN site AS s ON s.bt = a.bt
LEFT JOIN backtraces AS f ON f.id = s.bt AND f.frame_no = s.frame_no
WHERE a.dealloc_after IS NULL
GROUP BY f.sym, f.file, f.line, f.module, f.offset
ORDER BY bytes DESC, blocks DESC;
