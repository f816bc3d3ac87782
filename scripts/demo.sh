#!/bin/sh
# Installs what is missing, builds rheap, records the bundled leaky example with `rheap run`
# (librheap preloaded, recording converted into a SQLite database) and shows where it leaks.
set -eu
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/build.sh
BUILD="$(pwd)/${RHEAP_BUILD:-build}"
OUT="$BUILD/demo"
mkdir -p "$OUT"
echo "== rheap run -o $OUT/leaky.db -- examples/leaky"
"$BUILD/cli/rheap" run -f -o "$OUT/leaky.db" -- "$BUILD/examples/leaky"
echo "== rheap query leaks --stacks $OUT/leaky.db"
"$BUILD/cli/rheap" query leaks --stacks "$OUT/leaky.db"
echo "== more: rheap report $OUT/leaky.db; rheap stack ID $OUT/leaky.db; rheap query --list; sqlite3 $OUT/leaky.db"
