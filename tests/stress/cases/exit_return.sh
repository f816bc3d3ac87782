# Return from main with three threads just released: exact counts, off how=exit.
. "$CASES/exits.inc"
exit_case return 0 exact
