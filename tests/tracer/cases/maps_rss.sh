# The program's own anonymous mappings and its resident memory: maps_rss maps, touches,
# partly unmaps and remaps known numbers of pages. The database holds exactly its mappings
# (the file mapping and the allocator's are not among them), the two pieces a hole in the
# middle leaves, the remap as a resize of the mapping it moved, the pieces' bytes still
# mapped at the end; and samples of resident memory in time order, that rise by at least the
# touched pages while the first mapping is mapped. The heap's summaries leave the mappings out.
# With RHEAP_MMAP=0 and RHEAP_RSS_MS=0 there are neither.
[ -n "$SQLITE3" ] || skip "no sqlite3"
prog=$PROGS/maps_rss
traced run RHEAP_RSS_MS=10 "$prog"
expect_status run 0
no_rheap_messages run
expect_recordings 1
clean_check "$(recordings)"
to_db "$(recordings)"

expect_eq "calls" "$(sql "SELECT name || ':' || resizes FROM calls WHERE id IN (46, 47)
     ORDER BY id" | tr '\n' ' ')" "mmap:0 mremap:1 "
# Rows in the order they were made (the pieces after their mapping, the leaked ones last).
expect_eq "mmap rows (sizes)" "$(sql "SELECT group_concat(size, '|') FROM (SELECT size
     FROM allocations WHERE call = 46 ORDER BY alloc_after, addr)")" "$(expected run "expect-mmap ")"
expect_eq "mremap rows" "$(sql "SELECT printf('0x%x', n.addr), n.size, printf('0x%x', o.addr)
     FROM allocations AS n JOIN allocations AS o ON o.id = n.realloc_of
     WHERE n.call = 47")" "$(expected run "expect-mremap ")"
page=$(expected run "expect-page ")
expect_eq "the remapped mapping was 4 pages" "$(sql "SELECT o.size, o.dealloc_after = n.alloc_after
     FROM allocations AS n JOIN allocations AS o ON o.id = n.realloc_of WHERE n.call = 47")" \
    "$((4 * page))|1"
expect_eq "pieces of the first mapping (addr|size...)" "$(sql "SELECT group_concat(a, '|') FROM
     (SELECT printf('0x%x', p.addr) || '|' || p.size AS a FROM map_pieces AS m
      JOIN allocations AS p ON p.id = m.id JOIN allocations AS o ON o.id = m.of
      WHERE printf('0x%x', o.addr) = '$(expected run "expect-a ")' ORDER BY p.addr)")" \
    "$(expected run "expect-pieces ")"
expect_eq "pieces begin when their mapping ends" "$(sql "SELECT count(*) FROM map_pieces AS m
     JOIN allocations AS p ON p.id = m.id JOIN allocations AS o ON o.id = m.of
     WHERE p.alloc_after = o.dealloc_after AND p.bt = o.bt AND p.call = 46")" 2
expect_eq "mapped bytes left at the end" "$(sql "SELECT sum(size) FROM allocations
     WHERE call IN (46, 47) AND dealloc_after IS NULL")" "$(expected run "expect-leaked ")"
expect_eq "mappings made in main" "$(sql "SELECT DISTINCT s.function FROM allocations AS a
     JOIN stacks AS s ON s.id = a.bt WHERE a.call IN (46, 47)")" "main"
expect_eq "heap summaries leave mappings out" "$(sql "SELECT r.allocs = (SELECT count(*)
     FROM allocations WHERE call NOT IN (46, 47)) FROM recording_stats AS r")" 1

# Resident memory: samples in time order, their parts adding up, and the touched pages seen.
n=$(sql "SELECT count(*) FROM rss")
[ "$n" -ge 4 ] || fail "expected at least 4 samples of resident memory, got $n"
expect_eq "samples in time order" "$(sql "SELECT count(*) FROM rss AS a JOIN rss AS b
     ON b.rowid = a.rowid + 1 WHERE b.t < a.t")" 0
expect_eq "rss = anon + file" "$(sql "SELECT count(*) FROM rss WHERE bytes != anon + file
     OR bytes <= 0")" 0
expect_eq "samples at events of the run" "$(sql "SELECT count(*) FROM rss AS r
     JOIN recording_stats AS s USING (pid, recording) WHERE r.t > s.end_ns")" 0
rise=$(sql "SELECT max(r.bytes) - (SELECT r0.bytes FROM rss AS r0 WHERE r0.t > a.alloc_after
     ORDER BY r0.t LIMIT 1) FROM rss AS r, allocations AS a
     WHERE a.call = 46 AND a.size = 64 * $page AND r.t > a.alloc_after AND r.t < a.dealloc_after")
touched=$(expected run "expect-touched ")
[ "$rise" -ge "$touched" ] || fail "resident memory rose by $rise bytes while $touched were touched"

# Both off.
rm -rf "$REC"/rip-*
traced off RHEAP_RSS_MS=0 RHEAP_MMAP=0 "$prog"
expect_status off 0
no_rheap_messages off
to_db "$(recordings)"
expect_eq "no samples, no mappings" "$(sql "SELECT (SELECT count(*) FROM rss),
     (SELECT count(*) FROM allocations WHERE call IN (46, 47))")" "0|0"
