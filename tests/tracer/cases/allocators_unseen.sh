# A program that allocates through an allocator librheap cannot record is told so: one rheap
# line at start naming the module and the allocator (after the line saying why it could not be
# hooked, when it was tried), the process's `unrecorded` column, and a warning in `rheap run`'s
# summary and in the report. The program: its own allocator named as a prefixed jemalloc
# (_rjem_mallocx) whose free is too short to hook; a library loaded by dlopen that carries a
# prefixed jemalloc (said when the recording ends). jemalloc linked statically into the
# executable, which librheap hooks, and the shared jemalloc, which it wraps, get no such line.
[ -n "$SQLITE3" ] || skip "no sqlite3"

# unseen NAME PROGRAM ALLOCATOR SYMBOL REFUSED: PROGRAM, traced and converted, is reported as
# allocating through ALLOCATOR, found by SYMBOL, after the line saying why it was not hooked.
unseen() {
    local name=$1 prog=$2 alloc=$3 sym=$4 refused=$5
    rm -rf "$REC"/rip-*
    traced "$name" "$prog"
    expect_status "$name" 0
    grep '^rheap:' "$name.err" >"$name.lines" || true
    expect_eq "$name: rheap lines" "$(wc -l <"$name.lines")" 2
    has_line "$name.lines" "rheap: cannot hook $alloc in $prog: $refused"
    has_line "$name.lines" "rheap: $prog allocates through $alloc ($sym), which rheap does not record: its blocks are missing from the recording"
    local status=0
    "$RHEAP" convert "$(recordings)" -o "$name.db" >"$name.convert" 2>&1 || status=$?
    # 3: converted, with warnings.
    [ "$status" -eq 3 ] || { cat "$name.convert" >&2; fail "rheap convert ($name): status $status"; }
    expect_eq "$name: processes.unrecorded" \
        "$("$SQLITE3" -batch "$name.db" "SELECT unrecorded FROM processes")" "$alloc in $prog ($sym)"
    grep -q "allocates through an allocator rheap does not record, $alloc in $prog" "$name.convert" ||
        fail "$name: rheap convert gave no warning"
    "$RHEAP" report "$name.db" >"$name.report" 2>&1 || fail "rheap report ($name)"
    grep -q "^warning: process [0-9]* allocates through $alloc in $prog ($sym), which rheap does not record" "$name.report" ||
        { cat "$name.report" >&2; fail "$name: no warning in the report"; }
}

unseen own "$PROGS/own_allocator" jemalloc _rjem_mallocx "_rjem_sdallocx is shorter than a jump"
# What it allocates with malloc is still recorded.
expect_eq "own: malloc blocks" "$("$SQLITE3" -batch own.db "SELECT count(*) FROM allocations WHERE size = 48")" 1
"$RHEAP" run -o run.db -- "$PROGS/own_allocator" >run.out 2>&1 || { cat run.out >&2; fail "rheap run"; }
grep -q "^rheap: warning: process [0-9]* allocates through jemalloc in $PROGS/own_allocator (_rjem_mallocx), which rheap does not record: its blocks are missing from these figures" run.out ||
    { cat run.out >&2; fail "no warning in rheap run's summary"; }

if [ -x "$PROGS/alloc_map_static" ]; then
    rm -rf "$REC"/rip-*
    traced static "$PROGS/alloc_map_static"
    expect_status static 0
    no_rheap_messages static
    "$RHEAP" dump "$(recordings)/process.rip" >static.dump || fail "rheap dump (static)"
    ! grep -q '^unseen' static.dump || fail "the static jemalloc, which is hooked, reported as unseen"
else
    echo "no static jemalloc: that part skipped"
fi

# A library carrying a prefixed jemalloc, loaded by dlopen after start-up: not hooked (its code
# may be running in other threads by then), found when the recording ends at exit, said there
# and recorded before the process file's `off` record.
if [ -n "${PLUG_JE:-}" ] && [ -x "$PROGS/dlopen_alloc" ]; then
    rm -rf "$REC"/rip-*
    # jemalloc keeps its thread data in initial-exec TLS, which a library loaded by dlopen takes
    # from glibc's static TLS surplus (512 bytes unless told otherwise).
    traced late GLIBC_TUNABLES=glibc.rtld.optional_static_tls=16384 "$PROGS/dlopen_alloc" "$PLUG_JE"
    expect_status late 0
    grep '^rheap:' late.err >late.lines || true
    expect_eq "late: rheap lines" "$(wc -l <late.lines)" 2
    has_line late.lines "rheap: cannot hook jemalloc in $PLUG_JE: it was loaded after start-up (dlopen)"
    has_line late.lines "rheap: $PLUG_JE allocates through jemalloc (je_mallocx), which rheap does not record: its blocks are missing from the recording"
    status=0
    "$RHEAP" convert "$(recordings)" -o late.db >late.convert 2>&1 || status=$?
    [ "$status" -eq 3 ] || { cat late.convert >&2; fail "rheap convert (late): status $status"; }
    expect_eq "late: processes.unrecorded" \
        "$("$SQLITE3" -batch late.db "SELECT unrecorded FROM processes")" "jemalloc in $PLUG_JE (je_mallocx)"
    expect_eq "late: the program's own malloc" \
        "$("$SQLITE3" -batch late.db "SELECT count(*) FROM allocations WHERE size = 4567")" 1
else
    echo "no static jemalloc: the dlopen part skipped"
fi

if [ -x "$PROGS/alloc_map_jemalloc" ]; then
    rm -rf "$REC"/rip-*
    traced shared "$PROGS/alloc_map_jemalloc"
    expect_status shared 0
    no_rheap_messages shared
    "$RHEAP" dump "$(recordings)/process.rip" >shared.dump || fail "rheap dump (shared)"
    ! grep -q '^unseen' shared.dump || fail "the shared jemalloc, which is recorded, reported as unseen"
fi
