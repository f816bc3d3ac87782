# perl -e with hash and string work, traced and untraced.
[ -x "${PERL:-}" ] || skip "perl not found"
real_program "$PERL" -e '
my %h; $h{"k$_"} = "v" x ($_ % 50) for 1 .. 50000;
my @k = sort keys %h; my $n = 0; $n += length($h{$_}) for @k;
print scalar(@k), " $n $k[0] $k[-1]\n";
'
