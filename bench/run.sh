#!/bin/sh
# Builds what the benchmark needs and runs it: rheap (recording, conversion) against the same
# programs untraced and under heaptrack. Prints a Markdown report; --write also saves it to
# bench/RESULTS.md. See bench/README.md.
#
#   bench/run.sh [--quick] [--write] [--runs N] [--rheap-run] [--only NAME ...]
#
# Builds into build-bench/ (or $RHEAP_BUILD), RelWithDebInfo without sanitizers. Installs
# heaptrack and GNU time with apt-get when they are missing. --only runs the named workloads
# alone (names as in the report, quoted: --only 'perl script'); --rheap-run also times
# `rheap run` on each workload.
set -eu
cd "$(dirname "$0")/.."
ROOT="$(pwd)"
BUILD="${RHEAP_BUILD:-build-bench}"
COMMAND="bench/run.sh${*:+ $*}"

names=0 # after --only: workload names until the next option
for arg in "$@"; do
    case "$arg" in
    --quick | --write | --runs | --rheap-run) names=0 ;;
    --only) names=1 ;;
    -h | --help)
        sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    [0-9]*) ;;
    -*)
        echo "bench/run.sh: unknown argument '$arg' (expected --quick, --write, --runs N, --rheap-run, --only NAME ...)" >&2
        exit 1
        ;;
    *)
        if [ "$names" -eq 0 ]; then
            echo "bench/run.sh: unknown argument '$arg' (expected --quick, --write, --runs N, --rheap-run, --only NAME ...)" >&2
            exit 1
        fi
        ;;
    esac
done

# Tools: only installed when absent, so a second run touches nothing.
missing=""
command -v heaptrack >/dev/null 2>&1 || missing="$missing heaptrack"
[ -x /usr/bin/time ] || missing="$missing time"
command -v sqlite3 >/dev/null 2>&1 || missing="$missing sqlite3"
command -v perl >/dev/null 2>&1 || missing="$missing perl"
[ -x /usr/bin/python3 ] || missing="$missing python3"
if [ -n "$missing" ]; then
    echo "bench: installing$missing" >&2
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    if ! DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >&2; then
        $SUDO apt-get update -qq >&2
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >&2
    fi
fi

# The project's own build for the tracer and the converter. The churn workload comes from the
# same build when the top-level CMakeLists.txt includes bench/, else it is compiled here with
# the flags RelWithDebInfo would use.
echo "bench: building into $BUILD" >&2
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRHEAP_SANITIZE= >/dev/null
cmake --build "$BUILD" -j"$(nproc)" --target rheap_lib rheap >/dev/null
if grep -q '^[[:space:]]*add_subdirectory(bench)' CMakeLists.txt; then
    cmake --build "$BUILD" -j"$(nproc)" --target rheap_bench_churn >/dev/null
else
    mkdir -p "$BUILD/bench"
    cc -std=gnu11 -O2 -g -DNDEBUG -Wall -Wextra -Werror -pthread -o "$BUILD/bench/churn" bench/churn.c
fi

exec /usr/bin/python3 bench/bench.py "$@" --root "$ROOT" --command "$COMMAND" \
    --lib "$BUILD/libtrace/librheap.so" --rheap "$BUILD/cli/rheap" \
    --churn "$BUILD/bench/churn"
