# A program that drops root (setgid/setuid 65534) halfway through: its files are root's, 0600,
# so it can no longer open them by name, yet both threads' events after the drop are recorded,
# exactly, through the descriptors the recorder kept, and the process file gets its
# `off how=exit` record; a thread started after the drop gets its file too (the recording
# directory was given to the new user) with exact counts. Needs root.
[ "$(id -u)" = 0 ] || skip "dropping privileges needs root"
plain plain "$PROGS/stress_setuid" 30000
expect_status plain 0
traced run "$PROGS/stress_setuid" 30000
expect_status run 0
no_rheap_messages run
grep -qx 'uid 65534' run.out || fail "the program did not drop root: $(cat run.out)"
expect_recordings 1
dir=$(recordings)
tally --between begin end summary "$dir" >between.txt
grep '^expect thread ' run.out | sed 's/^expect //' >want.txt
grep '^thread ' between.txt >got.txt || true
same_sorted "per-thread counts" want.txt got.txt
tally summary "$dir" >s.txt
grep -qx 'off how=exit' s.txt || fail "off record: $(grep '^off ' s.txt)"
