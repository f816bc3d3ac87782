#!/bin/sh
# run.sh: symbolization checked against addr2line, on programs built by gcc, clang and rustc.
#
#   run.sh compilers FAMILY LIB RHEAP SRC DIR
#       FAMILY gcc (gcc and g++), clang (clang and clang++) or rustc: builds SRC's csym.c and
#       cxxsym.cpp (or rssym.rs) at -O0 and -O2 with -g, records each with LIB preloaded,
#       converts with RHEAP and compares every frame with oracle.py.
#   run.sh debugdir LIB RHEAP SRC DIR
#       a stripped program whose debug information lies in a separate file, found by build id
#       under RHEAP_DEBUG_DIR and through .gnu_debuglink; then `rheap resymbolize` of a
#       database converted while that file was absent.
#
# The compilers are taken from $CC_GCC, $CXX_GCC, $CC_CLANG, $CXX_CLANG and $RUSTC, clang's
# oracle from $LLVM_SYMBOLIZER (CMake passes what it found); a missing clang or rustc skips that family (exit status 77) with a
# message saying so.
set -eu

die() {
    echo "run.sh: $*" >&2
    exit 1
}

# record PROGRAM NAME: traces PROGRAM, converts it to $dir/NAME.db.
record() {
    rm -rf "$dir/$2.rec" "$dir/$2.db"
    mkdir -p "$dir/$2.rec"
    RHEAP_DIR="$dir/$2.rec" LD_PRELOAD="$lib" "$1" >/dev/null || die "$1 failed"
    env -u RHEAP_DEBUG_DIR "$rheap" convert "$dir/$2.rec"/rip-* -o "$dir/$2.db" -q ||
        die "rheap convert $2 failed"
}

sql() {
    sqlite3 "$1" "$2"
}

# check NAME PROGRAM ORACLE-FLAGS...: every frame against the oracle, and the program's own
# frames are there with file:line (so the comparison cannot pass on an empty database).
check() {
    name=$1 prog=$2
    shift 2
    python3 "$src/oracle.py" "$dir/$name.db" --expect-module "$prog" "$@" ||
        die "$name: frames disagree with addr2line"
    n=$(sql "$dir/$name.db" "SELECT count(*) FROM backtraces WHERE module = '$prog' AND file IS NOT NULL")
    [ "$n" -ge 3 ] || die "$name: only $n frames of $prog with a file"
}

# expect NAME SQL-CONDITION WHAT: at least one frame of the program matches the condition.
expect() {
    n=$(sql "$dir/$1.db" "SELECT count(*) FROM backtraces WHERE $2")
    [ "$n" -ge 1 ] || die "$1: no frame with $3"
    echo "run.sh: $1: $n frames with $3"
}

# display DB: the table output shortens template arguments (not with --full-names, not in
# CSV) however wide the output, and on a terminal 120 columns wide every line fits.
display() {
    short='shapes::Registry<...>::add(shapes::Shape*)'
    full='shapes::Registry<shapes::Shape*>::add(shapes::Shape*)'
    COLUMNS=1000 "$rheap" query top-sites "$1" >"$dir/columns.txt"
    "$rheap" query top-sites "$1" --full-names >"$dir/full.txt"
    "$rheap" query top-sites "$1" --csv >"$dir/sites.csv"
    grep -qF "$short" "$dir/columns.txt" || die "display: no '$short' in the columns"
    ! grep -qF "$full" "$dir/columns.txt" || die "display: '$full' not shortened in the columns"
    grep -qF "$full" "$dir/full.txt" || die "display: no '$full' with --full-names"
    grep -qF "$full" "$dir/sites.csv" || die "display: no '$full' in the CSV"
    if command -v script >/dev/null 2>&1; then
        script -qc "stty cols 120; '$rheap' query top-sites '$1'" /dev/null | tr -d '\r' >"$dir/tty.txt"
        long=$(awk 'length($0) > 120' "$dir/tty.txt" | wc -l)
        [ "$long" -eq 0 ] || die "display: $long lines wider than a 120-column terminal"
        grep -q 'cxxsym.cpp:27' "$dir/tty.txt" || die "display: clipped locations lost their line"
        echo "run.sh: display: shortened, full with --full-names and in CSV, fits 120 columns"
    fi
}

compilers() {
    family=$1
    case $family in
    gcc) cc=${CC_GCC:-} cxx=${CXX_GCC:-} ;;
    clang) cc=${CC_CLANG:-} cxx=${CXX_CLANG:-} ;;
    rustc) cc=${RUSTC:-} cxx= ;;
    *) die "unknown compiler family $family" ;;
    esac
    if [ -z "$cc" ] || ! command -v "$cc" >/dev/null 2>&1; then
        echo "run.sh: SKIPPED: no $family compiler found (install it: scripts/setup.sh installs clang; rustc comes with rustup)"
        exit 77
    fi
    if [ "$family" = clang ] && [ -z "${LLVM_SYMBOLIZER:-}" ]; then
        echo "run.sh: SKIPPED: clang found but not llvm-symbolizer (package llvm), the oracle for its programs"
        exit 77
    fi
    for opt in 0 2; do
        if [ "$family" = rustc ]; then
            p=$dir/rs-O$opt
            "$cc" -g -C opt-level=$opt "$src/rssym.rs" -o "$p" || die "rustc failed"
            record "$p" rs-O$opt
            # rustc's objects have no .debug_aranges and put every function in a namespace.
            check rs-O$opt "$p" --binutils "$p"
            expect rs-O$opt "module = '$p' AND sym LIKE 'rssym::store::leak_some%' AND file LIKE '%rssym.rs'" \
                "rssym::store::leak_some at rssym.rs"
            expect rs-O$opt "module = '$p' AND sym LIKE 'rssym::store::bag::Bag<%>::fill%'" "the generic Bag<T>::fill"
            [ $opt = 2 ] || expect rs-O$opt "module = '$p' AND sym LIKE 'rssym::store::leak_some::{%closure%}'" \
                "the closure"
            [ $opt = 0 ] || expect rs-O$opt "module = '$p' AND inlined = 1 AND file LIKE '%rssym.rs'" \
                "an inlined call in rssym.rs"
            continue
        fi
        c=$dir/$family-c-O$opt x=$dir/$family-cxx-O$opt
        "$cc" -g -O$opt "$src/csym.c" -o "$c" || die "$cc failed"
        "$cxx" -g -O$opt "$src/cxxsym.cpp" -o "$x" || die "$cxx failed"
        record "$c" $family-c-O$opt
        record "$x" $family-cxx-O$opt
        # gcc's programs have .debug_aranges and gcc's own function layout, which eu-addr2line
        # reads right; clang's are checked with llvm-symbolizer (see oracle.py).
        b1= b2=
        [ "$family" = clang ] && b1="--llvm $c" b2="--llvm $x"
        # shellcheck disable=SC2086
        check $family-c-O$opt "$c" $b1
        # shellcheck disable=SC2086
        check $family-cxx-O$opt "$x" $b2
        expect $family-c-O$opt "module = '$c' AND sym = 'copy_name' AND file LIKE '%csym.c'" \
            "copy_name at csym.c"
        expect $family-cxx-O$opt "module = '$x' AND sym = 'shapes::make_circle(double)' AND line > 0" \
            "shapes::make_circle(double) with its line"
        [ $opt = 2 ] || expect $family-cxx-O$opt "module = '$x' AND sym LIKE 'main::%::operator()(int) const'" \
            "the lambda"
        expect $family-cxx-O$opt "module = '$x' AND sym LIKE 'shapes::Registry<%>::add(%' AND file LIKE '%cxxsym.cpp'" \
            "shapes::Registry<...>::add at cxxsym.cpp"
        if [ $opt = 2 ]; then
            expect $family-c-O$opt "module = '$c' AND inlined = 1 AND sym = 'copy_name'" "copy_name inlined"
            expect $family-cxx-O$opt "module = '$x' AND inlined = 1" "an inlined call"
            [ "$family" = gcc ] && expect $family-cxx-O$opt \
                "module = '$x' AND inlined = 1 AND sym = 'main::{lambda}::operator()'" \
                "the inlined lambda named with its enclosing function"
        fi
    done
    [ "$family" = gcc ] && display "$dir/gcc-cxx-O0.db"
    [ "$family" = rustc ] && return
    # Split DWARF (the functions in a .dwo file beside the program, the skeleton CU holding only
    # lines) with compressed sections. eu-addr2line 0.188 finds no inlined call in split units,
    # so llvm-symbolizer is the oracle here, for gcc's build too.
    if [ -z "${LLVM_SYMBOLIZER:-}" ]; then
        echo "run.sh: split DWARF not checked: no llvm-symbolizer (package llvm)"
        return
    fi
    s=$dir/$family-split
    (cd "$dir" && "$cxx" -g -O2 -gsplit-dwarf -gz "$src/cxxsym.cpp" -o "$s") || die "$cxx -gsplit-dwarf failed"
    record "$s" $family-split
    check $family-split "$s" --llvm "$s"
    expect $family-split "module = '$s' AND inlined = 1 AND file LIKE '%cxxsym.cpp'" "an inlined call in cxxsym.cpp"
}

# The module's frames that have a source file.
with_file() {
    sql "$1" "SELECT count(*) FROM backtraces WHERE module = '$2' AND file IS NOT NULL"
}

debugdir() {
    cc=${CXX_GCC:-g++}
    orig=$dir/prog
    "$cc" -g -O2 "$src/cxxsym.cpp" -o "$orig" || die "$cc failed"
    objcopy --only-keep-debug "$orig" "$dir/prog.debug"
    bid=$(readelf -n "$orig" | sed -n 's/.*Build ID: *//p')
    [ -n "$bid" ] || die "no build id in $orig"

    # 1. Stripped, its debug file only in a build-id tree of our own: RHEAP_DEBUG_DIR.
    rm -rf "$dir/byid" "$dir/root"
    mkdir -p "$dir/byid" "$dir/root/.build-id/$(echo "$bid" | cut -c1-2)"
    strip --strip-all -o "$dir/byid/prog" "$orig"
    cp "$dir/prog.debug" "$dir/root/.build-id/$(echo "$bid" | cut -c1-2)/$(echo "$bid" | cut -c3-).debug"
    p=$dir/byid/prog
    record "$p" byid-nodebug
    n=$(with_file "$dir/byid-nodebug.db" "$p")
    [ "$n" -eq 0 ] || die "byid-nodebug: $n frames of the stripped program have a file without its debug file"
    cp "$dir/byid-nodebug.db" "$dir/byid-resym.db"
    rm -f "$dir/byid.db"
    RHEAP_DEBUG_DIR=$dir/root "$rheap" convert "$dir/byid-nodebug.rec"/rip-* -o "$dir/byid.db" -q ||
        die "convert with RHEAP_DEBUG_DIR failed"
    check byid "$p" --as "$p=$orig"
    echo "run.sh: byid: $(with_file "$dir/byid.db" "$p") frames of the stripped program resolved through the build-id tree"

    # 2. Stripped, with a .gnu_debuglink to a file in the .debug directory beside it.
    rm -rf "$dir/link"
    mkdir -p "$dir/link/.debug"
    strip --strip-all -o "$dir/link/prog" "$orig"
    (cd "$dir" && objcopy --add-gnu-debuglink=prog.debug link/prog)
    cp "$dir/prog.debug" "$dir/link/.debug/prog.debug"
    p=$dir/link/prog
    record "$p" link
    check link "$p" --as "$p=$orig"
    echo "run.sh: link: $(with_file "$dir/link.db" "$p") frames of the stripped program resolved through .gnu_debuglink"

    # 3. resymbolize: the database converted without the debug file gets every frame right.
    p=$dir/byid/prog
    # (--debug-dir=DIR after the database: getopt_long's form; case 4 gives it before, apart.)
    "$rheap" resymbolize "$dir/byid-resym.db" --debug-dir="$dir/root" || die "resymbolize failed"
    check byid-resym "$p" --as "$p=$orig"
    a=$(sql "$dir/byid.db" "SELECT group_concat(x, '|') FROM (SELECT id || ',' || frame_no || ',' || coalesce(sym, '') || ',' || coalesce(file, '') || ',' || coalesce(line, '') || ',' || inlined || ',' || ip_index AS x FROM backtraces ORDER BY id, frame_no)")
    b=$(sql "$dir/byid-resym.db" "SELECT group_concat(x, '|') FROM (SELECT id || ',' || frame_no || ',' || coalesce(sym, '') || ',' || coalesce(file, '') || ',' || coalesce(line, '') || ',' || inlined || ',' || ip_index AS x FROM backtraces ORDER BY id, frame_no)")
    [ "$a" = "$b" ] || die "resymbolize: the database differs from a conversion with the debug file"
    # The stacks' lists of distinct frames are made again from the new rows too.
    q="SELECT group_concat(x, '|') FROM (SELECT s.id || ',' || f.key || ',' || coalesce(u.sym, '') || ',' || coalesce(u.file, '') || ',' || coalesce(u.line, '') || ',' || u.inlined || ',' || (f.value > 0) AS x FROM stack_frames AS s, json_each(s.frames) AS f JOIN unique_frames AS u ON u.id = abs(f.value) ORDER BY s.id, f.key)"
    [ "$(sql "$dir/byid.db" "$q")" = "$(sql "$dir/byid-resym.db" "$q")" ] ||
        die "resymbolize: stack_frames and unique_frames differ from a conversion with the debug file"
    [ "$(sql "$dir/byid-resym.db" "SELECT count(*) FROM unique_frames")" = "$(sql "$dir/byid-resym.db" "SELECT count(*) FROM (SELECT DISTINCT file, line, sym, module, offset, inlined FROM backtraces)")" ] ||
        die "resymbolize: unique_frames does not hold each distinct frame of backtraces once"
    # The allocation sites of the stacks table follow the new names.
    q="SELECT group_concat(id || ',' || frames || ',' || site_frame || ',' || function || ',' || location, '|') FROM (SELECT * FROM stacks ORDER BY id)"
    [ "$(sql "$dir/byid.db" "$q")" = "$(sql "$dir/byid-resym.db" "$q")" ] ||
        die "resymbolize: the stacks table differs from a conversion with the debug file"
    [ "$(sql "$dir/byid.db" "$q")" != "$(sql "$dir/byid-nodebug.db" "$q")" ] ||
        die "the stacks table is the same with and without the debug file"
    # And so do the sites and their sums, which the canned queries read.
    q="SELECT group_concat(x, '|') FROM (SELECT s.pid || ',' || s.recording || ',' || n.function || ',' || n.location || ',' || s.stacks || ',' || s.blocks || ',' || s.bytes || ',' || s.leaked_bytes || ',' || coalesce(s.bytes_stack, '') || ',' || coalesce(s.leak_stack, '') || ',' || coalesce(s.growth_stack, '') AS x FROM site_stats AS s JOIN sites AS n ON n.id = s.site ORDER BY s.pid, s.recording, n.function, n.location)"
    [ "$(sql "$dir/byid.db" "$q")" = "$(sql "$dir/byid-resym.db" "$q")" ] ||
        die "resymbolize: the sums per site differ from a conversion with the debug file"
    [ "$(sql "$dir/byid-resym.db" "SELECT count(*) FROM stacks AS k JOIN sites AS n ON n.id = k.site AND n.function = k.function AND n.location = k.location")" = "$(sql "$dir/byid-resym.db" "SELECT count(*) FROM stacks")" ] ||
        die "resymbolize: stacks.site does not name the stack's site"
    [ "$(sql "$dir/byid-resym.db" "SELECT status FROM modules WHERE path = '$p'")" = ok ] ||
        die "resymbolize: module status not ok"

    # 4. The module rebuilt (another build-id): a warning, exit status 3, the rows kept.
    cp "$dir/byid-nodebug.db" "$dir/byid-mismatch.db"
    "$cc" -g -O0 "$src/cxxsym.cpp" -o "$p" || die "$cc failed"
    set +e
    "$rheap" resymbolize -q --debug-dir "$dir/root" "$dir/byid-mismatch.db" 2>"$dir/mismatch.err"
    st=$?
    set -e
    [ $st -eq 3 ] || die "resymbolize of a rebuilt module: exit status $st, expected 3"
    grep -q "^rheap: warning: .*module $p: build-id differs" "$dir/mismatch.err" ||
        die "resymbolize: no build-id warning: $(cat "$dir/mismatch.err")"
    # A usage error is one rheap: error: line and exit status 1, the database untouched.
    set +e
    "$rheap" resymbolize "$dir/byid-mismatch.db" --debug-dir 2>"$dir/usage.err"
    st=$?
    set -e
    [ $st -eq 1 ] || die "resymbolize --debug-dir without a directory: exit status $st, expected 1"
    [ "$(cat "$dir/usage.err")" = "rheap: error: --debug-dir needs a directory (try rheap resymbolize --help)" ] ||
        die "resymbolize --debug-dir without a directory: $(cat "$dir/usage.err")"
    [ "$(with_file "$dir/byid-mismatch.db" "$p")" -eq 0 ] || die "resymbolize used a module of another build"
    [ "$(sql "$dir/byid-mismatch.db" "SELECT count(*) FROM backtraces")" = \
      "$(sql "$dir/byid-nodebug.db" "SELECT count(*) FROM backtraces")" ] || die "resymbolize lost rows"
    echo "run.sh: rebuilt module: warned, exit status 3, rows kept"
}

mode=$1
shift
case $mode in
compilers)
    family=$1 lib=$2 rheap=$3 src=$4 dir=$5/$1
    mkdir -p "$dir"
    compilers "$family"
    ;;
debugdir)
    lib=$1 rheap=$2 src=$3 dir=$4/debugdir
    mkdir -p "$dir"
    debugdir
    ;;
*) die "unknown mode $mode" ;;
esac
echo "run.sh: $mode: ok"
