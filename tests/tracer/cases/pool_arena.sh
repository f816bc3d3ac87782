# A program's own pools reported through rheap_pool.h: untraced it runs with no librheap and
# no symbol error; traced, each pool block is an allocation under pool_alloc with its pool's
# name, a destroyed pool's live blocks are freed at its destruction, the leaked ones show their
# site's line, and the malloc'd chunks at the same addresses as pool blocks stay blocks of
# their own.
[ -n "$SQLITE3" ] || skip "no sqlite3"
prog=$PROGS/pool_arena
if readelf -d "$prog" | grep -q 'librheap'; then
    fail "pool_arena needs librheap at load"
fi
plain plain "$prog"
expect_status plain 0
[ ! -s plain.err ] || { cat plain.err >&2; fail "untraced run wrote on stderr"; }
traced run "$prog"
expect_status run 0
no_rheap_messages run
cmp -s plain.out run.out || fail "output differs when traced"
expect_recordings 1
clean_check "$(recordings)"
to_db "$(recordings)"

expect_eq "calls" "$(sql "SELECT name FROM calls WHERE id IN (44, 45) ORDER BY id" | tr '\n' ' ')" \
    "pool_alloc pool_free "
expected run "expect-pools " >pools.want
sql "SELECT p.name, count(*), sum(a.dealloc_after IS NULL), sum(a.size)
     FROM allocations AS a JOIN pool_blocks AS b ON b.id = a.id JOIN pools AS p ON p.id = b.pool
     WHERE a.call = 44 GROUP BY p.id ORDER BY p.name" >pools.got
same_lines "blocks per pool (name|blocks|leaked|bytes)" pools.want pools.got
expect_eq "blocks freed by the destroy" "$(sql "SELECT count(*) FROM allocations AS a
     JOIN pool_blocks AS b ON b.id = a.id JOIN pools AS p ON p.id = b.pool
     WHERE p.name = 'frames' AND a.dealloc_after = (SELECT max(x.dealloc_after)
         FROM allocations AS x JOIN pool_blocks AS y ON y.id = x.id WHERE y.pool = p.id)")" \
    "$(expected run "expect-destroyed ")"
# The site: the first frame that is not rheap_pool.h's inlined wrapper (stacks.location).
expect_eq "leaks of the pools (function|file:line|blocks)" "$(sql "SELECT s.function, s.location,
     count(*) FROM allocations AS a JOIN pool_blocks AS b ON b.id = a.id
     JOIN stacks AS s ON s.id = a.bt WHERE a.dealloc_after IS NULL GROUP BY s.id" |
     sed 's/|.*\//|/')" "$(expected run "expect-leak ")"
expect_eq "frames' site (function|file:line|blocks)" "$(sql "SELECT s.function, s.location,
     count(*) FROM allocations AS a JOIN stacks AS s ON s.id = a.bt
     WHERE s.function = 'frame_alloc' GROUP BY s.id" | sed 's/|.*\//|/')" \
    "$(expected run "expect-site ")"
expect_eq "chunks (count|leaked)" "$(sql "SELECT count(*), sum(dealloc_after IS NULL)
     FROM allocations WHERE call = 1 AND size = 65536")" "$(expected run "expect-chunks ")"
expect_eq "chunk and pool block at one address" "$(sql "SELECT count(*) FROM allocations AS m
     JOIN allocations AS a ON a.addr = m.addr AND a.call = 44 WHERE m.call = 1 AND m.size = 65536")" 2
expect_eq "unmatched frees" "$(sql "SELECT unmatched_frees FROM processes")" \
    "$(expected run "expect-unmatched ")"
