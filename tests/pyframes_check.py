#!/usr/bin/env python3
"""Judges build/tests/pyframes against the truth, for tests/pyframes.test.

  pyframes_check.py stacks NAME TRUTH OURS
      TRUTH: what tests/fixtures/pystacks.py wrote from sys._current_frames();
      OURS: pyframes PID. Every thread of the truth must be in OURS with the
      same native id (where OURS has one) and the same frames, and OURS must
      have no other thread than the recorder's. At least 4 threads and 30
      frames, naming the fixture's method, nested function, generator,
      coroutine, lambda and recursion.
  pyframes_check.py evals NAME OURS BT
      BT: gdb's "thread apply all bt" of the same process. Per thread, the
      frames OURS marks as the outermost of a native eval call (" *") are as
      many as BT's _PyEval_EvalFrameDefault frames. At least 4 threads and 8
      eval frames.
  pyframes_check.py layout NAME OURS DWARF
      OURS: pyframes --layout PID; DWARF: the same names as gdb computes them
      from the interpreter's DWARF (tests/pylayout.gdb.py). Every field equal,
      at least 20 of them known to both.
One PASS/FAIL line each.
"""
import re
import sys

# Names the fixture's chains must produce (the version's co_name or co_qualname ends so).
WANT = ["inner", "items", "<lambda>", "coroutine_body", "recurse", "build", "method"]


def parse_stacks(path):
    """{ident: (native, [frame lines])}, and the ignored idents."""
    threads, ignore, cur = {}, set(), None
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("ignore "):
                ignore.add(int(line.split()[1]))
            elif line.startswith("thread "):
                _, ident, native = line.split()[:3]
                cur = []
                threads[int(ident)] = (int(native), cur)
            elif line.startswith("  ") and cur is not None:
                cur.append(line.strip())
    return threads, ignore


def stacks(name, truth_path, ours_path):
    truth, ignore = parse_stacks(truth_path)
    ours, _ = parse_stacks(ours_path)
    nframes = sum(len(fr) for _, fr in truth.values())
    names = {l.split(" (")[0].split(".")[-1] for _, fr in truth.values() for l in fr}
    missing = [w for w in WANT if w not in names]
    if len(truth) < 4 or nframes < 30 or missing:
        print("FAIL: %s: truth too small: %d threads, %d frames, missing %s"
              % (name, len(truth), nframes, missing))
        return 1
    bad = []
    for ident, (native, frames) in sorted(truth.items()):
        if ident not in ours:
            bad.append("thread %d missing" % ident)
            continue
        onative, oframes = ours[ident]
        oframes = [l[:-2] if l.endswith(" *") else l for l in oframes]
        if onative and onative != native:
            bad.append("thread %d: native id %d, truth %d" % (ident, onative, native))
        if oframes != frames:
            for i in range(max(len(frames), len(oframes))):
                a = frames[i] if i < len(frames) else "-"
                b = oframes[i] if i < len(oframes) else "-"
                if a != b:
                    bad.append("thread %d frame %d: %r, truth %r" % (ident, i, b, a))
                    break
    extra = set(ours) - set(truth) - ignore
    if extra:
        bad.append("threads not in the truth: %s" % sorted(extra))
    if bad:
        print("FAIL: %s: %s" % (name, "; ".join(bad[:4])))
        return 1
    print("PASS: %s (%d threads, %d frames equal)" % (name, len(truth), nframes))
    return 0


def evals(name, ours_path, bt_path):
    ours = {}
    cur = None
    with open(ours_path) as f:
        for line in f:
            if line.startswith("thread "):
                cur = int(line.split()[1])
                ours[cur] = 0
            elif line.rstrip("\n").endswith(" *") and cur is not None:
                ours[cur] += 1
    gdb = {}
    cur = None
    with open(bt_path) as f:
        for line in f:
            m = re.match(r"Thread \S+ \(Thread (0x[0-9a-f]+)", line)
            if m:
                cur = int(m.group(1), 16)
                gdb[cur] = 0
            elif "_PyEval_EvalFrameDefault" in line and cur is not None:
                gdb[cur] += 1
    both = [t for t in ours if t in gdb]
    total = sum(gdb[t] for t in both)
    if len(both) < 4 or total < 8:
        print("FAIL: %s: too little to judge: %d threads, %d eval frames" % (name, len(both), total))
        return 1
    bad = ["thread %d: %d entry frames, gdb %d eval frames" % (t, ours[t], gdb[t])
           for t in both if ours[t] != gdb[t]]
    if bad or len(both) != len(ours):
        print("FAIL: %s: %s" % (name, "; ".join(bad[:4]) or "threads gdb lacks"))
        return 1
    print("PASS: %s (%d threads, %d eval frames)" % (name, len(both), total))
    return 0


def parse_kv(path):
    out = {}
    with open(path) as f:
        for line in f:
            m = re.match(r"^(\w+)=(-?\d+)$", line.strip())
            if m:
                out[m.group(1)] = int(m.group(2))
    return out


def layout(name, ours_path, dwarf_path):
    ours, dwarf = parse_kv(ours_path), parse_kv(dwarf_path)
    known = [k for k in ours if k in dwarf and dwarf[k] >= 0]
    bad = ["%s=%d, DWARF %d" % (k, ours[k], dwarf.get(k, -1))
           for k in ours if ours[k] != dwarf.get(k, -1)]
    if len(known) < 20 or bad:
        print("FAIL: %s: %d fields known to both; %s" % (name, len(known), "; ".join(bad[:4])))
        return 1
    print("PASS: %s (%d fields equal)" % (name, len(known)))
    return 0


if __name__ == "__main__":
    mode, args = sys.argv[1], sys.argv[2:]
    sys.exit({"stacks": stacks, "evals": evals, "layout": layout}[mode](*args))
