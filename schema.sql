-- schema.sql: the database `rheap convert` writes. This file is the single source of truth: the
-- converter embeds it at build time and runs it on every new database, so a comment here is
-- what `.schema` shows the user.
--
-- Times are nanoseconds since the start of the recording the row belongs to (the `start_ns` of
-- its processes row, found by (pid, recording), CLOCK_MONOTONIC). The tracer records them in
-- 4 ns units, so event times are multiples of 4. Addresses are stored as integers.
--
-- Everything above the after-load line (near the end) is created before the rows are inserted;
-- everything below it is created after the load, inside the same transaction, because building
-- an index once over finished rows is much cheaper than keeping it up to date on every insert.

-- Key/value facts about the conversion: versions, input counts and the anomalies the converter
-- counted instead of failing on (frees of blocks allocated before recording started, ...).
CREATE TABLE meta (
    key TEXT PRIMARY KEY,  -- name of the fact, e.g. 'schema_version', 'unmatched_frees'
    value                  -- its value (text or integer)
);

-- One row per heap block the program allocated while recording was on.
CREATE TABLE allocations (
    id INTEGER PRIMARY KEY, -- unique in the database, across processes; rows are numbered in the order blocks were freed, then the blocks of the same recording never freed, in allocation order
    alloc_after INTEGER NOT NULL, -- ns after the recording started when the allocation returned
    dealloc_after INTEGER, -- ns after the recording started when the block was freed (or released by realloc); NULL: never freed while recording
    bt INTEGER,            -- backtraces.id of the allocating call stack; NULL: no backtrace was taken (sampling)
    size INTEGER NOT NULL, -- bytes requested (calloc: nmemb * size)
    addr INTEGER NOT NULL, -- address of the block
    alloc_thread INTEGER NOT NULL, -- kernel thread id (tid) that allocated the block
    dealloc_thread INTEGER, -- tid that freed it; NULL when never freed or when the free was not recorded (see meta 'reused_live')
    pid INTEGER NOT NULL,  -- process that allocated the block (processes.pid)
    call TEXT NOT NULL,    -- the allocating call: malloc, calloc, realloc, reallocarray, posix_memalign, aligned_alloc, memalign, valloc, pvalloc
    align INTEGER,         -- alignment asked for by the aligned calls; NULL for the others
    realloc_of INTEGER,    -- allocations.id of the block this realloc replaced; NULL when not a realloc, or when the old block was allocated before recording
    recording INTEGER NOT NULL -- which recording of the process (processes.recording): a process that execs, or turns recording on twice, keeps its pid but starts a new recording whose times have their own start; blocks never pair across recordings
);

-- Call stacks, one row per frame. Identical stacks (same module, offset and symbolization) share
-- one id across threads and processes.
CREATE TABLE backtraces (
    id INTEGER NOT NULL,       -- the stack; allocations.bt refers to it
    frame_no INTEGER NOT NULL, -- 0 is where the program asked for memory, counting outwards towards main; an inlined function is a frame of its own
    file TEXT,                 -- source file of the frame; NULL when unknown
    line INTEGER,              -- source line of the frame (for an outer frame: the line of the call); NULL when unknown
    sym TEXT,                  -- demangled function name; NULL when unknown
    module TEXT,               -- path of the executable or shared object holding the code; NULL when the address lies in no known module
    offset INTEGER NOT NULL,   -- return address relative to the module's load bias (the address as in the file, for addr2line after subtracting 1); the absolute address when module is NULL
    inlined INTEGER NOT NULL,  -- 1: this function was inlined into the next frame, 0: a real call frame
    ip_index INTEGER NOT NULL, -- which recorded return address the row comes from (0 innermost); rows from one address share it
    PRIMARY KEY (id, frame_no)
) WITHOUT ROWID;

-- One row per recorded process (each recording directory rip-<pid>[-N]).
CREATE TABLE processes (
    pid INTEGER NOT NULL,        -- process id
    recording INTEGER NOT NULL,  -- N of rip-<pid>-N (1 for rip-<pid>)
    ppid INTEGER,                -- parent process id, so a process tree can be rebuilt
    exe TEXT,                    -- path of the executable
    cmdline TEXT,                -- arguments joined by single spaces
    start_ns INTEGER NOT NULL,   -- CLOCK_MONOTONIC at recording start; times in this process are relative to it
    start_wall_ns INTEGER,       -- CLOCK_REALTIME at recording start, ns since the Unix epoch
    page_size INTEGER,           -- page size of the machine
    stack_depth INTEGER,         -- most frames the tracer kept per stack
    sample_ppm INTEGER,          -- sampling rate in parts per million (1000000: every allocation has a stack)
    dir TEXT,                    -- recording directory that was converted
    unmatched_frees INTEGER NOT NULL, -- frees of blocks allocated before recording started (not errors)
    lost_events INTEGER NOT NULL,     -- events the tracer reported it could not record
    PRIMARY KEY (pid, recording)
);

-- One row per recorded thread file.
CREATE TABLE threads (
    pid INTEGER NOT NULL,      -- process id
    recording INTEGER NOT NULL, -- the recording of the process the file belongs to (processes.recording)
    tid INTEGER NOT NULL,      -- kernel thread id (allocations.alloc_thread / dealloc_thread)
    name TEXT,                 -- thread name (last one set); NULL if never named while recording
    serial INTEGER NOT NULL,   -- order in which the recording opened the thread's file (from 1)
    file TEXT NOT NULL,        -- the thread file that was converted
    events INTEGER NOT NULL,   -- allocation and free records read from it
    lost_events INTEGER NOT NULL -- events the tracer reported it could not record in this thread
);

-- Executables and shared objects mapped in each process while it was recorded.
CREATE TABLE modules (
    pid INTEGER NOT NULL,      -- process id
    recording INTEGER NOT NULL, -- the recording of the process that mapped it (processes.recording); an exec maps other modules
    path TEXT NOT NULL,        -- file path as recorded
    bias INTEGER NOT NULL,     -- load bias (dlpi_addr): run-time address minus file address
    build_id TEXT,             -- GNU build-id recorded at run time, hex; NULL if the file had none
    status TEXT NOT NULL       -- 'ok': symbolized from it; 'unused': no stack pointed into it; 'missing': file not found; 'mismatch': file's build-id differs from the recording
);

-- Labels a program set with rheap_mark().
CREATE TABLE markers (
    pid INTEGER NOT NULL,    -- process id
    recording INTEGER NOT NULL, -- the recording of the process (processes.recording); t counts from its start
    tid INTEGER NOT NULL,    -- thread that set the marker
    t INTEGER NOT NULL,      -- ns since the recording started
    label TEXT NOT NULL      -- the label
);

-- When recording was on: one row per on/off window of each process.
CREATE TABLE windows (
    pid INTEGER NOT NULL,    -- process id
    recording INTEGER NOT NULL, -- the recording of the process (processes.recording); on_t and off_t count from its start
    on_t INTEGER NOT NULL,   -- ns since the recording started when recording went on
    on_how TEXT,             -- what turned it on: env, api, signal, fork, exec
    off_t INTEGER,           -- when it went off; NULL if the process ended without saying so (killed, or still running)
    off_how TEXT             -- what turned it off: api, signal, exit, exec, 'error: ...'
);

-- Each allocation with the frame where the program asked for memory.
CREATE VIEW allocation_sites AS
SELECT a.*, b.sym AS sym, b.file AS file, b.line AS line, b.module AS module
FROM allocations AS a
LEFT JOIN backtraces AS b ON b.id = a.bt AND b.frame_no = 0;

-- Blocks never freed, grouped by recording and allocating stack, largest first.
CREATE VIEW leaks AS
SELECT a.pid AS pid, a.bt AS bt, count(*) AS blocks, sum(a.size) AS bytes,
       b.sym AS sym, b.file AS file, b.line AS line, a.recording AS recording
FROM allocations AS a
LEFT JOIN backtraces AS b ON b.id = a.bt AND b.frame_no = 0
WHERE a.dealloc_after IS NULL
GROUP BY a.pid, a.recording, a.bt
ORDER BY bytes DESC;

-- Each realloc with the block it replaced.
CREATE VIEW reallocs AS
SELECT n.id AS id, n.realloc_of AS old_id, o.size AS old_size, n.size AS new_size,
       o.addr AS old_addr, n.addr AS new_addr, n.alloc_after AS t, n.alloc_thread AS thread,
       n.pid AS pid, n.recording AS recording
FROM allocations AS n
JOIN allocations AS o ON o.id = n.realloc_of;

-- Each frame of each stack with its bare function name (the demangled name without a leading
-- '<', template arguments or parameters) and whether it is allocator plumbing: code that
-- allocates on its caller's behalf. The canned queries (queries/README.md) name an allocation
-- by its *site*, the first frame of its stack that is not plumbing. Plumbing is any frame in
-- libc, the dynamic loader or the C++ runtime libraries, and, by name, operator new, std::,
-- __gnu_cxx::, Rust's alloc:: and allocator shims (__rust_*, __rdl_*, __rg_*), and the strdup
-- and asprintf families.
CREATE VIEW frames AS
SELECT id, frame_no, name,
       (module GLOB '*/libc.so*' OR module GLOB '*/libc-*.so' OR module GLOB '*/ld-linux*'
        OR module GLOB '*/libstdc++.so*' OR module GLOB '*/libc++.so*'
        OR module GLOB '*/libc++abi.so*'
        OR name GLOB 'operator new*' OR name GLOB 'std::*' OR name GLOB '* std::*'
        OR name GLOB '__gnu_cxx::*' OR name GLOB '* __gnu_cxx::*' OR name GLOB 'alloc::*'
        OR name GLOB '* alloc::*' OR name GLOB '__rust_*' OR name GLOB '__rdl_*'
        OR name GLOB '__rg_*' OR name IN ('strdup', '__strdup', 'strndup', '__strndup',
                                          'asprintf', 'vasprintf')
        OR name GLOB '__*asprintf*') AS plumbing
FROM (SELECT id, frame_no, coalesce(module, '') AS module,
             coalesce(substr(ltrim(sym, '<'), 1, min(instr(ltrim(sym, '<') || '<', '<'),
                                                     instr(ltrim(sym, '<') || '(', '(')) - 1), '')
                 AS name
      FROM backtraces);

-- rheap: after load
-- No secondary index: each one was measured against the canned queries and none paid for its
-- build time (an index on allocations(bt) made the leaks query far slower than a plain scan).
-- A covering index on allocations(pid, recording, bt, size, alloc_after, dealloc_after), which
-- would let the per-site queries group without sorting, cost about 27 s of CPU and 280 MB on
-- 10.4 million allocations, four times the whole conversion of that database, and would still
-- leave the time-ordered queries (peak, timeline, temporary) and the per-thread and per-size
-- ones sorting every row.
