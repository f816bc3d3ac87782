# RHEAP_ENABLE=0 RHEAP_SIGNAL=USR2 while 4 threads churn a shared pool and a fifth sends 20
# SIGUSR2: 10 windows, each one consistent (frees of blocks from before the window are allowed,
# an address allocated twice is not), nothing lost, and the program's output unchanged.
signals=20
plain plain "$PROGS/stress_sigstorm" 4 "$signals" 5000
expect_status plain 0
traced run RHEAP_ENABLE=0 RHEAP_SIGNAL=USR2 "$PROGS/stress_sigstorm" 4 "$signals" 5000
expect_status run 0
no_rheap_messages run
grep -q "^sent $signals signals" run.out || fail "output: $(cat run.out)"
expect_recordings $((signals / 2))
for d in $(recordings); do
    tally summary "$d" >s.txt
    grep -qx 'on how=signal' s.txt && grep -qx 'off how=signal' s.txt ||
        fail "$(basename "$d"): on/off records: $(grep -E '^(on|off) ' s.txt | tr '\n' ' ')"
    [ "$(field "$(grep '^total ' s.txt)" allocs)" -gt 0 ] || fail "$(basename "$d") is empty"
done
# shellcheck disable=SC2046 # recording directory names have no spaces
no_double_live $(recordings)
