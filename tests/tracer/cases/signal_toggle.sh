# RHEAP_ENABLE=0 RHEAP_SIGNAL=USR2: each SIGUSR2 toggles recording; the first window holds
# exactly set A, the set allocated while off is absent, the next window is rip-<pid>-2/.
traced run RHEAP_ENABLE=0 RHEAP_SIGNAL=USR2 "$PROGS/signal_toggle"
expect_status run 0
no_rheap_messages run
pid=$(field "$(grep '^first expect thread' run.out)" tid)
expect_recordings 2
first=$REC/rip-$pid second=$REC/rip-$pid-2

expected run "first expect " >want.txt
tally summary "$first" >first.txt
grep '^thread ' first.txt >got.txt
same_lines "first window" want.txt got.txt
has_line first.txt "on how=signal"
has_line first.txt "off how=signal"
grep -q '^config .* signal=12$' first.txt || fail "config: $(grep ^config first.txt)"

expected run "second expect " >want.txt
tally summary "$second" >second.txt
grep '^thread ' second.txt >got.txt
same_lines "second window" want.txt got.txt
has_line second.txt "on how=signal"
has_line second.txt "off how=exit"
clean_check "$first" "$second"
