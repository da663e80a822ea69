#!/usr/bin/env python3
"""The worker's Python stacks as perf sees them, in pyburn.py's truth form.

    pyperf_truth.py PERF_SCRIPT > TRUTH

PERF_SCRIPT is `perf script -F comm,ip,sym` of a process run with -X perf
(CPython 3.12+): each Python call runs through a trampoline of its own, which
the process's perf map names "py::QUALNAME:FILE". A sample is its comm on
one line, then one frame a line ("ADDR SYMBOL"), innermost first, and a
blank line. Prints one line per sample of the worker thread (comm "pywork")
with Python frames: "QUALNAME (basename)" joined by ";", outermost first,
as tests/pywalk_check.py reads a truth.
"""
import os
import sys


def main():
    comm, chain = None, []

    def flush():
        if comm == "pywork" and chain:
            print(";".join(reversed(chain)))

    for line in open(sys.argv[1], errors="replace"):
        if not line.strip():
            flush()
            comm, chain = None, []
        elif not line[0].isspace():
            comm = line.split()[0]
        else:
            parts = line.split(None, 1)
            sym = parts[1].strip() if len(parts) > 1 else ""
            if sym.startswith("py::"):
                qual, _, path = sym[4:].rpartition(":")
                chain.append("%s (%s)" % (qual, os.path.basename(path)))
    flush()


if __name__ == "__main__":
    main()
