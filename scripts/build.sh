#!/bin/sh
# Configures and builds rheap into build/ (or $RHEAP_BUILD). Extra arguments go to cmake. The
# build's output goes to build/build.log and is shown only when the build fails.
set -eu
cd "$(dirname "$0")/.."
BUILD="${RHEAP_BUILD:-build}"
mkdir -p "$BUILD"
echo "build: configuring and building into $BUILD/ (log: $BUILD/build.log)"
if ! { cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" &&
       cmake --build "$BUILD" -j"$(nproc)"; } > "$BUILD/build.log" 2>&1; then
    tail -n 60 "$BUILD/build.log"
    echo "build: failed; the whole log is in $BUILD/build.log" >&2
    exit 1
fi
