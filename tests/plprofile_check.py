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
in NYTProf's own code (its hooks around each sub call) are its overhead,
which its report leaves out: left out here too, said. The
program's own code (main::RUNTIME) is no sub to NYTProf's stacks: left out
on both sides; its compile phase (BEGIN blocks) ran before sfbpf-top did.
"""
import collections
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import v8profile_check as v8  # noqa: E402
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


def overlap_of(a, b):
    ta, tb = sum(a.values()), sum(b.values())
    return sum(min(a[k] / ta, b[k] / tb) for k in set(a) | set(b))


def cmd_nytprof(folded, path):
    ref, seen = nytprof_profile(path)
    ours, theirs = collections.Counter(), collections.Counter()
    pairs, ref_pairs = collections.Counter(), set()
    folded_in = total = 0
    in_ref = 0
    for frames, n in stacks(folded):
        names = [f[0] for f in pl_frames(frames) if f[0] != MAIN]
        if not names:
            continue
        # Inside NYTProf's own code (its hooks at each sub's entry and exit):
        # time it leaves out of its report. Said, not judged.
        last = max(i for i, f in enumerate(frames) if FRAME.match(f))
        if any("NYTProf" in f for f in frames[last + 1:]):
            in_ref += n
            continue
        total += n
        kept = [x for x in names if x in seen]
        folded_in += n * (kept != names)
        if not kept:
            continue
        ours[kept[-1]] += n
        for a, b in zip(kept, kept[1:]):
            pairs[(a, b)] += n
    for names, t in ref:
        if not names:
            continue
        theirs[names[-1]] += t
        ref_pairs.update(zip(names, names[1:]))
    if sum(ours.values()) < 100 or not theirs:
        print("too few samples: sfbpf %d with Perl subs, NYTProf %d stacks"
              % (sum(ours.values()), len(ref)))
        return 1
    ov = overlap_of(ours, theirs)
    tot = sum(pairs.values())
    seen_pairs = sum(n for p, n in pairs.items() if p in ref_pairs)
    unseen = sorted((p for p in pairs if p not in ref_pairs), key=lambda p: -pairs[p])[:3]
    share_in = folded_in / total if total else 0
    top = lambda c: ", ".join("%s %.2f" % (k, v / sum(c.values())) for k, v in c.most_common(4))
    print("innermost overlap %.3f (sfbpf %d samples: %s; NYTProf: %s); pairs seen by NYTProf "
          "%.3f%s; %.3f of sfbpf's samples hold a sub NYTProf never saw entered (a callback "
          "of C), given to its caller (at most 0.25); %d more in NYTProf's own code"
          % (ov, sum(ours.values()), top(ours), top(theirs),
             seen_pairs / tot if tot else 1.0, ", unseen %s" % unseen if unseen else "",
             share_in, in_ref))
    return 0 if ov >= 0.85 and (not tot or seen_pairs / tot >= 0.98) and share_in <= 0.25 else 1


def whole(frames):
    return any(f == "_start" or f.startswith("__libc_start") for f in frames[1:3])


def cmd_root(folded, minimum):
    with_pl = n_whole = 0
    for frames, n in stacks(folded):
        if not pl_frames(frames):
            continue
        with_pl += n
        n_whole += n * whole(frames)
    share = n_whole / with_pl if with_pl else 0
    print("%d of %d samples with Perl frames reach _start (%.3f, at least %s)"
          % (n_whole, with_pl, share, minimum))
    return 0 if with_pl and share >= float(minimum) else 1


def cmd_has(folded, name, minimum):
    inner, tot = collections.Counter(), 0
    for frames, n in stacks(folded):
        names = [f[0] for f in pl_frames(frames)]
        if names:
            inner[names[-1]] += n
            tot += n
    share = inner[name] / tot if tot else 0
    print("%s innermost in %.3f of %d samples with Perl frames (at least %s): %s"
          % (name, share, tot, minimum, inner.most_common(3)))
    return 0 if share >= float(minimum) else 1


def cmd_program(folded, comm, dirs):
    files = collections.defaultdict(list)
    for top in dirs.split(":"):
        for d, _, names in os.walk(top):
            for f in names:
                files[f].append(os.path.join(d, f))
    total = with_pl = n_whole = 0
    bad, known = collections.Counter(), {}
    for frames, n in stacks(folded):
        if not frames[0].startswith(comm):
            continue
        total += n
        pl = pl_frames(frames)
        if not pl:
            continue
        with_pl += n
        n_whole += n * whole(frames)
        for name, f, line in pl:
            key = (name, f, line)
            if key not in known:
                known[key] = False
                for path in files.get(os.path.basename(f), []):
                    if line <= open(path, encoding="utf-8", errors="replace").read().count(
                            "\n") + 1:
                        known[key] = True
                        break
            if not known[key]:
                bad["%s (%s:%d)" % key] += n
    share = with_pl / total if total else 0
    wshare = n_whole / with_pl if with_pl else 0
    print("%s: %d samples, %.3f with Perl frames (at least 0.5), %.3f of those whole "
          "(at least 0.9); frames no file of %s has: %s"
          % (comm, total, share, wshare, dirs, bad.most_common(3) or "none"))
    return 0 if total and share >= 0.5 and wshare >= 0.9 and not bad else 1


def cmd_outputs(name, folded, raw, otlp):
    ok = v8.outputs_equal(name, folded, raw, otlp, lambda f: bool(pl_frames(f)), "perl", "Perl",
                          "perl")
    return 0 if ok else 1


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "names":
        return cmd_names(args[0], args[1:])
    cmds = {"nytprof": cmd_nytprof, "root": cmd_root, "has": cmd_has, "outputs": cmd_outputs,
            "program": cmd_program}
    if cmd in cmds:
        return cmds[cmd](*args)
    print("unknown command %s" % cmd)
    return 2


if __name__ == "__main__":
    sys.exit(main())
