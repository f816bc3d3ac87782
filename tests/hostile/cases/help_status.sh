# What rheap says about run's exit status is what run does: the program's status, except when
# the program succeeded and its recording could not be converted (then convert's, e.g. 4).
NO_LZ4_CHECK=1
"$RHEAP" --help >help.out 2>&1 || true
tr '\n' ' ' <help.out | grep -q "run exits with the program's status, or convert's when the program succeeded but its recording could not be converted" ||
    { cat help.out >&2; fail "rheap --help does not say when run's status is convert's"; }
"$RHEAP" run --help >run-help.out 2>&1 || true
tr '\n' ' ' <run-help.out | grep -q "when its recording could not be converted, the status of rheap convert" ||
    { cat run-help.out >&2; fail "rheap run --help does not say when its status is convert's"; }
