# A program that execs itself 20 times: one process, 21 images, 21 recordings rip-<pid>/,
# rip-<pid>-2/ ... rip-<pid>-21/, each with exactly its image's calls; each but the last ends
# with off how=exec.
steps=20
traced run "$PROGS/stress_procs" chain "$steps"
expect_status run 0
no_rheap_messages run
expect_recordings $((steps + 1))
pid=$(field "$(grep "^chain $steps " run.out)" tid)
[ -n "$pid" ] || fail "no first step in the output"
for n in $(seq "$steps" -1 0); do
    k=$((steps + 1 - n))
    if [ "$k" -eq 1 ]; then dir=$REC/rip-$pid; else dir=$REC/rip-$pid-$k; fi
    [ -d "$dir" ] || fail "no recording $(basename "$dir"): $(ls "$REC" | tr '\n' ' ')"
    grep "^chain $n expect " run.out | sed 's/^chain [0-9]* expect //' >want.txt
    tally --between begin end summary "$dir" | grep '^thread ' >got.txt
    same_lines "step $n ($(basename "$dir"))" want.txt got.txt
    tally summary "$dir" >s.txt
    if [ "$n" -gt 0 ]; then off=exec; else off=exit; fi
    grep -qx "off how=$off" s.txt || fail "step $n: $(grep '^off ' s.txt)"
done
# shellcheck disable=SC2046 # recording directory names have no spaces
clean_check $(recordings)
