#!/usr/bin/perl
# Hash, sort and regex churn for the benchmark, the perl counterpart of pywork.py: each round
# builds word counts in a hash from generated lines split by a regex, sorts the keys by count,
# joins the first 2000, pulls numbers out of the result with a capturing match and rewrites it
# with a substitution; a window of small hashes lives across rounds, so the allocator sees both
# short-lived and longer-lived blocks. Perl as Debian builds it takes every scalar body, string
# buffer and hash array from malloc, so 100 rounds make about 6.6 million allocations (and as
# many frees) in 1.5-2 s.
#
#     perl plwork.pl [rounds]      default 100
#
# Run with PERL_HASH_SEED=0: perl's random hash seed moves both its time and its allocation
# count from run to run.
use strict;
use warnings;

my $rounds = shift // 100;
my @window;
my $total = 0;
for my $r (1 .. $rounds) {
    my %count;
    for my $i (1 .. 4000) {
        my $line = join " ", map { "w${r}_" . (($i * 2654435761 + $_ * 40503) % 5003) } 1 .. 6;
        $count{$_}++ for split /\s+/, $line;
    }
    my @ranked = sort { $count{$b} <=> $count{$a} || $a cmp $b } keys %count;
    my $text = join ",", map { uc } @ranked[0 .. 1999];
    my @num = $text =~ /_(\d+)/g;
    (my $copy = $text) =~ s/W(\d+)_(\d+)/$2-$1/g;
    $total += @num + length($copy);
    push @window, { round => $r, keys => [ map { "k$_" } 1 .. 500 ] };
    shift @window if @window > 8;
}
print "plwork: $rounds rounds, checksum $total\n";
