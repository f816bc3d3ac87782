#!/bin/sh
# Configures and builds rheap into build/ (or $RHEAP_BUILD). Extra arguments go to cmake.
set -eu
cd "$(dirname "$0")/.."
BUILD="${RHEAP_BUILD:-build}"
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build "$BUILD" -j"$(nproc)"
