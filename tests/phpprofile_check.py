#!/usr/bin/env python3
"""Checks of sfbpf-top's profiles of PHP scripts against their source and php-excimer.

tests/phpprofile.test runs it; each command prints one line and exits 0 (pass)
or 1 (fail):
  names FOLDED SRC... [-- FUNC...]  every PHP frame of the SRC files names a
                                   function of that file at a line inside its
                                   body (a file's own code: a line outside every
                                   function), never another's; FUNCs each appear
  excimer FOLDED COLLAPSED         against php-excimer on the same run: the
                                   innermost PHP function's distribution overlaps
                                   by >= 0.85, and >= 98 % of sfbpf's caller ->
                                   callee pairs (by samples) are pairs excimer saw
  root FOLDED MIN                  of the samples with a PHP frame, the share whose
                                   stack reaches the thread's start (_start) is
                                   >= MIN
  has FOLDED FUNC MIN              FUNC is the innermost PHP frame (internal
                                   functions' included) of >= MIN of the samples
                                   with PHP frames (off-CPU: where the script
                                   blocks)
  chain FOLDED FUNC...             a sample holds FUNC... as consecutive PHP
                                   frames, internal functions' included (their
                                   own native frames may stand between)
  outputs NAME FOLDED RAW OTLP     the session's pprof (RAW: pprof -raw) and OTLP
                                   (OTLP: protoc --decode) profiles read back as
                                   folded stacks equal its folded output; OTLP
                                   types PHP's frames "php" (prints PASS/FAIL
                                   lines of its own)
  program FOLDED COMM SRCDIR       a program no test wrote (the samples whose
                                   thread name begins with COMM): >= 50 % of them
                                   with PHP frames, >= 90 % of those whole to
                                   _start, and every PHP frame a function its
                                   source (a file of that name under SRCDIR)
                                   defines, at a line the file has

php-excimer samples at the VM's safe points (a function's entry, a loop's
back edge), never inside an internal function (an extension's, usort): the
time spent there goes to its next safe point, a callback's entry or its
caller's next line. sfbpf names internal functions' frames ("usort
(<internal>)"); its samples inside one are given as excimer gives them: to
the function it calls back where sfbpf's stacks show it calling one (usort,
its comparison closure), else to its caller; internal frames are left out of
its pairs, as excimer's stacks leave them out. (Leaving those samples out
instead, a tenth of them, left excimer's callback share above sfbpf's by as
much as 0.09.)
"""
import collections
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# The folded output's reader, and the pprof/OTLP read-back: the node checks'.
import v8profile_check as v8  # noqa: E402
import vmframes_check as vm  # noqa: E402
from v8profile_check import stacks  # noqa: E402

# A runtime frame as sfbpf names it: "NAME (FILE:LINE)"; an internal function
# (an extension's, called by the VM) "NAME (<internal>)".
FRAME = re.compile(r"^(.*) \(([^()]+\.php):(\d+)\)$")
INTERNAL = re.compile(r"^(.*) \(<internal>\)$")


def norm(name):
    # A closure in a namespace is NS\{closure}; PHP 8.4 names one by where it
    # is defined: {closure:outer():12}.
    return "{closure}" if "{closure" in name else name


def php_frames(frames, internal=False):
    """The PHP frames of a stack, outermost first: (name, file, line); with
    internal, internal functions' too, as (name, "<internal>", 0)."""
    out = []
    for f in frames:
        m = FRAME.match(f)
        if m:
            out.append((norm(m.group(1)), m.group(2), int(m.group(3))))
        elif internal and INTERNAL.match(f):
            out.append((INTERNAL.match(f).group(1), "<internal>", 0))
    return out


def functions(path):
    """name -> [(first, last)] line ranges of the file's functions and methods."""
    src = open(path, encoding="utf-8").read().split("\n")
    ns, cls, funcs = "", None, collections.defaultdict(list)
    depth, cls_depth, open_fns = 0, None, []
    for i, line in enumerate(src, 1):
        m = re.match(r"\s*namespace\s+([\w\\]+)\s*;", line)
        if m:
            ns = m.group(1) + "\\"
        m = re.match(r"\s*(?:final\s+|abstract\s+)?class\s+(\w+)", line)
        if m:
            cls, cls_depth = m.group(1), depth
        for m in re.finditer(r"function\s*(&?\s*\w+)?\s*\(", line):
            name = (m.group(1) or "").strip("& ")
            if not name:
                name = "{closure}"
            elif cls is not None and depth > cls_depth:
                name = cls + "::" + name
            else:
                name = ns + name
            open_fns.append([name, i, None, depth])
        for ch in line:
            if ch == "{":
                depth += 1
                for f in open_fns:
                    if f[2] is None and depth == f[3] + 1:
                        f[2] = depth
            elif ch == "}":
                depth -= 1
                for f in list(open_fns):
                    if f[2] is not None and depth == f[2] - 1:
                        funcs[f[0]].append((f[1], i))
                        open_fns.remove(f)
                if cls is not None and depth == cls_depth:
                    cls = None
    funcs["__nlines"] = [(1, len(src))]
    return funcs


def cmd_names(folded, rest):
    if "--" in rest:
        srcs, want = rest[: rest.index("--")], rest[rest.index("--") + 1:]
    else:
        srcs, want = rest, []
    known = {os.path.basename(s): functions(s) for s in srcs}
    seen, bad, total = set(), [], 0
    for frames, n in stacks(folded):
        for name, f, line in php_frames(frames):
            fn = known.get(os.path.basename(f))
            if fn is None:
                continue
            total += n
            seen.add(name)
            if name == "{main}":
                ok = 1 <= line <= fn["__nlines"][0][1] and not any(
                    a < line <= b for k, r in fn.items() if k != "__nlines" for a, b in r)
            else:
                ok = any(a <= line <= b for a, b in fn.get(name, []))
            if not ok:
                bad.append("%s at %s:%d" % (name, f, line))
    missing = [w for w in want if w not in seen]
    if not total:
        print("no PHP frame of %s" % " ".join(known))
        return 1
    if bad or missing:
        print("%d frames: wrong %s; missing %s" % (total, sorted(set(bad))[:5], missing))
        return 1
    print("%d frames of %d functions, each inside its function; %s all there"
          % (total, len(seen), " ".join(want) or "nothing asked"))
    return 0


def excimer_stacks(path):
    """excimer's collapsed stacks: [names outermost first] and counts."""
    for line in open(path, encoding="utf-8", errors="replace"):
        line = line.rstrip("\n").lstrip(";")
        if not line:
            continue
        st, n = line.rsplit(" ", 1)
        names = []
        for f in st.split(";"):
            if not f:
                continue
            # A file's own code is named by its path.
            names.append("{main}" if f.startswith("/") else norm(f))
        yield names, int(n)


def cmd_excimer(folded, collapsed):
    ours, pairs = collections.Counter(), collections.Counter()
    theirs, ref_pairs = collections.Counter(), set()
    # What each internal function, at its place in a stack, was seen calling
    # back (usort its comparison closure): sfbpf's own stacks say.
    runs = [(php_frames(frames, internal=True), n) for frames, n in stacks(folded)]
    calls_back = collections.defaultdict(collections.Counter)
    for php, n in runs:
        for i in range(1, len(php)):
            if php[i - 1][1] == "<internal>" and php[i][1] != "<internal>":
                calls_back[tuple(f[0] for f in php[:i])][php[i][0]] += n
    to_callback = to_caller = 0
    for php, n in runs:
        names = [f[0] for f in php if f[1] != "<internal>"]
        if not names:
            continue
        # Inside an internal function (usort's own C): excimer cannot sample
        # there, and gives the time to the next safe point, the entry of the
        # callback it calls next or its caller's next line. So given here.
        if php[-1][1] == "<internal>":
            back = calls_back.get(tuple(f[0] for f in php))
            if back:
                names.append(back.most_common(1)[0][0])
                to_callback += n
            else:
                to_caller += n
        ours[names[-1]] += n
        for a, b in zip(names, names[1:]):
            pairs[(a, b)] += n
    for names, n in excimer_stacks(collapsed):
        if not names:
            continue
        theirs[names[-1]] += n
        ref_pairs.update(zip(names, names[1:]))
    return vm.judge_reference(ours, pairs, theirs, ref_pairs, "excimer",
                              "; of them inside internal functions, where excimer cannot "
                              "sample, %d given to the callback each calls, %d to its caller"
                              % (to_callback, to_caller))


def cmd_root(folded, minimum):
    return vm.root(folded, minimum, php_frames, "PHP")


def cmd_has(folded, func, minimum):
    return vm.has(folded, func, minimum, lambda f: php_frames(f, internal=True), "PHP")


def defines(name, src, line):
    """Whether the PHP source src defines the function name (a file's own code and
    closures are any file's). A trait's method may run under another name, the alias
    the class using it gives (`use T { get as private doGet; }`: PHP's own backtraces
    name it so too): a trait's frame is taken at any name, its file a trait's."""
    method = name.split("::")[-1].split("\\")[-1]
    return name in ("{main}", "{closure}") or bool(
        re.search(r"function\s+&?\s*%s\s*\(" % re.escape(method), src)) or bool(
        "::" in name and re.search(r"^\s*trait\s+\w+", src, re.M))


def cmd_program(folded, comm, srcdir, within=None, least="0.5"):
    return vm.program(folded, comm, srcdir, php_frames, "PHP", (".php",), frame_ok=defines,
                      within=within, least=float(least))


def cmd_chain(folded, *want):
    want = list(want)
    n_with = 0
    for frames, n in stacks(folded):
        names = [f[0] for f in php_frames(frames, internal=True)]
        if any(names[i:i + len(want)] == want for i in range(len(names))):
            n_with += n
    print("%d samples hold %s" % (n_with, " -> ".join(want)))
    return 0 if n_with else 1


def cmd_leaf(folded, func, lo, hi):
    """The innermost frame's line: where FUNC is the innermost PHP frame, at least 90 %
    of its samples at a line in [LO, HI] (its loop), and each line of the loop with at
    least 5 % (the VM keeps the opline it runs in a register, its frame's a stale one:
    read from the frame alone, every sample would stand at one line)."""
    lines, tot = collections.Counter(), 0
    for frames, n in stacks(folded):
        fr = php_frames(frames)
        if fr and fr[-1][0] == func:
            lines[fr[-1][2]] += n
            tot += n
    inside = sum(v for k, v in lines.items() if int(lo) <= k <= int(hi))
    each = [lines[k] / tot if tot else 0 for k in range(int(lo), int(hi) + 1)]
    print("%s innermost in %d samples, at lines %s; %.3f in %s-%s (at least 0.9), each "
          "line's share %s (at least 0.05)" % (func, tot, sorted(lines.items()),
                                                inside / tot if tot else 0, lo, hi,
                                                ["%.2f" % x for x in each]))
    return 0 if tot and inside >= 0.9 * tot and min(each) >= 0.05 else 1


def cmd_outputs(name, folded, raw, otlp):
    ok = v8.outputs_equal(name, folded, raw, otlp, lambda f: bool(php_frames(f)), "php", "PHP",
                          "php")
    return 0 if ok else 1


def cmd_includes(folded, srcdir):
    """Files included again and again (no opcache: each one's code freed once it ran,
    the next one's compiled where it was): inc_K.php's own code, cl_K.php's a closure
    of namespace NK (its name, "NK\\{closure}", a string freed with it). Each frame of
    an included file at a line of its code, a closure's named as its own; at most
    0.5 % otherwise, at least 50 frames a file."""
    lines, seen, wrong = {}, collections.Counter(), collections.Counter()
    for f in os.listdir(srcdir):
        if f.startswith(("inc_", "cl_")) and f.endswith(".php"):
            src = open(os.path.join(srcdir, f)).read().split("\n")
            lines[f] = {i + 1 for i, t in enumerate(src)
                        if t.strip() and not t.startswith(("//", "<?php", "namespace"))}
    for frames, n in stacks(folded):
        for f in frames:
            m = FRAME.match(f)
            if not m or m.group(2) not in lines:
                continue
            name, file, line = m.group(1), m.group(2), int(m.group(3))
            seen[file] += n
            want = ("{main}",) if file.startswith("inc_") else (
                "{main}", "N%s\\{closure}" % file[3:-4])
            if line not in lines[file] or name not in want:
                wrong[(name, file, line)] += n
    tot = sum(seen.values())
    print("%d frames of %d included files, %d (%.4f, at most 0.005) named as another's "
          "%s; fewest of a file %d (at least 50)"
          % (tot, len(lines), sum(wrong.values()), sum(wrong.values()) / (tot or 1),
             wrong.most_common(3), min([seen[f] for f in lines] or [0])))
    return 0 if tot and sum(wrong.values()) <= 0.005 * tot and min(
        seen[f] for f in lines) >= 50 else 1


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "includes":
        return cmd_includes(*args)
    if cmd == "names":
        return cmd_names(args[0], args[1:])
    if cmd == "excimer":
        return cmd_excimer(*args)
    if cmd == "root":
        return cmd_root(*args)
    if cmd == "has":
        return cmd_has(*args)
    if cmd == "chain":
        return cmd_chain(*args)
    if cmd == "outputs":
        return cmd_outputs(*args)
    if cmd == "leaf":
        return cmd_leaf(*args)
    if cmd == "program":
        return cmd_program(*args)
    print("unknown command %s" % cmd)
    return 2


if __name__ == "__main__":
    sys.exit(main())
