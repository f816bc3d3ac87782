#!/bin/sh
# Installs what is missing, builds, and runs the whole test suite.
set -eu
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/build.sh "$@"
cd "${RHEAP_BUILD:-build}"
ctest --output-on-failure -j"$(nproc)" --timeout 300
