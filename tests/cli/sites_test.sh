#!/bin/bash
# sites_test.sh CASE: allocation sites that once went wrong, recorded with the real `rheap run`.
#   operators  leaks at C++ operators (operators.cpp): named exactly, every query, report and
#              export ends, and the leaks read whole on an 80-column terminal
#   stripped   a stripped program: its sites are its own code (module+offset), which
#              addr2line on the unstripped build names as the leaking functions
#   rust       a Rust program's collect() and Box leaks are at the user's lines
# CMake sets RHEAP, OPERATORS (operators.cpp built), STRIPPED_PROG (stripped_prog.c built with
# symbols) and FIXTURES (tests/cli/).
set -euo pipefail

CASE=$1
WORK=$(mktemp -d "${TMPDIR:-/tmp}/rheap-sites-$CASE.XXXXXX")
cd "$WORK"
trap 'rm -rf "$WORK"' EXIT

fail() {
    echo "FAIL ($CASE): $*" >&2
    exit 1
}

# line FILE TAG: the line of FILE that carries the comment @TAG.
line() {
    grep -n "@$2\b" "$1" | cut -d: -f1
}

# leaks DB: blocks,bytes,function,file:line of each leak site, the location without directories.
leaks() {
    "$RHEAP" query leaks "$1" --csv --no-default-suppressions >leaks.csv ||
        fail "rheap query leaks failed"
    tr -d '\r' <leaks.csv | awk -F, 'NR > 1 { n = split($4, p, "/"); print $1 "," $2 "," $3 "," p[n] }'
}

# on_tty COLS CMD...: runs CMD on a pseudo-terminal COLS wide, within 60 s; output in tty.out.
on_tty() {
    local cols=$1
    shift
    timeout 60 script -qec "stty cols $cols rows 60; $*" /dev/null >tty.out 2>&1 ||
        fail "'$*' did not end well on a terminal (status $?): $(tail -n 5 tty.out)"
    tr -d '\r' <tty.out >tty.txt
}

case_operators() {
    local src=$FIXTURES/operators.cpp
    timeout 60 "$RHEAP" run -q -o ops.db -- "$OPERATORS" || fail "rheap run did not end well"
    leaks ops.db >got.txt
    cat >want.txt <<EOT
8,3200,parse_operator_list,operator_list.c:$(line "$FIXTURES/operator_list.c" list)
7,2100,main::{lambda(int)#1}::operator()(int) const,operators.cpp:$(line "$src" lambda)
6,1200,Table::operator[](int),operators.cpp:$(line "$src" index)
5,500,Functor::operator()(int),operators.cpp:$(line "$src" call)
4,160,Pooled::operator new(unsigned long),operators.cpp:$(line "$src" pooled)
3,72,leak_global(),operators.cpp:$(line "$src" global)
EOT
    grep -v '^1,72704,' got.txt | diff want.txt - || fail "leak sites differ"

    # Every query, the report, the page and the exports end, in the aligned table a person sees.
    for q in $("$RHEAP" query --list | awk '/^  [a-z]/ { print $1 }'); do
        on_tty 80 "$RHEAP" query "$q" ops.db
    done
    on_tty 80 "$RHEAP" report ops.db
    on_tty 80 "$RHEAP" report --html -o ops.html ops.db
    for f in collapsed pprof; do on_tty 80 "$RHEAP" export "$f" ops.db -o "ops.$f"; done

    # On 80 columns the leaks keep their names and file:line, and no line is wider.
    on_tty 80 "$RHEAP" query leaks ops.db
    for want in "parse_operator_list " "operator_list.c:$(line "$FIXTURES/operator_list.c" list)" \
        "Table::operator[]  " "Functor::operator()  " "::operator new  " "leak_global  " \
        "::operator()  " "operators.cpp:$(line "$src" lambda)" "operators.cpp:$(line "$src" pooled)"; do
        grep -qF -- "$want" tty.txt || fail "80 columns: no '$want' in: $(cat tty.txt)"
    done
    # (The table's lines; a message line of the command is prose that a terminal wraps.)
    awk '!/^rheap: / && length($0) > 80 { print; bad = 1 } END { exit bad }' tty.txt ||
        fail "wider than 80 columns"
    # rheap run's own summary, at 80 columns too.
    on_tty 80 "$RHEAP" run -o ops2.db -- "$OPERATORS"
    grep -qF "Table::operator[]" tty.txt || fail "run summary: $(cat tty.txt)"
    awk '/^rheap:   / && length($0) > 80 { print; bad = 1 } END { exit bad }' tty.txt ||
        fail "run summary's table wider than 80 columns"
}

case_stripped() {
    cp "$STRIPPED_PROG" prog
    strip -s -o prog.stripped prog
    nm prog.stripped 2>&1 | grep -q "no symbols" || fail "prog.stripped still has symbols"
    "$RHEAP" run -q -o s.db -- ./prog.stripped >/dev/null || fail "rheap run failed"
    # (printf's stdio buffer, 4096 bytes, is the third site: main's.)
    leaks s.db | grep -v '^1,4096,' >got.txt || true
    [ "$(wc -l <got.txt)" = 2 ] || fail "expected the program's two sites: $(cat got.txt)"
    # blocks,bytes,function,location: prog.stripped+0xOFF at prog.stripped:0xOFF
    local n=0
    while IFS=, read -r blocks bytes function location; do
        case "$function" in prog.stripped+0x*) ;; *) fail "site '$function' is not the program's own code" ;; esac
        off=${function#prog.stripped+}
        [ "$location" = "prog.stripped:$off" ] || fail "location '$location' for $function"
        # The return address lies in the function that called the allocator.
        fn=$(addr2line -f -e prog "$(printf '0x%x' $((off - 1)))" | head -n 1)
        case "$fn,$blocks,$bytes" in
            keep_record,5,1605 | keep_index,4,2616) n=$((n + 1)) ;;
            *) fail "site $function ($fn): $blocks blocks, $bytes bytes" ;;
        esac
    done <got.txt
    [ "$n" = 2 ] || fail "sites found: $n"
    [ "$(sqlite3 s.db "SELECT count(*) FROM stacks WHERE function GLOB '__libc_start*'")" = 0 ] ||
        fail "libc's start-up taken for a site"
}

case_rust() {
    local rustc
    rustc=$(command -v rustc || echo "$HOME/.cargo/bin/rustc")
    if [ ! -x "$rustc" ]; then
        echo "no rustc: skipped"
        exit 77
    fi
    "$rustc" -g -C opt-level=0 -o collect "$FIXTURES/rust/collect.rs" || fail "rustc failed"
    "$RHEAP" run -q -o r.db -- ./collect >/dev/null || fail "rheap run failed"
    leaks r.db | grep -E ',collect::' >got.txt || true
    local src=$FIXTURES/rust/collect.rs
    printf '%s\n' "6,1920,collect::leak_vec,collect.rs:$(line "$src" collect)" \
        "4,384,collect::leak_box,collect.rs:$(line "$src" box)" | diff - got.txt ||
        fail "Rust leak sites: $(cat leaks.csv)"
}

"case_$CASE"
