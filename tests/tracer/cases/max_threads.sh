# max_threads = 2 with 4 threads allocating at once: two thread files with exact counts, and
# the other threads' events counted as lost, so recorded + lost = what the program did.
STATUS=0
"$PROGS/max_threads" >run.out 2>run.err || STATUS=$?
expect_status run 0
REC=$WORK
expect_recordings 1
dir=$(recordings)
tally summary "$dir" >summary.txt
expect_eq "thread files" "$(grep -c '^thread ' summary.txt)" 2
expect_eq "per-thread counts" "$(grep '^thread ' summary.txt | cut -d' ' -f3-5 | sort -u)" \
    "allocs=100 frees=100 bytes=6400"
total=$(grep '^total ' summary.txt)
events=$(field "$(grep '^events ' run.out)" events)
[ -n "$events" ] || events=$(sed -n 's/^events //p' run.out)
recorded=$(( $(field "$total" allocs) + $(field "$total" frees) ))
expect_eq "recorded + lost events" "$((recorded + $(field "$total" lost)))" "$events"
