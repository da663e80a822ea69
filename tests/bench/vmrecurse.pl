# SPDX-License-Identifier: GPL-2.0-or-later
# A Perl stack of a known depth for tests/bench/kcost -s perl: rec calls
# itself DEPTH - 1 times, the last call spinning for SECS seconds of wall
# time: DEPTH sub contexts above the main program, one CV (named once).
#   perl vmrecurse.pl SECS DEPTH
use strict;
use warnings;
no warnings 'recursion';
use Time::HiRes qw(clock_gettime CLOCK_MONOTONIC);

sub rec {
	my ($d, $stop) = @_;
	return rec($d - 1, $stop) + 1 if $d > 0;
	my $t = 0;
	while (clock_gettime(CLOCK_MONOTONIC) < $stop) {
		$t += $_ for 0 .. 999;
	}
	return $t;
}

my ($secs, $depth) = @ARGV;
exit(rec($depth - 1, clock_gettime(CLOCK_MONOTONIC) + $secs) >= 0 ? 0 : 1);
