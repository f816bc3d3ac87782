-- growth: which allocation sites leak steadily, a little at a time?
--
-- A slow leak shows as never-freed blocks allocated all through the recording, where a one-off
-- leak (a cache filled once, a buffer made at start) shows in a single stretch of it. Each
-- process's recording is cut into phases: `phases` slices of time from 0 to its last
-- allocation or free (made of whole slices of the table `timeline`, so equal to within one of
-- those, and fewer when the recording is short), or, when `marker` is given, the stretches between the markers with that
-- label (before the first, between each two, after the last). Per allocation site with
-- never-freed blocks: in how many phases it left blocks behind, out of how many, and the
-- never-freed bytes of each phase in order (per_phase, comma-separated). Sites leaking in the
-- most phases first.
--
-- A recording that stopped while its process went on (a window: a toggle, rheap_disable,
-- rheap attach; schema.sql's view recording_ends) cannot tell leaks: there the leaked columns
-- count the blocks still live when it stopped, and a site that left some in every phase is one
-- whose live blocks piled up all through the window, the one to look at first.
--
-- param: phases = 10  (number of equal time slices, when no marker is given)
-- param: marker = NULL  (label of the markers that separate phases; NULL: equal time slices)
-- param: min_phases = 1  (list only sites that leaked in at least this many phases)
-- param: pid = NULL  (only this process; NULL: every process)
-- param: skip = NULL  (GLOB of more function names to skip as allocation wrappers, e.g. 'xmalloc')
--
-- Columns: leaked_blocks, leaked_bytes, phases_leaking, phases, per_phase, function, location,
--          first_ns, last_ns, stack, recording, pid
-- Run: sqlite3 out.db < queries/growth.sql
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
-- Phases by time are groups of whole slices of the table `timeline`, as in timeline.sql (fewer
-- phases than asked when the recording has fewer slices), and read the converter's never-freed
-- blocks per slice (`stack_leaks`); phases between markers read every never-freed block.
wanted(n) AS (
    SELECT max(1, cast(coalesce(:phases, 10) AS INTEGER))
),
span AS MATERIALIZED (
    SELECT t.pid AS pid, t.recording AS recording, max(t.bucket) + 1 AS slices,
           min(max(t.bucket) + 1, w.n) AS n
    FROM timeline AS t, wanted AS w
    WHERE :marker IS NULL AND NOT (SELECT yes FROM fast) AND t.pid = coalesce(:pid, t.pid)
    GROUP BY t.pid, t.recording
),
series(k) AS (
    SELECT 0 UNION ALL SELECT k + 1 FROM series, wanted WHERE k + 1 < wanted.n
),
bounds AS (
    SELECT m.pid AS pid, m.recording AS recording, m.t AS t,
           row_number() OVER (PARTITION BY m.pid, m.recording ORDER BY m.t) AS k
    FROM markers AS m
    WHERE :marker IS NOT NULL AND m.label = :marker AND m.pid = coalesce(:pid, m.pid)
),
phase(pid, recording, k, from_t, to_t) AS MATERIALIZED (
    SELECT w.pid, w.recording, s.k, NULL, NULL
    FROM span AS w JOIN series AS s ON s.k < w.n
    UNION ALL
    SELECT pid, recording, 0, -9223372036854775807 - 1, min(t) FROM bounds GROUP BY pid, recording
    UNION ALL
    SELECT pid, recording, k, t,
           coalesce(lead(t) OVER (PARTITION BY pid, recording ORDER BY k), 9223372036854775807)
    FROM bounds
),
counts(pid, recording, phases) AS (
    SELECT pid, recording, count(*) FROM phase GROUP BY pid, recording
),
per_stack AS (
    SELECT l.pid AS pid, l.recording AS recording, l.bt AS bt, l.bucket * w.n / w.slices AS k,
           sum(l.blocks) AS blocks, sum(l.bytes) AS bytes, min(s.leak_first_ns) AS first_ns,
           max(s.leak_last_ns) AS last_ns
    FROM stack_leaks AS l
    JOIN span AS w ON w.pid = l.pid AND w.recording = l.recording
    JOIN stack_stats AS s ON s.pid = l.pid AND s.recording = l.recording AND s.bt IS l.bt
    WHERE :skip IS NOT NULL
    GROUP BY 1, 2, 3, 4
    UNION ALL
    SELECT a.pid, a.recording, a.bt, p.k, count(*), sum(a.size), min(a.alloc_after),
           max(a.alloc_after)
    FROM allocations AS a
    JOIN phase AS p ON p.pid = a.pid AND p.recording = a.recording
                   AND a.alloc_after >= p.from_t AND a.alloc_after < p.to_t
    WHERE :marker IS NOT NULL AND a.dealloc_after IS NULL AND a.pid = coalesce(:pid, a.pid)
      AND a.call NOT IN (46, 47) -- the heap: not the program's own mappings
    GROUP BY a.pid, a.recording, a.bt, p.k
),
-- The default (10 phases by time, no :skip) was cut by the converter already, per site and
-- recording (site_growth); only the other cases build the phases here.
fast(yes) AS (
    SELECT :skip IS NULL AND :marker IS NULL AND max(1, cast(coalesce(:phases, 10) AS INTEGER)) = 10
),
-- Phases by time without :skip read the converter's sums per site (site_leaks, site_stats).
per_site_phase AS (
    SELECT l.pid AS pid, l.recording AS recording, n.function AS function,
           n.location AS location, l.bucket * w.n / w.slices AS k, sum(l.blocks) AS blocks,
           sum(l.bytes) AS bytes, min(s.leak_first_ns) AS first_ns, max(s.leak_last_ns) AS last_ns
    FROM site_leaks AS l
    JOIN span AS w ON w.pid = l.pid AND w.recording = l.recording
    JOIN site_stats AS s ON s.pid = l.pid AND s.recording = l.recording AND s.site = l.site
    JOIN sites AS n ON n.id = l.site
    WHERE :skip IS NULL
    GROUP BY 1, 2, 3, 4, 5
    UNION ALL
    SELECT l.pid AS pid, l.recording AS recording,
           coalesce(s.function, '(no backtrace)') AS function,
           coalesce(s.location, '??') AS location, l.k AS k, sum(l.blocks) AS blocks,
           sum(l.bytes) AS bytes, min(l.first_ns) AS first_ns, max(l.last_ns) AS last_ns
    FROM per_stack AS l
    LEFT JOIN site AS s ON s.bt = l.bt
    GROUP BY 1, 2, 3, 4, 5
),
-- Each phase a site leaked in, with the phases it leaked nothing in since its previous one (or
-- since the first phase) as a gap: per_phase lists every phase of the recording, 0 where the
-- site leaked nothing, in phase order.
pieces AS (
    SELECT pid, recording, function, location, k, bytes,
           k - coalesce(lag(k) OVER (PARTITION BY pid, recording, function, location ORDER BY k), -1)
               - 1 AS gap
    FROM per_site_phase
),
-- A window, not GROUP BY: only a window's ORDER BY fixes the order group_concat sees. The
-- phases after the site's last one are added as zeros.
strip AS (
    SELECT pid, recording, function, location,
           per_phase || CASE WHEN c.phases - 1 - last_k > 0
                             THEN replace(printf('%.*c', c.phases - 1 - last_k, 'x'), 'x', ',0')
                             ELSE '' END AS per_phase
    FROM (SELECT DISTINCT pid, recording, function, location,
                 group_concat(CASE WHEN gap > 0 THEN replace(printf('%.*c', gap, 'x'), 'x', '0,')
                                   ELSE '' END || bytes, ',')
                     OVER (PARTITION BY pid, recording, function, location ORDER BY k
                           ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS per_phase,
                 max(k) OVER (PARTITION BY pid, recording, function, location ORDER BY k
                              ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS last_k
          FROM pieces) AS x
    JOIN counts AS c USING (pid, recording)
),
per_site AS (
    SELECT pid, recording, function, location, sum(blocks) AS leaked_blocks,
           sum(bytes) AS leaked_bytes, count(*) AS phases_leaking, min(first_ns) AS first_ns,
           max(last_ns) AS last_ns
    FROM per_site_phase
    GROUP BY pid, recording, function, location
),
-- The site's stack with the most never-freed bytes stands for it (rheap stack ID DB).
site_stack AS (
    SELECT s.pid AS pid, s.recording AS recording, n.function AS function,
           n.location AS location, s.growth_stack AS stack
    FROM site_stats AS s
    JOIN sites AS n ON n.id = s.site
    WHERE :skip IS NULL AND :marker IS NULL AND NOT (SELECT yes FROM fast)
      AND s.growth_stack IS NOT NULL AND s.pid = coalesce(:pid, s.pid)
    UNION ALL
    SELECT DISTINCT l.pid AS pid, l.recording AS recording,
           coalesce(s.function, '(no backtrace)') AS function, coalesce(s.location, '??') AS location,
           first_value(l.bt) OVER (PARTITION BY l.pid, l.recording, s.function, s.location
                                   ORDER BY l.bytes DESC, l.bt) AS stack
    FROM (SELECT pid, recording, bt, sum(bytes) AS bytes FROM per_stack GROUP BY pid, recording, bt) AS l
    LEFT JOIN site AS s ON s.bt = l.bt
)
SELECT g.leaked_blocks, g.leaked_bytes, g.phases_leaking, g.phases, g.per_phase, n.function,
       n.location, s.leak_first_ns AS first_ns, s.leak_last_ns AS last_ns, s.growth_stack AS stack,
       g.recording, g.pid
FROM site_growth AS g
JOIN site_stats AS s ON s.pid = g.pid AND s.recording = g.recording AND s.site = g.site
JOIN sites AS n ON n.id = g.site
WHERE (SELECT yes FROM fast) AND g.pid = coalesce(:pid, g.pid)
  AND g.phases_leaking >= cast(coalesce(:min_phases, 1) AS INTEGER)
UNION ALL
SELECT l.leaked_blocks, l.leaked_bytes, l.phases_leaking, c.phases, g.per_phase, l.function,
       l.location, l.first_ns, l.last_ns, x.stack, l.recording, l.pid
FROM per_site AS l
JOIN site_stack AS x ON x.pid = l.pid AND x.recording = l.recording AND x.function = l.function
                    AND x.location = l.location
JOIN counts AS c ON c.pid = l.pid AND c.recording = l.recording
JOIN strip AS g ON g.pid = l.pid AND g.recording = l.recording AND g.function = l.function
               AND g.location = l.location
WHERE l.phases_leaking >= cast(coalesce(:min_phases, 1) AS INTEGER)
ORDER BY 3 DESC, 2 DESC, 6, 7, 12, 11;
