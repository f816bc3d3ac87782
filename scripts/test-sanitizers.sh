#!/bin/bash
# test-sanitizers.sh: builds rheap with AddressSanitizer + UndefinedBehaviorSanitizer
# (build-asan/) and with ThreadSanitizer (build-tsan/), and runs what each can run.
#
# A sanitizer runtime replaces malloc, and so does librheap; only one of them can own it. With
# the runtime first in the library list the recorder never sees a call; with librheap first the
# program crashes while the runtime initializes. So, in the sanitized builds:
#   - every test that does not record runs as usual (format, converter units, bad input, the
#     fuzz corpus, ...);
#   - the tests that record a sanitized program are excluded (EXCLUDE below), and instead the
#     stress cases run with the plain build's recorder and programs but the sanitized `rheap`
#     and `riptally`: the reader and the converter meet real recordings, including ones cut
#     short by kill -9, a full disk or a descriptor limit, under the sanitizer.
# The TSan build also builds tests/tsan: the recorder's own sources compiled into a sanitized
# test program with the allocator names renamed, so its threads, flushes, toggle signal, fork
# and thread exits run under TSan with exact counts (ctest tsan.*).
#
# Usage: scripts/test-sanitizers.sh [address|thread|all]   (default all), from anywhere.
# Builds the plain build-rel/ too when it is missing. Exits non-zero on any failure.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
WHICH=${1:-all}
JOBS=$(nproc 2>/dev/null || echo 2)
# Tests that run a sanitized program with librheap preloaded or linked (profile.*: sites.c links
# librheap and the service preloads it), or loaded by rheap attach (attach.*: the sanitizer owns
# the program's malloc, and rheap attach rightly refuses an allocator it cannot hook; hostile.*:
# each records a program, sanitized here, with librheap preloaded).
EXCLUDE='^(attach\.|hostile\.|tracer\.|profile\.|stress\.|convert\.(e2e|threads|spill_run)|cli\.(run|query|report|export_tree|install|stripped|window|fit|help)|queries\.|visual\.|moment\.|symbols\.|serve\.)'
STRESS_CASES="xthreads waves api_cycles signal_storm dlopen_churn exec_chain spawn_fork
  exit_return exit_thread exit_underscore exit_abort exit_segv exit_group exit_sigterm kill9
  disk_full readonly_dir fd_limit vm_limit perms symlinks long_env setuid max_threads_lost
  handler_alloc handler_longjmp handler_exit stack_use"

status=0

configure_build() { # DIR CMAKE-ARGS...
    local dir=$1
    shift
    cmake -S "$ROOT" -B "$ROOT/$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
    cmake --build "$ROOT/$dir" -j "$JOBS" >/dev/null
}

# one_case LABEL LOG COMMAND...: runs COMMAND with its output in LOG (a path under the
# tree) and says that LABEL passed, was skipped (status 77) or FAILED; 1 when it failed.
one_case() {
    local label=$1 log=$2 rc=0
    shift 2
    "$@" >"$ROOT/$log" 2>&1 || rc=$?
    case $rc in
        0) echo "  $label passed" ;;
        77) echo "  $label skipped" ;;
        *) echo "  $label FAILED (see $log)"; return 1 ;;
    esac
}

# cross DIR NAME: the stress cases with the plain recorder and the sanitized rheap/riptally.
cross() {
    local dir=$1 name=$2 c failed=0
    [ -x "$ROOT/build-rel/tests/stress/stress_xthreads" ] && [ -x "$ROOT/build-rel/tests/serve/serve_holder" ] ||
        configure_build build-rel
    # riptally is a test tool that leaves its tables to the exit: run it without leak
    # detection. rheap's leaks still count.
    local tally="$ROOT/$dir/riptally-noleaks"
    printf '#!/bin/sh\nASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" exec "%s" "$@"\n' \
        "$ROOT/$dir/tests/tracer/riptally" >"$tally"
    chmod +x "$tally"
    rm -f "$ROOT/$dir"/cross-*.log
    for c in $STRESS_CASES; do
        one_case "$name cross: $c" "$dir/cross-$c.log" \
            env RHEAP_LIB="$ROOT/build-rel/libtrace/librheap.so" \
                RHEAP_CLI="$ROOT/$dir/cli/rheap" \
                RIPTALLY="$tally" \
                PROGS="$ROOT/build-rel/tests/stress" \
                DSO="$ROOT/build-rel/tests/stress/libstress_dso.so" \
                BUMP="$ROOT/build-rel/tests/stress/libstress_bump.so" \
                CASES="$ROOT/tests/stress/cases" SQLITE3="$(command -v sqlite3 || true)" \
                bash "$ROOT/tests/stress/run_stress.sh" "$c" || failed=1
    done
    # The collector (rheap serve, rheap snapshot) sanitized, following the plain build's
    # recordings of the plain build's holder: its reader, HTTP parser and profile writer, and
    # the library alone (collect_api).
    for c in snapshot pprof metrics index lifecycle profile robust dumps flat cgroup threads budget perms \
             library compact race second; do
        one_case "$name cross: serve.$c" "$dir/cross-serve-$c.log" \
            env RHEAP="$ROOT/$dir/cli/rheap" RHEAP_LIB="$ROOT/build-rel/libtrace/librheap.so" \
                HOLDER="$ROOT/build-rel/tests/serve/serve_holder" SRC="$ROOT" \
                COLLECT_API="$ROOT/$dir/tests/serve/serve_collect_api" \
                XTHREADS="$ROOT/build-rel/tests/stress/stress_xthreads" \
                DIR="$ROOT/$dir/serve-out" \
                bash "$ROOT/tests/serve/serve_test.sh" "$c" || failed=1
    done
    # A sanitizer report fails the case through the tool's exit status, but say it anyway.
    if grep -l -E '^(==[0-9]+==ERROR|WARNING: ThreadSanitizer|.*runtime error:)' \
            "$ROOT/$dir"/cross-*.log 2>/dev/null; then
        echo "  $name cross: sanitizer reports in the logs above"
        failed=1
    fi
    return "$failed"
}

# sanitized NAME DIR OPTIONS CMAKE-ARGS...: builds DIR with CMAKE-ARGS, exports the runtime's
# OPTIONS (VAR=VALUE words), runs the suite there without EXCLUDE, then the cross cases. The
# same steps for ASan and TSan; TSan's build must also hold the recorder's own tsan.* tests.
sanitized() {
    local name=$1 dir=$2 opts=$3
    shift 3
    configure_build "$dir" "$@"
    local o
    for o in $opts; do
        export "${o?}"
    done
    (cd "$ROOT/$dir" && ctest -E "$EXCLUDE" -j "$JOBS" --output-on-failure) || status=1
    if [ "$name" = tsan ]; then
        # The recorder's own threads (tests/tsan) ran in the suite above; a build without them
        # would pass without testing the recorder at all.
        local n
        n=$(cd "$ROOT/$dir" && ctest -N -R '^tsan\.' | sed -n 's/^Total Tests: //p')
        if [ "${n:-0}" -ge 6 ]; then
            echo "  tsan: the recorder's $n tsan.* tests ran in the suite above"
        else
            echo "  tsan: the tsan.* tests are missing from $dir"
            status=1
        fi
    fi
    cross "$dir" "$name" || status=1
}

run_asan() {
    echo "== ASan+UBSan (build-asan)"
    sanitized asan build-asan \
        "ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1" \
        -DRHEAP_SANITIZE=address
}

run_tsan() {
    echo "== TSan (build-tsan)"
    sanitized tsan build-tsan "TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1" \
        -DRHEAP_SANITIZE=thread -DRHEAP_WERROR=ON
}

case $WHICH in
    address) run_asan ;;
    thread) run_tsan ;;
    all) run_asan; run_tsan ;;
    *) echo "usage: $0 [address|thread|all]" >&2; exit 1 ;;
esac
[ "$status" -eq 0 ] && echo "sanitizers: all passed" || echo "sanitizers: FAILURES"
exit "$status"
