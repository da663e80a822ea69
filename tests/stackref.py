# SPDX-License-Identifier: GPL-2.0-or-later
"""What the judges of sfbpf-top's stacks against perf's (unwind_check.py,
realworld_check.py) read alike: their inputs, the [truncated] marker and the
comm of a folded line, unnamed frames, and perf script output as
unwind_check.py reads it (its names are sfbpf's: PLT stubs as objdump names
them, symbol versions dropped; tests/arm64/perf_folded.py reads it so too).
realworld_check.py reads perf script its own way (parse_perf: the threads of
some comms only, a line it does not know skipped rather than an error, the
objects named gathered for their symbol tables)."""
import bisect
import os
import re
import subprocess

TRUNCATED = "[truncated]"
# Where the kernel's addresses start (x86-64's higher half).
KERNEL_START = 0xffff800000000000


class InputError(Exception):
    pass


def out(line):
    print(line, flush=True)


def read(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError as e:
        raise InputError(str(e))


def named(frame):
    """A frame with a symbol, usable as an edge end: not None (perf's
    [unknown]) nor a marker/[MODULE] ([libc.so.6], [unknown], [python3.11])."""
    return frame is not None and not (frame.startswith("[") and frame.endswith("]"))


def split_folded(frames):
    """The part of a folded line before its count -> (comm, truncated, the
    frames after the comm and the [truncated] marker, root first)."""
    frames = frames.split(";")
    comm, frames = frames[0], frames[1:]
    truncated = bool(frames) and frames[0] == TRUNCATED
    if truncated:
        frames = frames[1:]
    return comm, truncated, frames


# ---------------------------------------------------------------- perf script

PERF_FRAME_RE = re.compile(r"^\s+([0-9a-fA-F]+)\s+(.*?)\s+\(([^()]*)\)\s*$")
PERF_FRAME_NODSO_RE = re.compile(r"^\s+([0-9a-fA-F]+)\s+(\S.*?)\s*$")


def norm_sym(sym):
    """Drops what perf adds to a name: +0xOFF, symbol versions (@@GLIBC_2.34)."""
    sym = re.sub(r"\+0x[0-9a-fA-F]+$", "", sym)
    sym = re.sub(r"@@?[A-Z][A-Za-z0-9_.]*$", "", sym)
    return sym


PLT_STUB_RE = re.compile(r"^([0-9a-fA-F]+) <([^>]+@plt)>:")
_plt_cache = {}


def elf_plt(dso):
    """(symbol addresses, sorted PLT stub starts, their names) of an ELF file
    (nm and objdump; empty if unreadable)."""
    if dso in _plt_cache:
        return _plt_cache[dso]
    syms, stubs = {}, []
    try:
        for args in (["nm", "--defined-only", dso], ["nm", "-D", "--defined-only", dso]):
            r = subprocess.run(args, capture_output=True, text=True)
            for line in r.stdout.splitlines():
                f = line.split()
                if len(f) == 3:
                    syms.setdefault(norm_sym(f[2]), int(f[0], 16))
        r = subprocess.run(["objdump", "-d", "-j", ".plt", "-j", ".plt.got", "-j", ".plt.sec", dso],
                           capture_output=True, text=True)
        stubs = sorted((int(m.group(1), 16), m.group(2)) for m in
                       map(PLT_STUB_RE.match, r.stdout.splitlines()) if m)
    except OSError:
        pass
    _plt_cache[dso] = (syms, [a for a, _ in stubs], [n for _, n in stubs])
    return _plt_cache[dso]


def plt_stub(sym, dso):
    """The PLT stub perf named SYM+0xOFF in DSO, or None. perf 6.1 names
    no .plt.got or .plt.sec entry: a sample there gets the symbol before it
    (_init+0x30), where objdump (and sfbpf, and later perf) say leaf@plt."""
    m = re.match(r"^(.*)\+0x([0-9a-fA-F]+)$", sym)
    if not m or m.group(1).endswith("@plt") or not dso.startswith("/") or not os.path.isfile(dso):
        return None
    syms, starts, names = elf_plt(dso)
    base = syms.get(norm_sym(m.group(1)))
    if base is None:
        return None
    addr = base + int(m.group(2), 16)
    i = bisect.bisect_right(starts, addr) - 1
    # Stubs are at most 16 bytes; the last one ends its section.
    if i < 0 or addr >= starts[i] + 16 or (i + 1 < len(starts) and addr >= starts[i + 1]):
        return None
    return names[i]


def parse_perf_script(text):
    """perf script output -> list of stacks, each a list of user frames from
    the root to the leaf; a frame without a symbol is None."""
    stacks, cur, in_sample = [], None, False
    for line in text.splitlines():
        if not line.strip():
            if cur is not None:
                stacks.append(cur)
            cur, in_sample = None, False
            continue
        if not line[0].isspace():
            if cur is not None:
                stacks.append(cur)
            cur, in_sample = [], True
            continue
        if not in_sample:
            continue
        m = PERF_FRAME_RE.match(line) or PERF_FRAME_NODSO_RE.match(line)
        if not m:
            raise InputError("perf script: unexpected line %r" % line[:200])
        addr = int(m.group(1), 16)
        sym = m.group(2)
        dso = m.group(3) if m.re is PERF_FRAME_RE else ""
        if addr >= KERNEL_START or dso.startswith("[kernel") or dso == "[guest.kernel.kallsyms]":
            continue
        if sym in ("[unknown]", ""):
            cur.append(None)
        else:
            cur.append(plt_stub(sym, dso) or norm_sym(sym))
    if cur is not None:
        stacks.append(cur)
    # perf prints the leaf first.
    return [list(reversed(s)) for s in stacks]
