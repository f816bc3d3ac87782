-- top-sites.sql computed from the raw rows: agree.sh puts the common table expressions below in
-- place of per_stack of queries/top-sites.sql and requires the same rows.
-- replaces: per_stack
per_stack AS (
    SELECT a.pid AS pid, a.recording AS recording, a.bt AS bt, count(*) AS blocks,
           sum(a.size) AS bytes
    FROM allocations AS a
    WHERE a.pid = coalesce(:pid, a.pid)
    GROUP BY a.pid, a.recording, a.bt
)
