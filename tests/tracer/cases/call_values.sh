# The database says what the program asked for: pvalloc(1000) is 1000 bytes aligned to a page,
# and realloc(NULL, 50) is a realloc.
traced run "$PROGS/call_values"
expect_status run 0
no_rheap_messages run
to_db "$(recordings)"
sql "SELECT c.name, a.size, a.align, count(*) FROM allocations AS a JOIN calls AS c ON c.id = a.call
     WHERE a.size IN (50, 1000) GROUP BY 1, 2, 3 ORDER BY 1" | sed 's/^/expect /' >got.txt
grep '^expect ' run.out >want.txt
same_lines "calls and sizes" want.txt got.txt
