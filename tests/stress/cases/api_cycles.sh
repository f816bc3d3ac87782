# 100 rheap_enable / rheap_disable cycles through the linked API: rip-<pid>/, rip-<pid>-2/ ...
# rip-<pid>-100/, each holding exactly the allocations and frees of its window.
cycles=100
STATUS=0
"$PROGS/stress_api_cycles" "$REC" "$cycles" >run.out 2>run.err </dev/null || STATUS=$?
expect_status run 0
no_rheap_messages run
has_done=$(grep -c "^done $cycles windows$" run.out || true)
expect_eq "program finished" "$has_done" 1
expect_recordings "$cycles"
checked=0
while read -r line; do
    n=$(awk '{print $2}' <<<"$line")
    name=$(field "$line" dir)
    pid=$(tally summary "$REC/$name" | sed -n 's/^recording [^ ]* pid=\([0-9]*\) .*/\1/p')
    if [ "$n" -eq 1 ]; then want_name=rip-$pid; else want_name=rip-$pid-$n; fi
    expect_eq "directory of window $n" "$name" "$want_name"
    tally summary "$REC/$name" >s.txt
    expect_eq "window $n" "$(grep '^total ' s.txt)" \
        "total allocs=$(field "$line" allocs) frees=$(field "$line" frees) bytes=$(field "$line" bytes) lost=0"
    grep -qx 'on how=api' s.txt && grep -qx 'off how=api' s.txt || fail "window $n: on/off records"
    checked=$((checked + 1))
done < <(grep '^window ' run.out)
expect_eq "windows checked" "$checked" "$cycles"
# shellcheck disable=SC2046 # recording directory names have no spaces
clean_check $(recordings)
