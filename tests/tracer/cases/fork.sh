# fork: the child records into its own rip-<child>/ (ppid = parent, on how=fork) exactly its
# own calls, including frees of three blocks inherited from the parent; the parent's recording
# is untouched by the child.
traced run "$PROGS/fork_prog"
expect_status run 0
no_rheap_messages run
line=$(grep '^parent pid=' run.out) || fail "no parent line in output"
ppid=$(field "$line" pid)
cpid=$(field "$line" child)
expect_recordings 2
parent=$REC/rip-$ppid
child=$REC/rip-$cpid
[ -d "$parent" ] && [ -d "$child" ] || fail "expected rip-$ppid and rip-$cpid: $(ls "$REC")"

expected run "begin expect " >want.txt
tally --between begin end summary "$parent" | grep '^thread ' >got.txt
same_lines "parent counts before fork" want.txt got.txt
expected run "begin2 expect " >want.txt
tally --between begin2 end2 summary "$parent" | grep '^thread ' >got.txt
same_lines "parent counts after fork" want.txt got.txt
tally summary "$parent" >parent.txt
has_line parent.txt "on how=env"
has_line parent.txt "off how=exit"
has_line parent.txt "recording rip-$ppid pid=$ppid n=1 threads=1"

expected run "expect " >want.txt
tally --between begin end summary "$child" | grep '^thread ' >got.txt
same_lines "child counts" want.txt got.txt
tally summary "$child" >child.txt
has_line child.txt "recording rip-$cpid pid=$cpid n=1 threads=1"
grep -q "^process ppid=$ppid " child.txt || fail "child's ppid is not $ppid: $(grep ^process child.txt)"
has_line child.txt "on how=fork"
has_line child.txt "off how=exit"

clean_check "$parent" "$child"
tally --live check "$parent" >live.txt
has_line live.txt "live call=malloc size=111 in=exe count=3"
# The child's recording started at the fork: the three inherited blocks it frees are its only
# frees of unknown blocks.
check=$(tally check "$child")
expect_eq "child's unmatched frees" "$(field "$check" unmatched_frees)" 3
