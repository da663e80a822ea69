#!/usr/bin/env python3
"""Judge sfbpf's Python stacks (folded) against the profiled process's own
sampler (tests/fixtures/pyburn.py's truth). Prints PASS/FAIL lines.

    pywalk_check.py NAME TRUTH FOLDED

- NAME-coverage: of the process's samples (every line of FOLDED: sfbpf-top
  -p), >= 95 % carry Python frames.
- NAME-innermost: over the worker thread's samples (comm "pywork"), the
  distribution of innermost Python functions overlaps the truth's >= 0.85
  (the sum over functions of the smaller share).
- NAME-edges: of the truth's caller->callee pairs of Python frames
  (weighted by the samples they occur in), >= 98 % occur in sfbpf's stacks,
  whose native frames between two Python frames are skipped.
Every check needs 200 samples on each side at least, or fails.
"""
import re
import sys
from collections import Counter

MIN = 200
# "qualname (file.py:line)" or "qualname (file.py)": py-spy's form.
PYFRAME = re.compile(r"^(.*) \(([^()]+?)(?::\d+)?\)$")


def python_frames(frames):
    out = []
    for f in frames:
        if f.endswith("_[k]"):
            continue
        m = PYFRAME.match(f)
        if m:
            out.append("%s (%s)" % (m.group(1), m.group(2)))
    return out


def edges(chain):
    return [(chain[i], chain[i + 1]) for i in range(len(chain) - 1)]


def main():
    name, truth_path, folded_path = sys.argv[1:4]
    truth = [l.rstrip("\n").split(";") for l in open(truth_path) if l.strip()]
    total = with_py = worker = 0
    inner_ours, edge_set = Counter(), set()
    for line in open(folded_path):
        stack, _, count = line.rstrip("\n").rpartition(" ")
        if not stack:
            continue
        n = int(count)
        frames = stack.split(";")
        chain = python_frames(frames[1:])
        total += n
        with_py += n if chain else 0
        if frames[0] != "pywork":
            continue
        worker += n
        if chain:
            inner_ours[chain[-1]] += n
            edge_set.update(edges(chain))
    ok = True

    def verdict(check, good, msg):
        nonlocal ok
        ok &= good
        print("%s: %s-%s: %s" % ("PASS" if good else "FAIL", name, check, msg))

    share = with_py / total if total else 0
    verdict("coverage", total >= MIN and share >= 0.95,
            "%d of %d samples carry Python frames (%.1f %%, need 95 %%, %d samples at least)"
            % (with_py, total, 100 * share, MIN))
    inner_truth = Counter(chain[-1] for chain in truth)
    nt, no = sum(inner_truth.values()), sum(inner_ours.values())
    overlap = 0.0
    if nt and no:
        overlap = sum(min(inner_truth[f] / nt, inner_ours[f] / no)
                      for f in set(inner_truth) | set(inner_ours))
    worst = sorted(set(inner_truth) | set(inner_ours),
                   key=lambda f: -abs(inner_truth[f] / max(nt, 1) - inner_ours[f] / max(no, 1)))[:3]
    verdict("innermost", nt >= MIN and no >= MIN and overlap >= 0.85,
            "overlap %.3f (need 0.85) of %d truth and %d sfbpf samples with Python frames; "
            "largest differences: %s" % (overlap, nt, no, ", ".join(
                "%s %.1f%% vs %.1f%%" % (f, 100 * inner_truth[f] / max(nt, 1),
                                         100 * inner_ours[f] / max(no, 1)) for f in worst)))
    truth_edges = Counter(e for chain in truth for e in set(edges(chain)))
    weight = sum(truth_edges.values())
    found = sum(c for e, c in truth_edges.items() if e in edge_set)
    missing = sorted((e for e in truth_edges if e not in edge_set), key=lambda e: -truth_edges[e])
    frac = found / weight if weight else 0
    verdict("edges", nt >= MIN and no >= MIN and frac >= 0.98,
            "%.2f %% of the truth's caller->callee occurrences in sfbpf's stacks (need 98 %%; "
            "%d distinct, %d missing%s)" % (100 * frac, len(truth_edges), len(missing),
                                           ": " + "; ".join("%s -> %s (%d)" % (a, b, truth_edges[(a, b)])
                                                            for a, b in missing[:3]) if missing else ""))
    if len(sys.argv) > 4:  # a fourth argument: both distributions, for people
        for f in sorted(set(inner_truth) | set(inner_ours), key=lambda f: -inner_ours[f]):
            print("   %-50s truth %5.1f%%  sfbpf %5.1f%%" % (
                f, 100 * inner_truth[f] / max(nt, 1), 100 * inner_ours[f] / max(no, 1)))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
