#!/bin/sh
# pictures.sh: what the picture outputs cost on a large database.
#
# Times `rheap export collapsed`, `rheap export pprof` and `rheap report --html` on DB (read from
# its summary tables); the same at a moment (`--at`, the middle of the first recording) and at
# the highest point of a range (`--from/--to`, its second quarter to its third), and `rheap
# report --at`, read from the checkpoints, whose size it prints; and the test oracle that
# computes the same model from the rows of `allocations` (tests/visual/model_oracle.c) unless SKIP_ROWS=1; prints the page's size, and,
# when chromium is installed, how long the page takes from the start of loading to drawn (its
# body's data-drawn-ms, set by report.js) and, with chromium-driver and python3-selenium, how
# long each of its views takes to answer a click (page_views.py).
# Results are not kept: they depend on the machine. CPU is user + system time, which a loaded
# machine inflates less than the elapsed time.
#
# Usage: bench/pictures.sh DB [RHEAP]      (RHEAP default: build/cli/rheap)
#   A 30-million-allocation database: bench/convert-bench.sh writes one of 10 million for
#   20000000 events; build/tests/convert/convert_bench_gen DIR/rip-9999 4 60000000 and
#   rheap convert give one of about 30 million.
set -eu
DB=$1
RHEAP=${2:-build/cli/rheap}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/rheap-pictures.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

echo "database: $DB, $(sqlite3 "$DB" 'SELECT count(*) FROM allocations') allocations, $(du -h "$DB" | cut -f1)"
run() {
    label=$1
    shift
    /usr/bin/time -f "%e %M %U %S" "$@" 2>"$WORK/time" >/dev/null || { cat "$WORK/time" >&2; exit 1; }
    tail -n 1 "$WORK/time" | awk -v l="$label" '{ printf "%-44s %7.2f s  %6.1f MiB resident  %5.2f s CPU\n", l, $1, $2 / 1024, $3 + $4 }'
}
run "export collapsed" "$RHEAP" export collapsed "$DB" -o "$WORK/leaked.folded"
run "export pprof" "$RHEAP" export pprof "$DB" -o "$WORK/heap.pb.gz"
run "report --html" "$RHEAP" report --html -o "$WORK/report.html" "$DB"
echo "page: $(stat -c %s "$WORK/report.html") bytes; pprof: $(stat -c %s "$WORK/heap.pb.gz") bytes"
# Moments: the middle of the first recording, and the range from a quarter to three quarters.
END=$(sqlite3 "$DB" 'SELECT end_ns FROM recording_stats ORDER BY pid, recording LIMIT 1')
AT=$((END / 2 + 1)) FROM=$((END / 4)) TO=$((END * 3 / 4))
run "export collapsed --at $AT" "$RHEAP" export collapsed "$DB" --at "$AT" -o "$WORK/at.folded"
run "export collapsed --from $FROM --to $TO" "$RHEAP" export collapsed "$DB" --from "$FROM" --to "$TO" -o "$WORK/range.folded"
run "export pprof --at $AT" "$RHEAP" export pprof "$DB" --at "$AT" -o "$WORK/at.pb.gz"
run "export pprof --from --to" "$RHEAP" export pprof "$DB" --from "$FROM" --to "$TO" -o "$WORK/range.pb.gz"
run "report" "$RHEAP" report "$DB"
run "report --at" "$RHEAP" report "$DB" --at "$AT"
run "report --from --to" "$RHEAP" report "$DB" --from "$FROM" --to "$TO"
run "report --html --at" "$RHEAP" report --html -o "$WORK/at.html" --at "$AT" "$DB"
run "report --html --from --to" "$RHEAP" report --html -o "$WORK/range.html" --from "$FROM" --to "$TO" "$DB"
echo "checkpoints: $(sqlite3 "$DB" "SELECT count(*) FROM checkpoints") rows, $(sqlite3 "$DB" "SELECT count(*) FROM checkpoint_stacks") per-stack copies, $(sqlite3 "$DB" "SELECT sum(pgsize) FROM dbstat WHERE name IN ('checkpoints', 'checkpoint_stacks', 'checkpoint_stacks_by_stack')") bytes of the database"
ORACLE=${ORACLE:-$(dirname "$RHEAP")/../tests/visual/visual_model_oracle}
if [ "${SKIP_ROWS:-0}" != 1 ] && [ -x "$ORACLE" ]; then
    run "the model from the rows (test oracle)" "$ORACLE" "$DB"
fi
# The page in a browser: with chromium-driver and python3-selenium, the draw and every view's
# answer (page_views.py, median of three loads); with chromium alone, the draw only.
PY=
for p in /usr/bin/python3 python3; do
    if command -v "$p" >/dev/null && "$p" -c 'import selenium' 2>/dev/null; then PY=$p; break; fi
done
if [ -n "$PY" ] && command -v chromedriver >/dev/null && command -v chromium >/dev/null; then
    "$PY" "$(dirname "$0")/page_views.py" "$WORK/report.html" 3
elif command -v chromium >/dev/null; then
    for i in 1 2 3; do
        mkdir -p "$WORK/profile-$i"
        timeout 60 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
            --disable-background-networking --disable-component-update --disable-sync \
            --user-data-dir="$WORK/profile-$i" --dump-dom "file://$WORK/report.html" 2>/dev/null |
            sed -n 's/.*data-drawn-ms="\([0-9]*\)".*/\1/p'
    done | sort -n | awk '{ v[NR] = $1 } END { printf "page drawn in %d ms (median of %d loads in headless chromium)\n", v[int((NR + 1) / 2)], NR }'
fi
