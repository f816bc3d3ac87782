# Fork handlers that allocate, registered before librheap's (a library after librheap in
# LD_PRELOAD): three forks complete (an alarm would end a hang), parent and children record
# exactly their own allocations, and the handlers' allocations pass through untraced.
PRELOAD="$RHEAP_LIB $ATFORK_LIB"
traced run "$PROGS/atfork_prog"
expect_status run 0
no_rheap_messages run
line=$(grep '^parent pid=' run.out) || fail "no parent line"
ppid=$(field "$line" pid)
expect_eq "handler calls in the parent" "$(field "$line" handler_calls)" 6
expect_recordings 4
expected run "parent expect " >want.txt
tally --between begin end summary "$REC/rip-$ppid" | grep '^thread ' >got.txt
same_lines "parent's counts" want.txt got.txt
grep '^child pid=' run.out >children.txt
[ "$(wc -l <children.txt)" -eq 3 ] || fail "expected 3 children: $(cat run.out)"
while read -r cline; do
    cpid=$(field "$cline" pid)
    grep "^expect thread tid=$cpid " run.out | sed 's/^expect //' >want.txt
    tally --between begin end summary "$REC/rip-$cpid" | grep '^thread ' >got.txt
    same_lines "child $cpid's counts" want.txt got.txt
done <children.txt
# shellcheck disable=SC2046
clean_check $(recordings)
# shellcheck disable=SC2046
to_db $(recordings)
expect_eq "rows: parent 3, children 3 x 10, handlers none" \
    "$(sql "SELECT count(*), count(dealloc_after), sum(size = 555) FROM allocations")" "33|33|0"
