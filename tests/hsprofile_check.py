#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Judges sfbpf-top's Java frames (tests/hsprofile.test) against the JVM's
own profiler on the same run, JFR's jdk.ExecutionSample events (as `jfr
print` writes them), and against the fixture's source
(tests/fixtures/JavaWork.java, its "// at:" markers). One PASS/FAIL line
each.

  stacks NAME FOLDED SRC [fixture]
                             the main thread's stacks: complete from the
                             thread's entry through the call stub to
                             JavaWork.main (>= 98 %), every JavaWork frame
                             named with the line of its call; every
                             thread's stacks with a Java frame whole from
                             its entry (>= 98 %; [fixture]: its threads)
  jfr NAME FOLDED JFR        innermost Java method: distribution overlap
                             >= 0.85; >= 98 % of sfbpf's Java caller->callee
                             edges (by samples) seen by JFR
  clock NAME FOLDED OUT      the main thread's samples in JavaWork.digest
                             against the fixture's own clock (its "JavaWork
                             clock:" line in OUT): the shares within 0.04
  signals NAME FOLDED [LINES] the main thread's samples in JFR's suspend
                             handler: whole through the signal frame, the
                             interrupted Java frame at its line (LINES
                             "said": not judged)
  cpuclock NAME FOLDED OUT   the main thread's samples making strings and
                             sorting them against its own CPU time in each
                             ("JavaWork cpu:" in OUT): the share within 0.04,
                             or 3 standard errors of so many samples
  churn NAME FOLDED OUT      tests/fixtures/JavaChurn.java's classes, loaded,
                             compiled, unloaded and flushed in turn: every
                             stack's ChurnK frames of one K, under
                             JavaChurn.main where a caller is named; every
                             name text; OUT says classes were unloaded
  offcpu NAME FOLDED SRC     the napping thread's off-CPU stacks: napInner
                             at its sleep's line, under napOuter
  outputs NAME FOLDED PPROF_RAW OTLP_TEXT [SCOPE]
                             the same session's pprof (`pprof -raw`) and
                             OTLP (`protoc --decode`) profiles: their stacks
                             equal the folded output's, a Java frame's
                             function its method, with its file and line
                             (not its label), OTLP's frame type "jvm" (and
                             no "cpython" but for SCOPE "system")
  warmup NAME OUT TOP         JavaWork.digest compiled at tiers 3 (C1) and 4
                             (C2) in the JVM's -XX:+PrintCompilation OUT,
                             interpreted and compiled frames stepped (TOP)
  perfg NAME FOLDED PERF      the main thread's stacks reaching JavaMain, in
                             sfbpf's samples at least as often as in perf
                             -g's (PERF: perf script -F comm,tid,ip,sym) of
                             the same JVM, run with -XX:+PreserveFramePointer
                             and given a perf map (jcmd Compiler.perfmap)
  (jfr, perfg: where the reference itself has under 300 samples, a busy
  machine's, SKIP: nothing to judge against; sfbpf under 300, FAIL)
  hsstops NAME TOP [LIE]     the walk's Java stops per reason (hs_stop_*)
                             add up to hs_failed; with the settings made
                             to lie (SFBPF_TEST_HS_LIE) the lie's reason
                             counted (segmap: read; shift: bad_blob), and
                             no reason it cannot give
  neversafe NAME FOLDED TOP  samples stopped in a blob HotSpot never walks
                             from (SafepointBlob...): seen, each stack ended
                             right there ([truncated] above it), counted in
                             hs_stop_never_safe
  budget NAME TOP            the names table held to a budget the profile
                             filled: collected, names evicted or refused,
                             its bytes within it
  program NAME FOLDED COMM PREFIX
                             a program no test wrote (javac): of COMM's
                             stacks with a Java frame of a class named
                             PREFIX..., >= 90 % whole from the thread's entry

A Java frame is "Class.method (File.java:LINE)"; a compiled leaf at a pc
with no debug record (its prologue, its epilogue) is named without a line.
JFR drops such samples (its sampler takes a stopped pc's methods from the
next debug record, and gives up without one): the overlap leaves them out
of sfbpf's side too, so that it compares what both can see.
"""
import collections
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import otlp_check  # noqa: E402
import outputs_check  # noqa: E402

JAVA = re.compile(r"^([\w$.]+)\.([\w$<>]+) \(([^():]*)(?::(\d+))?\)$")


def markers(src):
    """The fixture's "// at: NAME" lines: NAME -> line number."""
    out = {}
    for n, line in enumerate(open(src), 1):
        m = re.search(r"// at: (\S+)", line)
        if m:
            out[m.group(1)] = n
    return out


def folded(path):
    """(frames root first, count) of each folded line."""
    # Not UTF-8 is a wrong name too: shown as U+FFFD, never a crash here.
    for line in open(path, errors="replace"):
        stack, _, n = line.rstrip("\n").rpartition(" ")
        if stack:
            yield stack.split(";"), int(n)


def java_frames(frames):
    """The Java frames of a stack, root first, each (method, line or None)."""
    out = []
    for f in frames:
        m = JAVA.match(f)
        if m:
            out.append((m.group(1) + "." + m.group(2), m.group(4)))
    return out


def main_thread(java):
    """Whether a stack's Java frames are the fixture's main thread's: JavaWork
    frames, none of the napper's (its lambda, napOuter, ...)."""
    return any(m.startswith("JavaWork.") for m, _ in java) and not any(
        m.startswith(("JavaWork.nap", "JavaWork.lambda$")) for m, _ in java)


def check_stacks(name, path, src, scope="all"):
    at = markers(src)
    total = complete = named = 0
    bad = collections.Counter()
    want = {
        ("JavaWork.main", "JavaWork.outer"): at["main"],
        ("JavaWork.outer", "JavaWork.sortStrings"): at["outer-sort"],
        ("JavaWork.outer", "JavaWork.digest"): at["outer-digest"],
        ("JavaWork.digest", "JavaWork.digest"): at["recurse"],
        ("JavaWork.sortStrings", "java.util.Arrays.sort"): at["sort"],
    }
    seen = collections.Counter()
    for frames, n in folded(path):
        java = java_frames(frames)
        if not main_thread(java):
            continue
        total += n
        # The thread's entry, through the launcher's JavaMain and the call stub, to main.
        names = [f for f in frames if not f.endswith("_[k]")]
        if "[truncated]" not in names and "JavaMain" in names and "JavaCalls::call_helper" in names:
            if java and java[0][0] == "JavaWork.main":
                complete += n
        ok = True
        for (a, la), (b, _) in zip(java, java[1:]):
            line = want.get((a, b))
            if line is None:
                continue
            seen[(a, b)] += n
            if la != str(line):
                bad[(a, la, b)] += n
                ok = False
        named += n if ok else 0
    if total < 100:
        print(f"FAIL: {name}: only {total} samples of the main thread")
        return
    share = complete / total
    if share < 0.98:
        print(f"FAIL: {name}-complete: {complete} of {total} main-thread samples ({share:.1%}) "
              "reach JavaWork.main from the thread's entry (want >= 98 %)")
    else:
        print(f"PASS: {name}-complete: {complete} of {total} main-thread samples ({share:.1%}) "
              "from the thread's entry through the call stub to JavaWork.main")
    # Every thread's, where a stack has a Java frame (the napper's, JFR's
    # own): whole, untruncated from the thread's entry into the VM's call
    # stub, as every Java thread enters Java (the C library's start_thread
    # is named only where its symbols are at hand). scope "fixture": the
    # fixture's threads only (a system-wide profile has other JVMs, jstack's
    # a second old, and Python's "f (x.py:3)" frames of the same form).
    threads, whole = collections.Counter(), collections.Counter()
    for frames, n in folded(path):
        java = [m for f in frames if (m := JAVA.match(f)) and m.group(3).endswith(".java")]
        if not java or (scope == "fixture" and not any(m.group(1) == "JavaWork" for m in java)):
            continue
        threads[frames[0]] += n
        if "[truncated]" not in frames and "JavaCalls::call_helper" in frames:
            whole[frames[0]] += n
    jt, jw = sum(threads.values()), sum(whole.values())
    per = ", ".join(f"{t} {whole[t]}/{n}" for t, n in threads.most_common(4))
    verdict = "PASS" if jt and jw >= 0.98 * jt else "FAIL"
    print(f"{verdict}: {name}-threads: {jw} of {jt} samples with a Java frame, of every "
          f"thread ({jw / max(jt, 1):.1%}), whole from the thread's entry (want >= 98 %; {per})")
    missing = [k for k in want if not seen[k]]
    if missing or bad:
        print(f"FAIL: {name}-lines: calls never seen {missing}; at a wrong line "
              f"{bad.most_common(3)}")
    else:
        print(f"PASS: {name}-lines: the fixture's {len(want)} calls, each at its line, "
              f"in all {total} samples")


def jfr_stacks(path):
    """JFR's execution samples: (methods root first, 1)."""
    cur = None
    for line in open(path):
        s = line.strip()
        if s.startswith("stackTrace = ["):
            cur = []
        elif cur is not None and s == "]":
            yield list(reversed(cur)), 1
            cur = None
        elif cur is not None and s != "...":
            m = re.match(r"^([\w$.<>/]+)\.([\w$<>]+)\(", s)
            if m:
                cur.append(m.group(1) + "." + m.group(2))


def dist(stacks):
    leaf, edges = collections.Counter(), collections.Counter()
    for methods, n in stacks:
        if not methods:
            continue
        leaf[methods[-1]] += n
        for a, b in zip(methods, methods[1:]):
            edges[(a, b)] += n
    return leaf, edges


def check_jfr(name, path, jfr, what="all"):
    ours = []
    for frames, n in folded(path):
        java = java_frames(frames)
        # What JFR cannot see: a compiled leaf with no debug record (no line).
        if java and java[-1][1] is not None:
            ours.append(([m for m, _ in java], n))
    sl, se = dist(ours)
    jl, je = dist(jfr_stacks(jfr))
    st, jt = sum(sl.values()), sum(jl.values())
    if jt < 300:
        # JFR itself sampled too little: the machine is busy, nothing to judge against.
        print(f"SKIP: {name}: JFR has {jt} samples, under 300 (a busy machine): not compared")
        return
    if st < 300:
        print(f"FAIL: {name}: too few samples to compare: sfbpf {st}, JFR {jt}")
        return
    overlap = sum(min(sl[k] / st, jl[k] / jt) for k in set(sl) | set(jl))
    top = ", ".join(f"{k.rsplit('.', 1)[-1]} {sl[k] / st:.2f}/{jl[k] / jt:.2f}"
                    for k, _ in jl.most_common(5))
    if what == "edges":
        # Said, not judged: see the cases' comment in hsprofile.test.
        print(f"SKIP: {name}-leaf: innermost Java method overlap {overlap:.3f}, not judged "
              f"for this case ({st} and {jt} samples; {top})")
    else:
        verdict = "PASS" if overlap >= 0.85 else "FAIL"
        print(f"{verdict}: {name}-leaf: innermost Java method, sfbpf against JFR: overlap "
              f"{overlap:.3f} (want >= 0.85; {st} and {jt} samples; {top})")
    total = sum(se.values())
    seen = sum(n for e, n in se.items() if e in je)
    share = seen / total if total else 0
    unseen = sorted(((n, e) for e, n in se.items() if e not in je), reverse=True)[:3]
    verdict = "PASS" if share >= 0.98 else "FAIL"
    print(f"{verdict}: {name}-edges: {share:.1%} of sfbpf's Java caller->callee edges "
          f"(by samples) seen by JFR (want >= 98 %; not seen: {unseen})")


def check_offcpu(name, path, src):
    """The napper's time blocked in Thread.sleep, each stack napOuter;napInner
    (at its sleep's line);Thread.sleep. Time it spent preempted while running
    (off-CPU too, more of it on a loaded machine) may be anywhere in its loop:
    it must only not be most of its time."""
    at = markers(src)
    naps = sleeps = good = 0
    for frames, n in folded(path):
        java = java_frames(frames)
        if not any(m == "JavaWork.napInner" for m, _ in java):
            continue
        naps += n
        inner = [i for i, (m, _) in enumerate(java) if m == "JavaWork.napInner"][-1]
        if not any(m == "java.lang.Thread.sleep" for m, _ in java[inner + 1:]):
            continue
        sleeps += n
        if java[inner][1] == str(at["nap"]) and inner > 0 and java[inner - 1][0] == "JavaWork.napOuter":
            good += n
    if not naps:
        print(f"FAIL: {name}: no off-CPU stack holds JavaWork.napInner")
    elif good < sleeps or sleeps < naps / 2:
        print(f"FAIL: {name}: of {naps} us off-CPU under napInner, {sleeps} in Thread.sleep, "
              f"{sleeps - good} of those not napOuter;napInner (line {at['nap']});Thread.sleep")
    else:
        print(f"PASS: {name}: the napper's time in Thread.sleep ({sleeps} of {naps} us "
              f"off-CPU): all napOuter;napInner (JavaWork.java:{at['nap']});Thread.sleep")


def pprof_as_folded(raw):
    """pprof -raw's samples as folded lines: a runtime's frame labelled as the
    folded output labels it, from its function's name, file and line, markers
    such as "[unknown java] ()" too. Such a location has no mapping, and its
    address is the frame's id, tagged as stacks hold it (SFBPF_PY_TAG, bit
    63): what tells "[unknown java]" from a native "[unknown]"."""
    def label(loc, fn, file, line):
        if not loc["map"] and loc["addr"] >> 63:
            return otlp_check.runtime_label(fn, file, line)
        return fn

    return outputs_check.raw_as_folded(outputs_check.parse_raw(raw), 0, label)


def otlp_as_folded(text):
    """The OTLP request's samples as folded lines (otlp_check's reading, which
    labels a "cpython" or "jvm" frame from its function, file and line)."""
    out = collections.Counter()
    types = collections.Counter()
    req = otlp_check.parse(text)
    for _, _, smp, sattrs, frames in otlp_check.walk(req):
        out[";".join(x.replace(";", ":") for x in [sattrs.get("thread.name")] + frames)] += \
            sum(smp["values"])
    dic = otlp_check.one(req, "dictionary", {})
    for loc in dic.get("location_table", []):
        kind = otlp_check.attrs_of(dic, loc.get("attribute_indices", []))
        types[kind.get("profile.frame.type")] += 1
    return out, types


def check_outputs(name, path, raw, otlp, scope="process"):
    want = collections.Counter()
    for frames, n in folded(path):
        want[";".join(frames)] += n
    java = sum(n for k, n in want.items() if java_frames(k.split(";")))
    if java < 100:
        print(f"FAIL: {name}: only {java} samples with a Java frame")
        return
    for what, got in (("pprof", pprof_as_folded(open(raw, errors="replace").read())),
                      ("otlp", None)):
        types = {}
        if got is None:
            try:
                got, types = otlp_as_folded(open(otlp, errors="replace").read())
            except otlp_check.Bad as e:
                print(f"FAIL: {name}-{what}: the request breaks the schema's rules: {e}")
                continue
        bad = sorted(set(want) ^ set(got), key=lambda k: -(want[k] + got[k]))
        bad += [k for k in want if k in got and got[k] != want[k]]
        if bad:
            k = bad[0]
            print(f"FAIL: {name}-{what}: {len(bad)} stacks differ from the folded output's, "
                  f"first {k[-160:]!r}: folded {want[k]}, {what} {got[k]}")
        else:
            print(f"PASS: {name}-{what}: all {len(want)} stacks ({java} samples with Java "
                  "frames) equal the folded output's, each Java frame its method with its "
                  "file and line")
        if what == "otlp":
            # One JVM's profile has no Python frame; the machine's may (scope "system").
            verdict = "PASS" if types.get("jvm") and (
                scope == "system" or not types.get("cpython")) else "FAIL"
            print(f"{verdict}: {name}-otlp-frame-type: Java frames' locations typed "
                  f"\"jvm\" ({dict(types)})")


def perf_stacks(path):
    """`perf script -F comm,tid,ip,sym` of a perf record -g: (comm, frames leaf first)."""
    for block in open(path, errors="replace").read().split("\n\n"):
        lines = [l for l in block.split("\n") if l.strip()]
        if lines:
            comm = lines[0].rsplit(None, 1)[0].strip()
            yield comm, [(l.split(None, 1) + ["?"])[1] for l in lines[1:]]


def check_perfg(name, path, perf):
    """The Java main thread's samples (comm "java": the launcher's own thread
    waits) reaching the launcher's JavaMain, sfbpf's against perf -g's on the
    same JVM, run with -XX:+PreserveFramePointer and a perf map for perf."""
    st = sw = pt = pw = 0
    for frames, n in folded(path):
        if frames[0] == "java":
            st += n
            sw += n if "JavaMain" in frames and "[truncated]" not in frames else 0
    for comm, frames in perf_stacks(perf):
        if comm == "java":
            pt += 1
            pw += "JavaMain" in frames
    if pt < 300:
        # perf on the same thread sampled too little: the machine is busy.
        print(f"SKIP: {name}: perf has {pt} samples of the main thread, under 300 (a busy "
              f"machine): not compared (sfbpf {st})")
        return
    if st < 300:
        print(f"FAIL: {name}: too few samples of the main thread: sfbpf {st}, perf {pt}")
        return
    # At least as often, within a sample in two hundred (each is a sample).
    verdict = "PASS" if sw / st >= pw / pt - 0.005 else "FAIL"
    print(f"{verdict}: {name}: the main thread's stacks reach JavaMain in {sw / st:.1%} of "
          f"sfbpf's samples ({sw} of {st}), {pw / pt:.1%} of perf -g's ({pw} of {pt}) with "
          "-XX:+PreserveFramePointer and a perf map (want at least as often)")


def check_warmup(name, out, top):
    """JavaWork.digest compiled by C1 (tier 3) and C2 (tier 4) while profiled
    (the JVM's -XX:+PrintCompilation lines: time, id, flags, tier, method),
    and the walk's counts of both kinds of frame."""
    tiers = set()
    for line in open(out, errors="replace"):
        m = re.match(r"^\s*\d+\s+\d+\s+[%sbn! ]*?([0-4])\s+JavaWork::digest\b", line)
        if m and "made not entrant" not in line:
            tiers.add(int(m.group(1)))
    stats = dict(re.findall(r"stat (hs_interpreted|hs_compiled) (\d+)", open(top).read()))
    ok = {3, 4} <= tiers and all(int(stats.get(k, 0)) > 0 for k in ("hs_interpreted", "hs_compiled"))
    print(f"{'PASS' if ok else 'FAIL'}: {name}: JavaWork.digest compiled at tiers {sorted(tiers)} "
          f"(want 3 and 4, C1's and C2's) while profiled; frames stepped {stats}")


HS_STOPS = ("read", "interp_link", "no_blob", "bad_blob", "no_caller", "never_safe")
# A lie -> the reason every compiled step must end with, and the reasons no
# step can give under it (an interpreted frame's may still be read or link).
HS_LIES = {"segmap": ("read", ("no_blob", "bad_blob", "no_caller", "never_safe")),
           "shift": ("bad_blob", ("no_blob", "no_caller", "never_safe"))}


def check_hsstops(name, top, lie=None):
    stats = {k: int(v) for k, v in re.findall(r"stat (hs_\w+) (\d+)$", open(top).read(), re.M)}
    stops = {r: stats.get("hs_stop_" + r) for r in HS_STOPS}
    failed = stats.get("hs_failed")
    said = " ".join(f"{r}={n}" for r, n in stops.items()) + f"; hs_failed={failed}"
    ok = failed is not None and None not in stops.values() and sum(stops.values()) == failed
    if lie:
        want, never = HS_LIES[lie]
        ok = ok and stops[want] > 0 and not any(stops[r] for r in never)
        said += f" (want {want} > 0, none of {', '.join(never)})"
    print(f"{'PASS' if ok else 'FAIL'}: {name}: the walk's Java stops counted per reason: {said}")


def check_budget(name, top):
    """The names table (every runtime's, --max-python-mem) held to its budget
    by a profile that needed more: collections ran, names were evicted or
    refused, and its bytes never passed the budget."""
    stats = {k: int(v) for k, v in re.findall(r"stat (py_names\w*) (\d+)$", open(top).read(), re.M)}
    used, budget = stats.get("py_names_bytes"), stats.get("py_names_budget_bytes")
    ok = (used is not None and budget and used <= budget and stats.get("py_names_collections", 0) > 0
          and stats.get("py_names_evicted", 0) + stats.get("py_names_refused", 0) > 0)
    print(f"{'PASS' if ok else 'FAIL'}: {name}: the names table held to its budget: "
          f"{used} of {budget} bytes, {stats.get('py_names_collections')} collections, "
          f"{stats.get('py_names_evicted')} evicted, {stats.get('py_names_refused')} refused")


def check_program(name, path, comm, prefix):
    total = whole = 0
    for frames, n in folded(path):
        if frames[0] != comm:
            continue
        if not any(m.startswith(prefix) for m, _ in java_frames(frames)):
            continue
        total += n
        whole += n if "[truncated]" not in frames else 0
    if total < 100:
        print(f"FAIL: {name}: only {total} samples of {comm} in {prefix}...")
        return
    verdict = "PASS" if whole >= 0.9 * total else "FAIL"
    print(f"{verdict}: {name}: {whole} of {total} samples of {comm} in {prefix}... "
          f"({whole / total:.1%}) whole from the thread's entry (want >= 90 %)")


def check_clock(name, path, out):
    """The share of the main thread's samples whose innermost Java method is
    digest against the share of outer()'s time the fixture measured there:
    the ground truth a sampler of CPU time must agree with (with -Xint, the
    interpreter's every frame a Java one: JFR 17's sampler gave digest 0.28
    where the clock said 0.17 and sfbpf 0.19)."""
    m = re.search(r"JavaWork clock: sort (\d+) digest (\d+)", open(out).read())
    if not m:
        print(f"FAIL: {name}: no 'JavaWork clock:' line from the fixture")
        return
    sort_ns, digest_ns = int(m.group(1)), int(m.group(2))
    want = digest_ns / (sort_ns + digest_ns)
    total = digest = 0
    for frames, n in folded(path):
        java = java_frames(frames)
        if not java or not main_thread(java) or "JavaWork.outer" not in [x for x, _ in java]:
            continue
        total += n
        digest += n if java[-1][0] == "JavaWork.digest" else 0
    if total < 300:
        print(f"FAIL: {name}: only {total} samples of the main thread in JavaWork.outer")
        return
    got = digest / total
    verdict = "PASS" if abs(got - want) <= 0.04 else "FAIL"
    print(f"{verdict}: {name}: JavaWork.digest {got:.3f} of {total} main-thread samples, "
          f"{want:.3f} of the fixture's own clock (want within 0.04)")


def check_cpuclock(name, path, out):
    """The main thread's samples in sortStrings' two phases, making the
    strings and sorting them, against the CPU time the fixture's thread
    measured in each (-Djavawork.cpuclock): the share of the making within
    0.04 of the clock's (JFR's is 0.07-0.09 above it). The case keeps
    Arrays.sort and the clock's reads out of line, so that each phase is a
    frame of its own: in inlined code, a pc with no debug record is named
    by the next one (HotSpot's samplers and sfbpf alike), which may be the
    next phase's. digest's share of outer() is said beside it, not judged
    (0.00-0.02 from the clock's on this machine since each phase's clock is
    read where its frames begin: main's loop and outer()'s own clock reads
    are the fixture's "other"; it was 0.01-0.03 above while they counted as
    making the strings)."""
    m = re.search(r"JavaWork cpu: strings (\d+) sort (\d+) digest (\d+)", open(out).read())
    if not m:
        print(f"FAIL: {name}: no 'JavaWork cpu:' line from the fixture")
        return
    phases = ("strings", "sort", "digest")
    clock = dict(zip(phases, map(int, m.groups())))
    got = collections.Counter()
    for frames, n in folded(path):
        methods = [x for x, _ in java_frames(frames)]
        if "JavaWork.outer" not in methods or "JavaWork.cpuLap" in methods:
            continue
        if "JavaWork.digest" in methods:
            got["digest"] += n
        elif "java.util.Arrays.sort" in methods:
            got["sort"] += n
        elif "JavaWork.sortStrings" in methods:
            got["strings"] += n
    making, cmaking = got["strings"] + got["sort"], clock["strings"] + clock["sort"]
    if making < 300 or not cmaking:
        print(f"FAIL: {name}: only {making} samples of the main thread in sortStrings")
        return
    share, want = got["strings"] / making, clock["strings"] / cmaking
    dshare = got["digest"] / sum(got.values())
    dwant = clock["digest"] / sum(clock.values())
    # Within 0.04, or three standard errors of a share of this many samples
    # where that is more (607 samples: 0.055; a loaded machine gives few).
    tol = max(0.04, 3 * math.sqrt(want * (1 - want) / making))
    print(f"{'PASS' if abs(share - want) <= tol else 'FAIL'}: {name}: making the strings "
          f"{share:.3f} of sortStrings' {making} main-thread samples, {want:.3f} of its own "
          f"CPU clock (want within {tol:.3f}; digest {dshare:.3f} of outer(), clock {dwant:.3f})")


def check_signals(name, path, lines="judged"):
    """The main thread's samples inside HotSpot's suspend handler: JFR's
    sampler stops the thread with a signal (SR_handler) every millisecond
    here. Each must be whole from the thread's entry, through the kernel's
    signal frame, to the frame the signal interrupted. Where that is Java
    code, it is stepped as a leaf (it may be in its prologue, or inside an
    intrinsic's pushes) and named by the next debug record as a leaf is
    (SFBPF_HS_EXACT): at its line, but where that record has none. lines "said": not judged (Serial
    and Parallel, whose C2 loops keep no poll, so that the next record of a
    pc in the sort's or digest's loops often has no line, a leaf's too; and
    -Xint, whose interrupted frame is interpreted: its bcp slot is the one the
    interpreter last saved, none yet in a frame still being built)."""
    total = whole = lined = interrupted = 0
    for frames, n in folded(path):
        if frames[0] != "java" or "SR_handler" not in frames:
            continue
        total += n
        names = [f for f in frames if not f.endswith("_[k]")]
        upto = names[:names.index("SR_handler")]
        java = java_frames(upto)
        if ("[truncated]" not in names and "JavaMain" in names and
                "JavaCalls::call_helper" in names and java and java[0][0] == "JavaWork.main"):
            whole += n
        # Below the handler, libc's restorer, then the frame the signal
        # interrupted: Java code, or the VM's own (a native method's).
        if len(upto) >= 2 and JAVA.match(upto[-2]):
            interrupted += n
            lined += n if java[-1][1] is not None else 0
    if not total:
        print(f"SKIP: {name}: no sample of the main thread in JFR's suspend handler")
        return
    judge_lines = lines == "judged" and interrupted >= 5
    ok = whole >= 0.95 * total and (lined >= 0.8 * interrupted or not judge_lines)
    print(f"{'PASS' if ok else 'FAIL'}: {name}: {whole} of {total} main-thread samples in "
          f"JFR's suspend handler (SR_handler) whole through the signal frame (want >= 95 %); "
          f"{lined} of the {interrupted} that interrupted Java code with that frame at its "
          f"line ({'want >= 80 %' if judge_lines else 'said'})")


CHURN = re.compile(r"^Churn(\d+)\.(?:run|work(\d+))$")


def check_churn(name, path, out):
    m = re.search(r"JavaChurn: generations (\d+) unloaded (\d+)", open(out).read())
    if not m or int(m.group(2)) == 0:
        print(f"FAIL: {name}-unloaded: the JVM unloaded no class: "
              f"{m.group(0) if m else 'no JavaChurn line'}")
    else:
        print(f"PASS: {name}-unloaded: {m.group(2)} classes unloaded over {m.group(1)} "
              "generations of loaders")
    # Their compiled code thrown away while profiled too: -XX:+PrintCompilation's
    # "made not entrant" (replaced by the next tier's, or deoptimised).
    gone = sum(1 for line in open(out, errors="replace")
               if re.search(r"\bChurn\d+::work\d+\b.*made not entrant", line))
    print(f"{'PASS' if gone else 'FAIL'}: {name}-not-entrant: {gone} compiled methods of the "
          "Churn classes made not entrant while profiled (-XX:+PrintCompilation)")
    total = wrong = unknown = garbled = 0
    bad = collections.Counter()
    for frames, n in folded(path):
        unknown += n * sum(f == "[unknown java] ()" for f in frames)
        garbled += n * any("\ufffd" in f for f in frames)
        java = [meth for meth, _ in java_frames(frames)]
        idx = [i for i, meth in enumerate(java) if CHURN.match(meth)]
        if not idx:
            continue
        total += n
        ks = set()
        for i in idx:
            c = CHURN.match(java[i])
            ks.add(c.group(1))
            if c.group(2) is not None:
                ks.add(c.group(2))
        # Above the first: the driver, or nothing named (a stack cut short, a marker).
        if len(ks) != 1 or (idx[0] > 0 and java[idx[0] - 1] != "JavaChurn.main"):
            wrong += n
            bad[";".join(java[max(idx[0] - 1, 0):])] += n
    if total < 300:
        print(f"FAIL: {name}: only {total} samples in the Churn classes")
        return
    # A name read from an unloaded class's freed memory (interp/hotspot_names.c).
    print(f"{'FAIL' if garbled else 'PASS'}: {name}-text: {garbled} samples with a name "
          f"that is not text, of {total} in the Churn classes ({unknown} [unknown java])")
    # Names are read when the sample is, up to 50 ms after it was taken: a
    # class unloaded and another loaded or compiled at its addresses in
    # between must not lend its name (0-4 samples in 3,000 did, 31-74 before
    # the cache's check took the names' Symbols in). The walk sends the
    # JVM's count of classes unloaded and each compiled frame's compile id:
    # such a frame is [unknown java] (hs_unloaded_since, hs_flushed).
    if wrong:
        print(f"FAIL: {name}: {wrong} of {total} samples name one class's methods under "
              f"another's, or under another caller than JavaChurn.main: {bad.most_common(3)}")
    else:
        print(f"PASS: {name}: {total} samples in classes loaded and unloaded in turn, each "
              "stack's ChurnK frames of one K, under JavaChurn.main")


# HotSpot's blobs whose frame-complete offset is "never safe": its handlers
# of safepoint polls, deoptimization and exceptions.
NEVER_SAFE = ("SafepointBlob", "DeoptimizationBlob", "UncommonTrapBlob", "ExceptionBlob")


def check_neversafe(name, path, top):
    """A sample stopped in a never-safe blob: its stack ends there
    ([truncated] right above it, never a caller read from a stale word),
    each counted in hs_stop_never_safe."""
    leaves = wrong = 0
    bad = collections.Counter()
    for frames, n in folded(path):
        user = [f for f in frames if not f.endswith("_[k]")]
        if user[-1].split(" (")[0] not in NEVER_SAFE:
            continue
        leaves += n
        if user[-2] != "[truncated]":
            wrong += n
            bad[";".join(user[-3:])] += n
    stats = dict(re.findall(r"stat (hs_stop_never_safe) (\d+)$", open(top).read(), re.M))
    counted = int(stats.get("hs_stop_never_safe", -1))
    ok = not wrong and leaves > 0 and counted >= leaves
    print(f"{'PASS' if ok else 'FAIL'}: {name}: {leaves} samples stopped in a never-safe blob "
          f"({', '.join(NEVER_SAFE)}), {leaves - wrong} of them ended there, "
          f"hs_stop_never_safe={counted} (want > 0, all ended, all counted; "
          f"with a caller: {bad.most_common(2)})")


def main():
    mode, name = sys.argv[1], sys.argv[2]
    {"stacks": check_stacks, "jfr": check_jfr, "offcpu": check_offcpu,
     "program": check_program, "clock": check_clock, "cpuclock": check_cpuclock, "signals": check_signals, "churn": check_churn,
     "outputs": check_outputs, "perfg": check_perfg, "warmup": check_warmup,
     "hsstops": check_hsstops, "budget": check_budget, "neversafe": check_neversafe}[mode](
         name, *sys.argv[3:])


if __name__ == "__main__":
    main()
