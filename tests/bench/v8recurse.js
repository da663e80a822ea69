// SPDX-License-Identifier: GPL-2.0-or-later
// A JavaScript stack of a known depth for tests/bench/kcost -n: rec calls
// itself DEPTH - 1 times, the last call spinning for SECS seconds of wall
// time. The calls are made hot first, so that V8 has optimised rec before
// the spin: the stack is the optimised frames a busy service's are. kcost
// runs it with the optimising compilers' inlining off, so that DEPTH calls
// are DEPTH frames.
//   node [--no-turbo-inlining] v8recurse.js SECS DEPTH
'use strict';
let sink = 0;

function rec(d, end)
{
	if (d > 0) {
		return rec(d - 1, end) + 1;
	}
	let t = 0;
	while (Date.now() < end) {
		for (let k = 0; k < 1000; k++) {
			t += k;
		}
	}
	return t;
}

const end = Date.now() + Number(process.argv[2]) * 1000;
const depth = Number(process.argv[3]);
for (let i = 0; i < 20000; i++) {
	sink += rec(depth - 1, 0);
}
sink += rec(depth - 1, end);
process.exitCode = sink > 0 ? 0 : 1;
