#!/bin/sh
# Builds the configurations a packager or developer may pick, each warning-free (-Werror), without
# running the tests: Release with gcc (-O3 finds warnings -O2 does not) and a clang build.
# CI runs it after the test suite. Extra arguments go to every cmake configure.
set -eu
cd "$(dirname "$0")/.."
./scripts/setup.sh
build() {
    dir=$1; shift
    echo "check-builds: $dir ($*)"
    rm -rf "$dir"
    RHEAP_BUILD=$dir ./scripts/build.sh -DRHEAP_WERROR=ON "$@"
}
build build-release -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=gcc -DCMAKE_CXX_COMPILER=g++ "$@"
build build-clang -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ "$@"
echo "check-builds: all configurations built"
