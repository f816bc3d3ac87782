# abort() from main while the workers are alive: the recording still converts (status 0 or 3)
# and is consistent; what each thread had not yet written (less than one buffer, 64 KiB of
# records) may be missing. The figures are printed for docs/RELIABILITY.md.
. "$CASES/exits.inc"
exit_case abort 134 bounded
