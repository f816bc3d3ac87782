#!/bin/bash
# settings_test.sh: `rheap run`'s options and librheap's environment accept and refuse exactly
# the same values, because both read them with the same parser (libtrace/src/settings.c). Each
# value is given both ways:
#   - to `rheap run --OPTION VALUE`, which either refuses it before the program starts (status 1,
#     one line naming the option and what it accepts) or records with it;
#   - to librheap preloaded directly with RHEAP_NAME=VALUE, which either ignores it with one
#     "rheap: ignoring" line and records with the default, or records with it silently.
# The recording's config record (rheap dump) must then hold exactly the expected values.
# CMake sets RHEAP (the rheap binary), RHEAP_LIB (librheap.so) and FAMILY (tests/cli/family.c).
set -euo pipefail

# The shared test harness: a fresh temporary directory WORK, removed at exit, and fail().
NAME=settings KIND=cli
. "$(dirname "$0")/../harness.sh"

DEFAULTS="depth=64 sample_ppm=1000000 buffer_kb=64 max_threads=4096 signal=0"

# config FIELD=VALUE...: the config line of a recording made with the defaults but these.
config() {
    local line=" $DEFAULTS" kv
    for kv in "$@"; do
        line=$(sed "s/ ${kv%%=*}=[0-9]*/ $kv/" <<<"$line")
    done
    echo "config$line"
}

# recorded_config DIR: the config line of the one recording in DIR, without its dir= field.
recorded_config() {
    local recs
    recs=$(find "$1" -mindepth 1 -maxdepth 2 -type d -name 'rip-*')
    [ "$(wc -l <<<"$recs")" -eq 1 ] && [ -n "$recs" ] || fail "expected one recording in $1: $recs"
    "$RHEAP" dump "$recs/process.rip" | sed -n 's/^\(config .*\) dir=.*/\1/p'
}

# agree OPTION ENV VALUE WANT: WANT is "bad" or the config line (see config) both sides record.
agree() {
    local option=$1 env=$2 value=$3 want=$4 expected=${5:-} status=0 got
    rm -rf run.db recs rec
    mkdir recs rec
    # rheap run
    "$RHEAP" run -q --keep --dir recs -o run.db "$option" "$value" -- "$FAMILY" exit 0 \
        >run.out 2>run.err </dev/null || status=$?
    if [ "$want" = bad ]; then
        [ "$status" -eq 1 ] || fail "rheap run $option '$value': status $status, expected 1"
        got=$(cat run.err)
        [ "$got" = "rheap: error: $option $value: expected $expected" ] ||
            fail "rheap run $option '$value' said: $got"
        [ -z "$(ls recs)" ] || fail "rheap run $option '$value' started the program"
    else
        [ "$status" -eq 0 ] || fail "rheap run $option '$value': status $status: $(cat run.err)"
        grep -q '^rheap: recordings kept in ' run.err || fail "rheap run $option '$value': $(cat run.err)"
        got=$(recorded_config recs)
        [ "$got" = "$want" ] || fail "rheap run $option '$value' recorded '$got', expected '$want'"
    fi
    # librheap alone
    status=0
    env LD_PRELOAD="$RHEAP_LIB" RHEAP_DIR="$WORK/rec" "$env=$value" "$FAMILY" exit 0 \
        >lib.out 2>lib.err </dev/null || status=$?
    [ "$status" -eq 0 ] || fail "$env='$value': status $status"
    got=$(cat lib.err)
    if [ "$want" = bad ]; then
        [ "$got" = "rheap: ignoring $env=$value: expected $expected" ] ||
            fail "$env='$value': librheap said '$got'"
        want=$(config)
    else
        [ -z "$got" ] || fail "$env='$value': librheap said '$got', expected nothing"
    fi
    got=$(recorded_config rec)
    [ "$got" = "$want" ] || fail "$env='$value' recorded '$got', expected '$want'"
}

FRAMES="a number of frames from 1 to 1024"
FRACTION="a fraction from 0 to 1, like 0.01"
SIGNAL="a signal name like USR2, RTMIN+3, or a number"

for value in 5 05; do
    agree --depth RHEAP_DEPTH "$value" "$(config depth=5)"
done
agree --depth RHEAP_DEPTH 1 "$(config depth=1)"
agree --depth RHEAP_DEPTH 1024 "$(config depth=1024)"
for value in " 5" "5 " "+5" "0" "1025" "" "0x10" "5frames"; do
    agree --depth RHEAP_DEPTH "$value" bad "$FRAMES"
done

agree --sample-rate RHEAP_SAMPLE_RATE 0.01 "$(config sample_ppm=10000)"
agree --sample-rate RHEAP_SAMPLE_RATE .5 "$(config sample_ppm=500000)"
agree --sample-rate RHEAP_SAMPLE_RATE 1. "$(config sample_ppm=1000000)"
agree --sample-rate RHEAP_SAMPLE_RATE 0 "$(config sample_ppm=0)"
agree --sample-rate RHEAP_SAMPLE_RATE 1.000000 "$(config sample_ppm=1000000)"
# Parts per million: the seventh decimal and beyond are dropped.
agree --sample-rate RHEAP_SAMPLE_RATE 0.0000019 "$(config sample_ppm=1)"
for value in 1e-2 " 0.5" "0.5 " 0,5 1.0000001 1.5 -0 +0.5 nan "" .; do
    agree --sample-rate RHEAP_SAMPLE_RATE "$value" bad "$FRACTION"
done

for value in USR2 SIGUSR2 12; do
    agree --signal RHEAP_SIGNAL "$value" "$(config signal=12)"
done
agree --signal RHEAP_SIGNAL RTMIN+3 "$(config signal="$(kill -l RTMIN+3)")"
agree --signal RHEAP_SIGNAL SIGRTMIN+0 "$(config signal="$(kill -l RTMIN)")"
# Empty: no toggle signal, on both sides, without a word.
agree --signal RHEAP_SIGNAL "" "$(config signal=0)"
for value in "RTMIN+ 3" "RTMIN+" "RTMIN+-1" "RTMIN+99" " 12" "12 " usr2 9 19 0 99 NOTASIGNAL; do
    agree --signal RHEAP_SIGNAL "$value" bad "$SIGNAL"
done
# --help's lines for the settings come from the same table: ranges and defaults as enforced above.
"$RHEAP" run --help >help.txt
for line in "  --depth N           most frames kept per backtrace, 1-1024 (default 64)" \
            "  --sample-rate R     fraction of allocations with a backtrace, 0-1 (default 1)" \
            "  --sample-interval N mean bytes between samples, 1-999999999 (default 524288)" \
            "  --off               start with recording off (turn it on with --signal, or"; do
    grep -qxF -- "$line" help.txt || fail "rheap run --help lacks: $line"
done
echo "PASS (settings)"
