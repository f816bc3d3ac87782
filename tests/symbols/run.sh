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
    "$rheap" convert "$dir/$2.rec"/rip-* -o "$dir/$2.db" -q || die "rheap convert $2 failed"
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
        fi
    done
}

mode=$1
shift
case $mode in
compilers)
    family=$1 lib=$2 rheap=$3 src=$4 dir=$5/$1
    mkdir -p "$dir"
    compilers "$family"
    ;;
*) die "unknown mode $mode" ;;
esac
echo "run.sh: $mode: ok"
