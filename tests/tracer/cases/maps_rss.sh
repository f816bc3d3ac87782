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

# rheap report: peak resident memory beside the peak heap, and the mappings on lines of their own.
"$RHEAP" report db.sqlite >report.txt 2>&1 || { cat report.txt >&2; fail "rheap report"; }
peak=$(sql "SELECT max(bytes) FROM rss")
grep -q "^  peak resident memory $peak bytes " report.txt ||
    { cat report.txt >&2; fail "no line 'peak resident memory $peak bytes'"; }
heap=$(sed -n 's/^    live heap then at most \([0-9]*\) bytes.*/\1/p' report.txt)
[ -n "$heap" ] || { cat report.txt >&2; fail "no line 'live heap then at most'"; }
# The bound is the most heap live in the timeline slice holding the peak sample: no less than
# the heap live at that very moment (from the rows), no more than the heap's peak.
at=$(sql "SELECT coalesce(sum(a.size), 0) FROM allocations AS a, (SELECT t FROM rss
     ORDER BY bytes DESC, t LIMIT 1) AS r WHERE a.call NOT IN (46, 47) AND a.alloc_after <= r.t
     AND (a.dealloc_after IS NULL OR a.dealloc_after > r.t)")
heap_peak=$(sql "SELECT peak_bytes FROM recording_stats")
[ "$at" -le "$heap" ] && [ "$heap" -le "$heap_peak" ] ||
    fail "live heap at the rss peak: bound $heap, live then $at, heap peak $heap_peak"
# The gap line only when resident memory exceeds that bound: the 8 MiB block is never touched,
# so a peak sample that falls in its slice is below it (a busy machine delays the sampler).
gap=$((peak - heap))
if [ "$gap" -gt 0 ]; then
    grep -q "^    so at least $gap bytes .* of it is not the heap$" report.txt ||
        { cat report.txt >&2; fail "no gap of $gap bytes"; }
else
    grep -q "of it is not the heap$" report.txt &&
        { cat report.txt >&2; fail "a gap line although resident $peak <= heap bound $heap"; }
fi
maps=$(expected run "expect-maps ") left=$(expected run "expect-leaked ")
grep -q "^  own mappings (mmap, not heap), pid [0-9]*: $maps made$" report.txt &&
    grep -q "^    $left bytes (.*) still mapped at the end$" report.txt ||
    { cat report.txt >&2; fail "no lines 'own mappings: $maps made', '$left bytes still mapped'"; }
grep -q "^    at most $(expected run "expect-map-peak ") bytes (.*) mapped at once, at " report.txt ||
    { cat report.txt >&2; fail "no peak of mapped bytes"; }
expect_eq "totals leave mappings out" "$(sed -n 's/^  allocations *//p' report.txt)" \
    "$(sql "SELECT count(*) FROM allocations WHERE call NOT IN (46, 47)")"

# The page: the samples and the gap in its data, and drawn (when chromium is there).
"$RHEAP" report --html -o page.html db.sqlite >html.out 2>&1 || { cat html.out >&2; fail "report --html"; }
grep -q "\"rss_peak\":\[$(sql "SELECT t FROM rss ORDER BY bytes DESC, t LIMIT 1"),$peak,$heap\]" page.html ||
    fail "the page's data lack rss_peak [t, $peak, $heap]"
grep -q "\"maps\":\[$maps,[0-9]*,$(expected run "expect-map-peak "),[0-9]*,$left\]" page.html ||
    fail "the page's data lack the mappings"
chromium=$(command -v chromium || true)
if [ -n "$chromium" ]; then
    profile=$WORK/chromium
    timeout 60 "$chromium" --headless --no-sandbox --disable-gpu --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --user-data-dir="$profile" --window-size=1300,1200 --dump-dom "file://$WORK/page.html" \
        >dom.html 2>chrome.err || { cat chrome.err >&2; fail "chromium --dump-dom"; }
    grep -q 'class="rss"' dom.html || fail "no RSS line on the memory chart"
    grep -q "data-bytes=\"$peak\" data-heap=\"$heap\"" dom.html || fail "no RSS peak on the chart"
    if [ "$gap" -gt 0 ]; then
        grep -q "is not the heap</text>" dom.html || fail "the gap is not called out on the chart"
    else
        grep -q "all of it heap</text>" dom.html || fail "the chart does not say all of it is heap"
    fi
fi

# Both off.
rm -rf "$REC"/rip-*
traced off RHEAP_RSS_MS=0 RHEAP_MMAP=0 "$prog"
expect_status off 0
no_rheap_messages off
to_db "$(recordings)"
expect_eq "no samples, no mappings" "$(sql "SELECT (SELECT count(*) FROM rss),
     (SELECT count(*) FROM allocations WHERE call IN (46, 47))")" "0|0"
