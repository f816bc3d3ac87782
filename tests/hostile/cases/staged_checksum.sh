# A killed program's records left in its thread file's staging area: as written they convert
# (500 pairs of 100 bytes, 10 blocks of 7, with the warning that the recording has no end); two
# bytes changed in the staging area's size column, still valid sizes, are refused by their
# checksum (the check word, format 3.2) instead of being taken as data.
NO_LZ4_CHECK=1
traced run "$PROGS/killed"
expect_status run 137
d=$(recordings)
f=$(find "$d" -name 't*.rip')
STATUS=0
"$RHEAP" convert "$d" -o good.db >good.out 2>&1 || STATUS=$?
expect_status good 3
expect_eq "blocks as written" \
    "$(sql good.db "SELECT sum(size = 100 AND dealloc_after IS NOT NULL), sum(size = 7 AND dealloc_after IS NULL) FROM allocations")" \
    "500|10"
# The size column of the staged block: 4096 + 3 * block size (FORMAT.md section 6). Its first
# bytes are one-byte varints (the sizes of the first records): changed to 5 and 6.
bs=$(od -An -tu4 -j12 -N4 "$f" | tr -d ' ')
at=$((4096 + 3 * bs))
[ "$(od -An -tu1 -j$at -N1 "$f" | tr -d ' ')" -lt 128 ] || fail "the size column does not start with a one-byte varint"
printf '\005\006' | dd of="$f" bs=1 seek=$at conv=notrunc status=none
STATUS=0
"$RHEAP" convert "$d" -o bad.db >bad.out 2>&1 || STATUS=$?
expect_status bad 2
grep -q "$(basename "$f"): offset 4096: staged records ([0-9]* bytes) do not match their checksum in the check word (a changed byte in the staging area)" bad.out ||
    { cat bad.out >&2; fail "no line names the checksum"; }
[ ! -e bad.db ] || fail "a database was written"
