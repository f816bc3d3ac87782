# fork while other threads allocate: no deadlock; every child's recording (on how=fork) has one
# thread file with exactly the child's own events; the parent's recording stays consistent.
traced run "$PROGS/fork_threads"
expect_status run 0
no_rheap_messages run
has_line run.out "forked 20"
expect_recordings 21
pid=$(basename "$(for d in $(recordings); do tally summary "$d" | grep -q '^on how=env$' && echo "$d"; done)")
pid=${pid#rip-}
[ -n "$pid" ] || fail "no recording started from the environment"
clean_check "$REC/rip-$pid"
children=0
while read -r line; do
    cpid=$(field "$line" tid)
    dir=$REC/rip-$cpid
    tally summary "$dir" >child.txt
    has_line child.txt "recording rip-$cpid pid=$cpid n=1 threads=1"
    has_line child.txt "on how=fork"
    has_line child.txt "off how=exit"
    grep -q "^process ppid=$pid " child.txt || fail "ppid of $cpid: $(grep ^process child.txt)"
    echo "${line#expect }" >want.txt
    tally --between begin end summary "$dir" | grep '^thread ' >got.txt
    same_lines "counts of child $cpid" want.txt got.txt
    check=$(tally check "$dir")
    expect_eq "double-live addresses in child $cpid" "$(field "$check" double_live)" 0
    children=$((children + 1))
done < <(grep '^expect thread ' run.out)
expect_eq "children checked" "$children" 20
