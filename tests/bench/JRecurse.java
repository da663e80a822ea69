// SPDX-License-Identifier: GPL-2.0-or-later
// A Java stack of a known depth for tests/bench/kcost -j: rec calls itself
// DEPTH - 1 times, the last call spinning for SECS seconds of wall time. The
// calls are made hot first, so that the JIT has compiled rec before the
// spin: the stack is the compiled frames a busy service's are, its root
// JRecurse.main interpreted. kcost runs it with rec not inlined into itself,
// so that DEPTH calls are DEPTH compiled frames.
//   java -cp DIR JRecurse SECS DEPTH
public class JRecurse {
	static volatile long sink;

	static long rec(int d, long end) {
		if (d > 0)
			return rec(d - 1, end) + 1;
		long t = 0;
		while (System.nanoTime() < end)
			for (int k = 0; k < 1000; k++)
				t += k;
		return t;
	}

	public static void main(String[] args) {
		long end = System.nanoTime() + (long) (Double.parseDouble(args[0]) * 1e9);
		int depth = Integer.parseInt(args[1]);
		for (int i = 0; i < 20_000; i++)
			sink += rec(depth - 1, 0);
		sink += rec(depth - 1, end);
	}
}
