# Return from main with three threads just released: exact counts, off how=exit.
. "$CASES/exits.inc"
exit_case return 0 exact

# The exit flush gives each thread file's staging area back: a file holds disk for its first
# page and its written blocks only. The late library's destructor allocates and frees after
# that flush (on the main thread): those events are all recorded, and the main thread's area
# was allocated again before them.
dir=$(recordings)
late=$(sed -n 's/^late //p' run.out)
expect_eq "late blocks announced" "$late" 100
tally list "$dir" >list.txt
expect_eq "late allocations" "$(grep -cE '^alloc call=malloc size=7777( |$)' list.txt)" "$late"
expect_eq "late frees" "$(grep -c '^free of=malloc:7777$' list.txt)" "$late"
stage=$((4096 + 5 * 65536))
pid=$(sed -n 's/^pid //p' run.out)
files=0
for f in "$dir"/t*.rip; do
    read -r size blocks < <(stat -c '%s %b' "$f")
    held=$((blocks * 512)) frame=$((size - stage))
    [ "$frame" -gt 0 ] || fail "$f: no blocks written (size $size)"
    if [ "$(basename "$f")" = "t$pid.rip" ]; then
        [ "$held" -ge "$stage" ] ||
            fail "$f: staging area not allocated again for the late events ($held bytes held)"
    else
        # The first page, the written blocks, and the last file system block's rounding.
        [ "$held" -le $((4096 + frame + 4095)) ] ||
            fail "$f: $held bytes held for $frame bytes of blocks: the staging area stayed"
        files=$((files + 1))
    fi
done
expect_eq "worker thread files" "$files" 3
echo "figure: 3 worker files hold their blocks only; $late late allocations and frees recorded"
