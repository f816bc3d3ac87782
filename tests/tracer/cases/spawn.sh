# vfork + execv, posix_spawn and system(): each started program has its own recording, and the
# parent, whose memory the vfork child shares, keeps recording with exact counts.
traced run "$PROGS/spawn_prog" "$PROGS/exec_child"
expect_status run 0
no_rheap_messages run
pid=$(field "$(grep '^spawn_prog pid=' run.out)" pid)
parent=$REC/rip-$pid
tally summary "$parent" >parent.txt
has_line parent.txt "on how=env"
[ "$(grep -c '^off ' parent.txt)" -eq 1 ] && has_line parent.txt "off how=exit" ||
    fail "parent's recording: $(grep -E '^(on|off) ' parent.txt)"
grep "^expect thread tid=$pid " run.out | sed 's/^expect //' >want.txt
tally --between begin end summary "$parent" | grep '^thread ' >got.txt
same_lines "parent's counts" want.txt got.txt

for how in vfork spawn system; do
    found=
    for d in $(recordings); do
        tally summary "$d" >s.txt
        # The shell runs the program by its path, the others by the name exec_child.
        if grep -Eq "^process .* argv=([^ ]*/)?exec_child $how$" s.txt; then
            found=$d
            has_line s.txt "on how=env"
            has_line s.txt "off how=exit"
            cpid=$(field "$(grep '^recording ' s.txt)" pid)
            grep "^expect thread tid=$cpid " run.out | sed 's/^expect //' >want.txt
            tally --between begin end summary "$d" | grep '^thread ' >got.txt
            same_lines "counts of the child started by $how" want.txt got.txt
        fi
    done
    [ -n "$found" ] || fail "no recording of the child started by $how"
done
# shellcheck disable=SC2046
clean_check $(recordings)
