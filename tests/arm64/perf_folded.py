#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""perf script output -> folded stacks and sfbpf-style counters, so that
tests/unwind_check.py can check perf's own stacks as it checks sfbpf-top's.
Used by tests/arm64/unwind.test in its perf-only mode (ARM64_PERF_ONLY=1, or
no arm64 sfbpf-top yet): one perf record stands in for sfbpf-top and a second
one, on the same process at the same time, is the reference. That proves the
harness (fixtures, guest, perf's DWARF unwinding, the checks), not sfbpf.

  perf_folded.py --perf P --comm C --folded OUT --stats OUT [--roots _start,...]

The parsing is unwind_check.py's (parse_perf_script, from tests/stackref.py).
A stack whose outermost frame is not one of --roots is marked [truncated] and
counted as stop.no_row; the others as stop.outermost. Unnamed frames become
[unknown].
"""
import argparse
import collections
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import unwind_check  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--perf", required=True)
    ap.add_argument("--comm", required=True)
    ap.add_argument("--folded", required=True)
    ap.add_argument("--stats", required=True)
    ap.add_argument("--roots", default="_start,thread_start,clone3,__clone3,clone,__clone")
    args = ap.parse_args()
    roots = set(args.roots.split(","))
    try:
        stacks = unwind_check.parse_perf_script(unwind_check.read(args.perf))
    except unwind_check.InputError as e:
        print("perf_folded: %s" % e, file=sys.stderr)
        return 2
    folded = collections.Counter()
    stats = {k: 0 for k in unwind_check.STATS}
    for s in stacks:
        if not s:
            continue
        frames = [f if f is not None else "[unknown]" for f in s]
        outermost = frames[0] in roots
        key = ";".join([args.comm] + ([] if outermost else [unwind_check.TRUNCATED]) + frames)
        folded[key] += 1
        stats["stop.outermost" if outermost else "stop.no_row"] += 1
        stats["frames"] += len(frames)
    n = sum(folded.values())
    stats.update(samples=n, emitted=n, received=n)
    with open(args.folded, "w", encoding="utf-8") as fh:
        for key, count in sorted(folded.items()):
            fh.write("%s %d\n" % (key, count))
    with open(args.stats, "w", encoding="utf-8") as fh:
        for k, v in stats.items():
            fh.write("sfbpf: stat %s %d\n" % (k, v))
    return 0


if __name__ == "__main__":
    sys.exit(main())
