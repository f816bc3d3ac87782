# dlclose, then dlopen of another library at the same address: the same return addresses now
# mean other code. Each library's 10 allocations are attributed to its own function and file
# in the database.
traced run "$PROGS/plug_prog" "$PLUG_A" "$PLUG_B"
expect_status run 0
no_rheap_messages run
has_line run.out "same_address=1"
dir=$(recordings)
clean_check "$dir"
to_db "$dir"
sql "SELECT b.sym || ' ' || count(*) FROM allocations AS a
     JOIN backtraces AS b ON b.id = a.bt AND b.frame_no = 0
     WHERE a.size = 1000 AND b.module LIKE '%/libtracer_' || b.sym || '.so'
     GROUP BY b.sym ORDER BY b.sym" | sed 's/^/expect /' >got.txt
grep '^expect plug_' run.out >want.txt
same_lines "allocations by function and module" want.txt got.txt
