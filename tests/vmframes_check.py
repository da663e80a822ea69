#!/usr/bin/env python3
"""What the checks of the script VMs' profiles share (tests/phpprofile_check.py,
rbprofile_check.py, plprofile_check.py): each gives its own reader of a
stack's runtime frames (frames -> [(name, file, line)], outermost first) and
of its reference profiler's stacks; the judgements are these.

  judge_reference  the innermost frame's distribution against the reference's
                   (overlap >= 0.85) and the share of sfbpf's caller -> callee
                   pairs (by samples) the reference saw (>= 0.98)
  root             the share of samples with runtime frames whole to the
                   thread's start
  has              a name's share as the innermost runtime frame
  program          a program no test wrote: its samples with runtime frames,
                   whole, each frame's file one of a tree's at a line it has
"""
import collections
import os

from v8profile_check import stacks


def overlap_of(a, b):
    ta, tb = sum(a.values()), sum(b.values())
    return sum(min(a[k] / ta, b[k] / tb) for k in set(a) | set(b))


def innermost_and_pairs(name_lists):
    """(innermost Counter, caller -> callee pair Counter) of (names, weight) pairs."""
    inner, pairs = collections.Counter(), collections.Counter()
    for names, n in name_lists:
        if not names:
            continue
        inner[names[-1]] += n
        for a, b in zip(names, names[1:]):
            pairs[(a, b)] += n
    return inner, pairs


def judge_reference(ours, pairs, theirs, ref_pairs, ref, said="", min_ref=100, ok_too=True,
                    min_overlap=0.85):
    """Prints the verdict's line; 0 (pass) or 1. theirs may weigh by time (min_ref 1)."""
    if sum(ours.values()) < 100 or sum(theirs.values()) < min_ref:
        print("too few samples: sfbpf %d, %s %d" % (sum(ours.values()), ref,
                                                     sum(theirs.values())))
        return 1
    ov = overlap_of(ours, theirs)
    tot = sum(pairs.values())
    seen = sum(n for p, n in pairs.items() if p in ref_pairs)
    unseen = sorted((p for p in pairs if p not in ref_pairs), key=lambda p: -pairs[p])[:3]
    top = lambda c: ", ".join("%s %.2f" % (k, v / sum(c.values())) for k, v in c.most_common(4))
    print("innermost overlap %.3f (sfbpf %d samples: %s; %s: %s)%s; pairs seen by %s %.3f%s"
          % (ov, sum(ours.values()), top(ours), ref, top(theirs), said, ref,
             seen / tot if tot else 1.0, ", unseen %s" % unseen if unseen else ""))
    return 0 if ov >= min_overlap and (not tot or seen / tot >= 0.98) and ok_too else 1


def whole(frames):
    """Whether a stack reaches its thread's start (_start, or glibc's thread start)."""
    return any(f == "_start" or f.startswith("__libc_start") or f.startswith("clone")
               for f in frames[1:3])


def root(folded, minimum, rt_frames, what):
    with_rt = n_whole = 0
    for frames, n in stacks(folded):
        if not rt_frames(frames):
            continue
        with_rt += n
        n_whole += n * whole(frames)
    share = n_whole / with_rt if with_rt else 0
    print("%d of %d samples with %s frames reach the thread's start (%.3f, at least %s)"
          % (n_whole, with_rt, what, share, minimum))
    return 0 if with_rt and share >= float(minimum) else 1


def has(folded, name, minimum, rt_frames, what, comm=None):
    inner, tot = collections.Counter(), 0
    for frames, n in stacks(folded):
        if comm and frames[0] != comm:
            continue
        names = [f[0] for f in rt_frames(frames)]
        if names:
            inner[names[-1]] += n
            tot += n
    share = inner[name] / tot if tot else 0
    print("%s innermost in %.3f of %d samples with %s frames%s (at least %s): %s"
          % (name, share, tot, what, " of " + comm if comm else "", minimum,
             inner.most_common(3)))
    return 0 if share >= float(minimum) else 1


def program(folded, comm, dirs, rt_frames, what, suffixes, known_file=lambda f: False,
            frame_ok=None, within=None, least=0.5):
    """A program no test wrote: >= 50 % of COMM's samples with runtime frames, >= 90 %
    of those whole, each frame's file (by name) one of the DIRs' (":"-separated) files
    ending in one of suffixes, at a line it has (frame_ok(name, path, line) may ask
    more), or one known_file() accepts (the runtime's own built-in code). within: only
    the samples with that native frame (where the runtime runs a script) are counted;
    least: the share with runtime frames asked for, if not 50 %."""
    files = collections.defaultdict(list)
    for top in dirs.split(":"):
        for d, _, names in os.walk(top):
            for f in names:
                if f.endswith(suffixes):
                    files[f].append(os.path.join(d, f))
    total = with_rt = n_whole = 0
    bad, known = collections.Counter(), {}
    for frames, n in stacks(folded):
        if not frames[0].startswith(comm) or (within and within not in frames):
            continue
        total += n
        rt = rt_frames(frames)
        if not rt:
            continue
        with_rt += n
        n_whole += n * whole(frames)
        for name, f, line in rt:
            key = (name, f, line)
            if key not in known:
                known[key] = known_file(f)
                for path in files.get(os.path.basename(f), []):
                    src = open(path, encoding="utf-8", errors="replace").read()
                    if line <= src.count("\n") + 1 and (
                            frame_ok is None or frame_ok(name, src, line)):
                        known[key] = True
                        break
            if not known[key]:
                bad["%s (%s:%d)" % key] += n
    share = with_rt / total if total else 0
    wshare = n_whole / with_rt if with_rt else 0
    print("%s: %d samples%s, %.3f with %s frames (at least %g), %.3f of those whole "
          "(at least 0.9); frames no file under %s has: %s"
          % (comm, total, " in " + within if within else "", share, what, least, wshare, dirs,
             bad.most_common(3) or "none"))
    return 0 if total and share >= least and wshare >= 0.9 and not bad else 1
