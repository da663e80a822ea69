"""Python frames in sfbpf's folded stacks, as the checks that compare stacks
with perf's (realworld_check.py, unwind_check.py) read them. sfbpf's kernel
walk puts the Python frames one call of the eval loop runs where that call's
native frame stood; perf sees the native frame only. Those checks judge the
native stack, so each run of Python frames stands for the one eval frame it
replaced; the Python frames themselves are judged against the interpreter's
own view (pywalk.test)."""
import re

# "qualname (file.py:line)", "<module> (<frozen importlib._bootstrap>:1176)",
# "[freed code] ()": what folded names a Python frame. Its file is Python's
# (.py, <frozen x>, <string>): JavaScript's ("fib (burn.js:3)", "Module._load
# (loader:1091)") stand where their own code ran, not in an eval loop's place.
PY_FRAME = re.compile(r".* \((?:<[^<>]*>|[^ ()<>]*\.pyx?|)(?::[0-9]+)?\)$")
# The native frame each run of Python frames stands in for.
PY_EVAL = "_PyEval_EvalFrameDefault"


def native_frames(frames):
    """frames (user frames, root first) with each run of Python frames
    replaced by the eval frame it stands in for."""
    out = []
    run = False
    for f in frames:
        if PY_FRAME.fullmatch(f):
            if not run:
                out.append(PY_EVAL)
            run = True
        else:
            out.append(f)
            run = False
    return out
