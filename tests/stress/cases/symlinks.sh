# Symbolic links planted where the recorder will write are never followed: one at rip-<pid>
# (the directory is made as rip-<pid>-2 instead, and one stderr line says so), one at a thread file name t<tid>.rip (the file
# is made as t<tid>-2.rip). The link targets stay untouched.
mkdir victim-dir
echo "precious" >victim-file
STATUS=0
bash -c 'ln -s "$1/victim-dir" "$2/rip-$$" && exec env LD_PRELOAD="$3" RHEAP_DIR="$2" "$4" 2 500' \
    _ "$WORK" "$REC" "$PRELOAD" "$PROGS/stress_xthreads" >run.out 2>run.err </dev/null || STATUS=$?
expect_status run 0
one_rheap_message run
grep -q "^rheap: recording into $REC/rip-[0-9]*-2 ($REC/rip-[0-9]* was made by another)$" run.err ||
    fail "the line does not name both directories: $(cat run.err)"
expect_eq "files in the link's target" "$(find victim-dir -mindepth 1 | wc -l)" 0
link=$(find "$REC" -maxdepth 1 -type l -name 'rip-*')
[ -n "$link" ] || fail "the planted link is gone"
[ -d "$link-2" ] && [ ! -L "$link-2" ] || fail "no recording at $(basename "$link")-2: $(ls "$REC")"
clean_check "$link-2"

rm -rf "${REC:?}"/*
STATUS=0
"$PROGS/stress_symlinks" "$REC" "$WORK/victim-file" >run.out 2>run.err </dev/null || STATUS=$?
expect_status run 0
no_rheap_messages run
dir=$(sed -n 's/^dir //p' run.out)
name=$(sed -n 's/^planted //p' run.out)
[ -L "$dir/$name" ] || fail "the planted link $name is gone"
expect_eq "victim file" "$(cat victim-file)" "precious"
[ -f "$dir/${name%.rip}-2.rip" ] || fail "no ${name%.rip}-2.rip: $(ls "$dir")"
rm "$dir/$name" # riptally would read the planted file as a thread file
expect_eq "allocations recorded" "$(field "$(tally summary "$dir" | grep '^total ')" allocs)" 100
