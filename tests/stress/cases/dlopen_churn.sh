# dlopen / call / dlclose of an allocating library 300 times: every allocation of the library
# (its constructor's, freed by its destructor under the loader lock, and its function's) is
# recorded and attributed to it, and the converted database names the function in frame 0.
cycles=$((300 * SCALE))
traced run "$PROGS/stress_dlchurn" "$DSO" "$cycles"
expect_status run 0
no_rheap_messages run
has=$(grep -c "^expect cycles=$cycles work_blocks=$((3 * cycles)) ctor_blocks=$cycles$" run.out || true)
expect_eq "program's counts" "$has" 1
expect_recordings 1
dir=$(recordings)
lib=$(basename "$DSO")
tally list "$dir" >list.txt
expect_eq "work blocks in $lib" \
    "$(grep -cE "^alloc call=malloc size=700[123] in=$lib$" list.txt || true)" "$((3 * cycles))"
expect_eq "constructor blocks in $lib" \
    "$(grep -cE "^alloc call=malloc size=6543 in=$lib$" list.txt || true)" "$cycles"
expect_eq "constructor blocks freed" "$(grep -c '^free of=malloc:6543$' list.txt || true)" "$cycles"
clean_check "$dir"
convert out.db "$dir"
expect_eq "work blocks in the database" "$(sql out.db "SELECT count(*) FROM allocations a
    JOIN backtraces b ON b.id = a.bt AND b.frame_no = 0
    WHERE a.size IN (7001, 7002, 7003) AND a.dealloc_after IS NOT NULL
      AND b.sym = 'stress_dso_work'")" "$((3 * cycles))"
