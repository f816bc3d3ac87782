-- diff: how did live memory per allocation site change from moment A to moment B?
--
-- Compares two heap snapshots of each recording: the blocks live at A (allocated at or before A
-- and not freed by then) against those live at B, per allocation site, largest growth first.
-- Sites whose live blocks and bytes are the same at both moments are left out.
--
-- A moment is a marker label (the first marker with that label in the recording, as set with
-- rheap_mark) or, when no marker has that label, a time in ns since the recording started
-- (digits only); anything else matches nothing and gives no rows. By default A is the
-- recording's first marker (the start of the recording when it has none) and B its last marker
-- after A (the end of the recording when there is none: b_ns is then its last allocation or
-- free).
--
-- param: a = NULL  (marker label or time in ns; NULL: the first marker)
-- param: b = NULL  (marker label or time in ns; NULL: the last marker, or the end)
-- param: pid = NULL  (only this process; NULL: every process)
-- param: skip = NULL  (GLOB of more function names to skip as allocation wrappers, e.g. 'xmalloc')
--
-- Columns: blocks_a, bytes_a, blocks_b, bytes_b, delta_blocks, delta_bytes, function, location,
--          a_ns, b_ns, stack, recording, pid
-- Run: sqlite3 out.db < queries/diff.sql
WITH site(bt, function, location) AS (
    -- Per stack, its allocation site: the first frame that is neither allocator plumbing (the
    -- table plumbing_patterns in schema.sql) nor matched by :skip, or frame 0 when every frame
    -- is, named as the view frame_sites says. Without :skip the converter chose it already
    -- (the table `stacks`); with it, the frames are read again.
    SELECT id, function, location FROM stacks WHERE :skip IS NULL
    UNION ALL
    SELECT s.id, s.function, s.location
    FROM (SELECT id, coalesce(min(frame_no) FILTER (
                     WHERE NOT plumbing AND NOT coalesce(name GLOB :skip, 0)), 0) AS frame_no
          FROM frames WHERE :skip IS NOT NULL GROUP BY id) AS k
    JOIN frame_sites AS s ON s.id = k.id AND s.frame_no = k.frame_no
),
procs AS (
    SELECT DISTINCT pid, recording FROM processes WHERE pid = coalesce(:pid, pid)
),
moment_a AS (
    SELECT p.pid AS pid, p.recording AS recording,
           CASE WHEN :a IS NULL
                THEN coalesce((SELECT min(t) FROM markers AS m
                               WHERE m.pid = p.pid AND m.recording = p.recording), 0)
                ELSE coalesce((SELECT min(t) FROM markers AS m
                               WHERE m.pid = p.pid AND m.recording = p.recording AND m.label = :a),
                              CASE WHEN :a GLOB '[0-9]*' AND NOT :a GLOB '*[^0-9]*'
                                   THEN cast(:a AS INTEGER) END)
           END AS t
    FROM procs AS p
),
moments AS MATERIALIZED (
    SELECT x.pid AS pid, x.recording AS recording, x.t AS a_ns,
           CASE WHEN :b IS NULL
                THEN coalesce((SELECT max(t) FROM markers AS m
                               WHERE m.pid = x.pid AND m.recording = x.recording AND m.t > x.t),
                              9223372036854775807)
                ELSE coalesce((SELECT min(t) FROM markers AS m
                               WHERE m.pid = x.pid AND m.recording = x.recording AND m.label = :b),
                              CASE WHEN :b GLOB '[0-9]*' AND NOT :b GLOB '*[^0-9]*'
                                   THEN cast(:b AS INTEGER) END)
           END AS b_ns
    FROM moment_a AS x
),
-- A moment the converter took a picture of: the start (0), a marker, or the end (what was
-- never freed). Between any other two moments every block is read. Between the start and the
-- end, without :skip, the converter's sums per site are read (site_stats): nothing is live at
-- the start unless a marker pictured something there, and at the end the never-freed blocks.
started AS MATERIALIZED (
    SELECT DISTINCT pid, recording FROM marker_stacks WHERE t = 0
),
pictured AS MATERIALIZED (
    SELECT m.pid AS pid, m.recording AS recording, m.a_ns AS a_ns, m.b_ns AS b_ns,
           (m.a_ns IN (0, 9223372036854775807)
            OR m.a_ns IN (SELECT t FROM markers AS k WHERE k.pid = m.pid AND k.recording = m.recording))
           AND (m.b_ns IN (0, 9223372036854775807)
                OR m.b_ns IN (SELECT t FROM markers AS k WHERE k.pid = m.pid AND k.recording = m.recording))
               AS fast,
           :skip IS NULL AND m.a_ns IN (0, 9223372036854775807) AND m.b_ns IN (0, 9223372036854775807)
           AND NOT EXISTS (SELECT 1 FROM started AS z WHERE z.pid = m.pid AND z.recording = m.recording)
               AS by_site,
           (SELECT r.end_ns FROM recording_stats AS r
            WHERE r.pid = m.pid AND r.recording = m.recording) AS end_ns
    FROM moments AS m
),
live_at(pid, recording, t, bt, blocks, bytes) AS (
    SELECT pid, recording, t, bt, blocks, bytes FROM marker_stacks
    UNION ALL
    SELECT pid, recording, 9223372036854775807, bt, leaked_blocks, leaked_bytes
    FROM stack_stats
    -- (read only when a recording needs it: this is every leaking stack row of the database,
    -- half a million on a build's tree, and the sums per site usually serve)
    WHERE leaked_blocks > 0 AND EXISTS (SELECT 1 FROM pictured WHERE fast AND NOT by_site)
),
per_stack AS (
    SELECT m.pid AS pid, m.recording AS recording, x.bt AS bt,
           sum(CASE WHEN x.t = m.a_ns THEN x.blocks ELSE 0 END) AS blocks_a,
           sum(CASE WHEN x.t = m.a_ns THEN x.bytes ELSE 0 END) AS bytes_a,
           sum(CASE WHEN x.t = m.b_ns THEN x.blocks ELSE 0 END) AS blocks_b,
           sum(CASE WHEN x.t = m.b_ns THEN x.bytes ELSE 0 END) AS bytes_b
    FROM pictured AS m
    JOIN live_at AS x ON x.pid = m.pid AND x.recording = m.recording AND x.t IN (m.a_ns, m.b_ns)
    WHERE m.fast AND NOT m.by_site
    GROUP BY m.pid, m.recording, x.bt
    UNION ALL
    SELECT pid, recording, bt, sum(at_a) AS blocks_a, sum(at_a * size) AS bytes_a, sum(at_b) AS blocks_b,
           sum(at_b * size) AS bytes_b
    FROM (SELECT a.pid AS pid, a.recording AS recording, a.bt AS bt, a.size AS size,
                 a.alloc_after <= m.a_ns AND (a.dealloc_after IS NULL OR a.dealloc_after > m.a_ns) AS at_a,
                 a.alloc_after <= m.b_ns AND (a.dealloc_after IS NULL OR a.dealloc_after > m.b_ns) AS at_b
          -- CROSS JOIN keeps the moments outside: no block is read when every one is pictured.
          FROM pictured AS m
          CROSS JOIN allocations AS a ON m.pid = a.pid AND m.recording = a.recording
          WHERE NOT m.fast AND a.alloc_after <= max(m.a_ns, m.b_ns) AND a.call NOT IN (46, 47)
            AND (a.dealloc_after IS NULL OR a.dealloc_after > min(m.a_ns, m.b_ns)))
    WHERE at_a OR at_b
    GROUP BY pid, recording, bt
),
-- Each site's stack whose bytes changed most stands for the site (rheap stack ID DB).
sited AS (
    SELECT l.*, coalesce(s.function, '(no backtrace)') AS function,
           coalesce(s.location, '??') AS location,
           first_value(l.bt) OVER (PARTITION BY l.pid, l.recording, s.function, s.location
                                   ORDER BY abs(l.bytes_b - l.bytes_a) DESC, l.bt) AS stack
    FROM per_stack AS l
    LEFT JOIN site AS s ON s.bt = l.bt
),
-- Without :skip, from a recording's start to its end: the converter's sums per site, each one
-- a row of the answer as it is (a leak is live at B and not at A, or at A and not at B, so a
-- site differs when exactly one of the two moments is the start), with no table of them made
-- first: counting them reads nothing else.
by_site_rows AS (
    SELECT CASE WHEN m.a_ns = 0 THEN 0 ELSE s.leaked_blocks END AS blocks_a,
           CASE WHEN m.a_ns = 0 THEN 0 ELSE s.leaked_bytes END AS bytes_a,
           CASE WHEN m.b_ns = 0 THEN 0 ELSE s.leaked_blocks END AS blocks_b,
           CASE WHEN m.b_ns = 0 THEN 0 ELSE s.leaked_bytes END AS bytes_b,
           CASE WHEN m.b_ns = 0 THEN -s.leaked_blocks ELSE s.leaked_blocks END AS delta_blocks,
           CASE WHEN m.b_ns = 0 THEN -s.leaked_bytes ELSE s.leaked_bytes END AS delta_bytes,
           n.function AS function, n.location AS location, m.a_ns AS a_ns,
           CASE WHEN m.b_ns = 9223372036854775807 THEN m.end_ns ELSE m.b_ns END AS b_ns,
           s.leak_stack AS stack, s.recording AS recording, s.pid AS pid
    FROM pictured AS m
    JOIN site_stats AS s ON s.pid = m.pid AND s.recording = m.recording
    JOIN sites AS n ON n.id = s.site
    WHERE m.by_site AND s.leaked_blocks > 0 AND (m.a_ns = 0) <> (m.b_ns = 0)
),
per_site AS (
    SELECT pid, recording, function, location, sum(blocks_a) AS blocks_a, sum(bytes_a) AS bytes_a,
           sum(blocks_b) AS blocks_b, sum(bytes_b) AS bytes_b, stack
    FROM sited
    GROUP BY pid, recording, function, location
)
SELECT * FROM by_site_rows
UNION ALL
SELECT l.blocks_a, l.bytes_a, l.blocks_b, l.bytes_b, l.blocks_b - l.blocks_a,
       l.bytes_b - l.bytes_a, l.function, l.location, m.a_ns,
       -- The end of the recording is its last event: what is live then is what it left live.
       CASE WHEN m.b_ns = 9223372036854775807
            THEN (SELECT r.end_ns FROM recording_stats AS r
                  WHERE r.pid = l.pid AND r.recording = l.recording)
            ELSE m.b_ns END,
       l.stack, l.recording, l.pid
FROM per_site AS l
JOIN moments AS m ON m.pid = l.pid AND m.recording = l.recording
WHERE l.blocks_a <> l.blocks_b OR l.bytes_a <> l.bytes_b
ORDER BY delta_bytes DESC, delta_blocks DESC, function, location, pid, recording;
