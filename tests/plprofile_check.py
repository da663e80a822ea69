#!/usr/bin/env python3
"""Checks of sfbpf-top's profiles of Perl scripts against their source and Devel::NYTProf.

tests/plprofile.test runs it; each command prints one line and exits 0 (pass)
or 1 (fail):
  names FOLDED SRC... [-- SUB...]  every Perl frame of the SRC files names a
                                  sub of that file at a line inside it (an
                                  anonymous sub's: a line of the file; the
                                  program's own code, main::RUNTIME: a line
                                  outside every sub), never another's; SUBs
                                  (full names) each appear
  nytprof FOLDED PROFILE          against Devel::NYTProf on the same run
                                  (tests/fixtures/plnytprof.pl's output: its
                                  call stacks by exclusive time, then its
                                  XSUBs): the innermost sub's distribution
                                  overlaps by >= 0.85, and >= 98 % of sfbpf's
                                  caller -> callee pairs are pairs it saw
  root FOLDED MIN                 of the samples with a Perl frame, the share
                                  whose stack reaches the thread's start is
                                  >= MIN
  has FOLDED SUB MIN              SUB is the innermost Perl frame of >= MIN of
                                  the samples with Perl frames
  outputs NAME FOLDED RAW OTLP    the pprof and OTLP profiles read back as
                                  folded stacks equal the folded output; OTLP
                                  types Perl's frames "perl"
  program FOLDED COMM DIR[:DIR]   a program no test wrote (samples of threads
                                  named COMM...): >= 50 % with Perl frames,
                                  >= 90 % of those whole, every Perl frame's
                                  file one of the DIRs' (by name) with its line

Devel::NYTProf times subs entered by the interpreter's entersub: a sub called
back without it (sort's named comparator, List::Util's block: MULTICALL) is
never seen entered, its time is its caller's (CORE:sort, first); XSUBs and
opcodes are its subs too, never Perl frames to sfbpf (their own native
frames stand there). So on its side XSUBs are left out (their time to the
Perl sub that called them), and on sfbpf's a sub NYTProf never saw entered
goes to its caller (said, and at most a quarter of the samples). Samples
in NYTProf's own code (its hooks around each sub call) count for the
innermost sub, whose exclusive time NYTProf measures with them in it. The
program's own code (main::RUNTIME) is no sub to NYTProf's stacks: left out
on both sides; its compile phase (BEGIN blocks) ran before sfbpf-top did.
"""
import collections
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import v8profile_check as v8  # noqa: E402
import vmframes_check as vm  # noqa: E402
from v8profile_check import stacks  # noqa: E402

# A Perl frame as sfbpf names it: "NAME (FILE:LINE)".
FRAME = re.compile(r"^(\S+) \(([^()]+):(\d+)\)$")
MAIN = "main::RUNTIME"


def pl_frames(frames):
    """The Perl frames of a stack, outermost first: (name, file, line)."""
    out = []
    for f in frames:
        m = FRAME.match(f)
        if m and ("::" in m.group(1) or m.group(1) in ("(eval)", "(require)")):
            out.append((m.group(1), m.group(2), int(m.group(3))))
    return out


def subs(path):
    """name -> [(first, last)] line ranges of the file's named subs (by indentation)."""
    src = open(path, encoding="utf-8").read().split("\n")
    spans, open_subs = collections.defaultdict(list), []
    for i, line in enumerate(src, 1):
        indent = len(line) - len(line.lstrip())
        m = re.match(r"\s*sub\s+(\w+)\s*\{(.*)$", line)
        if m:
            if "}" in m.group(2):
                spans[m.group(1)].append((i, i))
            else:
                open_subs.append((m.group(1), i, indent))
        elif open_subs and re.match(r"\s*\}", line) and indent == open_subs[-1][2]:
            name, first, _ = open_subs.pop()
            spans[name].append((first, i))
    spans["__nlines"] = [(1, len(src))]
    return spans


def cmd_names(folded, rest):
    if "--" in rest:
        srcs, want = rest[: rest.index("--")], rest[rest.index("--") + 1:]
    else:
        srcs, want = rest, []
    known = {os.path.basename(s): subs(s) for s in srcs}
    seen, bad, total = set(), [], 0
    for frames, n in stacks(folded):
        for name, f, line in pl_frames(frames):
            spans = known.get(os.path.basename(f))
            if spans is None:
                continue
            total += n
            seen.add(name)
            short = name.split("::")[-1]
            nlines = spans["__nlines"][0][1]
            if name == MAIN:
                ok = 1 <= line <= nlines and not any(
                    a < line <= b for k, r in spans.items() if k != "__nlines" for a, b in r)
            elif short == "__ANON__" or name in ("(eval)", "(require)"):
                ok = 1 <= line <= nlines
            else:
                ok = any(a <= line <= b for a, b in spans.get(short, []))
            if not ok:
                bad.append("%s at %s:%d" % (name, f, line))
    missing = [w for w in want if w not in seen]
    if not total:
        print("no Perl frame of %s" % " ".join(known))
        return 1
    # A sample in the few instructions of a sub's return between its context's
    # pop and the caller's statement put back may read the callee's line for
    # the caller (seen once in 5,500 frames on 5.42): at most 1 in 1,000.
    if len(bad) > total / 1000 or missing:
        print("%d frames: wrong %s; missing %s" % (total, sorted(set(bad))[:5], missing))
        return 1
    if bad:
        print("%d frames of %d subs, each inside its sub but %d (a return's window: %s); "
              "%s all there" % (total, len(seen), len(bad), sorted(set(bad))[:2],
                                " ".join(want) or "nothing asked"))
        return 0
    print("%d frames of %d subs, each inside its sub; %s all there"
          % (total, len(seen), " ".join(want) or "nothing asked"))
    return 0


def nytprof_profile(path):
    """NYTProf's stacks (names outermost first, XSUBs left out) with their
    exclusive times, and the names it saw entered."""
    lines = open(path, encoding="utf-8", errors="replace").read().split("\n")
    cut = lines.index("--")
    xsubs = set(x for x in lines[cut + 1:] if x)
    out, seen = [], set()
    for line in lines[:cut]:
        if not line.strip():
            continue
        st, t = line.rsplit(" ", 1)
        names = [re.sub(r"\[.*$", "", x) for x in st.split(";")]
        if any("::BEGIN" in x or x.endswith("::END") for x in names):
            continue  # the compile phase, or the end: not what sfbpf-top saw
        seen.update(names)
        names = [x for x in names if x not in xsubs and re.sub(r"\[.*$", "", x) not in xsubs]
        out.append((names, int(t)))
    return out, seen


def cmd_nytprof(folded, path):
    ref, seen = nytprof_profile(path)
    ours, pairs = collections.Counter(), collections.Counter()
    folded_in = total = 0
    in_ref = 0
    for frames, n in stacks(folded):
        names = [f[0] for f in pl_frames(frames) if f[0] != MAIN]
        if not names:
            continue
        # Inside NYTProf's own code (its hooks at each sub's entry and exit,
        # between the timer reads that measure the sub): NYTProf's exclusive
        # time of the innermost sub holds it, so it counts for that sub here
        # too. Left out, a sub of many short calls (fib: 0.09 of NYTProf's
        # time, 0.02-0.03 of the samples left) read as a third of itself,
        # and the overlap moved with the machine's load (0.844-0.892).
        last = max(i for i, f in enumerate(frames) if FRAME.match(f))
        if any("NYTProf" in f for f in frames[last + 1:]):
            in_ref += n
        total += n
        kept = [x for x in names if x in seen]
        folded_in += n * (kept != names)
        if not kept:
            continue
        ours[kept[-1]] += n
        for a, b in zip(kept, kept[1:]):
            pairs[(a, b)] += n
    theirs, ref_pairs = vm.innermost_and_pairs(ref)
    share_in = folded_in / total if total else 0
    return vm.judge_reference(
        ours, pairs, theirs, set(ref_pairs), "NYTProf",
        "; %.3f of sfbpf's samples hold a sub NYTProf never saw entered (a callback of C), "
        "given to its caller (at most 0.25); %d of them in NYTProf's own code (the sub's, as it "
        "times them)" % (share_in, in_ref),
        min_ref=1, ok_too=share_in <= 0.25)


def cmd_root(folded, minimum):
    return vm.root(folded, minimum, pl_frames, "Perl")


def cmd_has(folded, name, minimum, comm=None):
    return vm.has(folded, name, minimum, pl_frames, "Perl", comm)


def cmd_outermost(folded, name, minimum, comms):
    """Of the COMMS' (","-separated) stacks with Perl frames, >= MINIMUM with NAME
    outermost but for evals (an ithread's: the sub it was started with, in the eval
    threads.pm calls it in); unless NAME is the program's own code (main::RUNTIME),
    none has it (the first interpreter's alone)."""
    want, tot, ok, mains = comms.split(","), 0, 0, 0
    for frames, n in stacks(folded):
        pl = pl_frames(frames)
        if frames[0] not in want or not pl:
            continue
        tot += n
        subs = [f for f in pl if f[0] != "(eval)"]
        ok += n if subs and subs[0][0] == name else 0
        mains += n if any(f[0] == MAIN for f in pl) else 0
    share = ok / tot if tot else 0
    print("%s outermost in %.3f of %d samples of %s with Perl frames (at least %s); %d with %s"
          % (name, share, tot, comms, minimum, mains, MAIN))
    return 0 if tot and share >= float(minimum) and (name == MAIN or not mains) else 1


def cmd_program(folded, comm, dirs):
    return vm.program(folded, comm, dirs, pl_frames, "Perl", ("",))


def cmd_outputs(name, folded, raw, otlp):
    ok = v8.outputs_equal(name, folded, raw, otlp, lambda f: bool(pl_frames(f)), "perl", "Perl",
                          "perl")
    return 0 if ok else 1


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "names":
        return cmd_names(args[0], args[1:])
    cmds = {"nytprof": cmd_nytprof, "root": cmd_root, "has": cmd_has, "outputs": cmd_outputs,
            "program": cmd_program, "outermost": cmd_outermost}
    if cmd in cmds:
        return cmds[cmd](*args)
    print("unknown command %s" % cmd)
    return 2


if __name__ == "__main__":
    sys.exit(main())
