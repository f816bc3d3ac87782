# exec: the recording is completed before the exec (off how=exec); a failed exec restarts it
# in rip-<pid>-2/ (on how=exec); the new program records into rip-<pid>-3/ (on how=env).
traced run "$PROGS/exec_parent" "$PROGS/exec_child"
expect_status run 0
no_rheap_messages run
pid=$(field "$(grep '^exec_parent pid=' run.out)" pid)
[ -n "$pid" ] || fail "no pid in output"
has_line run.out "exec_child pid=$pid argc=3 hello 42"
expect_recordings 3
first=$REC/rip-$pid second=$REC/rip-$pid-2 third=$REC/rip-$pid-3

expected run "begin expect " >want.txt
tally --between begin end summary "$first" | grep '^thread ' >got.txt
same_lines "counts before the failed exec" want.txt got.txt
tally summary "$first" >first.txt
has_line first.txt "on how=env"
has_line first.txt "off how=exec"

expected run "begin2 expect " >want.txt
tally --between begin2 end2 summary "$second" | grep '^thread ' >got.txt
same_lines "counts after the failed exec" want.txt got.txt
tally summary "$second" >second.txt
has_line second.txt "recording rip-$pid-2 pid=$pid n=2 threads=1"
has_line second.txt "on how=exec"
has_line second.txt "off how=exec"

expected run "expect " >want.txt
tally --between begin end summary "$third" | grep '^thread ' >got.txt
same_lines "counts of the new program" want.txt got.txt
tally summary "$third" >third.txt
has_line third.txt "recording rip-$pid-3 pid=$pid n=3 threads=1"
grep -q "^process ppid=[0-9]* exe=exec_child argc=3 argv=exec_child hello 42$" third.txt ||
    fail "process record of the new program: $(grep ^process third.txt)"
has_line third.txt "on how=env"
has_line third.txt "off how=exit"
clean_check "$first" "$second" "$third"
