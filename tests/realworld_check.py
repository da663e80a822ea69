#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Scores sfbpf-top's stacks of one stock program against perf's stacks of the
same process in the same window (tests/realworld.test). Prints one
"PASS: name: figures" or "FAIL: name: figures" line per check, then indented
details (the worst stacks and edges). Exit status 0 once the checks ran, 2 on
bad usage or unreadable input.

  realworld_check.py score --name N --folded F --perf P --comm C[,C...]
        --roots R[,R...] [--stats S] [--root DIR] [--min 300]
        [--root-ratio 0.95] [--root-slack 0.01] [--max-truncated 0.02]
        [--edge-ratio 0.99] [--max-beyond 0.2] [--no-edges] [--fp]
        [--expect-frame NAME ...]
        [--pprof PB --symbols SUBSTR ...]
  realworld_check.py selftest

Both sides are filtered to the threads whose comm is one of --comm (sfbpf-top
ran system-wide: its folded lines carry the comm, not the PID; each program
runs under a comm no other process has). The checks:

  N: samples    at least --min samples on each side (else nothing is judged).
  N: root       the share of sfbpf's samples whose user stack holds one of
                --roots is >= perf's share minus --root-slack AND >=
                --root-ratio. With --user-stacks, on both sides only the
                samples with a user frame count: one taken in the kernel
                with no user stack left to read (a process's exit, after its
                address space is gone) is no unwinding, and a per-CPU clock
                samples exits that perf's per-task clock, started anew in
                each child, mostly misses.
  N: truncated  the share of sfbpf's samples marked [truncated] is <=
                --max-truncated.
  N: edges      of the caller->callee edges between named user frames of
                sfbpf's stacks (each stack's distinct edges, weighted by its
                count), >= --edge-ratio are edges perf saw. Names are equated
                by address first: every symbol of one address in one module
                (the objects perf names, their .symtab/.dynsym and separate
                debug files; mangled, demangled and demangled-without-
                parameters forms) is one function, so __GI___libc_malloc =
                malloc = __libc_malloc. Unnamed frames are dropped on both
                sides first ([libc.so.6] vs [unknown]), so an edge spans
                them. An edge whose callee perf never saw with a named caller
                (perf's unwinding always stopped at it: no CFI for a JIT
                trampoline, stack copy exhausted) cannot be judged: it and the
                edges above it in that stack are counted as beyond perf's
                reach and reported, not scored; but at most --max-beyond of
                all edge-samples may be set aside so, and at least --min must
                be compared (the line says both counts); --no-edges: not
                judged (a run perf cannot unwind, judged in another run
                of the same program). With --fp (perf -g), sfbpf's
                gp -> p -> leaf agrees when perf saw gp -> leaf: perf's
                frame-pointer walk from a leaf without a frame of its own (an
                assembly routine, a prologue) skips the leaf's caller p.
  N: frame F    (--expect-frame) some sfbpf stack holds a frame named F (F|G: either)
                (or starting with F when F ends with '*').
  N: symbols S (--symbols S, with --pprof: sfbpf-top's pprof output of the
                same run) every sampled address in a mapping whose file holds
                S is named as that file's symbol tables say (the function
                covering it), for >= --edge-ratio of the frame-samples there:
                the object was read from the process's own root (a container)
                and symbolized. Addresses no symbol covers are not judged.

Roots are matched after equating names, and with C++ parameters removed, so
"node::Start" matches "node::Start(int, char**)".
"""
import argparse
import collections
import functools
import os
import re
import subprocess
import sys

import pbdecode
from pyfold import PY_EVAL, native_frames
from stackref import KERNEL_START, TRUNCATED, InputError, named, out, read, split_folded
from statsparse import parse_stats


# ---------------------------------------------------------------- inputs

class Stack:
    """One folded line or one perf sample: user frames root first (real
    frames: what perf script --no-inline shows), and the functions inlined
    into them (sfbpf's "_[i]" frames)."""
    __slots__ = ("comm", "truncated", "user", "count", "inlined")

    def __init__(self, comm, truncated, user, count, inlined=()):
        self.comm, self.truncated, self.user, self.count = comm, truncated, user, count
        self.inlined = inlined


def parse_folded(text, comms):
    stacks, bad = [], []
    for n, line in enumerate(text.splitlines(), 1):
        m = re.fullmatch(r"(.*\S) ([0-9]+)", line)
        if not m:
            bad.append("line %d: %r" % (n, line[:160]))
            continue
        comm, truncated, frames = split_folded(m.group(1))
        if comms and comm not in comms:
            continue
        user, inlined = [], []
        for f in frames:
            if f.endswith("_[k]"):
                break
            if f.endswith("_[i]"):
                inlined.append(f[:-4])
            else:
                user.append(f)
        stacks.append(Stack(comm, truncated, native_frames(user), int(m.group(2)), inlined))
    return stacks, bad


PERF_HDR = re.compile(r"^(\S.*?)\s+([0-9]+)\s*$")
PERF_FRAME = re.compile(r"^\s+([0-9a-f]+) (.*) \((.*)\)\s*$")


def parse_perf(text, comms):
    """perf script -F comm,tid,ip,sym,dso: (stacks, {dso paths})."""
    stacks, dsos = [], set()
    for block in re.split(r"\n\s*\n", text):
        lines = block.strip("\n").splitlines()
        if not lines:
            continue
        m = PERF_HDR.match(lines[0])
        if not m:
            continue
        comm = m.group(1)
        if comms and comm not in comms:
            continue
        user = []
        for line in lines[1:]:
            fm = PERF_FRAME.match(line)
            if not fm:
                continue
            addr, sym, dso = int(fm.group(1), 16), fm.group(2), fm.group(3)
            if dso.startswith("[kernel") or addr >= KERNEL_START:
                continue
            if dso.startswith("/"):
                dsos.add(dso)
            user.append(None if sym == "[unknown]" else sym)
        user.reverse()
        stacks.append(Stack(comm, False, user, 1))
    return stacks, dsos


# ---------------------------------------------------------------- names at one address

VERSION = re.compile(r"@@?[A-Za-z0-9_.]+$")
QUALIFIERS = re.compile(r"(\s+(const|volatile|&|&&))+$")


def strip_version(name):
    """__libc_start_main@@GLIBC_2.34 -> __libc_start_main."""
    # Most names have none: no regex for them (node's 460,000 a score).
    return VERSION.sub("", name) if "@" in name else name


def strip_params(name):
    """node::Start(int, char**) -> node::Start; foo() const -> foo. Names
    without a parameter list come back as they are."""
    if ")" not in name:
        return name
    s = name.rstrip()
    s = QUALIFIERS.sub("", s)
    if not s.endswith(")"):
        return name
    depth = 0
    for i in range(len(s) - 1, -1, -1):
        c = s[i]
        if c == ")":
            depth += 1
        elif c == "(":
            depth -= 1
            if depth == 0:
                head = s[:i].rstrip()
                # operator() and (anonymous namespace) keep their parentheses.
                if not head or head.endswith("operator") or head.endswith("::"):
                    return name
                return head
    return name


# A JavaScript frame: sfbpf's label, and node's perf map's (its code kinds' prefixes).
JS_SFBPF = re.compile(r"^(.*) \([^():]+:\d+\)$")
JS_PERF_MAP = re.compile(r"^(?:JS|LazyCompile|Function|InterpretedFunction|Script|Eval):[*~^+-]?(\S*)")
JS_INTERPRETER = "Builtins_InterpreterEntryTrampoline"


class Aliases:
    """Union-find over names: every symbol of one address in one module."""

    def __init__(self):
        self.parent = {}
        # canon()'s answers: a profile names the same few thousand functions
        # a million times (clang's). Forgotten at each union.
        self.known = {}

    def find(self, x):
        p = self.parent.setdefault(x, x)
        while p != self.parent[p]:
            self.parent[p] = self.parent[self.parent[p]]
            p = self.parent[p]
        self.parent[x] = p
        return p

    def union(self, names):
        names = [n for n in names if n]
        if not names:
            return
        self.known.clear()
        # The representative: a readable name (not mangled), the shortest.
        roots = sorted({self.find(n) for n in names}, key=lambda n: (n.startswith("_Z"), len(n), n))
        for r in roots[1:]:
            self.parent[r] = roots[0]

    def canon(self, name):
        """A frame's function: its class's representative. A JavaScript
        frame is one token, "js": sfbpf names every one from V8's metadata
        ("fib (burn.js:3)"), inlined ones too, where perf names optimised
        code by node's perf map ("JS:*fib /tmp/burn.js:3:13", the functions
        inlined into it not apart) and an interpreted frame by the
        interpreter's trampoline. What is judged is the native stack around
        them."""
        if name in self.known:
            return self.known[name]
        self.known[name] = c = self._canon(name)
        return c

    def _canon(self, name):
        if not named(name):
            return None
        if JS_SFBPF.match(name) or JS_PERF_MAP.match(name) or name.startswith(JS_INTERPRETER):
            return "js"
        n = strip_version(name)
        if n in self.parent:
            return self.find(n)
        p = strip_params(n)
        if p in self.parent:
            return self.find(p)
        return n


def elf_function_syms(path):
    """{(table, serial): (value, name, size)} of the defined functions of one
    file, its .symtab's and its .dynsym's, as binutils' nm reads them (SysV
    form: a type column, FUNC or IFUNC's number 10). readelf --syms says the
    same, but it looks up each dynamic symbol's version one by one: node's
    75,000 took it 8 s of the 24 its score took in make check; nm, 1.3."""
    syms = {}
    for table, extra in ((".symtab", []), (".dynsym", ["-D"])):
        try:
            text = subprocess.run(["nm", "--format=sysv", "--defined-only"] + extra + [path],
                                  capture_output=True, text=True, errors="replace",
                                  timeout=300).stdout
        except (OSError, subprocess.SubprocessError):
            continue
        for i, line in enumerate(text.splitlines()):
            cols = line.rsplit("|", 6)
            if len(cols) != 7:
                continue
            name, value, _, typ, size = (c.strip() for c in cols[:5])
            if typ not in ("FUNC", "<OS specific>: 10") or not name:
                continue
            try:
                value, size = int(value, 16), int(size or "0", 16)
            except ValueError:
                continue
            if value:
                syms[(table, i)] = (value, name, size)
    return syms


@functools.lru_cache(maxsize=None)
def function_symbols(path):
    """{(table, index): (value, name, size, demangled name or None)} of the
    defined functions of one file: nm once a table, the C++ names through
    one c++filt (nm --demangle a second time costs node's 150,000 symbols
    their parse again)."""
    syms = elf_function_syms(path)
    mangled = sorted({strip_version(n) for _, n, _ in syms.values() if n.startswith("_Z")})
    plain = {}
    if mangled:
        try:
            out = subprocess.run(["c++filt", "--no-verbose"], input="\n".join(mangled) + "\n",
                                 capture_output=True, text=True, errors="replace",
                                 timeout=300).stdout.split("\n")
        except (OSError, subprocess.SubprocessError):
            out = []
        if len(out) >= len(mangled):
            plain = dict(zip(mangled, out))
    result = {}
    for key, (value, name, size) in syms.items():
        base = strip_version(name)
        d = plain.get(base) if base.startswith("_Z") else base
        result[key] = (value, name, size, d)
    return result


def build_id(path):
    try:
        text = subprocess.run(["readelf", "-n", path], capture_output=True, text=True,
                              errors="replace", timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"Build ID: ([0-9a-f]+)", text)
    return m.group(1) if m else None


def debug_files(path, roots):
    """Separate debug files of PATH by build-id, under each of ROOTS."""
    bid = build_id(path)
    found = []
    if bid and len(bid) > 2:
        for r in roots:
            f = "%s/usr/lib/debug/.build-id/%s/%s.debug" % (r, bid[:2], bid[2:])
            if os.path.isfile(f):
                found.append(f)
    return found


def module_aliases(aliases, path, roots):
    """Unites the names of each address of one module (and its debug files)."""
    files = [path] + debug_files(path, roots)
    by_addr = collections.defaultdict(set)
    for f in files:
        for value, name, _, d in function_symbols(f).values():
            names = by_addr[value]
            names.add(strip_version(name))
            if d:
                names.add(d)
                names.add(strip_params(d))
    for names in by_addr.values():
        aliases.union(names)
    return sum(len(v) for v in by_addr.values())


def host_path(dso, root):
    """Where to read an object perf names: in the container root first."""
    if root and os.path.isfile(root + dso):
        return root + dso
    return dso if os.path.isfile(dso) else None


def load_aliases(dsos, root):
    aliases, notes = Aliases(), []
    roots = [root, ""] if root else [""]
    for d in sorted(dsos):
        if d.startswith("/tmp/perf-") or d.endswith(".map"):
            continue
        p = host_path(d, root)
        if not p:
            notes.append("cannot read %s" % d)
            continue
        module_aliases(aliases, p, roots)
    return aliases, notes


# ---------------------------------------------------------------- the checks

def canon_user(stack, aliases):
    return [aliases.canon(f) for f in stack.user]


def root_share(stacks, canon_roots, aliases):
    """(samples holding a root, all samples)."""
    hit = total = 0
    for s in stacks:
        total += s.count
        if reaches(s, canon_roots, aliases):
            hit += s.count
    return hit, total


def reaches(s, canon_roots, aliases):
    """The stack holds a root, as a frame or inlined into one."""
    return (any(f in canon_roots for f in canon_user(s, aliases) if f) or
            any(aliases.canon(f) in canon_roots for f in s.inlined))


def short(frames, limit=12):
    """a;b;...;y;z for a report, repeated frames folded."""
    out_, prev, n = [], None, 0
    for f in list(frames) + [object()]:
        if f == prev:
            n += 1
            continue
        if prev is not None:
            out_.append(prev if n == 1 else "%s*%d" % (prev, n))
        prev, n = f, 1
    if len(out_) > limit:
        out_ = out_[:3] + ["..."] + out_[-(limit - 4):]
    return ";".join(str(x) for x in out_)


def perf_edge_sets(perf_stacks, aliases):
    edges, callees = set(), set()
    for s in perf_stacks:
        named_ = [f for f in canon_user(s, aliases) if f]
        for a, b in zip(named_, named_[1:]):
            edges.add((a, b))
            callees.add(b)
    return edges, callees


def edge_agreement(stacks, perf_stacks, aliases, fp_reference=False):
    """(agree, total, beyond, {bad edge: weight}) over sfbpf's edges.
    fp_reference: perf walked frame pointers, so in a sample taken where the
    leaf had no frame of its own (a frameless assembly routine, a prologue),
    perf's chain skips the leaf's caller: sfbpf's ...;gp;p;leaf shows there as
    gp -> leaf, and a p that only ever calls frameless leaves is never seen
    by perf at all. So gp -> p and p -> leaf agree when perf saw gp -> leaf:
    the stack without p is perf's."""
    pedges, pcallees = perf_edge_sets(perf_stacks, aliases)
    agree = total = beyond = 0
    bad = collections.Counter()
    for s in stacks:
        named_ = [f for f in canon_user(s, aliases) if f]
        # From the leaf up: past an edge perf cannot see, nothing is judged.
        cut = None
        for i in range(len(named_) - 2, -1, -1):
            e = (named_[i], named_[i + 1])
            if e not in pedges and e[1] not in pcallees:
                cut = i
                break
        leaf_named = bool(s.user) and named(s.user[-1])
        skip_ok = (fp_reference and leaf_named and len(named_) >= 3 and
                   (named_[-3], named_[-1]) in pedges)
        seen = set()
        for i in range(len(named_) - 1):
            e = (named_[i], named_[i + 1])
            if e in seen:
                continue
            seen.add(e)
            if cut is not None and i <= cut:
                beyond += s.count
                continue
            total += s.count
            if e in pedges or (skip_ok and i >= len(named_) - 3):
                agree += s.count
            else:
                bad[e] += s.count
    return agree, total, beyond, bad


def pct(a, b):
    return 100.0 * a / b if b else 0.0


def report(name, ok, why, details=()):
    out("%s: %s: %s" % ("PASS" if ok else "FAIL", name, why))
    for d in details:
        out("    " + d)


def score_edges(name, args, stacks, perf_stacks, aliases):
    """The edges check (see the module's doc)."""
    agree, etotal, beyond, bad = edge_agreement(stacks, perf_stacks, aliases, args.fp)
    frac = agree / etotal if etotal else 0.0
    # What sampling alone costs: perf's odd samples against its even ones.
    fa, ft, _, _ = edge_agreement(perf_stacks[0::2], perf_stacks[1::2], aliases, args.fp)
    aside = beyond / (etotal + beyond) if etotal + beyond else 0.0
    why = ("%.2f%% of %d compared edge-samples are edges perf saw (need >= %.2f%% of >= %d);"
           " %d of %d (%.1f%%) set aside as beyond perf's reach (at most %.0f%%);"
           " perf's halves agree %.2f%%") % (
        100 * frac, etotal, 100 * args.edge_ratio, args.min, beyond, etotal + beyond,
        100 * aside, 100 * args.max_beyond, pct(fa, ft))
    details = ["not seen by perf (%d): %s -> %s" % (n, a, b) for (a, b), n in bad.most_common(5)]
    ok = etotal >= args.min and frac >= args.edge_ratio and aside <= args.max_beyond
    if etotal < args.min:
        why += "; fewer than %d comparable" % args.min
    if aside > args.max_beyond:
        why += "; too much set aside to judge"
    report(name + ": edges", ok, why, details if not ok else details[:2])


def score(args):
    comms = set(args.comm.split(","))
    stacks, bad_lines = parse_folded(read(args.folded), comms)
    perf_stacks, dsos = parse_perf(read(args.perf), comms)
    stats = parse_stats(read(args.stats)) if args.stats else {}
    name = args.name
    if bad_lines:
        report(name + ": output", False, "%d folded lines do not parse" % len(bad_lines), bad_lines[:3])
    n_sf = sum(s.count for s in stacks)
    n_pf = len(perf_stacks)
    ok = n_sf >= args.min and n_pf >= args.min
    report(name + ": samples", ok, "sfbpf %d, perf %d samples of comm %s (need %d each)" % (
        n_sf, n_pf, args.comm, args.min))
    if not ok:
        return
    aliases, notes = load_aliases(dsos, args.root)
    for n in notes:
        out("    note: " + n)
    roots = [r for r in args.roots.split(",") if r]
    canon_roots = set()
    for r in roots:
        canon_roots.add(aliases.canon(r))
        canon_roots.add(aliases.canon(strip_params(r)))
    canon_roots.discard(None)

    # root
    judged, pjudged = stacks, perf_stacks
    if args.user_stacks:
        judged = [s for s in stacks if s.user]
        pjudged = [s for s in perf_stacks if s.user]
        if not judged or not pjudged:
            report(name + ": root", False, "no sample with a user frame on one side", [])
            return
    hit, total = root_share(judged, canon_roots, aliases)
    phit, ptotal = root_share(pjudged, canon_roots, aliases)
    share, pshare = hit / total, phit / ptotal
    need = max(args.root_ratio, pshare - args.root_slack)
    why = "sfbpf %.2f%% (%d/%d) reach %s; perf %.2f%% (%d/%d); need >= %.2f%%" % (
        100 * share, hit, total, "/".join(roots), 100 * pshare, phit, ptotal, 100 * need)
    details = []
    if share < need:
        miss = collections.Counter()
        for s in judged:
            if not reaches(s, canon_roots, aliases):
                miss[((TRUNCATED + ";") if s.truncated else "") + short(s.user)] += s.count
        details += ["sfbpf stack without a root (%d): %s" % (n, k) for k, n in miss.most_common(4)]
        outer = collections.Counter(s.user[0] if s.user else "(no user frame)" for s in judged
                                    for _ in range(s.count)
                                    if not reaches(s, canon_roots, aliases))
        details.append("outermost frames of those: " +
                       ", ".join("%s=%d" % kv for kv in outer.most_common(6)))
    report(name + ": root", share >= need, why, details)

    # truncated
    trunc = sum(s.count for s in stacks if s.truncated)
    why = "sfbpf %.2f%% (%d/%d) [truncated]; need <= %.2f%%" % (
        pct(trunc, total), trunc, total, 100 * args.max_truncated)
    details = []
    if trunc:
        tops = collections.Counter()
        for s in stacks:
            if s.truncated:
                tops[s.user[0] if s.user else "(no user frame)"] += s.count
        details.append("outermost frame of truncated stacks: " +
                       ", ".join("%s=%d" % kv for kv in tops.most_common(6)))
    bad_trunc = trunc > args.max_truncated * total
    reasons = {k: v for k, v in stats.items() if k.startswith("stop.") and v}
    if reasons and bad_trunc:
        details.append("stop reasons (this run, whole system): " +
                       " ".join("%s=%d" % kv for kv in sorted(reasons.items(), key=lambda kv: -kv[1])))
    report(name + ": truncated", not bad_trunc, why, details)

    if not args.no_edges:
        score_edges(name, args, stacks, perf_stacks, aliases)

    # expected frames
    # NAME|NAME: any of them (V8 names optimized code "JS:*f" from node 20,
    # "LazyCompile:*f" before: Debian 12's node 18).
    for want in args.expect_frame or []:
        alts = [(a[:-1], True) if a.endswith("*") else (a, False) for a in want.split("|")]

        def hit(f):
            return any(f.startswith(w) if pre else f == w for w, pre in alts)

        n = sum(s.count for s in stacks if any(hit(f) for f in s.user))
        ex = [f for s in stacks for f in s.user if hit(f)][:1]
        report("%s: frame %s" % (name, want), n > 0, "%d of %d samples hold it%s" % (
            n, total, (" (e.g. %s)" % ex[0]) if ex else ""))

    # symbols: sfbpf's names of the frames in those objects, address by address
    for sub in args.symbols or []:
        if not args.pprof:
            raise InputError("--symbols needs --pprof")
        check_symbols(name, sub, args, comms, aliases)


# ---------------------------------------------------------------- symbols, address by address

def pb_fields(buf):
    """pbdecode.fields, its errors the input's."""
    try:
        yield from pbdecode.fields(buf)
    except pbdecode.WireError as e:
        raise InputError("pprof: %s" % e)


def read_pprof(path):
    """{"samples": [(count, [loc ids], {label: str})], "locs": {id: (map id, addr,
    [function ids])}, "maps": {id: (start, limit, offset, file)}, "funcs": {id: name}}."""
    import gzip
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as e:
        raise InputError(str(e))
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    strings, samples, locs, maps, funcs = [], [], {}, {}, {}
    raw_samples = []
    for f, wt, v in pb_fields(data):
        if f == 6:
            strings.append(v.decode("utf-8", "replace"))
        elif f == 2:
            raw_samples.append(v)
        elif f == 3:
            m = dict.fromkeys((1, 2, 3, 4, 5), 0)
            for ff, _, vv in pb_fields(v):
                if ff in m:
                    m[ff] = vv
            maps[m[1]] = (m[2], m[3], m[4], m[5])
        elif f == 4:
            lid = mid = addr = 0
            fids = []
            for ff, _, vv in pb_fields(v):
                if ff == 1:
                    lid = vv
                elif ff == 2:
                    mid = vv
                elif ff == 3:
                    addr = vv
                elif ff == 4:
                    for fff, _, vvv in pb_fields(vv):
                        if fff == 1:
                            fids.append(vvv)
            locs[lid] = (mid, addr, fids)
        elif f == 5:
            fid = name = 0
            for ff, _, vv in pb_fields(v):
                if ff == 1:
                    fid = vv
                elif ff == 2:
                    name = vv
            funcs[fid] = name
    for v in raw_samples:
        ids, vals, labels = [], [], {}
        for ff, wt, vv in pb_fields(v):
            if ff == 1:
                ids += pbdecode.packed_ints(wt, vv)
            elif ff == 2:
                vals += pbdecode.packed_ints(wt, vv)
            elif ff == 3:
                k = sv = 0
                num = None
                for f4, _, v4 in pb_fields(vv):
                    if f4 == 1:
                        k = v4
                    elif f4 == 2:
                        sv = v4
                    elif f4 == 3:
                        num = v4
                labels[strings[k]] = strings[sv] if sv else str(num)
        samples.append((vals[0] if vals else 0, ids, labels))
    return {"samples": samples, "locs": locs,
            "maps": {k: (a, b, c, strings[d]) for k, (a, b, c, d) in maps.items()},
            "funcs": {k: strings[v] for k, v in funcs.items()}}


PHDR_LINE = re.compile(r"^\s*LOAD\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+0x[0-9a-f]+\s+0x([0-9a-f]+)")


def load_segments(path):
    """[(file offset, vaddr, file size)] of the PT_LOAD segments."""
    text = subprocess.run(["readelf", "-W", "-l", path], capture_output=True, text=True,
                          errors="replace").stdout
    return [(int(m.group(1), 16), int(m.group(2), 16), int(m.group(3), 16))
            for m in map(PHDR_LINE.match, text.splitlines()) if m]


class SymIndex:
    """The functions of one file (and its debug files) by address."""

    def __init__(self, path, roots):
        syms, self.sizes = {}, {}
        for f in [path] + debug_files(path, roots):
            for value, name, size, d in function_symbols(f).values():
                syms.setdefault(value, set()).update(
                    {strip_version(name)} | ({d, strip_params(d)} if d else set()))
                self.sizes[value] = max(self.sizes.get(value, 0), size)
        self.addrs = sorted(syms)
        self.names = syms

    def covering(self, vaddr):
        """The names of the function holding VADDR, or None."""
        import bisect
        i = bisect.bisect_right(self.addrs, vaddr) - 1
        if i < 0:
            return None
        a = self.addrs[i]
        if vaddr < a + max(self.sizes.get(a, 0), 1):
            return self.names[a]
        return None


def check_symbols(name, sub, args, comms, aliases):
    """Every sampled address of objects whose path holds SUB is named as that
    file's symbol table says (the file as the process sees it: --root)."""
    prof = read_pprof(args.pprof)
    weight = collections.Counter()
    for count, ids, labels in prof["samples"]:
        if labels.get("comm") in comms:
            for lid in ids:
                weight[lid] += count
    files, idx = {}, {}
    good = total = 0
    bad = collections.Counter()
    roots = [args.root, ""] if args.root else [""]
    for lid, w in weight.items():
        mid, addr, fids = prof["locs"].get(lid, (0, 0, []))
        mp = prof["maps"].get(mid)
        if not mp or sub not in mp[3]:
            continue
        start, _, offset, fname = mp
        # In the container's root first: its /usr/lib/.../libc.so.6 is not the host's.
        path = host_path(fname, args.root)
        if not path:
            bad["(cannot read %s)" % fname] += w
            total += w
            continue
        if path not in idx:
            idx[path] = SymIndex(path, roots)
            files[path] = load_segments(path)
        foff = addr - start + offset
        vaddr = None
        for off, va, fsz in files[path]:
            if off <= foff < off + fsz:
                vaddr = foff - off + va
        names = idx[path].covering(vaddr) if vaddr is not None else None
        # The last line is the function the others were inlined into.
        got = prof["funcs"].get(fids[-1], "") if fids else ""
        if names is None:
            continue  # no symbol covers it: any name or none is fine
        total += w
        gotc = aliases.canon(got) if got else None
        if got and (strip_version(got) in names or strip_params(strip_version(got)) in names or
                    (gotc is not None and gotc in {aliases.canon(n) for n in names})):
            good += w
        else:
            bad["%s at %s+%#x, symbol table: %s" % (got or "(unnamed)", os.path.basename(path),
                                                   vaddr, sorted(names, key=len)[0])] += w
    ok = total >= args.min // 10 and good >= args.edge_ratio * total
    why = "%.2f%% of %d frame-samples in %s named as the file's symbol table says (need >= %.2f%%)" % (
        pct(good, total), total, sub, 100 * args.edge_ratio)
    if total < args.min // 10:
        why += "; fewer than %d frame-samples there to judge (do the stacks reach it?)" % (args.min // 10)
    report("%s: symbols %s" % (name, sub), ok, why,
           ["%s (%d)" % (k, n) for k, n in bad.most_common(4)] if not ok else [])


# ---------------------------------------------------------------- self test

def selftest(_args):
    fails = []

    def expect(cond, what):
        if not cond:
            fails.append(what)

    st, bad = parse_folded("p;_start;main;a;b 90\np;[truncated];b 10\nq;main;x 5\n"
                           "p;_start;main;a;c_[i];sys_k_[k] 3\n", {"p"})
    expect(not bad and len(st) == 3 and st[1].truncated and st[2].user == ["_start", "main", "a"] and
           st[2].inlined == ["c"], "folded parse: %r" % [(s.user, s.truncated) for s in st])
    py, _ = parse_folded("p;main;PyEval_EvalCode;<module> (burn.py:9);fib (burn.py:3);"
                         "fib (burn.py:4);PyObject_Call;g (<frozen x>:2);h ();len 4\n", {"p"})
    expect(py[0].user == ["main", "PyEval_EvalCode", PY_EVAL, "PyObject_Call", PY_EVAL, "len"],
           "Python frames as the eval frames they stand in: %r" % py[0].user)
    pl, _ = parse_folded("p;main;perl_run;main::RUNTIME (burn.pl:9);main::fib (burn.pl:3);"
                         "Perl_pp_sort;(require) ();Foo::bar (Foo.pm:2);Perl_pp_add 1\n", {"p"})
    expect(pl[0].user == ["main", "perl_run", "Perl_runops_standard", "Perl_pp_sort",
                          "Perl_runops_standard", "Perl_pp_add"],
           "Perl frames as the ops loop frames they stand in: %r" % pl[0].user)
    cxx, _ = parse_folded("p;v8::internal::(anonymous namespace)::Invoke;operator() 1\n", set())
    expect(cxx[0].user == ["v8::internal::(anonymous namespace)::Invoke", "operator()"],
           "C++ names are not Python frames: %r" % cxx[0].user)
    perf_text = ("p  12 \n\tffffffff81000000 irq ([kernel.kallsyms])\n\t 11 b (/bin/p)\n"
                 "\t 22 a (/bin/p)\n\t 33 [unknown] (/bin/p)\n\t 44 main (/bin/p)\n\n"
                 "V8 Worker  13 \n\t 55 w (/bin/p)\n\n")
    ps, dsos = parse_perf(perf_text, {"p"})
    expect(len(ps) == 1 and ps[0].user == ["main", None, "a", "b"] and dsos == {"/bin/p"},
           "perf parse: %r" % [s.user for s in ps])
    ps2, _ = parse_perf(perf_text, {"V8 Worker"})
    expect(len(ps2) == 1 and ps2[0].user == ["w"], "perf comm with a space")
    expect(strip_params("node::Start(int, char**)") == "node::Start", "strip_params")
    expect(strip_params("f(std::function<void (int)>) const") == "f", "strip_params nested")
    expect(strip_params("v8::internal::(anonymous namespace)::Invoke") ==
           "v8::internal::(anonymous namespace)::Invoke", "strip_params anonymous")
    expect(strip_params("operator()") == "operator()", "strip_params operator()")
    expect(strip_version("__libc_start_main@@GLIBC_2.34") == "__libc_start_main", "strip_version")
    al = Aliases()
    al.union(["__GI___libc_malloc", "malloc", "__libc_malloc"])
    al.union(["free", "__libc_free"])
    expect(al.canon("malloc") == al.canon("__GI___libc_malloc") != al.canon("free"), "aliases")
    expect(al.canon("[libc.so.6]") is None and al.canon("other@GLIBC_2.2.5") == "other", "canon")
    sf, _ = parse_folded("p;main;x;__GI___libc_malloc 50\np;main;[truncated_not];y;free 50\n", set())
    pf, _ = parse_perf("p 1 \n\t1 malloc (/l)\n\t2 x (/p)\n\t3 main (/p)\n\n"
                       "p 1 \n\t1 __libc_free (/l)\n\t2 y (/p)\n\t3 [unknown] (/p)\n\t4 main (/p)\n\n",
                       set())
    agree, total, beyond, bad = edge_agreement(sf, pf, al)
    expect((agree, total, beyond) == (200, 200, 0), "aliased, bridged edges agree: %r" % (
        (agree, total, beyond, bad),))
    wrong, _ = parse_folded("p;main;y;__GI___libc_malloc 10\n", set())
    agree, total, beyond, bad = edge_agreement(wrong, pf, al)
    expect((agree, total) == (10, 20) and bad == {("y", al.canon("malloc")): 10},
           "a wrong edge is counted: %r" % ((agree, total, beyond, bad),))
    deep, _ = parse_folded("p;main;q;r;x;malloc 10\n", set())
    agree, total, beyond, bad = edge_agreement(deep, pf, al)
    expect((agree, total, beyond) == (10, 20, 20) and bad == {("r", "x"): 10},
           "edges above an unseen callee are beyond reach: %r" % (
        (agree, total, beyond, bad),))
    fpl, _ = parse_folded("p;main;w;memmove 10\n", set())
    fpp, _ = parse_perf("p 1 \n\t1 memmove (/p)\n\t2 main (/p)\n\n"
                        "p 1 \n\t1 x (/p)\n\t2 w (/p)\n\t3 main (/p)\n\n", set())
    expect(edge_agreement(fpl, fpp, al)[:2] == (10, 20) and edge_agreement(fpl, fpp, al, True)[:2] == (20, 20),
           "frame-pointer reference: a frameless leaf's skipped caller")
    fpl2, _ = parse_folded("p;main;v;memmove 10\np;main;w;x;memmove 10\n", set())
    expect(edge_agreement(fpl2, fpp, al, True)[:3] == (30, 40, 10),
           "frame-pointer reference: only the leaf's caller may be skipped")
    hit, tot = root_share(sf, {"main"}, al)
    expect((hit, tot) == (100, 100), "root share")
    if fails:
        out("FAIL: realworld_check selftest: %s" % "; ".join(fails))
    else:
        out("PASS: realworld_check selftest")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("score")
    p.add_argument("--name", required=True)
    p.add_argument("--folded", required=True)
    p.add_argument("--perf", required=True)
    p.add_argument("--stats")
    p.add_argument("--comm", required=True)
    p.add_argument("--roots", required=True)
    p.add_argument("--root", default="")
    p.add_argument("--min", type=int, default=300)
    p.add_argument("--root-ratio", type=float, default=0.95)
    p.add_argument("--root-slack", type=float, default=0.01)
    p.add_argument("--max-truncated", type=float, default=0.02)
    p.add_argument("--edge-ratio", type=float, default=0.99)
    p.add_argument("--max-beyond", type=float, default=0.2)
    p.add_argument("--no-edges", action="store_true")
    p.add_argument("--user-stacks", action="store_true")
    p.add_argument("--expect-frame", action="append")
    p.add_argument("--fp", action="store_true")
    p.add_argument("--symbols", action="append")
    p.add_argument("--pprof")
    p.set_defaults(fn=score)
    p = sub.add_parser("selftest")
    p.set_defaults(fn=selftest)
    args = ap.parse_args()
    try:
        args.fn(args)
    except InputError as e:
        print("realworld_check: %s" % e, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
