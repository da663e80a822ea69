#!/usr/bin/env python3
"""Checks of sfbpf-top's profiles of node against the fixture and V8's own profiler.

tests/v8profile.test runs it; each command prints one line and exits 0 (pass)
or 1 (fail):
  names FOLDED FIXTURE [FUNC...]   every frame of the fixture's file names one of
                                   its functions at a line inside it (never another
                                   function's name, never a line outside); FUNCs
                                   each appear
  calls FOLDED FIXTURE             every caller -> callee pair of the fixture's
                                   frames is a call the fixture's source makes
                                   (inlined frames, as optimised code records them;
                                   an anonymous closure the caller defines, its call)
  cpuprof FOLDED PROFDIR           against node --cpu-prof of the same run: the
                                   innermost JavaScript function's distribution
                                   overlaps by >= 0.85 (--overlap-said: said, not
                                   judged; --file BASE: judged on BASE's functions
                                   alone; --without NAME: samples with NAME on
                                   their stack left out on both sides); >= 98 %
                                   of sfbpf's caller -> callee pairs (by samples)
                                   are edges of V8's tree
  root FOLDED MIN                  of the samples with a JavaScript frame, the share
                                   whose stack reaches the thread's start (_start,
                                   or a thread's clone) is >= MIN
  rootvs FOLDED PERFSCRIPT MARGIN  the same share against perf -g's of the same process
                                   with its perf map (perf script -F comm,tid,ip,sym):
                                   at least as high, less MARGIN
  has FOLDED ROOT FUNC             a sample whose stack begins at ROOT (comm;first
                                   frame; alternatives split by |; * any) holds FUNC's frame
  leaves FOLDED FIXTURE FUNC       FUNC's frames as leaves (interpreted: the line
                                   its bytecode handler runs) at two lines or more
                                   of its body, not only where it calls out
  program FOLDED COMM              a program no test wrote (the samples whose thread
                                   name begins with COMM): >= 50 % of them with
                                   JavaScript frames (a process is attached once it
                                   is seen), >= 90 % of those whole to their
                                   thread's start; those with [unknown js] said
                                   (a process that exits before its samples are
                                   read has nothing left to name them by: more
                                   of them on a busy machine)
"""
import collections
import glob
import json
import re
import sys

# A script's name may hold a colon: node's own modules are node:net, node:internal/x.
# A frame whose line V8 does not know (no position table yet) has none.
JS = re.compile(r"^(.*) \(([^()]+?)(?::(\d+))?\)$")
# V8's pseudo-functions: not JavaScript anyone wrote.
V8_PSEUDO = {"(garbage collector)", "(program)", "(idle)", "(root)"}
# Frames of the collector: V8's profiler counts those samples as (garbage collector).
GC = re.compile(r"v8::internal::Heap::|Scavenge|MarkCompact|ConcurrentMarking")


def stacks(path):
    for line in open(path, encoding="utf-8", errors="replace"):
        line = line.rstrip("\n")
        if not line:
            continue
        st, n = line.rsplit(" ", 1)
        yield st.split(";"), int(n)


def js_frames(frames):
    """The JavaScript frames of a stack, outermost first: (name, file, line or None)."""
    out = []
    for f in frames:
        m = JS.match(f)
        if m:
            out.append((m.group(1), m.group(2), int(m.group(3)) if m.group(3) else None))
    return out


def fixture_functions(path):
    """name -> (first line, last line) of the fixture's functions and methods."""
    lines = open(path, encoding="utf-8").read().split("\n")
    funcs, stack = {}, []
    # A class is its constructor: V8 names "new X()"'s frame X.
    start = re.compile(r"^(\s*)(?:(?:async )?function (\w+)\s*\(|class (\w+) \{$|(\w+)\s*\([^)]*\)\s*\{$)")
    for i, text in enumerate(lines, 1):
        m = start.match(text)
        name = m and (m.group(2) or m.group(3) or m.group(4))
        if m and name not in ("if", "for", "while"):
            stack.append((name, i, len(m.group(1))))
            continue
        if stack and re.match(r"^\s*\}\s*$", text) and len(text) - len(text.lstrip()) == stack[-1][2]:
            name, first, _ = stack.pop()
            funcs[name] = (first, i)
    return funcs


def calls_in(path, funcs):
    """caller -> set of callees, from the fixture's text (a call: NAME( or .NAME()."""
    lines = open(path, encoding="utf-8").read().split("\n")
    out = collections.defaultdict(set)
    for caller, (a, b) in funcs.items():
        body = "\n".join(lines[a:b - 1])
        for callee in funcs:
            if re.search(r"(^|[^\w])" + callee + r"\(", body):
                out[caller].add(callee)
    return out


def closure_lines(path):
    """The lines of the fixture that define an anonymous function."""
    lines = open(path, encoding="utf-8").read().split("\n")
    return {i for i, text in enumerate(lines, 1) if re.search(r"=>|function\s*\(", text)}


def cmd_names(folded, fixture, want):
    funcs = fixture_functions(fixture)
    closures = closure_lines(fixture)
    base = fixture.rsplit("/", 1)[-1]
    seen, bad, total, lineless = collections.Counter(), collections.Counter(), 0, 0
    for frames, n in stacks(folded):
        for name, file, line in js_frames(frames):
            if file != base:
                continue
            total += n
            short = name.rsplit(".", 1)[-1]
            rng = funcs.get(short)
            # A function's name without its line: right, if it is one of the file's.
            if line is None:
                lineless += n
                if rng:
                    seen[short] += n
                else:
                    bad[name] += n
                continue
            # Top-level code runs as "(anonymous)": outside every function;
            # so does a closure (an arrow function), on its own line.
            if name == "(anonymous)" and (line in closures or
                                          not any(a <= line <= b for a, b in funcs.values())):
                seen[name] += n
            elif rng and rng[0] <= line <= rng[1]:
                seen[short] += n
            else:
                bad["%s:%d" % (name, line)] += n
    # --none-needed: a V8 whose metadata lies may have no frame named at all.
    none_needed = "--none-needed" in want
    missing = [f for f in want if f != "--none-needed" and not seen[f]]
    ok = (total > 0 or none_needed) and not bad and not missing
    print("names: %d frames of %s (%d without a line); %s; wrong: %s; missing: %s" % (
        total, base, lineless, ", ".join("%s %d" % kv for kv in seen.most_common(8)),
        dict(bad.most_common(5)) or "none", missing or "none"))
    return ok


def cmd_calls(folded, fixture):
    funcs = fixture_functions(fixture)
    calls = calls_in(fixture, funcs)
    closures = closure_lines(fixture)
    base = fixture.rsplit("/", 1)[-1]
    good = bad = 0
    wrong = collections.Counter()
    for frames, n in stacks(folded):
        js = [(name.rsplit(".", 1)[-1], f, line) for name, f, line in js_frames(frames)]
        for (a, fa, _), (b, fb, lb) in zip(js, js[1:]):
            if fa != base or fb != base or a not in funcs:
                continue
            # A closure the caller made, called by it (through a builtin: new Promise's executor).
            inner = b == "(anonymous)" and lb in closures and funcs[a][0] <= lb <= funcs[a][1]
            if b in calls[a] or inner:
                good += n
            else:
                bad += n
                wrong["%s->%s" % (a, b)] += n
    print("calls: %d pairs the source makes, %d not: %s" % (good, bad, dict(wrong.most_common(5)) or "none"))
    return good > 0 and bad == 0


def v8_profile(profdir):
    files = glob.glob(profdir + "/*.cpuprofile")
    if not files:
        return None
    prof = json.load(open(files[0]))
    nodes = {n["id"]: n for n in prof["nodes"]}
    parent = {}
    for n in prof["nodes"]:
        for c in n.get("children", []):
            parent[c] = n["id"]
    return prof, nodes, parent


def label(cf):
    return (cf["functionName"] or "(anonymous)", cf["url"].rsplit("/", 1)[-1])


MIN_JUDGED = 400


def overlap_of(a, b):
    ta, tb = sum(a.values()), sum(b.values())
    return sum(min(a[k] / ta, b[k] / tb) for k in set(a) | set(b)) if ta and tb else 0


def cmd_cpuprof(folded, profdir, said=False, only=None, without=None):
    got = v8_profile(profdir)
    if not got:
        print("cpuprof: no .cpuprofile in %s" % profdir)
        return False
    prof, nodes, parent = got
    v8, v8_only = collections.Counter(), collections.Counter()

    def has_without(i):
        while without and i is not None:
            if nodes[i]["callFrame"]["functionName"] == without:
                return True
            i = parent.get(i)
        return False

    left_out = [0, 0]
    for i in prof["samples"]:
        cf = nodes[i]["callFrame"]
        if cf["functionName"] in V8_PSEUDO or not cf["url"]:
            continue
        if has_without(i):
            left_out[0] += 1
            continue
        v8[label(cf)[0]] += 1
        if label(cf)[1] == only:
            v8_only[label(cf)[0]] += 1
    edges = set()
    for c, p in parent.items():
        a, b = nodes[p]["callFrame"], nodes[c]["callFrame"]
        if a["url"] and b["url"]:
            edges.add((label(a), label(b)))
    ours, ours_only = collections.Counter(), collections.Counter()
    pairs = seen = 0
    for frames, n in stacks(folded):
        if any(GC.search(f) for f in frames):
            continue
        js = js_frames(frames)
        if not js:
            continue
        if without and any(f[0] == without for f in js):
            left_out[1] += n
            continue
        ours[js[-1][0]] += n
        if js[-1][1].rsplit("/", 1)[-1] == only:
            ours_only[js[-1][0]] += n
        for (a, fa, _), (b, fb, _) in zip(js, js[1:]):
            pairs += n
            # V8's tree keeps node's own modules' URLs whole (node:internal/x): by base name.
            seen += n * (((a, fa.rsplit("/", 1)[-1]), (b, fb.rsplit("/", 1)[-1])) in edges or
                         any(x[0] == a and y[0] == b for x, y in edges))
    ta, tb = sum(v8.values()), sum(ours.values())
    if not ta or not tb or not pairs:
        print("cpuprof: V8 %d samples, sfbpf %d, %d pairs" % (ta, tb, pairs))
        return False
    overlap = overlap_of(v8, ours)
    top = sorted(set(v8) | set(ours), key=lambda k: -(v8[k] / ta + ours[k] / tb))[:5]
    share = seen / pairs
    print("cpuprof: innermost overlap %.3f (V8 %d samples, sfbpf %d: %s); pairs in V8's tree %.3f" % (
        overlap, ta, tb, ", ".join("%s %.2f/%.2f" % (k, v8[k] / ta, ours[k] / tb) for k in top), share))
    if without:
        print("cpuprof: left out, %s on the stack: V8 %d samples, sfbpf %d" % (without, *left_out))
    # A distribution needs samples: a process starved of CPU by a busy machine
    # (a loaded make check: tens of samples) is said, not judged.
    if min(ta, tb) < MIN_JUDGED:
        print("cpuprof: not judged: %d and %d samples, under %d (the machine is busy)" % (
            ta, tb, MIN_JUDGED))
        return True
    if only:
        # V8's profiler samples by wall clock (a preempted thread's tick lands
        # where it resumes), sfbpf by CPU time: where a thread makes system
        # calls on a busy machine (an http server's writev), the two part.
        # Judged on the file's own functions, which only compute.
        overlap = overlap_of(v8_only, ours_only)
        print("cpuprof: %s's functions: innermost overlap %.3f (judged; the whole said)" % (only, overlap))
    return (overlap >= 0.85 or said) and share >= 0.98


def cmd_root(folded, minimum):
    js = whole = 0
    for frames, n in stacks(folded):
        if not js_frames(frames):
            continue
        js += n
        whole += n * (len(frames) > 1 and frames[1] in ("_start", "clone3", "clone", "start_thread"))
    share = whole / js if js else 0
    print("root: %d of %d samples with JavaScript reach their thread's start (%.3f)" % (whole, js, share))
    return js > 0 and share >= minimum


STARTS = ("_start", "clone3", "clone", "start_thread")
# A perf map's names of V8's code (node --perf-basic-prof), as perf script shows them.
PERF_JS = re.compile(r"^(JS|LazyCompile|Function|Script|Eval):")
PERF_ROOT = re.compile(r"^(_start|__libc_start_call_main|__libc_start_main\S*|clone3?|start_thread)(\+0x[0-9a-f]+)?$")


def perf_samples(path):
    """perf script -F comm,tid,ip,sym: each sample's symbols, innermost first."""
    cur = None
    for line in open(path, encoding="utf-8", errors="replace"):
        if not line.strip():
            if cur is not None:
                yield cur
            cur = None
        elif line[0] in " \t":
            if cur is not None:
                parts = line.split(None, 1)
                cur.append(parts[1].strip() if len(parts) > 1 else "[unknown]")
        else:
            if cur is not None:
                yield cur
            cur = []
    if cur is not None:
        yield cur


def cmd_rootvs(folded, perf_script, margin):
    """sfbpf's share of JavaScript samples whole to their thread's start, against perf -g's
    of the same process with its perf map (--perf-basic-prof): as high, less margin."""
    js = whole = 0
    for frames, n in stacks(folded):
        if js_frames(frames):
            js += n
            whole += n * (len(frames) > 1 and frames[1] in STARTS)
    pjs = pwhole = 0
    for syms in perf_samples(perf_script):
        if any(PERF_JS.match(x) for x in syms):
            pjs += 1
            # perf -g walks frame pointers: libc's start, which keeps none, is its root.
            pwhole += bool(PERF_ROOT.match(syms[-1]))
    ours = whole / js if js else 0
    theirs = pwhole / pjs if pjs else 0
    print("rootvs: sfbpf %d of %d JavaScript samples whole (%.3f), perf -g with the perf map %d of %d (%.3f)" % (
        whole, js, ours, pwhole, pjs, theirs))
    return js > 0 and pjs > 0 and ours >= theirs - margin


def cmd_has(folded, root, func):
    roots = [r.split(";") for r in root.split("|")]
    n = sum(c for frames, c in stacks(folded)
            if any(len(frames) >= len(r) and all(w in ("*", f) for w, f in zip(r, frames))
                   for r in roots) and
            any(name.rsplit(".", 1)[-1] == func for name, _, _ in js_frames(frames)))
    print("has: %d samples from %s hold %s" % (n, root, func))
    return n > 0


def outputs_equal(name, folded, raw, otlp, has_frames, tag, what_frames, otype):
    """The session's pprof and OTLP profiles read back as folded stacks
    (hsprofile_check's readers: a runtime's frame by its tagged id, OTLP's by
    its frame type) equal its folded output; OTLP types the runtime's frames
    otype; >= 100 samples with its frames (has_frames(frames)). Prints one
    PASS/FAIL line each; returns whether all passed. phpprofile_check's too."""
    sys.path.insert(0, __file__.rsplit("/", 1)[0])
    import hsprofile_check as hs
    import otlp_check
    want = collections.Counter()
    for frames, n in stacks(folded):
        want[";".join(frames)] += n
    rt = sum(n for k, n in want.items() if has_frames(k.split(";")))
    ok = rt >= 100
    print("%s: %s-%s: %d samples with %s frames" % ("PASS" if ok else "FAIL", name,
                                                     tag, rt, what_frames))
    for what in ("pprof", "otlp"):
        types = {}
        try:
            if what == "pprof":
                got = hs.pprof_as_folded(open(raw, errors="replace").read())
            else:
                got, types = hs.otlp_as_folded(open(otlp, errors="replace").read())
        except otlp_check.Bad as e:
            print("FAIL: %s-%s: the request breaks the schema's rules: %s" % (name, what, e))
            ok = False
            continue
        bad = sorted(set(want) ^ set(got), key=lambda k: -(want[k] + got[k]))
        bad += [k for k in want if k in got and got[k] != want[k]]
        if bad:
            k = bad[0]
            print("FAIL: %s-%s: %d stacks differ, first %r: folded %d, %s %d" % (
                name, what, len(bad), k[-160:], want[k], what, got[k]))
            ok = False
        else:
            print("PASS: %s-%s: all %d stacks equal the folded output's" % (name, what, len(want)))
        if what == "otlp":
            good = types.get(otype, 0) > 0
            print("%s: %s-otlp-type: %d locations typed %s" % ("PASS" if good else "FAIL", name,
                                                                types.get(otype, 0), otype))
            ok = ok and good
    return ok


def cmd_outputs(name, folded, raw, otlp):
    """outputs_equal() for JavaScript: OTLP types its frames "v8js"."""
    return outputs_equal(name, folded, raw, otlp, js_frames, "js", "JavaScript", "v8js")


def cmd_leaves(folded, fixture, func):
    funcs = fixture_functions(fixture)
    lines = collections.Counter()
    for frames, n in stacks(folded):
        js = js_frames(frames)
        if js and JS.match(frames[-1]) and js[-1][0].rsplit(".", 1)[-1] == func:
            lines[js[-1][2]] += n
    first, last = funcs.get(func, (0, 0))
    inside = {k: v for k, v in lines.items() if k is not None and first <= k <= last}
    print("leaves: %s's leaf frames at lines %s" % (func, dict(lines.most_common(6))))
    return len(inside) >= 2 and sum(inside.values()) == sum(lines.values())


def cmd_program(folded, comm):
    total = js = whole = unknown = 0
    files = collections.Counter()
    for frames, n in stacks(folded):
        if not frames[0].startswith(comm):
            continue
        total += n
        own = js_frames(frames)
        if any(f.startswith("[unknown js]") for f in frames):
            unknown += n
        if not own:
            continue
        js += n
        whole += n * (len(frames) > 1 and frames[1] in ("_start", "clone3", "clone", "start_thread"))
        for _, f, _ in own:
            files[f] += n
    ok = total > 0 and js >= 0.5 * total and whole >= 0.9 * js
    print("program: %d samples of %s, %d with JavaScript frames, %d of those whole, %d with "
          "[unknown js]; files: %s" % (total, comm, js, whole, unknown,
                                       ", ".join("%s %d" % kv for kv in files.most_common(4))))
    return ok


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "names":
        ok = cmd_names(args[0], args[1], args[2:])
    elif cmd == "calls":
        ok = cmd_calls(args[0], args[1])
    elif cmd == "cpuprof":
        ok = cmd_cpuprof(args[0], args[1], "--overlap-said" in args,
                         args[args.index("--file") + 1] if "--file" in args else None,
                         args[args.index("--without") + 1] if "--without" in args else None)
    elif cmd == "root":
        ok = cmd_root(args[0], float(args[1]))
    elif cmd == "rootvs":
        ok = cmd_rootvs(args[0], args[1], float(args[2]))
    elif cmd == "outputs":
        ok = cmd_outputs(*args[:4])
    elif cmd == "leaves":
        ok = cmd_leaves(args[0], args[1], args[2])
    elif cmd == "program":
        ok = cmd_program(args[0], args[1])
    elif cmd == "has":
        ok = cmd_has(args[0], args[1], args[2])
    else:
        print("unknown command " + cmd)
        ok = False
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
