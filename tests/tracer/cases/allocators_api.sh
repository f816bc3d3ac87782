# A C program calling jemalloc's, tcmalloc's or mimalloc's own functions (jemalloc shared, linked
# statically, and linked statically under the prefix je_): every call recorded
# once under its own name, with its alignment, realloc chains linked, frees across families
# paired; and worker threads' blocks (allocated with the allocator's call, half freed by the
# worker with the allocator's free, half by the main thread with free()) all there and freed.
[ -n "$SQLITE3" ] || skip "no sqlite3"
ran=0
for alloc in jemalloc tcmalloc mimalloc static prefixed; do
    prog=$PROGS/alloc_api_$alloc
    [ -x "$prog" ] || { echo "no $alloc: skipped"; continue; }
    ran=$((ran + 1))
    rm -rf "$REC"/rip-*
    traced "$alloc" "$prog" 4 1000
    expect_status "$alloc" 0
    no_rheap_messages "$alloc"
    expect_recordings 1
    expected "$alloc" "expect-list " >"$alloc.want"
    tally --between begin end list "$(recordings)" >"$alloc.got"
    same_lines "$alloc: events" "$alloc.want" "$alloc.got"
    clean_check "$(recordings)"
    "$RHEAP" convert "$(recordings)" -o "$alloc.db" >"$alloc.convert" 2>&1 ||
        { cat "$alloc.convert" >&2; fail "rheap convert ($alloc)"; }
    call=$(expected "$alloc" "expect-call ")
    got=$("$SQLITE3" -batch "$alloc.db" "SELECT count(*), sum(dealloc_after IS NOT NULL),
              sum(dealloc_thread <> alloc_thread), count(DISTINCT alloc_thread)
              FROM allocation_sites a JOIN calls c ON c.id = a.call
              WHERE sym = 'worker_site' AND c.name = '$call'")
    expect_eq "$alloc: worker blocks (count|freed|by main|threads)" "$got" "4000|4000|2000|4"
done
[ "$ran" -gt 0 ] || skip "no replacing allocator installed"
