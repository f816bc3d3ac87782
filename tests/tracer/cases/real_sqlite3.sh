# sqlite3 running a small SQL script, traced and untraced: same output and status, and every
# recording is consistent.
[ -x "${SQLITE3:-}" ] || skip "sqlite3 not found"
cat >script.sql <<'SQL'
CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, score REAL);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
INSERT INTO t SELECT i, 'name-' || (i * 7919 % 1000), i % 97 / 7.0 FROM n;
CREATE INDEX t_name ON t(name);
SELECT count(*), count(DISTINCT name), round(sum(score), 2) FROM t;
SELECT name, count(*) FROM t GROUP BY name ORDER BY count(*) DESC, name LIMIT 3;
SELECT group_concat(id) FROM (SELECT id FROM t WHERE name = 'name-7' ORDER BY id LIMIT 5);
SQL
real_program "$SQLITE3" :memory: ".read script.sql"
