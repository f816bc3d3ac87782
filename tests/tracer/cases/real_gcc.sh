# gcc compiling and linking a tiny C file: gcc runs cc1, as, collect2 and ld, each in its own
# process with its own recording; every one is consistent, and the compiled program behaves
# the same.
[ -x "${CC:-}" ] || skip "gcc not found"
cat >tiny.c <<'C'
#include <stdio.h>
#include <stdlib.h>
int main(void)
{
    int *v = malloc(10 * sizeof *v);
    long sum = 0;
    for (int i = 0; i < 10; i++)
        sum += v[i] = i * i;
    printf("sum %ld\n", sum);
    free(v);
    return 0;
}
C
real_program "$CC" -O1 tiny.c -o tiny_traced
STATUS=0
./tiny_traced >tiny.out || STATUS=$?
expect_status tiny 0
has_line tiny.out "sum 285"
exes=$(for d in $(recordings); do tally summary "$d" | sed -n 's/^process .* exe=\([^ ]*\) .*/\1/p'; done | sort -u)
# Debian names the tools with the target triplet (x86_64-linux-gnu-as, ...-ld.bfd).
for prog in gcc cc1 as collect2 ld; do
    grep -Eqx "(.*-)?$prog([.-].*)?" <<<"$exes" || fail "no recording of $prog among: $(echo $exes)"
done
