#!/bin/sh
# Installs what is missing, builds rheap, records the bundled leaky example with librheap
# preloaded, converts the recording into a SQLite database and shows where it leaks.
set -eu
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/build.sh
BUILD="$(pwd)/${RHEAP_BUILD:-build}"
OUT="$BUILD/demo"
rm -rf "$OUT"
mkdir -p "$OUT"
echo "== recording examples/leaky with librheap preloaded"
RHEAP_DIR="$OUT" LD_PRELOAD="$BUILD/libtrace/librheap.so" "$BUILD/examples/leaky"
echo "== converting $(basename "$OUT"/rip-*) into $OUT/leaky.db"
"$BUILD/converter/rheap" convert "$OUT"/rip-* -o "$OUT/leaky.db"
echo "== leaks by allocation site (queries/leaks.sql)"
sqlite3 -header -column "$OUT/leaky.db" < queries/leaks.sql
echo "== ask your own questions: sqlite3 $OUT/leaky.db"
