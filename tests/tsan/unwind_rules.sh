#!/bin/bash
# tsan.unwind_rules: the api phase with RHEAP_CHECK_UNWIND=1. The recorder's own rule walk, not
# only libunwind, must take the backtraces under TSan, and agree with libunwind on every one.
#
#   unwind_rules.sh TSAN_THREADS
out=$(RHEAP_CHECK_UNWIND=1 "$1" api 2>&1)
status=$?
printf '%s\n' "$out" | grep 'unwind check' || { printf '%s\n' "$out"; exit 1; }
[ "$status" -eq 0 ] || { printf '%s\n' "$out"; exit 1; }
printf '%s\n' "$out" | grep -Eq 'unwind check: [1-9][0-9]* by rules, [0-9]+ by libunwind, 0 mismatches'
