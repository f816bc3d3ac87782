# Segments: the same program recorded in profile mode twice with the same seed, once in one file
# and once with RHEAP_SEGMENT_KB=64, which rolls its thread's file into a new segment every
# 64 KiB of blocks. The draws do not depend on the files, so both recordings hold the same
# samples: the segmented one converts into the same figures, every site's to the byte, and its
# totals (one totals record per segment, each counted from 0) add up to the program's exact
# calls and bytes.
record profile 1024 whole.db
cp sites.out whole-sites.out
export RHEAP_SEGMENT_KB=64
record profile 1024 segmented.db
unset RHEAP_SEGMENT_KB
[ "$(grep -v '^recording ' whole-sites.out)" = "$(grep -v '^recording ' sites.out)" ] || fail "the program did not make the same calls twice"
rec=$(sed -n 's/^recording //p' sites.out)

# The files: the thread's first one, then segments named by their serial, each header naming
# its place and the thread's first file.
ls "$rec" >files.txt
nseg=$(grep -c '^t[0-9]*-s[0-9]*\.rip$' files.txt || true)
echo "$nseg segments"
[ "$nseg" -ge 3 ] || fail "expected 3 or more segments, found: $(tr '\n' ' ' <files.txt)"
first=$("$RHEAP" dump "$rec/$(grep '^t[0-9]*\.rip$' files.txt)" | sed -n '1s/.* serial=\([0-9]*\) .*/\1/p')
expect_eq "the thread's first file is the recording's first" "$first" 1
k=2
for f in $(grep '^t[0-9]*-s[0-9]*\.rip$' files.txt | sort -t s -k2 -n); do
    serial=${f##*-s}
    serial=${serial%.rip}
    expect_eq "$f: its header" "$("$RHEAP" dump "$rec/$f" | sed -n '2p')" \
        "# segment $k of the thread whose first file is number 1"
    expect_eq "$f: its serial" "$("$RHEAP" dump "$rec/$f" | sed -n '1s/.* serial=\([0-9]*\) .*/\1/p')" "$serial"
    # Each segment stands alone: it defines its stacks from id 1 after a module list.
    expect_eq "$f: first stack id" "$("$RHEAP" dump "$rec/$f" | grep -m1 '^stack ' | sed 's/^stack id=\([0-9]*\) .*/\1/')" 1
    k=$((k + 1))
done
# A closed segment is complete: it holds no staged record (its staging area was given back).
for f in $(grep '^t[0-9]*\(-s[0-9]*\)\?\.rip$' files.txt); do
    lz4 -t "$rec/$f" 2>/dev/null || fail "$f is not a complete lz4 frame"
done

total=$(grep '^total ' sites.out)
expect_eq "segmented: exact allocations" "$(q segmented.db "SELECT allocs FROM recording_stats")" "$(field "$total" calls)"
expect_eq "segmented: exact bytes" "$(q segmented.db "SELECT alloc_bytes FROM recording_stats")" "$(field "$total" bytes)"
expect_eq "segmented: no warning" "$(q segmented.db "SELECT value FROM meta WHERE key = 'warnings'")" 0
# One thread: its segments' events under its first file's row.
expect_eq "segmented: threads" "$(q segmented.db "SELECT count(*) || ' ' || sum(events) FROM threads")" \
    "$(q whole.db "SELECT count(*) || ' ' || sum(events) FROM threads")"
expect_eq "segmented: the thread's file" "$(q segmented.db "SELECT serial || ' ' || file FROM threads" | sed 's|/.*/||')" \
    "1 $(grep '^t[0-9]*\.rip$' files.txt)"
for db in whole.db segmented.db; do
    q $db "SELECT k.function, s.blocks, s.bytes, s.leaked_blocks, s.leaked_bytes FROM stack_stats AS s
           JOIN stacks AS k ON k.id = s.bt ORDER BY k.function, s.bytes" >"$db.sites"
done
expect_eq "every site's estimates, whole and segmented" "$(cat segmented.db.sites)" "$(cat whole.db.sites)"
expect_eq "sampled rows, whole and segmented" "$(q segmented.db "SELECT count(*) FROM allocations")" \
    "$(q whole.db "SELECT count(*) FROM allocations")"
