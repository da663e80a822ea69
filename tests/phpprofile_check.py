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
(<internal>)"); its samples inside one are left out of the comparison (and
counted), and internal frames out of its pairs, as excimer's stacks leave
them out.
"""
import collections
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# The folded output's reader, and the pprof/OTLP read-back: the node checks'.
import v8profile_check as v8  # noqa: E402
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


def overlap_of(a, b):
    ta, tb = sum(a.values()), sum(b.values())
    return sum(min(a[k] / ta, b[k] / tb) for k in set(a) | set(b))


def cmd_excimer(folded, collapsed):
    ours, theirs = collections.Counter(), collections.Counter()
    pairs, ref_pairs = collections.Counter(), set()
    in_internal = 0
    for frames, n in stacks(folded):
        php = php_frames(frames, internal=True)
        if not php:
            continue
        # Inside an internal function (usort's own C): excimer cannot sample
        # there, and gives that time to its next safe point. Said, not judged.
        if php[-1][1] == "<internal>":
            in_internal += n
            continue
        names = [f[0] for f in php if f[1] != "<internal>"]
        ours[names[-1]] += n
        for a, b in zip(names, names[1:]):
            pairs[(a, b)] += n
    for names, n in excimer_stacks(collapsed):
        if not names:
            continue
        theirs[names[-1]] += n
        ref_pairs.update(zip(names, names[1:]))
    if sum(ours.values()) < 100 or sum(theirs.values()) < 100:
        print("too few samples: sfbpf %d, excimer %d with PHP frames"
              % (sum(ours.values()), sum(theirs.values())))
        return 1
    ov = overlap_of(ours, theirs)
    tot = sum(pairs.values())
    seen = sum(n for p, n in pairs.items() if p in ref_pairs)
    unseen = sorted((p for p in pairs if p not in ref_pairs), key=lambda p: -pairs[p])[:3]
    top = lambda c: ", ".join("%s %.2f" % (k, v / sum(c.values())) for k, v in c.most_common(4))
    print("innermost overlap %.3f (sfbpf %d samples: %s; excimer %d: %s; %d more of "
          "sfbpf's inside internal functions, where excimer cannot sample); pairs seen by "
          "excimer %.3f%s" % (ov, sum(ours.values()), top(ours), sum(theirs.values()),
                              top(theirs), in_internal, seen / tot if tot else 1.0,
                              ", unseen %s" % unseen if unseen else ""))
    return 0 if ov >= 0.85 and (not tot or seen / tot >= 0.98) else 1


def cmd_root(folded, minimum):
    with_php = whole = 0
    for frames, n in stacks(folded):
        if not php_frames(frames):
            continue
        with_php += n
        whole += n * any(f == "_start" or f.startswith("__libc_start") for f in frames[1:3])
    share = whole / with_php if with_php else 0
    print("%d of %d samples with PHP frames reach _start (%.3f, at least %s)"
          % (whole, with_php, share, minimum))
    return 0 if with_php and share >= float(minimum) else 1


def cmd_has(folded, func, minimum):
    inner, tot = collections.Counter(), 0
    for frames, n in stacks(folded):
        names = [f[0] for f in php_frames(frames, internal=True)]
        if names:
            inner[names[-1]] += n
            tot += n
    share = inner[func] / tot if tot else 0
    print("%s innermost in %.3f of %d samples with PHP frames (at least %s): %s"
          % (func, share, tot, minimum, inner.most_common(3)))
    return 0 if share >= float(minimum) else 1


def cmd_program(folded, comm, srcdir):
    files = collections.defaultdict(list)
    for d, _, names in os.walk(srcdir):
        for f in names:
            if f.endswith(".php"):
                files[f].append(os.path.join(d, f))
    total = with_php = whole = 0
    bad, known = collections.Counter(), {}
    for frames, n in stacks(folded):
        if not frames[0].startswith(comm):
            continue
        total += n
        php = php_frames(frames)
        if not php:
            continue
        with_php += n
        whole += n * any(f == "_start" or f.startswith("__libc_start") for f in frames[1:3])
        for name, f, line in php:
            key = (name, f, line)
            if key not in known:
                known[key] = False
                method = name.split("::")[-1].split("\\")[-1]
                for path in files.get(f, []):
                    src = open(path, encoding="utf-8", errors="replace").read()
                    if line > src.count("\n") + 1:
                        continue
                    if name in ("{main}", "{closure}") or re.search(
                            r"function\s+&?\s*%s\s*\(" % re.escape(method), src):
                        known[key] = True
                        break
            if not known[key]:
                bad["%s (%s:%d)" % key] += n
    share = with_php / total if total else 0
    wshare = whole / with_php if with_php else 0
    print("%s: %d samples, %.3f with PHP frames (at least 0.5), %.3f of those whole to _start "
          "(at least 0.9); frames no file under %s defines: %s"
          % (comm, total, share, wshare, srcdir, bad.most_common(3) or "none"))
    return 0 if total and share >= 0.5 and wshare >= 0.9 and not bad else 1


def cmd_chain(folded, *want):
    want = list(want)
    n_with = 0
    for frames, n in stacks(folded):
        names = [f[0] for f in php_frames(frames, internal=True)]
        if any(names[i:i + len(want)] == want for i in range(len(names))):
            n_with += n
    print("%d samples hold %s" % (n_with, " -> ".join(want)))
    return 0 if n_with else 1


def cmd_outputs(name, folded, raw, otlp):
    ok = v8.outputs_equal(name, folded, raw, otlp, lambda f: bool(php_frames(f)), "php", "PHP",
                          "php")
    return 0 if ok else 1


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
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
    if cmd == "program":
        return cmd_program(*args)
    print("unknown command %s" % cmd)
    return 2


if __name__ == "__main__":
    sys.exit(main())
