#!/usr/bin/env python3
"""Checks of sfbpf-top's profiles of Ruby scripts against their source and stackprof.

tests/rbprofile.test runs it; each command prints one line and exits 0 (pass)
or 1 (fail):
  names FOLDED SRC... [-- LABEL...]  every Ruby frame of the SRC files names a
                                    method or block of that file at a line
                                    inside it (a file's own code, <main> and
                                    <class:X>: a line outside every method),
                                    never another's; LABELs each appear; no
                                    frame "[collected iseq]" or "[bad iseq]"
  stackprof FOLDED JSON [MIN] [cfuncs|cfunc-names|under=LABEL]
                                    against stackprof (cpu mode, raw) on the
                                    same run: the innermost Ruby frame's
                                    distribution overlaps by >= MIN (0.85), and
                                    >= 98 % of sfbpf's caller -> callee pairs
                                    (by samples) are pairs stackprof saw;
                                    under=LABEL: the distribution of the
                                    frame LABEL's calls instead (LABEL's
                                    time by callee), what stackprof sees
                                    under YJIT: it samples at the VM's safe
                                    points, which YJIT's code reaches seldom
                                    (at its exits), so its innermost frame is
                                    often a caller of the one running;
                                    cfuncs: C methods in the innermost frames
                                    too (both sides have them), and each C
                                    method sfbpf names one stackprof names
                                    (>= 98 % by samples); cfunc-names: that
                                    last alone (a distribution of fewer
                                    samples than the frames it has is noise)
  root FOLDED MIN                   of the samples with a Ruby frame, the share
                                    whose stack reaches the thread's start
                                    (_start, or a thread's clone) is >= MIN
  has FOLDED LABEL MIN [COMM]       LABEL is the innermost Ruby frame (not a C
                                    method's) of >= MIN of the samples with Ruby
                                    frames (of threads named COMM, if given)
  cfunc FOLDED NAME CALLER MIN      the C method NAME ("Kernel#sleep"), called
                                    by the Ruby frame CALLER, is the innermost
                                    Ruby frame of >= MIN of those samples
  outputs NAME FOLDED RAW OTLP      the pprof and OTLP profiles read back as
                                    folded stacks equal the folded output; OTLP
                                    types Ruby's frames "ruby"
  program FOLDED COMM SRCDIR[:DIR]  a program no test wrote (samples of threads
                                    named COMM...): >= 50 % with Ruby frames,
                                    >= 90 % of those whole, every Ruby frame's
                                    file one under the DIRs (or Ruby's own
                                    <internal:...>) with the line

sfbpf names an iseq by its label, as Ruby's backtraces do ("fib", "block in
sort_rows"), and a method's frame by its owner too (3.1's instance variables,
3.3's fields; not 3.2), as 3.4's
backtraces do ("Calc#fib", "Calc.leaf_add", "Object#outer"; a block by its
method's, "block in Sorter#sort_rows"); stackprof names methods and blocks by their owners ("Calc#fib",
"block in Sorter#sort_rows"): compared on the label, and each owner sfbpf
gives must be one stackprof gives (names: the one the source's class or
module around the def says). A method written in C is named as stackprof
names it ("Enumerable#sort_by", file "<cfunc>"), its own native frames after
it, where the walk runs in bpf_loop() and the table of IDs was found; the
chained form sends none, and there stackprof's are left out of its stacks,
their samples going to the Ruby frame that called them. stackprof (Ruby
3.1's rb_profile_frames) names a block called back from C by its method
(sort_by's block as "Sorter#sort_rows"), never "block in": both sides'
blocks are compared as their methods.
"""
import collections
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# The folded output's reader, and the pprof/OTLP read-back: the node checks'.
import v8profile_check as v8  # noqa: E402
import vmframes_check as vm  # noqa: E402
from v8profile_check import stacks  # noqa: E402

# A Ruby frame as sfbpf names it: "LABEL (FILE:LINE)" (a script, a Rack
# config, an ERB template compiled to a method, Ruby's built-in code).
FRAME = re.compile(r"^(.*) \(([^()]+\.(?:rb|ru|erb)|<internal:[a-z_]+>):(\d+)\)$")
# A C method: "Enumerable#sort_by (<cfunc>)".
CFUNC = re.compile(r"^(.*) \(<cfunc>\)$")


def rb_frames(frames, cfuncs=False):
    """The Ruby frames of a stack, outermost first: (label, file, line); C
    methods' (label, "<cfunc>", 0) too if cfuncs."""
    out = []
    for f in frames:
        m = FRAME.match(f)
        if m:
            out.append((m.group(1), m.group(2), int(m.group(3))))
        elif cfuncs:
            m = CFUNC.match(f)
            if m:
                out.append((m.group(1), "<cfunc>", 0))
    return out


def label_of(name):
    """stackprof's name as Ruby's label: the owner left out."""
    prefix = ""
    m = re.match(r"^((?:block \(\d+ levels\) in |block in |rescue in |ensure in )?)(.*)$", name)
    prefix, rest = m.group(1), m.group(2)
    if not rest.startswith("<"):
        rest = re.split(r"[#.]", rest)[-1] if re.search(r"\w[#.]", rest) else rest
    return prefix + rest


BLOCK = re.compile(r"^block (?:\(\d+ levels\) )?in ")
# A method's name with its owner, or a block's with its method's ("block in Calc#fib").
QUALIFIED = re.compile(r"^(?:block (?:\(\d+ levels\) )?in )?([A-Z][\w:]*)([#.])(.+)$")


def methods(path):
    """label -> [(first, last)] line ranges of the file's methods and blocks, each
    method by its name and by its owner's too ("Calc#fib", "Calc.leaf_add", a def
    outside every class "Object#outer")."""
    src = open(path, encoding="utf-8").read().split("\n")
    spans, stack, classes = collections.defaultdict(list), [], []
    for i, line in enumerate(src, 1):
        indent = len(line) - len(line.lstrip())
        c = re.match(r"\s*(?:class|module)\s+([A-Z][\w:]*)\s*(?:<.*)?$", line)
        m = re.match(r"\s*def\s+(self\.)?([\w?!=\-+@<>\[\]]+)", line)
        if c:
            classes.append((c.group(1), indent))
        elif m and not re.search(r"\bend\s*$", line):
            owner = "::".join(k for k, _ in classes) or "Object"
            stack.append((m.group(2), i, indent, owner + ("." if m.group(1) else "#")))
        elif stack and re.match(r"\s*end\b", line) and indent == stack[-1][2]:
            name, first, _, owner = stack.pop()
            spans[name].append((first, i))
            spans[owner + name].append((first, i))
        elif classes and re.match(r"\s*end\b", line) and indent == classes[-1][1]:
            classes.pop()
    spans["__nlines"] = [(1, len(src))]
    return spans


def cmd_names(folded, rest):
    if "--" in rest:
        srcs, want = rest[: rest.index("--")], rest[rest.index("--") + 1:]
    else:
        srcs, want = rest, []
    known = {os.path.basename(s): methods(s) for s in srcs}
    seen, bad, total, unnamed = set(), [], 0, collections.Counter()
    for frames, n in stacks(folded):
        # The fixtures' code lives as long as they run: no frame of theirs is
        # ever collected, and none unreadable.
        for f in frames:
            if f in ("[collected iseq] ()", "[bad iseq] ()"):
                unnamed[f] += n
        for label, f, line in rb_frames(frames):
            spans = known.get(os.path.basename(f))
            if spans is None:
                continue
            total += n
            seen.add(label)
            owner = re.sub(r"^(block (\(\d+ levels\) )?in |rescue in |ensure in )", "", label)
            if owner.startswith("<"):  # <main>, <class:Calc>: outside every method
                ok = 1 <= line <= spans["__nlines"][0][1] and not any(
                    a < line <= b for k, r in spans.items() if k != "__nlines" for a, b in r)
                ok = ok or (owner != "<main>" and line <= spans["__nlines"][0][1])
            else:
                ok = any(a <= line <= b for a, b in spans.get(owner, []))
            if not ok:
                bad.append("%s at %s:%d" % (label, f, line))
    missing = [w for w in want if w not in seen]
    if not total:
        print("no Ruby frame of %s" % " ".join(known))
        return 1
    if bad or missing or unnamed:
        print("%d frames: wrong %s; missing %s; unnamed %s"
              % (total, sorted(set(bad))[:5], missing, dict(unnamed)))
        return 1
    print("%d frames of %d labels, each inside its method, none unnamed; %s all there"
          % (total, len(seen), " ".join(want) or "nothing asked"))
    return 0


def stackprof_stacks(path, full=False, cfuncs=False):
    """stackprof's raw stacks: [labels outermost first] (full: its names as they
    are) and counts, C methods left out unless cfuncs."""
    d = json.load(open(path))
    frames, raw, i = d["frames"], d["raw"], 0
    while i < len(raw):
        n = raw[i]
        ids, count = raw[i + 1:i + 1 + n], raw[i + 1 + n]
        i += n + 2
        names, run = [], []
        for fid in ids:
            f = frames.get(str(fid), {})
            if f.get("file") in ("", None):  # GC's pseudo-frames
                continue
            if f.get("file") == "<cfunc>":
                # A C function's block (an ifunc: sort_by's, given to each)
                # has a frame Ruby's profiling API names by the C method
                # that made it, outside it with only C methods between:
                # Ruby's backtraces and sfbpf show none.
                if not cfuncs or f["name"] in run:
                    continue
                run.append(f["name"])
            else:
                run = []
            names.append(f["name"] if full else label_of(f["name"]))
        yield names, count


def method_of(label):
    """The method a block's label names: "block (2 levels) in fib" -> fib."""
    return re.sub(r"^(block (\(\d+ levels\) )?in )", "", label)


def cut_under(stack, label):
    """stack cut after the frame that label's outermost frame calls; None without label."""
    if label is None:
        return stack
    if label not in stack:
        return None
    return stack[:stack.index(label) + 2]


def cmd_stackprof(folded, path, minimum="0.85", cfuncs=""):
    under = cfuncs[len("under="):] if cfuncs.startswith("under=") else None
    cf = cfuncs == "cfuncs"
    names = cf or cfuncs == "cfunc-names"
    ours_all = [([method_of(label_of(f[0])) for f in rb_frames(frames, cf)], n)
                for frames, n in stacks(folded)]
    theirs_all = [([method_of(x) for x in names], n)
                  for names, n in stackprof_stacks(path, cfuncs=cf)]
    _, pairs = vm.innermost_and_pairs(ours_all)
    _, ref = vm.innermost_and_pairs(theirs_all)
    ours, _ = vm.innermost_and_pairs((cut_under(s, under), n) for s, n in ours_all)
    theirs, _ = vm.innermost_and_pairs((cut_under(s, under), n) for s, n in theirs_all)
    if cf:
        # Pairs without C methods on either side: a C function's block
        # (an ifunc) called from elsewhere is a frame of stackprof's named
        # by the C method that made it (Method#to_proc), which no rule can
        # tell from a C method's own.
        _, pairs = vm.innermost_and_pairs(
            ([method_of(label_of(f[0])) for f in rb_frames(frames)], n)
            for frames, n in stacks(folded))
        _, ref = vm.innermost_and_pairs(
            ([method_of(x) for x in names], n) for names, n in stackprof_stacks(path))
    said = " (%sat least %s)" % ("the callees of %s, " % under if under else "", minimum)
    verdict = vm.judge_reference(ours, pairs, theirs, set(ref), "stackprof",
                                 said=said, min_overlap=float(minimum))
    if names:
        verdict = judge_cfuncs(folded, path) or verdict
    # Owners (but 3.2): each method's qualified name one stackprof gave.
    named = collections.Counter()
    for frames, n in stacks(folded):
        for f in rb_frames(frames):
            if QUALIFIED.match(f[0]):
                named[f[0]] += n
    if not named:
        print("(no owner named: Ruby 3.2)")
        return verdict
    known = {x for names, _ in stackprof_stacks(path, full=True) for x in names}
    # A block by its method's name: stackprof on 3.1 names a block's frame as its
    # method ("Sorter#sort_rows": rb_profile_frames() gives the method entry).
    unknown = {k: v for k, v in named.items()
               if k not in known and BLOCK.sub("", k) not in known}
    share = 1 - sum(unknown.values()) / sum(named.values())
    print("owners: %.3f of %d qualified frames by a name stackprof gives (at least 0.98)%s"
          % (share, sum(named.values()),
             ": not %s" % sorted(unknown)[:4] if unknown else ""))
    return verdict if share >= 0.98 else 1


def judge_cfuncs(folded, path):
    """Each C method sfbpf names in at least 1 % of its C methods' frames is
    one stackprof names (a rarer one may fall between stackprof's samples):
    0, or 1 (none named, or strangers)."""
    ours = collections.Counter()
    for frames, n in stacks(folded):
        for label, f, _ in rb_frames(frames, True):
            if f == "<cfunc>":
                ours[label] += n
    known = {x for names, _ in stackprof_stacks(path, full=True, cfuncs=True) for x in names}
    if not ours:
        print("C methods: none named (stackprof names %d)" % len(known))
        return 1
    judged = {k: v for k, v in ours.items() if v >= 0.01 * sum(ours.values())}
    unknown = {k: v for k, v in judged.items() if k not in known}
    share = 1 - sum(unknown.values()) / sum(judged.values())
    print("C methods: %.3f of %d frames of the %d methods named in >= 1 %% (of %d, e.g. %s)"
          " by a name stackprof gives (at least 0.98)%s"
          % (share, sum(judged.values()), len(judged), len(ours),
             ", ".join(k for k, _ in ours.most_common(3)),
             ": not %s" % sorted(unknown)[:4] if unknown else ""))
    return 0 if share >= 0.98 else 1


def cmd_cfunc(folded, name, caller, minimum):
    """NAME, a C method called by CALLER, is the innermost Ruby frame of >= MIN."""
    total = hit = 0
    for frames, n in stacks(folded):
        rb = rb_frames(frames, True)
        if not rb:
            continue
        total += n
        if rb[-1][0] == name and rb[-1][1] == "<cfunc>" and len(rb) > 1 and rb[-2][0] == caller:
            hit += n
    share = hit / total if total else 0
    print("%s called by %s innermost in %.3f of %d samples with Ruby frames (at least %s)"
          % (name, caller, share, total, minimum))
    return 0 if total and share >= float(minimum) else 1


def cmd_root(folded, minimum):
    return vm.root(folded, minimum, rb_frames, "Ruby")


def cmd_has(folded, label, minimum, comm=None):
    return vm.has(folded, label, minimum, rb_frames, "Ruby", comm)


def cmd_program(folded, comm, srcdir):
    return vm.program(folded, comm, srcdir, rb_frames, "Ruby", (".rb", ".ru", ".erb"),
                      known_file=lambda f: f.startswith("<internal:"))


def cmd_outputs(name, folded, raw, otlp):
    ok = v8.outputs_equal(name, folded, raw, otlp, lambda f: bool(rb_frames(f)), "ruby", "Ruby",
                          "ruby")
    return 0 if ok else 1


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "names":
        return cmd_names(args[0], args[1:])
    cmds = {"stackprof": cmd_stackprof, "root": cmd_root, "has": cmd_has, "cfunc": cmd_cfunc,
            "outputs": cmd_outputs, "program": cmd_program}
    if cmd in cmds:
        return cmds[cmd](*args)
    print("unknown command %s" % cmd)
    return 2


if __name__ == "__main__":
    sys.exit(main())
