# The same C++ program (a std::map of 100,000 strings, 1,000 strings leaked in leak_one) on
# glibc and on each replacing allocator (jemalloc also linked statically, hooked at its entry
# points) records the same blocks (within 1% of glibc's count: an allocator's own start-up
# allocates a few), the leaks of leak_one exactly (2,000 blocks, 1,000 of them with leak_one's
# `new` line innermost), and no unmatched frees.
src=$CASES/../progs/alloc_map.cpp
line=$(grep -n '// LEAK' "$src" | cut -d: -f1)
[ -n "$line" ] || fail "no LEAK line in $src"

# record_on ALLOCATOR: records the program built on ALLOCATOR into ALLOCATOR.db.
record_on() {
    local alloc=$1
    [ -x "$PROGS/alloc_map_$alloc" ] || skip "alloc_map_$alloc not built ($alloc missing)"
    rm -rf "$REC"/rip-*
    traced "$alloc" "$PROGS/alloc_map_$alloc"
    expect_status "$alloc" 0
    no_rheap_messages "$alloc"
    "$RHEAP" convert "$(recordings)" -o "$alloc.db" >"$alloc.convert" 2>&1 ||
        { cat "$alloc.convert" >&2; fail "rheap convert ($alloc)"; }
}

q() {
    "$SQLITE3" -batch "$1.db" "$2" || fail "sqlite3 $1: $2"
}

[ -n "$SQLITE3" ] || skip "no sqlite3"
record_on glibc
base=$(q glibc "SELECT count(*) FROM allocations")
[ "$base" -ge 200000 ] || fail "glibc: only $base allocations recorded"
for alloc in glibc jemalloc tcmalloc mimalloc static; do
    [ "$alloc" = glibc ] || record_on "$alloc"
    n=$(q "$alloc" "SELECT count(*) FROM allocations")
    diff=$((n > base ? n - base : base - n))
    [ $((diff * 100)) -le "$base" ] || fail "$alloc: $n allocations, glibc $base: more than 1% apart"
    news=$(q "$alloc" "SELECT count(*) FROM allocations a JOIN calls c ON c.id = a.call
                      WHERE c.name = 'operator new'")
    [ $((news * 100)) -ge $((base * 99)) ] || fail "$alloc: only $news of $base by operator new"
    leaked=$(q "$alloc" "SELECT count(*) FROM allocations a WHERE dealloc_after IS NULL AND
                        EXISTS (SELECT 1 FROM backtraces b WHERE b.id = a.bt AND b.sym = 'leak_one(int)')")
    expect_eq "$alloc: blocks leaked under leak_one" "$leaked" 2000
    at_line=$(q "$alloc" "SELECT count(*) FROM allocation_sites WHERE dealloc_after IS NULL AND
                         sym = 'leak_one(int)' AND file LIKE '%alloc_map.cpp' AND line = $line")
    expect_eq "$alloc: leaks at alloc_map.cpp:$line" "$at_line" 1000
    expect_eq "$alloc: unmatched frees" "$(q "$alloc" "SELECT unmatched_frees FROM processes")" 0
    echo "figure: $alloc allocations=$n (glibc $base) leak_one=$leaked"
done
