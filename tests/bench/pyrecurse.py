# A CPython stack of a known depth for tests/bench/pycost: DEPTH distinct
# functions (f_0 calls f_1 ... calls f_DEPTH-1), the last spinning, for SECS
# seconds of wall time. Each is its own code object: a sample holds DEPTH + 1
# Python frames (with <module>), DEPTH + 1 code objects to look up.
#   python3 pyrecurse.py SECS DEPTH
import sys
import time

secs, depth = float(sys.argv[1]), int(sys.argv[2])
end = time.monotonic() + secs
src = []
for i in range(depth - 1):
    src.append("def f_%d():\n    return f_%d()\n" % (i, i + 1))
src.append("def f_%d():\n    t = 0\n    while time.monotonic() < end:\n"
           "        for k in range(1000):\n            t += k\n    return t\n" % (depth - 1))
exec("".join(src))
sys.setrecursionlimit(depth + 100)
f_0()
