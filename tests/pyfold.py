"""Python's and Perl's frames in sfbpf's folded stacks, as the checks that
compare stacks with perf's (realworld_check.py, unwind_check.py) read them.
sfbpf's kernel walk puts the frames one call of an eval loop runs where that
call's native frame stood; perf sees the native frame only. Those checks
judge the native stack, so each run of a runtime's frames stands for the one
eval frame it replaced; the frames themselves are judged against the
runtime's own view (pywalk.test, plprofile.test)."""
import re

# "qualname (file.py:line)", "<module> (<frozen importlib._bootstrap>:1176)",
# "[freed code] ()": what folded names a Python frame. Its file is Python's
# (.py, <frozen x>, <string>): JavaScript's ("fib (burn.js:3)", "Module._load
# (loader:1091)") stand where their own code ran, not in an eval loop's place.
PY_FRAME = re.compile(r".* \((?:<[^<>]*>|[^ ()<>]*\.pyx?|)(?::[0-9]+)?\)$")
# The native frame each run of Python frames stands in for.
PY_EVAL = "_PyEval_EvalFrameDefault"
# Perl's: "Package::sub (file.pl:12)", "(eval) (x.pm:3)", "(require) ()",
# "main::RUNTIME (burn.pl:9)", "[bad sub] ()"; its ops loop's native frame.
PL_FRAME = re.compile(r"(?:\S+::\S+|\(eval\)|\(require\)|\[(?:bad|freed) sub\])"
                      r" \((?:[^ ()]*\.(?:pl|pm|t|al|ix):[0-9]+|-e:[0-9]+|)\)$")
PL_EVAL = "Perl_runops_standard"


def native_frames(frames):
    """frames (user frames, root first) with each run of Python (Perl) frames
    replaced by the eval frame it stands in for."""
    out = []
    run = None
    for f in frames:
        # Perl's shape first: "(require) ()" is a Python frame's shape too.
        loop = PL_EVAL if PL_FRAME.fullmatch(f) else PY_EVAL if PY_FRAME.fullmatch(f) else None
        if loop and loop != run:
            out.append(loop)
        elif not loop:
            out.append(f)
        run = loop
    return out
