# While two threads churn the heap, 10 rounds of fork, vfork + exec and posix_spawn: every
# child has its own recording with exactly its own calls, and the parent's recording, which
# the vfork children share memory with, stays consistent.
rounds=10
traced run "$PROGS/stress_procs" spawn "$rounds"
expect_status run 0
no_rheap_messages run
has_line=$(grep -c "^spawned $rounds rounds$" run.out || true)
expect_eq "program finished without failures" "$has_line" 1
expect_recordings $((1 + 3 * rounds))
children=0
while read -r line; do
    cpid=$(field "$line" tid)
    dir=$REC/rip-$cpid
    [ -d "$dir" ] || fail "no recording for child $cpid"
    sed "s/^.*expect //" <<<"$line" >want.txt
    tally --between begin end summary "$dir" | grep '^thread ' >got.txt
    same_lines "counts of child $cpid" want.txt got.txt
    children=$((children + 1))
done < <(grep -E '^(child|chain 0) expect thread ' run.out)
expect_eq "children checked" "$children" $((3 * rounds))
# shellcheck disable=SC2046 # recording directory names have no spaces
no_double_live $(recordings)
parent=
for d in $(recordings); do
    tally summary "$d" >s.txt
    if grep -qx 'on how=env' s.txt && grep -q '^process .* argv=[^ ]* spawn ' s.txt; then
        parent="$parent $d"
    fi
done
[ "$(wc -w <<<"$parent")" -eq 1 ] || fail "cannot tell the parent's recording: $parent"
clean_check $parent
