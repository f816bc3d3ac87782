# jemalloc preloaded after librheap: it maps its own memory through its PLT, from inside the
# calls librheap wraps (the 8 MiB block maps_rss allocates, its arenas); none of that is the
# program's. The database holds exactly the program's own mappings, as with glibc's malloc,
# and the heap blocks jemalloc handed out.
[ -n "$SQLITE3" ] || skip "no sqlite3"
[ -n "${JEMALLOC:-}" ] && [ -e "$JEMALLOC" ] || skip "no libjemalloc"
prog=$PROGS/maps_rss
PRELOAD="$RHEAP_LIB:$JEMALLOC"
traced run "$prog"
expect_status run 0
no_rheap_messages run
expect_recordings 1
to_db "$(recordings)"
expect_eq "jemalloc is the process's allocator" "$(sql "SELECT count(*) FROM modules
     WHERE path LIKE '%libjemalloc%'") $(sql "SELECT unrecorded IS NULL FROM processes")" "1 1"
expect_eq "the 8 MiB block" "$(sql "SELECT count(*) FROM allocations WHERE call = 1
     AND size = 8388608 AND dealloc_after IS NOT NULL")" 1
expect_eq "mmap rows (sizes)" "$(sql "SELECT group_concat(size, '|') FROM (SELECT size
     FROM allocations WHERE call = 46 ORDER BY alloc_after, addr)")" "$(expected run "expect-mmap ")"
expect_eq "mremap rows" "$(sql "SELECT printf('0x%x', n.addr), n.size, printf('0x%x', o.addr)
     FROM allocations AS n JOIN allocations AS o ON o.id = n.realloc_of
     WHERE n.call = 47")" "$(expected run "expect-mremap ")"
expect_eq "mappings made in main" "$(sql "SELECT DISTINCT s.function FROM allocations AS a
     JOIN stacks AS s ON s.id = a.bt WHERE a.call IN (46, 47)")" "main"
