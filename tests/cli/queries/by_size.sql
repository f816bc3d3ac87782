-- by_size: how many blocks of one size did each process allocate?
--
-- A query of the command-line tests: it checks that --param binds numbers as numbers and that
-- unset parameters take the defaults written below.
--
-- param: size = 1111  (the block size to count)
-- param: pid = NULL  (only this process; NULL: every process)
SELECT pid, count(*) AS blocks, sum(size) AS bytes
FROM allocations
WHERE size = coalesce(:size, 1111) AND (:pid IS NULL OR pid = :pid)
GROUP BY pid
ORDER BY pid;
