#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Checks the traces and counters of build/tests/lifecycle (tests/lifecycle.c)
for tests/lifecycle.test. Prints one "PASS: name: ..." or "FAIL: name: ..."
line per check; exit status 0 once the checks ran, 2 on bad usage.

Trace lines: T TIME_NS PID COMM STOP NR_USER CGROUP CHAIN (CHAIN outermost
first, ';'-separated). A sample is complete for a suffix when its stop reason
is "outermost" and its chain ends with the suffix.

  lifecycle_check.py loaded --name N --trace F --comm C --suffix S
        [--pid P] [--since NS] [--min 30] [--ratio 0.97]
        [--first-within MS] [--freq 199] [--min-pids 1] [--max-no-proc 1.0]
      Samples of comm C (of pid P, from time NS on): every process sampled
      has a complete sample (the test runs each long enough: until the
      driver saw it unwound), and once its first one was seen, at least
      --ratio of its samples are complete; the first one comes within MS of
      the process's own CPU time after its first sample (or after NS, with
      --since): within MS * FREQ / 1000 of its samples, the sampling being
      FREQ a second of CPU time. Not wall time: on a machine ten times
      oversubscribed the process and the loader both get a tenth of a CPU,
      and a promise in wall time there would judge the machine (seen: 4.6 s
      of wall time, 32 samples, 0.16 s of the process's CPU); at least --min
      samples and --min-pids processes; at most --max-no-proc of all samples
      stopped at no-proc.
  lifecycle_check.py absent --name N --trace F --comm C
      No sample of comm C.
  lifecycle_check.py cgroup --name N --trace F --comm C --path P [--min 30]
      Every sample of comm C carries cgroup path P.
  lifecycle_check.py gone --name N --trace F --pids F --comm C [--comm C...]
      No process of those comms in the trace is still tracked (PIDS file:
      the driver's tracked PIDs at the end, "PID alive|gone": a PID a live
      process has again is not one of them), and there was at least one.
  lifecycle_check.py expect --name N --stats F EXPR
      EXPR, a Python expression over s (the last value of every counter in
      F), holds; the counters named in it are printed.
  lifecycle_check.py growth --name N --stats F --key K --max BYTES
      Counter K (printed every second) grows by at most BYTES over its first
      value.
"""
import argparse
import collections
import re
import sys

from statsparse import stat_series


Sample = collections.namedtuple("Sample", "time pid comm stop nu cgroup chain")


def out(ok, name, why):
    print("%s: %s: %s" % ("PASS" if ok else "FAIL", name, why), flush=True)


def read_trace(path, comm=None, pid=None, since=None):
    samples = []
    with open(path) as f:
        for line in f:
            fields = line.rstrip("\n").split(" ", 7)
            if len(fields) < 7 or fields[0] != "T":
                continue
            s = Sample(int(fields[1]), int(fields[2]), fields[3], fields[4], int(fields[5]),
                       fields[6], fields[7] if len(fields) > 7 else "")
            if comm is not None and s.comm != comm:
                continue
            if pid is not None and s.pid != pid:
                continue
            if since is not None and s.time < since:
                continue
            samples.append(s)
    return sorted(samples)


def read_stats(path):
    with open(path) as f:
        series = collections.defaultdict(list, stat_series(f))
    return {k: v[-1] for k, v in series.items()}, series


def complete(s, suffix):
    return s.stop == "outermost" and s.chain.endswith(suffix)


def cmd_loaded(a):
    ss = read_trace(a.trace, a.comm, a.pid, a.since)
    if len(ss) < a.min:
        out(False, a.name, "%d samples of %s, want >= %d" % (len(ss), a.comm, a.min))
        return
    by_pid = collections.defaultdict(list)
    for s in ss:
        by_pid[s.pid].append(s)
    good = after = before = 0
    late, never, others = [], [], collections.Counter()
    exiting = 0
    for pid, ps in by_pid.items():
        # A user process without an mm (kernel-only) is exiting: its last
        # samples may have no user stack to unwind. Set aside only there,
        # after its last sample with a user stack; anywhere else they count.
        ps = sorted(ps, key=lambda s: s.time)
        n = len(ps)
        while n > 1 and ps[n - 1].stop == "kernel-only":
            n -= 1
        if any(s.stop != "kernel-only" for s in ps[:n]):
            exiting += len(ps) - n
            ps = ps[:n]
        first = next((s for s in ps if complete(s, a.suffix)), None)
        if not first:
            never.append(pid)
            others.update((s.stop, s.chain[-80:]) for s in ps)
            continue
        rest = [s for s in ps if s.time >= first.time]
        before += len(ps) - len(rest)
        after += len(rest)
        good += sum(complete(s, a.suffix) for s in rest)
        others.update((s.stop, s.chain[-80:]) for s in rest if not complete(s, a.suffix))
        origin = a.since if a.since is not None else ps[0].time
        waited = sum(origin <= s.time < first.time for s in ps)
        if a.first_within is not None and waited > a.first_within * a.freq / 1000:
            late.append("%d: %d samples (%.0f ms of CPU), %.0f ms of wall time" % (
                pid, waited, waited * 1000 / a.freq, (first.time - origin) / 1e6))
    no_proc = sum(s.stop == "no-proc" for s in ss)
    why = ("%d samples of %d processes; %d before their first complete chain; "
           "%d/%d complete after; %d no-proc; %d while exiting (no mm) set aside"
           % (len(ss), len(by_pid), before, good, after, no_proc, exiting))
    ok = after > 0 and good >= a.ratio * after and len(by_pid) >= a.min_pids
    if len(by_pid) < a.min_pids:
        why += "; want >= %d processes" % a.min_pids
    if never:
        ok = False
        why += "; %d processes never complete: %s" % (
            len(never), ", ".join("%d (%d samples)" % (p, len(by_pid[p])) for p in never[:5]))
    if late:
        ok = False
        why += "; first complete chain late: " + ", ".join(late[:5])
    if no_proc > a.max_no_proc * len(ss):
        ok = False
        why += "; too many no-proc samples"
    if not ok and others:
        why += "; others: %s" % others.most_common(3)
    out(ok, a.name, why)


def cmd_absent(a):
    ss = read_trace(a.trace, a.comm)
    out(not ss, a.name, "%d samples of %s" % (len(ss), a.comm))


def cmd_cgroup(a):
    ss = read_trace(a.trace, a.comm)
    paths = collections.Counter(s.cgroup for s in ss)
    ok = len(ss) >= a.min and set(paths) == {a.path}
    out(ok, a.name, "%d samples of %s, cgroups %s" % (len(ss), a.comm, dict(paths.most_common(3))))


def cmd_gone(a):
    pids = {s.pid for c in a.comm for s in read_trace(a.trace, c)}
    tracked, reused = set(), set()
    with open(a.pids) as f:
        for line in f:
            fields = line.split()
            if fields and fields[0].isdigit():
                # A PID a live process has again (reused: the machine runs
                # other work) is rightly tracked; a dead one is a missed exit.
                (reused if fields[1:2] == ["alive"] else tracked).add(int(fields[0]))
    left = sorted(pids & tracked)
    out(pids and not left, a.name, "%d exited processes traced, %d still tracked%s%s" % (
        len(pids), len(left), (": %s" % left[:10]) if left else "",
        ", %d of their PIDs live again" % len(pids & reused) if pids & reused else ""))


def cmd_expect(a):
    last, _ = read_stats(a.stats)
    s = collections.defaultdict(int, last)
    try:
        ok = bool(eval(a.expr, {}, {"s": s}))  # noqa: S307 - test expressions
    except Exception as e:  # a typo in the test is a failure, not a crash
        out(False, a.name, "cannot evaluate %r: %s" % (a.expr, e))
        return
    keys = sorted(set(re.findall(r"s\['([^']+)'\]", a.expr)))
    values = ", ".join("%s=%d" % (k, s[k]) for k in keys)
    out(ok, a.name, values if ok else "%s does not hold (%s)" % (a.expr, values))


def cmd_growth(a):
    _, series = read_stats(a.stats)
    v = series.get(a.key, [])
    if len(v) < 2:
        out(False, a.name, "%d values of %s" % (len(v), a.key))
        return
    grew = max(v) - v[0]
    out(grew <= a.max, a.name, "%s from %d to at most %d (+%d, limit +%d) over %d readings" % (
        a.key, v[0], max(v), grew, a.max, len(v)))


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    lo = sub.add_parser("loaded")
    lo.add_argument("--name", required=True)
    lo.add_argument("--trace", required=True)
    lo.add_argument("--comm", required=True)
    lo.add_argument("--suffix", required=True)
    lo.add_argument("--pid", type=int)
    lo.add_argument("--since", type=int)
    lo.add_argument("--min", type=int, default=30)
    lo.add_argument("--ratio", type=float, default=0.97)
    lo.add_argument("--first-within", type=float)
    lo.add_argument("--freq", type=float, default=199)
    lo.add_argument("--min-pids", type=int, default=1)
    lo.add_argument("--max-no-proc", type=float, default=1.0)
    ab = sub.add_parser("absent")
    ab.add_argument("--name", required=True)
    ab.add_argument("--trace", required=True)
    ab.add_argument("--comm", required=True)
    cg = sub.add_parser("cgroup")
    cg.add_argument("--name", required=True)
    cg.add_argument("--trace", required=True)
    cg.add_argument("--comm", required=True)
    cg.add_argument("--path", required=True)
    cg.add_argument("--min", type=int, default=30)
    go = sub.add_parser("gone")
    go.add_argument("--name", required=True)
    go.add_argument("--trace", required=True)
    go.add_argument("--pids", required=True)
    go.add_argument("--comm", action="append", required=True)
    ex = sub.add_parser("expect")
    ex.add_argument("--name", required=True)
    ex.add_argument("--stats", required=True)
    ex.add_argument("expr")
    gr = sub.add_parser("growth")
    gr.add_argument("--name", required=True)
    gr.add_argument("--stats", required=True)
    gr.add_argument("--key", required=True)
    gr.add_argument("--max", type=int, required=True)
    a = p.parse_args()
    try:
        {"loaded": cmd_loaded, "absent": cmd_absent, "cgroup": cmd_cgroup, "gone": cmd_gone,
         "expect": cmd_expect, "growth": cmd_growth}[a.cmd](a)
    except OSError as e:
        out(False, a.name, "cannot read: %s" % e)
    return 0


if __name__ == "__main__":
    sys.exit(main())
