-- schema.sql: the database `rheap convert` writes. This file is the single source of truth: the
-- converter embeds it at build time and runs it on every new database, so a comment here is
-- what `.schema` shows the user.
--
-- Times are nanoseconds since the start of the recording the row belongs to (the `start_ns` of
-- its processes row, found by (pid, recording), CLOCK_MONOTONIC). The tracer records them in
-- 4 ns units, so event times are multiples of 4. Addresses are stored as integers.
--
-- Sizes and byte counts (allocations.size, the bytes columns of the summary tables) are
-- unsigned. SQLite's integers are signed 64-bit, so a value of 2^63 or more, which only a
-- hostile or corrupted recording can hold (no allocation that large succeeds, and the tracer
-- records no failed call), is stored as a REAL rounded to 53 bits of precision, never as a
-- negative number: `typeof(size) = 'real'` finds such rows, and a reader gets the value with
-- sqlite3_column_double. The converter adds the summaries up as doubles (exact up to 2^53 bytes,
-- 8 PiB; weighed in profile mode) and lifetimes in 128 bits, so they never wrap; sum() over a
-- column holding a REAL returns a REAL and cannot overflow; total() never does.
--
-- Everything above the after-load line (near the end) is created before the rows are inserted;
-- everything below it is created after the load, inside the same transaction, because building
-- an index once over finished rows is much cheaper than keeping it up to date on every insert.

-- Key/value facts about the conversion: versions, input counts and the anomalies the converter
-- counted instead of failing on (frees of blocks allocated before recording started, ...), and
-- 'live_events': the events `rheap run` converted while the program was still writing them, and
-- 'overlapped_recordings': the recordings whose conversion began while another's was under way
-- (`rheap run` converts two at a time).
CREATE TABLE meta (
    key TEXT PRIMARY KEY,  -- name of the fact, e.g. 'schema_version', 'unmatched_frees'
    value                  -- its value (text or integer)
);

-- One row per heap block the program allocated while recording was on, stored compactly: read it
-- through the view `allocations` (below), which gives every column in full. A row holds what
-- differs from block to block; what a thread or a recording shares is in `threads`. SQLite
-- stores an integer in as few bytes as its value needs (0 and 1 in none) plus one header byte
-- per column, so the columns are few and hold small numbers.
CREATE TABLE allocation_rows (
    id INTEGER PRIMARY KEY, -- allocations.id
    t INTEGER NOT NULL,    -- alloc_after in units of 4 ns (unscaled, in ns, when `how` has 128 set)
    life INTEGER,          -- dealloc_after - alloc_after in the same unit; NULL: never freed while recording
    bt INTEGER,            -- allocations.bt
    size INTEGER NOT NULL, -- allocations.size
    addr INTEGER NOT NULL, -- the address XOR the allocating thread's threads.addr_base (small: a thread's blocks lie close together), in units of 16 bytes (unscaled, in bytes, when `how` has 128 set)
    how INTEGER NOT NULL   -- bits 0-5: call - 1; 64: freed by another thread or by none recorded (see allocation_frees); 128: unscaled, as a time not a multiple of 4 ns or an address not a multiple of 16 bytes from the base would not scale; bits 8-29: threads.id of the allocating thread; from bit 30, x: 0 when realloc_of and align are NULL; else for the calls that resize (realloc, rallocx, ...) 2 * (id - realloc_of) + 1, or 8589934591 (2^33 - 1) when in allocation_extras, and for the others 2 * align, or 8589934590 when in allocation_extras. Mostly 0 (a malloc by the first thread, freed by it), which takes no byte
);

-- The freeing thread of the blocks freed by another thread than the one that allocated them
-- (allocation_rows.how has 64 set); such a block without a row here had its free unrecorded.
CREATE TABLE allocation_frees (
    id INTEGER PRIMARY KEY, -- allocations.id
    thread INTEGER NOT NULL -- threads.id of the freeing thread
);

-- The values of id - realloc_of or align too large for allocation_rows.how (2^35 - 1 or more).
CREATE TABLE allocation_extras (
    id INTEGER PRIMARY KEY, -- allocations.id
    extra INTEGER NOT NULL  -- id - realloc_of (the calls that resize), else align
);

-- The names of allocations.call: SELECT c.name, count(*) FROM allocations JOIN calls AS c ON c.id = call
-- GROUP BY c.name. The ids are those of the recording format (rip-format/FORMAT.md, "Calls"): the
-- C library's calls, the C++ allocation operators (every form of one operator shares its name: its
-- nothrow and aligned forms show in align) and the allocators' own entry points.
CREATE TABLE calls (
    id INTEGER PRIMARY KEY, -- allocations.call
    name TEXT NOT NULL,     -- malloc, calloc, realloc, ..., operator new, operator new[], mallocx, tc_malloc, mi_malloc, ...
    resizes INTEGER NOT NULL -- 1: the call resizes a block it is given (realloc_of names it), 0: it makes a new one
);
INSERT INTO calls VALUES (1, 'malloc', 0), (2, 'calloc', 0), (3, 'realloc', 1), (4, 'reallocarray', 1),
    (5, 'posix_memalign', 0), (6, 'aligned_alloc', 0), (7, 'memalign', 0), (8, 'valloc', 0),
    (9, 'pvalloc', 0), (10, 'operator new', 0), (11, 'operator new[]', 0), (12, 'mallocx', 0),
    (13, 'rallocx', 1), (14, 'xallocx', 1), (15, 'tc_malloc', 0), (16, 'tc_calloc', 0),
    (17, 'tc_realloc', 1), (18, 'tc_memalign', 0), (19, 'tc_posix_memalign', 0), (20, 'tc_valloc', 0),
    (21, 'tc_pvalloc', 0), (22, 'tc_new', 0), (23, 'tc_newarray', 0), (24, 'mi_malloc', 0),
    (25, 'mi_calloc', 0), (26, 'mi_zalloc', 0), (27, 'mi_realloc', 1), (28, 'mi_malloc_aligned', 0),
    (29, 'mi_zalloc_aligned', 0), (30, 'mi_calloc_aligned', 0), (31, 'mi_realloc_aligned', 1),
    (32, 'mi_new', 0), (33, 'mi_heap_malloc', 0), (34, 'mi_heap_zalloc', 0), (35, 'mi_heap_calloc', 0),
    (36, 'mi_heap_realloc', 1), (37, 'mi_heap_malloc_aligned', 0), (38, 'mi_heap_zalloc_aligned', 0),
    (39, 'mi_heap_calloc_aligned', 0), (40, 'mi_heap_realloc_aligned', 1), (41, 'mi_strdup', 0),
    (42, 'mi_strndup', 0), (43, 'mi_realpath', 0), (44, 'pool_alloc', 0), (45, 'pool_free', 0),
    (46, 'mmap', 0), (47, 'mremap', 1);

-- The program's own pools and arenas, as it reported them (libtrace/include/rheap_pool.h): a block
-- it allocated out of one is an allocation with call 44 (pool_alloc) and a row of pool_blocks;
-- its free (pool_free), or the pool's destruction, ends it. Blocks of the pool still live when
-- the pool is destroyed are freed then, by the destroying thread. Pool blocks are paired within
-- their pool only, never with a malloc block at the same address. Leaks per pool:
-- SELECT p.name, count(*) FROM allocations AS a JOIN pool_blocks AS b ON b.id = a.id
-- JOIN pools AS p ON p.id = b.pool WHERE a.dealloc_after IS NULL GROUP BY p.id.
CREATE TABLE pools (
    id INTEGER PRIMARY KEY,    -- pool_blocks.pool; from 1
    pid INTEGER NOT NULL,      -- process id
    recording INTEGER NOT NULL, -- the recording of the process (processes.recording)
    pool INTEGER NOT NULL,     -- the program's id of the pool (as a signed 64-bit number); a pool id created again after a destroy in the same recording is the same row
    t INTEGER NOT NULL,        -- ns since the recording started: created, or its first block when its creation was not recorded
    name TEXT                  -- the name given at its creation; NULL when its creation was not recorded
);

-- Which pool each pool block came from.
CREATE TABLE pool_blocks (
    id INTEGER PRIMARY KEY,    -- allocations.id
    pool INTEGER NOT NULL      -- pools.id
);

-- The program's own anonymous mappings (rip-format/FORMAT.md, "Mappings") are rows of
-- `allocations` too, under the calls 46 (mmap) and 47 (mremap: realloc_of names the mapping it
-- moved or resized), with their size in whole pages and their unmap as their free. They are not
-- heap: the summary tables below (stack_stats, timeline, recording_stats, ...) leave them out,
-- and `rheap report` shows them on lines of their own; the views over `allocations` show every
-- row, so add `call NOT IN (46, 47)` for the heap alone. Mappings made by the allocator itself
-- (its heap) are not recorded. An unmap of part of a mapping ends the mapping's row at its time
-- and starts one row per piece left (its start, its end, or both when the middle was
-- unmapped), at the same time, with the same stack and thread, under call 46, each listed here
-- with the row it was cut from. Live mapped bytes at time T:
-- SELECT sum(size) FROM allocations WHERE call IN (46, 47) AND alloc_after <= T
--   AND (dealloc_after IS NULL OR dealloc_after > T).
CREATE TABLE map_pieces (
    id INTEGER PRIMARY KEY,    -- allocations.id of the piece
    of INTEGER NOT NULL        -- allocations.id of the mapping it was cut from
);

-- Per recording with any: the program's own mappings in all, from the same rows.
CREATE TABLE mapping_stats (
    pid INTEGER NOT NULL,
    recording INTEGER NOT NULL,
    maps INTEGER NOT NULL,       -- calls that mapped (rows of calls 46 and 47 that are not pieces)
    bytes INTEGER NOT NULL,      -- their bytes
    peak_bytes INTEGER NOT NULL, -- the most bytes mapped at once
    peak_ns INTEGER NOT NULL,    -- the first moment they were
    end_bytes INTEGER NOT NULL,  -- still mapped when the recording ended
    PRIMARY KEY (pid, recording)
);

-- The process's resident memory over time, sampled by the recorder from inside events (at most
-- every RHEAP_RSS_MS ms, 10 by default, and at the recording's first event), from the kernel's
-- counts (/proc/self/status). Beside the heap (timeline, recording_stats), the gap between them
-- is memory that is not live heap: the allocator's free and unused pages, fragmentation,
-- mappings, code, thread stacks. Ordered by t within a recording.
CREATE TABLE rss (
    pid INTEGER NOT NULL,      -- process id
    recording INTEGER NOT NULL, -- processes.recording
    t INTEGER NOT NULL,        -- ns since the recording started
    bytes INTEGER NOT NULL,    -- resident memory (VmRSS): anon + file
    anon INTEGER NOT NULL,     -- of it anonymous (RssAnon): heap, stacks, anonymous mappings
    file INTEGER NOT NULL,     -- of it file-backed and shared memory (RssFile + RssShmem)
    swap INTEGER NOT NULL      -- swapped out (VmSwap), not in bytes
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

-- The frames of `backtraces` without their repeats. The stacks of a process tree pass through
-- the same few tens of thousands of frames (main, the compiler's passes, libc's start), so a
-- build's 200,000 stacks hold 6 million backtraces rows but under 40,000 distinct frames; the
-- exports and the page read each stack as one row of stack_frames and each frame once from here,
-- where reading the backtraces rows of every stack took seconds. Both tables hold exactly what
-- `backtraces` holds (tests/queries/agree.sh decodes them and compares):
--   SELECT s.id, f.key AS frame_no, u.file, u.line, u.sym, u.module, u.offset, u.inlined
--   FROM stack_frames AS s, json_each(s.frames) AS f JOIN unique_frames AS u ON u.id = abs(f.value)
-- gives its rows, and ip_index is the count of positive ids before the frame's own.
CREATE TABLE unique_frames (
    id INTEGER PRIMARY KEY,    -- 1, 2, ... in the order the frames were first met
    file TEXT,                 -- as backtraces.file, line, sym, module, offset and inlined: one
    line INTEGER,              -- row per distinct combination of the six
    sym TEXT,
    module TEXT,
    offset INTEGER NOT NULL,
    inlined INTEGER NOT NULL
);

-- Each stack's frames, a row per stack.
CREATE TABLE stack_frames (
    id INTEGER PRIMARY KEY,    -- backtraces.id (stacks.id)
    frames TEXT NOT NULL       -- a JSON array of unique_frames ids, frame 0 first (the order of frame_no); an id is negative when its frame comes from the same recorded return address as the frame before it (the function an inlined one was inlined into), positive when it starts the next address
);

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
    sample_ppm INTEGER,          -- sampling rate in parts per million (1000000: every allocation has a stack, 0: none has); NULL: the recording has no config record
    dir TEXT,                    -- recording directory that was converted
    unmatched_frees INTEGER NOT NULL, -- frees of blocks allocated before recording started (not errors)
    lost_events INTEGER NOT NULL,     -- events the tracer reported it could not record
    mode TEXT NOT NULL DEFAULT 'trace', -- 'trace': every allocation and free has its row; 'profile': only a sample of allocations (about one per sample_interval bytes), each with its backtrace and its free, and the summaries below hold estimates (see "Profile mode" there)
    sample_interval INTEGER,     -- profile mode: mean bytes allocated between two samples; NULL in trace mode
    unrecorded TEXT,             -- an allocator the tracer found in the process and did not record, e.g. 'jemalloc in /usr/bin/prog (malloc)': the process's blocks from it are missing; NULL when none was found
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
    lost_events INTEGER NOT NULL, -- events the tracer reported it could not record in this thread
    id INTEGER PRIMARY KEY,    -- unique in the database, from 0; allocation_rows and allocation_frees refer to it
    addr_base INTEGER NOT NULL -- the address of the thread's first allocation (0 if none): allocation_rows.addr is stored relative to it
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
    on_how TEXT,             -- what turned it on: env, api, signal, fork, exec, attach (rheap attach)
    off_t INTEGER,           -- when it went off; NULL if the process ended without saying so (killed, or still running)
    off_how TEXT             -- what turned it off: api, signal, exit, exec, detach (rheap attach's window ended while the process went on: its blocks still live then are not leaks), 'error: ...'
);
-- The windows of a recording by (pid, recording): the view recording_ends looks up each
-- recording's last window, which the queries join with thousands of rows of a process tree;
-- without it every lookup read every window (sizes took 41 s of CPU on 587 recordings). Made
-- with the table, not after the load, since `rheap run`'s summary reads the view before the
-- load ends (without the index its totals took 1.9 s of CPU on a build's 2,009 recordings); a
-- window is a row or two per process, so keeping it up to date costs nothing.
CREATE INDEX windows_recording ON windows (pid, recording, on_t);

-- Per recording: what ended it, and whether its blocks never freed are leaks. A block is leaked
-- only when the recording lasted until its process ended: the last window went off by `exit`,
-- by an `exec` that replaced the program (not one that failed: a recording of the same pid that
-- goes on `exec` follows it), or never went off (the process was killed while recording). A
-- recording that stopped while the process went on (a window: `api`, `signal`, `detach`, an
-- `error: ...`) knows only which blocks were still live when it stopped; the process may have
-- freed them later. Every output of rheap reads this one rule.
CREATE VIEW recording_ends AS
SELECT p.pid AS pid, p.recording AS recording,
       w.off_how AS off_how, -- the last window's off_how; NULL: it never went off
       CASE WHEN w.off_how IS NULL OR w.off_how = 'exit' THEN 1
            WHEN w.off_how = 'exec' THEN NOT EXISTS (
                SELECT 1 FROM windows AS n
                WHERE n.pid = p.pid AND n.on_how = 'exec'
                  AND n.recording = (SELECT min(q.recording) FROM processes AS q
                                     WHERE q.pid = p.pid AND q.recording > p.recording))
            ELSE 0 END AS until_exit -- 1: never-freed blocks are leaks; 0: still live when recording stopped
FROM processes AS p
LEFT JOIN windows AS w ON w.pid = p.pid AND w.recording = p.recording
      AND w.on_t = (SELECT max(v.on_t) FROM windows AS v
                    WHERE v.pid = p.pid AND v.recording = p.recording);

-- ---- Summaries ----
-- The converter fills the tables below in the same pass that writes `allocations`, so the canned
-- queries and `rheap report` read a few rows per stack instead of scanning every block. Each is
-- exact: it holds what the same SQL over `allocations` gives (tests/queries checks both agree).
-- Rows of one recording are keyed by (pid, recording); a stack `bt` of NULL stands for the
-- allocations that have no backtrace (sampling), as in `allocations`.
--
-- Profile mode (processes.mode = 'profile'): `allocations` holds only the sampled blocks. A block
-- of `size` bytes was sampled with probability p = 1 - exp(-size / sample_interval), so it stands
-- for 1/p blocks and size/p bytes: every count of blocks and bytes below (and the lifetime sums)
-- is that weighed estimate, rounded, not an exact count. Two figures stay exact, counted by the
-- tracer for every call: recording_stats.allocs and alloc_bytes, and thread_stats.allocs and
-- alloc_bytes. In SQL over `allocations`, weigh a row with
--   1.0 / (1.0 - exp(-size * 1.0 / p.sample_interval))   (p: its processes row)
-- for the blocks it stands for, times size for the bytes. min_size, max_size, times and
-- lifetimes' extremes are those of the sampled blocks.

-- The allocation site of every stack, decided once: the first frame that is not allocator
-- plumbing (table plumbing_patterns below), or frame 0 when every frame is; when that frame has
-- no function name (stripped code), the first named frame further out within its module, and
-- when there is none, the frame itself, named by module and offset (view frame_sites below).
CREATE TABLE stacks (
    id INTEGER PRIMARY KEY,        -- backtraces.id
    frames INTEGER NOT NULL,       -- number of backtraces rows of the stack
    site_frame INTEGER NOT NULL,   -- backtraces.frame_no of the allocation site
    function TEXT NOT NULL,        -- the site's function name; 'module+0xoffset' for code without a name, '??' outside any module
    location TEXT NOT NULL,        -- the site's file:line, or module:0xoffset without line information
    site INTEGER NOT NULL          -- sites.id: the same (function, location) is the same site
);

-- The allocation sites: one row per distinct (function, location) of `stacks`, and the row
-- '(no backtrace)', '??' for the allocations without a stack when there are any. Ids run from
-- 1 in the order the stacks bringing them were met; they carry no meaning across databases.
-- The canned queries group by site, through the integer, not the two texts.
CREATE TABLE sites (
    id INTEGER PRIMARY KEY,        -- stacks.site, site_stats.site, ...
    function TEXT NOT NULL,        -- as stacks.function
    location TEXT NOT NULL         -- as stacks.location
);

-- Per recording and stack: what its allocations did.
CREATE TABLE stack_stats (
    pid INTEGER NOT NULL,          -- process id
    recording INTEGER NOT NULL,    -- processes.recording
    bt INTEGER,                    -- stacks.id; NULL: allocations without a backtrace
    blocks INTEGER NOT NULL,       -- allocations (rows of `allocations`)
    bytes INTEGER NOT NULL,        -- their bytes
    freed_blocks INTEGER NOT NULL, -- of them freed while recording (dealloc_after not NULL)
    freed_bytes INTEGER NOT NULL,
    leaked_blocks INTEGER NOT NULL, -- never freed while recording
    leaked_bytes INTEGER NOT NULL,
    temporary_blocks INTEGER NOT NULL, -- freed before the allocating thread's next allocation (the default rule of queries/temporary.sql)
    temporary_bytes INTEGER NOT NULL,
    first_ns INTEGER NOT NULL,     -- first allocation (alloc_after)
    last_ns INTEGER NOT NULL,      -- last allocation
    leak_first_ns INTEGER,         -- first never-freed allocation; NULL when none
    leak_last_ns INTEGER,          -- last never-freed allocation
    min_size INTEGER NOT NULL,     -- smallest and largest block
    max_size INTEGER NOT NULL,
    life_min_ns INTEGER,           -- shortest, longest and summed lifetime of the freed blocks; NULL when none was freed
    life_max_ns INTEGER,
    life_total_ns INTEGER,
    peak_blocks INTEGER NOT NULL,  -- blocks live at the recording's peak (recording_stats.peak_ns)
    peak_bytes INTEGER NOT NULL    -- their bytes; summed over the stacks they give recording_stats.peak_bytes
);

-- Per recording: where its rows of stack_stats are. The converter writes a recording's rows
-- together, one after the other, so they are the rowids first_row to last_row of stack_stats
-- (in the order of bt), and a question about a few recordings reads them by rowid
--   SELECT s.* FROM recording_rows AS r JOIN stack_stats AS s
--          ON s.rowid BETWEEN r.first_row AND r.last_row WHERE r.pid = ... AND r.recording = ...
-- instead of scanning every recording's (stack_stats has no index: 2.5 million rows on a
-- build's tree). The leak suppressions read the few recordings whose sites they change so.
CREATE TABLE recording_rows (
    pid INTEGER NOT NULL,
    recording INTEGER NOT NULL,
    first_row INTEGER NOT NULL,    -- stack_stats.rowid of its first row
    last_row INTEGER NOT NULL,     -- of its last; first_row > last_row when it has none
    PRIMARY KEY (pid, recording)
) WITHOUT ROWID;

-- Per recording and stack: freed blocks and their bytes by decade of lifetime (the page's lifetime
-- filter: the blocks that lived at least 1 us, 10 us, ... 10 s are the decades from 1, 2, ... 8).
CREATE TABLE stack_lifetimes (
    pid INTEGER NOT NULL,
    recording INTEGER NOT NULL,
    bt INTEGER,                    -- stacks.id; NULL: no backtrace
    decade INTEGER NOT NULL,       -- 0: under 1 us, 1: under 10 us, ... 7: under 10 s, 8: 10 s or more
    blocks INTEGER NOT NULL,       -- freed blocks whose lifetime falls in the decade
    bytes INTEGER NOT NULL         -- their bytes
);

-- Per recording and stack: blocks by power-of-two size class.
CREATE TABLE stack_sizes (
    pid INTEGER NOT NULL,
    recording INTEGER NOT NULL,
    bt INTEGER,                    -- stacks.id; NULL: no backtrace
    min_size INTEGER NOT NULL,     -- the class holds sizes min_size .. 2 * min_size - 1 (0: size 0)
    blocks INTEGER NOT NULL,
    bytes INTEGER NOT NULL,
    leaked_blocks INTEGER NOT NULL,
    leaked_bytes INTEGER NOT NULL
);

-- Per recording, stack and timeline slice: the never-freed blocks allocated in the slice (when
-- a site leaks: once, or all along; queries/growth.sql).
CREATE TABLE stack_leaks (
    pid INTEGER NOT NULL,
    recording INTEGER NOT NULL,
    bt INTEGER,                    -- stacks.id; NULL: no backtrace
    bucket INTEGER NOT NULL,       -- timeline.bucket of the allocations
    blocks INTEGER NOT NULL,       -- never-freed blocks allocated in it, and their bytes
    bytes INTEGER NOT NULL
);

-- Per recording and thread: what it allocated and freed.
CREATE TABLE thread_stats (
    pid INTEGER NOT NULL,
    recording INTEGER NOT NULL,
    tid INTEGER NOT NULL,          -- kernel thread id
    allocs INTEGER NOT NULL,       -- blocks it allocated, and their bytes (profile mode: every call, counted exactly by the tracer)
    alloc_bytes INTEGER NOT NULL,
    frees INTEGER NOT NULL,        -- blocks it freed (as allocations.dealloc_thread), and their bytes
    freed_bytes INTEGER NOT NULL,
    leaked_blocks INTEGER NOT NULL, -- blocks it allocated that were never freed
    leaked_bytes INTEGER NOT NULL,
    freed_by_other INTEGER NOT NULL, -- blocks it allocated that another thread freed
    frees_of_other INTEGER NOT NULL  -- blocks it freed that another thread allocated
);

-- Per recording: live heap over time in slices of equal width (at most 1024; the width is a
-- power of two times 1024 ns, the smallest that covers the recording). Coarser timelines are
-- groups of consecutive slices (queries/timeline.sql).
CREATE TABLE timeline (
    pid INTEGER NOT NULL,
    recording INTEGER NOT NULL,
    bucket INTEGER NOT NULL,       -- 0, 1, ...: the slice [start_ns, end_ns)
    start_ns INTEGER NOT NULL,
    end_ns INTEGER NOT NULL,
    max_live_bytes INTEGER NOT NULL, -- the most bytes live at any moment of the slice (the peak shows at any width)
    live_bytes INTEGER NOT NULL,   -- bytes live at the end of the slice
    live_blocks INTEGER NOT NULL,  -- blocks live at the end of the slice
    allocs INTEGER NOT NULL,       -- allocations in the slice, and their bytes
    alloc_bytes INTEGER NOT NULL,
    frees INTEGER NOT NULL,        -- blocks freed in the slice, and their bytes
    freed_bytes INTEGER NOT NULL,
    PRIMARY KEY (pid, recording, bucket) -- a recording's slices in order, found without a scan
) WITHOUT ROWID;

-- Per recording: totals and the exact peak.
CREATE TABLE recording_stats (
    pid INTEGER NOT NULL,
    recording INTEGER NOT NULL,
    allocs INTEGER NOT NULL,       -- rows of `allocations`, and their bytes (profile mode: every call, counted exactly by the tracer)
    alloc_bytes INTEGER NOT NULL,
    frees INTEGER NOT NULL,        -- of them freed while recording, and their bytes
    freed_bytes INTEGER NOT NULL,
    leaked_blocks INTEGER NOT NULL, -- never freed while recording
    leaked_bytes INTEGER NOT NULL,
    end_ns INTEGER NOT NULL,       -- time of the last allocation or free
    peak_ns INTEGER NOT NULL,      -- the first moment at which the live heap was largest (all events of one ns counted together)
    peak_bytes INTEGER NOT NULL,   -- bytes live then
    peak_blocks INTEGER NOT NULL,  -- blocks live then
    timeline_width_ns INTEGER NOT NULL, -- width of the `timeline` slices
    PRIMARY KEY (pid, recording)
);

-- Per recording and allocation site: stack_stats added up over the site's stacks, so that a
-- question per site reads one row per site and recording instead of one per stack (a process
-- tree has ten stacks per site and recording, a million rows of stack_stats for a build). Each
-- sum is the sum of the stacks' rows as they are written (in profile mode: of the rounded
-- estimates), the extremes are the stacks' extremes, so the rows are exactly
--   SELECT pid, recording, site, count(*), sum(blocks), ..., min(first_ns), ...
--   FROM stack_stats JOIN stacks ON id = bt GROUP BY pid, recording, site
-- (a NULL bt counting in the site '(no backtrace)'). The *_stack columns name the stack that
-- stands for the site in each question (rheap stack ID DB prints it): the site's stack with the
-- largest figure, the smallest id among equals.
CREATE TABLE site_stats (
    pid INTEGER NOT NULL,
    recording INTEGER NOT NULL,
    site INTEGER NOT NULL,         -- sites.id
    stacks INTEGER NOT NULL,       -- its stacks with a stack_stats row in the recording
    blocks INTEGER NOT NULL,       -- the columns of stack_stats, added up
    bytes INTEGER NOT NULL,
    freed_blocks INTEGER NOT NULL,
    freed_bytes INTEGER NOT NULL,
    leaked_blocks INTEGER NOT NULL,
    leaked_bytes INTEGER NOT NULL,
    temporary_blocks INTEGER NOT NULL,
    temporary_bytes INTEGER NOT NULL,
    first_ns INTEGER NOT NULL,     -- the smallest of the stacks' first_ns; likewise the largest last_ns, ...
    last_ns INTEGER NOT NULL,
    leak_first_ns INTEGER,         -- NULL when no block of the site was left
    leak_last_ns INTEGER,
    min_size INTEGER NOT NULL,
    max_size INTEGER NOT NULL,
    life_min_ns INTEGER,           -- NULL when none of its blocks was freed
    life_max_ns INTEGER,
    life_total_ns INTEGER,
    peak_blocks INTEGER NOT NULL,  -- live at the recording's peak
    peak_bytes INTEGER NOT NULL,
    bytes_stack INTEGER,           -- the stack with the most bytes (queries/top-sites.sql); NULL: no backtrace
    blocks_stack INTEGER,          -- the most blocks (lifetimes)
    leak_stack INTEGER,            -- the most leaked bytes among those with leaked blocks (leaks, diff); NULL also when none
    temporary_stack INTEGER,       -- the most temporary blocks (temporary)
    peak_stack INTEGER,            -- the most bytes at the peak among those with blocks then (peak); NULL also when none
    growth_stack INTEGER,          -- the most bytes in stack_leaks (growth); NULL also when none
    PRIMARY KEY (pid, recording, site)
) WITHOUT ROWID;

-- Per recording and site: stack_lifetimes added up over the site's stacks.
CREATE TABLE site_lifetimes (
    pid INTEGER NOT NULL,
    recording INTEGER NOT NULL,
    site INTEGER NOT NULL,         -- sites.id
    decade INTEGER NOT NULL,       -- as stack_lifetimes.decade
    blocks INTEGER NOT NULL,
    bytes INTEGER NOT NULL,
    PRIMARY KEY (pid, recording, site, decade)
) WITHOUT ROWID;

-- Per recording, site and timeline slice: stack_leaks added up over the site's stacks.
CREATE TABLE site_leaks (
    pid INTEGER NOT NULL,
    recording INTEGER NOT NULL,
    site INTEGER NOT NULL,         -- sites.id
    bucket INTEGER NOT NULL,       -- timeline.bucket
    blocks INTEGER NOT NULL,
    bytes INTEGER NOT NULL,
    PRIMARY KEY (pid, recording, site, bucket)
) WITHOUT ROWID;

-- Per recording and site with never-freed blocks: its site_leaks rows cut into the 10 phases of
-- queries/growth.sql's default (phases = 10: the recording's timeline slices in 10 groups,
-- slice b in phase b * n / slices, n = min(10, slices)), so that the default answer reads one
-- row per site and recording: on a build's tree, 120,000 rows instead of a string built from
-- 265,000. The figures are exactly those of the query over site_leaks.
CREATE TABLE site_growth (
    pid INTEGER NOT NULL,
    recording INTEGER NOT NULL,
    site INTEGER NOT NULL,         -- sites.id
    phases INTEGER NOT NULL,       -- n: the recording's phases
    phases_leaking INTEGER NOT NULL, -- phases with a site_leaks row of the site
    leaked_blocks INTEGER NOT NULL, -- its site_leaks rows added up
    leaked_bytes INTEGER NOT NULL,
    per_phase TEXT NOT NULL,       -- the bytes of each phase in order, comma-separated, 0 for none
    PRIMARY KEY (pid, recording, site)
) WITHOUT ROWID;

-- Per recording and size class: stack_sizes added up over every stack (queries/sizes.sql).
CREATE TABLE recording_sizes (
    pid INTEGER NOT NULL,
    recording INTEGER NOT NULL,
    min_size INTEGER NOT NULL,     -- the class holds sizes min_size .. 2 * min_size - 1 (0: size 0)
    blocks INTEGER NOT NULL,
    bytes INTEGER NOT NULL,
    leaked_blocks INTEGER NOT NULL,
    leaked_bytes INTEGER NOT NULL,
    PRIMARY KEY (pid, recording, min_size)
) WITHOUT ROWID;

-- Per stack, over every recording of the database: stack_stats added up, so that an answer
-- about the whole process tree (the exports' flamegraph and profile) reads a row per stack
-- instead of one per stack and recording (a build: 200,000 rows instead of 2.5 million). Each
-- figure is the sum of the rows as written, with what a recording that stopped while its
-- process went on (a window, the view recording_ends) left live counted as stopped, not leaked:
--   SELECT bt, count(*), sum(blocks), sum(bytes),
--          sum(CASE WHEN e.until_exit THEN leaked_blocks ELSE 0 END), ...,
--          sum(CASE WHEN e.until_exit THEN 0 ELSE leaked_blocks END), ...
--   FROM stack_stats JOIN recording_ends AS e USING (pid, recording) GROUP BY bt
-- Written once, at the end of the conversion, from the sums the converter kept as it wrote
-- each recording's rows. Per recording, read stack_stats.
CREATE TABLE stack_totals (
    bt INTEGER,                    -- stacks.id; NULL: allocations without a backtrace
    recordings INTEGER NOT NULL,   -- recordings with a stack_stats row of it
    blocks INTEGER NOT NULL,       -- the columns of stack_stats, added up
    bytes INTEGER NOT NULL,
    leaked_blocks INTEGER NOT NULL, -- never freed, in the recordings that lasted until their process ended
    leaked_bytes INTEGER NOT NULL,
    stopped_blocks INTEGER NOT NULL, -- still live when a window stopped recording
    stopped_bytes INTEGER NOT NULL,
    peak_blocks INTEGER NOT NULL,  -- live at each recording's own peak
    peak_bytes INTEGER NOT NULL,
    temporary_blocks INTEGER NOT NULL,
    temporary_bytes INTEGER NOT NULL
);

-- Per stack over every recording: stack_lifetimes added up, so that a page about the whole
-- process tree reads each stack's lifetimes from a row per stack and decade instead of one per
-- stack, decade and recording (a build: 400,000 rows instead of 3 million). Each row is
--   SELECT bt, decade, sum(blocks), sum(bytes) FROM stack_lifetimes GROUP BY bt, decade
-- of the rows as written (freed blocks only: a window's blocks live when it stopped are in no
-- decade). Written once, at the end of the conversion, like stack_totals.
CREATE TABLE stack_lifetime_totals (
    bt INTEGER,                    -- stacks.id; NULL: allocations without a backtrace
    decade INTEGER NOT NULL,       -- as stack_lifetimes.decade
    blocks INTEGER NOT NULL,       -- freed blocks whose lifetime falls in the decade, every recording
    bytes INTEGER NOT NULL         -- their bytes
);

-- The timeline of every recording together, in wall-clock time: each recording's slices of
-- `timeline` (those with an event, and the first) counted in the slice that holds their
-- start (processes.start_wall_ns + timeline.start_ns), the recording's end
-- (recording_stats.end_ns) in the slice that holds it. The slices are aligned on their width W
-- in wall-clock time (a power of two times 1024 ns, the smallest that fits every such start and
-- end into 1024 slices), so a row's figures are exactly the sums of the `timeline` rows with
-- (p.start_wall_ns + t.start_ns) / W = start_wall_ns / W (tests/queries/agree.sh), and the
-- memory of a process tree over time is read from at most 1024 rows (queries/timeline.sql),
-- not from each recording's. Written once, at the end of the conversion.
CREATE TABLE timeline_totals (
    bucket INTEGER PRIMARY KEY,    -- 0, 1, ...: the slice [start_wall_ns, end_wall_ns)
    start_wall_ns INTEGER NOT NULL, -- ns since the epoch
    end_wall_ns INTEGER NOT NULL,
    recordings INTEGER NOT NULL,   -- recordings under way in the slice (started in it or before, not ended before it)
    allocs INTEGER NOT NULL,       -- the `timeline` columns of the recordings' slices that start in it, added up
    alloc_bytes INTEGER NOT NULL,
    frees INTEGER NOT NULL,
    freed_bytes INTEGER NOT NULL,
    ended_blocks INTEGER NOT NULL, -- blocks still live when their recording ended in the slice (a process's heap goes with it)
    ended_bytes INTEGER NOT NULL,
    live_blocks INTEGER NOT NULL,  -- live at the end of the slice in every recording under way: allocs - frees - ended_blocks up to it
    live_bytes INTEGER NOT NULL,
    started INTEGER NOT NULL       -- recordings whose first slice starts in it
);

-- Per recording, marker time and stack: the blocks live at the moment of each marker (allocated
-- at or before it and not freed by then), so comparing markers needs no scan. Stacks with
-- nothing live are left out.
CREATE TABLE marker_stacks (
    pid INTEGER NOT NULL,
    recording INTEGER NOT NULL,
    t INTEGER NOT NULL,            -- markers.t
    bt INTEGER,                    -- stacks.id; NULL: no backtrace
    blocks INTEGER NOT NULL,
    bytes INTEGER NOT NULL
);

-- Checkpoints: what was live at any moment, per stack, exactly, without a scan of every row.
-- Each recording's time is cut into at most about 256 equal intervals (groups of four
-- timeline slices). At each cut the converter copies the live totals of the stacks that had
-- an event since the previous cut (checkpoint_stacks), and notes which rows of `allocations`
-- have an event in the interval that follows: the blocks that ended in it are one range of
-- ids (rows are numbered as blocks end), the never-freed blocks allocated in it another (they
-- come last, in allocation order), and the blocks allocated in it that ended after it a list
-- (`later`). The heap at T is then the checkpoint at or before T, plus or minus the blocks of
-- those three sets whose allocation or end falls after the checkpoint and at or before T: a
-- small share of the rows, read by id. `rheap export --at`, `report --at` and the page read
-- them (analysis/moment.c; bench/README.md, "Moments", has their size and speed).
CREATE TABLE checkpoints (
    pid INTEGER NOT NULL,
    recording INTEGER NOT NULL,
    ck INTEGER NOT NULL,           -- 0, 1, ... in time order; 0 is the empty heap before the first event
    t INTEGER NOT NULL,            -- ns since the recording started: checkpoint_stacks holds the heap after every event at or before t (-1 for ck 0)
    free_lo INTEGER NOT NULL,      -- allocations.id range [free_lo, free_hi) of the blocks that ended after t and at or before the next checkpoint's t (empty when equal)
    free_hi INTEGER NOT NULL,
    leak_lo INTEGER NOT NULL,      -- allocations.id range [leak_lo, leak_hi) of the never-freed blocks allocated in that interval
    leak_hi INTEGER NOT NULL,
    blocks INTEGER NOT NULL,       -- blocks live at t, every stack together (weighed in profile mode)
    bytes INTEGER NOT NULL,        -- their bytes
    later BLOB,                    -- the ids of the blocks allocated in the interval that ended after it, ascending, each as the difference from the one before (the first from 0) in LEB128 (7 bits a byte, low first, 128 set on all but the last byte); NULL: none. An id may also lie in the free range (a reader takes it once)
    PRIMARY KEY (pid, recording, ck)
) WITHOUT ROWID;

-- Per checkpoint: the live blocks and bytes of each stack whose figures changed since its row
-- before (its first row: since nothing was live); a stack that allocated and freed between two
-- checkpoints and ended where it was gets no row. A stack's live heap at checkpoint ck is its
-- row with the largest ck at or before it (none: nothing live). Read through the index
-- checkpoint_stacks_by_stack. A recording's rows are written together, ordered by (bt, ck).
CREATE TABLE checkpoint_stacks (
    pid INTEGER NOT NULL,
    recording INTEGER NOT NULL,
    ck INTEGER NOT NULL,           -- checkpoints.ck
    bt INTEGER,                    -- stacks.id; NULL: no backtrace
    blocks INTEGER NOT NULL,       -- live at the checkpoint (weighed in profile mode)
    bytes INTEGER NOT NULL
);
-- A moment's per-stack heap: the latest checkpoint_stacks row of each stack at or before a
-- checkpoint, one seek per stack. Made with the table, not after the load: the converter
-- inserts each recording's rows in the index's order, so it grows by appends.
CREATE INDEX checkpoint_stacks_by_stack ON checkpoint_stacks (pid, recording, bt, ck);

-- One row per heap block the program allocated while recording was on: allocation_rows with its
-- thread, process and recording looked up and its encodings undone. This is what every query
-- reads; each column means what it says below.
CREATE VIEW allocations AS
SELECT r.id AS id, -- unique in the database, across processes; rows are numbered in the order blocks were freed, then the blocks of the same recording never freed, in allocation order
       CASE WHEN r.how & 128 THEN r.t ELSE r.t * 4 END AS alloc_after, -- ns after the recording started when the allocation returned
       CASE WHEN r.how & 128 THEN r.t + r.life ELSE (r.t + r.life) * 4 END AS dealloc_after, -- ns after the recording started when the block was freed (or released by realloc); NULL: never freed while recording
       r.bt AS bt, -- backtraces.id of the allocating call stack; NULL: no backtrace was taken (sampling)
       r.size AS size, -- bytes requested (calloc: nmemb * size); unsigned, a REAL from 2^63 on (see the top)
       (CASE WHEN r.how & 128 THEN r.addr ELSE r.addr * 16 END | th.addr_base)
           & ~(CASE WHEN r.how & 128 THEN r.addr ELSE r.addr * 16 END & th.addr_base) AS addr, -- address of the block
       th.tid AS alloc_thread, -- kernel thread id (tid) that allocated the block
       CASE WHEN r.life IS NULL THEN NULL WHEN r.how & 64 = 0 THEN th.tid
            ELSE (SELECT ft.tid FROM allocation_frees AS f JOIN threads AS ft ON ft.id = f.thread
                  WHERE f.id = r.id) END AS dealloc_thread, -- tid that freed it; NULL when never freed or when the free was not recorded (see meta 'reused_live')
       th.pid AS pid, -- process that allocated the block (processes.pid)
       (r.how & 63) + 1 AS call, -- the allocating call, an id of the table `calls` (1 malloc, 2 calloc, 3 realloc, ..., 10 operator new, ...)
       CASE WHEN r.how >> 30 = 0 OR (r.how >> 30) & 1 THEN NULL
            WHEN r.how >> 30 < 8589934590 THEN r.how >> 31
            ELSE (SELECT e.extra FROM allocation_extras AS e WHERE e.id = r.id) END AS align, -- alignment asked for by the aligned calls (and the aligned forms of operator new, mallocx with an alignment, ...); NULL for the others
       CASE WHEN (r.how >> 30) & 1 = 0 THEN NULL
            WHEN r.how >> 30 < 8589934591 THEN r.id - (r.how >> 31)
            ELSE r.id - (SELECT e.extra FROM allocation_extras AS e WHERE e.id = r.id) END AS realloc_of, -- allocations.id of the block this realloc (or rallocx, mi_realloc, ...) replaced; NULL when not a resizing call, or when the old block was allocated before recording
       th.recording AS recording -- which recording of the process (processes.recording): a process that execs, or turns recording on twice, keeps its pid but starts a new recording whose times have their own start; blocks never pair across recordings
FROM allocation_rows AS r
LEFT JOIN threads AS th ON th.id = (r.how >> 8) & 4194303;

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

-- Allocator plumbing: code that allocates on its caller's behalf. The converter writes its one
-- list here (converter/stacks.c): any frame in libc, the dynamic loader or the C++ runtime
-- libraries, and, by name, the global operator new, std::, __gnu_cxx::, Rust's alloc::,
-- core::iter:: (collect() and the adapters it runs through), core::ops::function::,
-- hashbrown:: and the allocator shims (__rust_*, __rdl_*, __rg_*), and the strdup and asprintf
-- families.
CREATE TABLE plumbing_patterns (
    kind TEXT NOT NULL,      -- 'module': a GLOB on backtraces.module; 'name': a GLOB on the frame's bare name (frames.name)
    pattern TEXT NOT NULL    -- the GLOB pattern
);

-- Each frame of each stack with its bare function name (the demangled name without a leading
-- '<', template arguments or parameters) and whether it is allocator plumbing (a pattern of
-- plumbing_patterns matches it). The canned queries (queries/README.md) name an allocation by
-- its *site*, the first frame of its stack that is not plumbing.
CREATE VIEW frames AS
SELECT id, frame_no, name,
       EXISTS (SELECT 1 FROM plumbing_patterns AS p
               WHERE CASE p.kind WHEN 'module' THEN f.module ELSE f.name END GLOB p.pattern)
           AS plumbing
FROM (SELECT id, frame_no, coalesce(module, '') AS module,
             coalesce(substr(ltrim(sym, '<'), 1, min(instr(ltrim(sym, '<') || '<', '<'),
                                                     instr(ltrim(sym, '<') || '(', '(')) - 1), '')
                 AS name
      FROM backtraces) AS f;

-- For each frame of each stack, the site the stack gets when that frame is the first one not
-- skipped (the rule of the table `stacks`): the frame itself, or, when it has no function name,
-- the first named frame further out within the same module; its function ('module+0xoffset'
-- when none has a name, '??' outside any module) and location. The canned queries read it when
-- :skip names more wrappers than the plumbing; `stacks` holds it already for the plumbing alone.
CREATE VIEW frame_sites AS
SELECT f.id AS id, f.frame_no AS frame_no, k.frame_no AS site_frame,
       coalesce(k.sym, CASE WHEN k.module IS NULL THEN '??'
                            ELSE replace(k.module, rtrim(k.module, replace(k.module, '/', '')), '')
                                 || printf('+0x%x', k.offset) END) AS function,
       coalesce(k.file, k.module, '??') || ':' || coalesce(k.line, printf('0x%x', k.offset)) AS location
FROM backtraces AS f
JOIN backtraces AS k ON k.id = f.id AND k.frame_no = CASE WHEN f.sym IS NOT NULL THEN f.frame_no ELSE
    coalesce((SELECT min(g.frame_no) FROM backtraces AS g
              WHERE g.id = f.id AND g.frame_no > f.frame_no AND g.sym IS NOT NULL
                AND NOT EXISTS (SELECT 1 FROM backtraces AS h
                                WHERE h.id = f.id AND h.frame_no > f.frame_no
                                  AND h.frame_no <= g.frame_no AND h.module IS NOT f.module)),
             f.frame_no) END;

-- rheap: after load
-- A recording's samples of resident memory, in time order: the report and the page read each
-- recording's, which without it meant a scan of every sample per recording (8 s for the page of
-- a build's 2,000 processes). A few rows per process.
CREATE INDEX rss_by_recording ON rss (pid, recording, t);
-- The site rows by bytes and by blocks: queries/top-sites.sql reads the `top` largest of the
-- whole tree from them, and each one's place by counting the rows above it, rather than ranking
-- every site row of every recording twice (0.6 s of CPU on a build's tree of 195,000 rows; a
-- few ms now). Each costs about 0.06 s of CPU to build there and 2.5 MB. They are partial
-- indexes that hold every row (bytes and blocks are never negative) so that only a query that
-- says `bytes >= 0` (`blocks >= 0`) uses them: without stat tables SQLite's planner otherwise
-- walked a whole index, a look-up per row, in place of a scan (temporary, 0.07 s became 0.3).
CREATE INDEX site_stats_by_bytes ON site_stats (bytes) WHERE bytes >= 0;
CREATE INDEX site_stats_by_blocks ON site_stats (blocks) WHERE blocks >= 0;
-- No other secondary index, and none on the tables of rows per block or per stack: each one was
-- measured against the canned queries and none paid for its build time (an index on
-- allocations(bt) made the leaks query far slower than a plain scan), when allocations was a
-- table of full rows; the canned queries now read only the summaries, and the answers that scan
-- allocation_rows read all of it. An index of stack_stats by bt over its leaking rows, for the
-- suppressions, cost 0.4 s of CPU and 6 MB on a build's tree: they read recording_rows instead.
-- A covering index on allocations(pid, recording, bt, size, alloc_after, dealloc_after), which
-- would let the per-site queries group without sorting, cost about 27 s of CPU and 280 MB on
-- 10.4 million allocations, four times the whole conversion of that database, and would still
-- leave the time-ordered queries (peak, timeline, temporary) and the per-thread and per-size
-- ones sorting every row.
