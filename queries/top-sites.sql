-- top-sites: which allocation sites allocate the most, by bytes and by number of blocks?
--
-- Every allocation made while recording (freed or not), grouped by recording and allocation
-- site. A site is listed when it is among the `top` sites of the whole database (of the process,
-- with `pid`) by bytes or among the `top` by blocks, whatever process holds it; bytes_rank and
-- blocks_rank give both places (1 is the largest), the rows come in the order of `by`.
--
-- param: by = 'bytes'  (order of the rows: 'bytes' or 'blocks')
-- param: top = 20  (how many sites per ranking)
-- param: pid = NULL  (only this process; NULL: every process)
-- param: skip = NULL  (GLOB of more function names to skip as allocation wrappers, e.g. 'xmalloc')
--
-- Columns: blocks, bytes, avg_size, function, location, bytes_rank, blocks_rank, stack, recording,
--          pid
-- Run: sqlite3 out.db < queries/top-sites.sql
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
-- With :skip the sites are those of the frames, so the stacks' rows are added up here; without,
-- the converter added them up per site already (site_stats). Only one of the two is read: the
-- other's WHERE is false before any row.
per_stack AS (
    SELECT pid, recording, bt, blocks, bytes FROM stack_stats
    WHERE :skip IS NOT NULL AND pid = coalesce(:pid, pid)
),
-- Each site's stack with the most bytes stands for the site (rheap stack ID DB prints it).
sited AS (
    SELECT l.*, coalesce(s.function, '(no backtrace)') AS function,
           coalesce(s.location, '??') AS location,
           first_value(l.bt) OVER (PARTITION BY l.pid, l.recording, s.function, s.location
                                   ORDER BY l.bytes DESC, l.bt) AS stack
    FROM per_stack AS l
    LEFT JOIN site AS s ON s.bt = l.bt
),
per_site AS (
    SELECT s.pid AS pid, s.recording AS recording, n.function AS function, n.location AS location,
           s.blocks AS blocks, s.bytes AS bytes, s.bytes_stack AS stack
    FROM site_stats AS s
    JOIN sites AS n ON n.id = s.site
    -- (pid = :pid: one process's rows found by the primary key)
    WHERE :skip IS NULL AND :pid IS NOT NULL AND s.pid = :pid
    UNION ALL
    SELECT pid, recording, function, location, sum(blocks) AS blocks, sum(bytes) AS bytes, stack
    FROM sited
    GROUP BY pid, recording, function, location
),
ranked AS (
    SELECT *, rank() OVER (ORDER BY bytes DESC) AS bytes_rank,
              rank() OVER (ORDER BY blocks DESC) AS blocks_rank
    FROM per_site
),
-- Every process without :skip (the default): rather than ranking every site row twice, the
-- `top`-th largest bytes and blocks are read from the indexes of site_stats by bytes and by
-- blocks (schema.sql; `>= 0`, true of every row, is what lets SQLite use them), the rows at or
-- above either taken, and each one's place is the rows above it counted in the index: a row's
-- rank is 1 + the rows with more, as rank() gives it.
bound AS MATERIALIZED (
    SELECT (SELECT bytes FROM site_stats WHERE bytes >= 0 ORDER BY bytes DESC LIMIT 1
            OFFSET max(cast(coalesce(:top, 20) AS INTEGER), 1) - 1) AS bytes,
           (SELECT blocks FROM site_stats WHERE blocks >= 0 ORDER BY blocks DESC LIMIT 1
            OFFSET max(cast(coalesce(:top, 20) AS INTEGER), 1) - 1) AS blocks
    WHERE :skip IS NULL AND :pid IS NULL
),
leaders AS (
    SELECT s.pid AS pid, s.recording AS recording, s.site AS site
    FROM bound AS b JOIN site_stats AS s ON s.bytes >= coalesce(b.bytes, 0) AND s.bytes >= 0
    UNION
    SELECT s.pid, s.recording, s.site
    FROM bound AS b JOIN site_stats AS s ON s.blocks >= coalesce(b.blocks, 0) AND s.blocks >= 0
),
all_ranked AS (
    SELECT * FROM ranked
    UNION ALL
    SELECT s.pid, s.recording, n.function, n.location, s.blocks, s.bytes, s.bytes_stack,
           1 + (SELECT count(*) FROM site_stats AS o WHERE o.bytes > s.bytes AND o.bytes >= 0),
           1 + (SELECT count(*) FROM site_stats AS o WHERE o.blocks > s.blocks AND o.blocks >= 0)
    FROM leaders AS l
    JOIN site_stats AS s ON s.pid = l.pid AND s.recording = l.recording AND s.site = l.site
    JOIN sites AS n ON n.id = s.site
)
SELECT blocks, bytes, bytes / blocks AS avg_size, function, location, bytes_rank, blocks_rank,
       stack, recording, pid
FROM all_ranked
WHERE bytes_rank <= cast(coalesce(:top, 20) AS INTEGER)
   OR blocks_rank <= cast(coalesce(:top, 20) AS INTEGER)
ORDER BY CASE coalesce(:by, 'bytes') WHEN 'blocks' THEN blocks_rank ELSE bytes_rank END,
         CASE coalesce(:by, 'bytes') WHEN 'blocks' THEN bytes_rank ELSE blocks_rank END,
         function, location, pid, recording;
