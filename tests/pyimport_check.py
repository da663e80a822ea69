#!/usr/bin/env python3
"""Judge sfbpf's Python frames of import-heavy processes (folded, sfbpf-top
-p of tests/fixtures/pyimport.py's processes). Prints PASS/FAIL lines.

    pyimport_check.py NAME FOLDED [LINES]

- NAME-freed: of the samples with Python frames (200 at least), 1 % at most
  carry a "[freed code]" frame: a module's body is named although its code
  object is freed by the time the sample is read.
- NAME-module-lines (with LINES, "3,4"): of the samples whose innermost
  Python frame is a generated module's body (m_NNNN.py, 100 at least),
  95 % name it "<module> (m_NNNN.py:L)" with L one of LINES, the lines its
  loop runs on.
"""
import re
import sys

MIN = 200
PYFRAME = re.compile(r"^(.*) \(([^()]+?)(?::(\d+))?\)$")


def main():
    name, folded = sys.argv[1], sys.argv[2]
    lines = {int(x) for x in sys.argv[3].split(",")} if len(sys.argv) > 3 else None
    with_py = freed = mods = mods_ok = 0
    for line in open(folded):
        stack, _, count = line.rstrip("\n").rpartition(" ")
        if not stack:
            continue
        n = int(count)
        frames = [f for f in stack.split(";")[1:] if not f.endswith("_[k]")]
        py = [m for m in map(PYFRAME.match, frames) if m]
        # "[freed code] ()": the marker, with an empty file
        gone = any(f.startswith("[freed code]") for f in frames)
        if not py and not gone:
            continue
        with_py += n
        freed += n if gone else 0
        inner = py[-1] if py else None
        if lines and inner and re.fullmatch(r"m_\d{4}\.py", inner.group(2)):
            mods += n
            ok = inner.group(1) == "<module>" and int(inner.group(3) or 0) in lines
            mods_ok += n if ok else 0
    ok = with_py >= MIN and freed * 100 <= with_py
    print("%s: %s-freed: %d of %d samples with Python frames carry [freed code] "
          "(%.2f %%, need 1 %% at most, %d samples at least)"
          % ("PASS" if ok else "FAIL", name, freed, with_py, 100.0 * freed / max(with_py, 1), MIN))
    good = ok
    if lines:
        ok = mods >= 100 and mods_ok >= 0.95 * mods
        print("%s: %s-module-lines: %d of %d samples in a generated module's body named "
              "<module> at its loop's lines %s (need 95 %%, 100 samples at least)"
              % ("PASS" if ok else "FAIL", name, mods_ok, mods, sorted(lines)))
        good &= ok
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
