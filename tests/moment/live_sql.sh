# live_sql.sh: sourced by the moment tests. live_sql NS prints the folded stacks SQL says were
# live at ns NS in the database the caller's `sql` function reads: each stack's frames from its
# allocation site outward, named as `rheap export collapsed` names them, lines sorted and equal
# texts added up.
live_sql() {
    sql "
WITH live AS (
    SELECT bt, total(size) AS bytes FROM allocations
    WHERE alloc_after <= $1 AND (dealloc_after IS NULL OR dealloc_after > $1) GROUP BY bt),
named AS (
    SELECT b.id AS id, b.frame_no AS frame_no,
           replace(replace(replace(coalesce(b.sym, CASE WHEN b.module IS NULL THEN printf('0x%x', b.offset)
               ELSE replace(b.module, rtrim(b.module, replace(b.module, '/', '')), '') || printf('+0x%x', b.offset) END),
               ';', ':'), char(10), ' '), char(13), ' ') AS name
    FROM backtraces AS b JOIN stacks AS s ON s.id = b.id AND b.frame_no >= s.site_frame
    ORDER BY b.id, b.frame_no DESC),
texts AS (SELECT id, group_concat(name, ';') AS text FROM named GROUP BY id)
SELECT coalesce(t.text, '(no backtrace)') || ' ' || printf('%d', sum(l.bytes))
FROM live AS l LEFT JOIN texts AS t ON t.id = l.bt
GROUP BY coalesce(t.text, '(no backtrace)') HAVING sum(l.bytes) != 0
ORDER BY coalesce(t.text, '(no backtrace)') COLLATE BINARY;"
}

