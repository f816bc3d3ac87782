# exec while other threads are alive with buffered events: their events are written before the
# exec, and the new program records into rip-<pid>-2/.
traced run "$PROGS/exec_threads" "$PROGS/exec_child"
expect_status run 0
no_rheap_messages run
pid=$(field "$(grep '^exec_threads pid=' run.out)" pid)
has_line run.out "exec_child pid=$pid argc=2 after-threads"
expect_recordings 2
first=$REC/rip-$pid
grep '^expect thread ' run.out | grep -v "tid=$pid " | sed 's/^expect //' >want.txt
tally --between begin end summary "$first" | grep '^thread ' >got.txt
same_sorted "counts of the threads alive at exec" want.txt got.txt
tally summary "$first" >first.txt
has_line first.txt "off how=exec"
grep "^expect thread tid=$pid " run.out | sed 's/^expect //' >want.txt
tally --between begin end summary "$REC/rip-$pid-2" >second.txt
grep '^thread ' second.txt >got.txt
same_lines "counts of the new program" want.txt got.txt
clean_check "$first" "$REC/rip-$pid-2"
