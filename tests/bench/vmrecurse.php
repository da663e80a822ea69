<?php
// SPDX-License-Identifier: GPL-2.0-or-later
// A PHP stack of a known depth for tests/bench/kcost -s php: rec calls
// itself DEPTH - 1 times, the last call spinning for SECS seconds of wall
// time: DEPTH function frames above the script's, one op array (named once).
//   php vmrecurse.php SECS DEPTH
function rec(int $d, float $stop): int
{
	if ($d > 0) {
		return rec($d - 1, $stop) + 1;
	}
	$t = 0;
	while (hrtime(true) / 1e9 < $stop) {
		for ($k = 0; $k < 1000; $k++) {
			$t += $k;
		}
	}
	return $t;
}

exit(rec((int)$argv[2] - 1, hrtime(true) / 1e9 + (float)$argv[1]) >= 0 ? 0 : 1);
