# A Rust program whose global allocator is jemalloc linked statically (libjemalloc_pic.a, called
# through mallocx, rallocx and sdallocx as tikv-jemallocator does), built here with the
# distribution's rustc: librheap hooks jemalloc's entry points, so the database holds every block
# under jemalloc's calls, the rallocx chain linked, and the 1,000 boxes leaked in leak_one with
# its file and line; the program's output is the same traced and untraced.
[ -n "$SQLITE3" ] || skip "no sqlite3"
[ -n "${RUSTC:-}" ] || skip "no rustc"
[ -n "${JEMALLOC_PIC:-}" ] || skip "no static jemalloc (libjemalloc_pic.a)"
src=$CASES/../progs/rust_jemalloc.rs
line=$(grep -n '// LEAK' "$src" | cut -d: -f1)
[ -n "$line" ] || fail "no LEAK line in $src"
"$RUSTC" -g -C opt-level=1 -C force-frame-pointers=yes "$src" -o rust_jemalloc \
    -L "$(dirname "$JEMALLOC_PIC")" -l static=jemalloc_pic >rustc.out 2>&1 ||
    { cat rustc.out >&2; fail "rustc"; }
nm rust_jemalloc >rust_jemalloc.syms || fail "nm rust_jemalloc"
grep -q ' T mallocx$' rust_jemalloc.syms || fail "mallocx is not linked into the program"

plain plain ./rust_jemalloc
expect_status plain 0
traced rust ./rust_jemalloc
expect_status rust 0
no_rheap_messages rust
cmp -s plain.out rust.out || { diff plain.out rust.out >&2; fail "output differs when traced"; }
expect_recordings 1
"$RHEAP" convert "$(recordings)" -o rust.db >convert.out 2>&1 || { cat convert.out >&2; fail "rheap convert"; }

q() {
    "$SQLITE3" -batch rust.db "$1" || fail "sqlite3: $1"
}
by_call="FROM allocations a JOIN calls c ON c.id = a.call"
expect_eq "unrecorded allocator" "$(q "SELECT coalesce(unrecorded, '') FROM processes")" ""
expect_eq "unmatched frees" "$(q "SELECT unmatched_frees FROM processes")" 0
# The 10,000 boxes of 32 bytes and the pushed vector's first block of 4 u64: all freed.
expect_eq "mallocx of 32 bytes (count|freed)" \
    "$(q "SELECT count(*), sum(dealloc_after IS NOT NULL) $by_call WHERE c.name = 'mallocx' AND size = 32")" \
    "10001|10001"
# The vector grown by doubling, from 64 to 1,048,576 bytes: one rallocx each, each linked to the
# block it replaced.
expect_eq "rallocx chain (count|linked|largest)" \
    "$(q "SELECT count(*), count(realloc_of), max(size) $by_call WHERE c.name = 'rallocx'")" "15|15|1048576"
expect_eq "leaked blocks (count|mallocx of 64 bytes)" \
    "$(q "SELECT count(*), sum(c.name = 'mallocx' AND size = 64) $by_call WHERE dealloc_after IS NULL")" \
    "1000|1000"
expect_eq "leaks through leak_one at rust_jemalloc.rs:$line" \
    "$(q "SELECT count(*) FROM allocations a WHERE dealloc_after IS NULL AND EXISTS (
              SELECT 1 FROM backtraces b WHERE b.id = a.bt AND b.sym = 'rust_jemalloc::leak_one'
              AND b.file LIKE '%rust_jemalloc.rs' AND b.line = $line)")" 1000
echo "figure: rust on static jemalloc: $(q "SELECT count(*) FROM allocations") allocations, 1000 leaked in leak_one"
