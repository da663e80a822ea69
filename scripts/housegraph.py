#!/usr/bin/env python3
"""Loops and back-up arrows in userspace/.

Two graphs over the modules of userspace/ (a module: foo.c with foo.h and
foo_int.h; a header without a .c of its name, or whose functions more than
one module defines, is a node of its own):
  includes: module A -> module B when a file of A includes a header of B;
  calls:    A.o -> B.o when A.o needs a symbol B.o defines (nm on build/obj).
Reports the cycles of each (strongly connected components of more than one
node) and every include or call from a folder to one below it in
userspace/README.md's table (a back-up arrow).
Exits 1 when there is a loop or a back-up arrow.
usage: scripts/housegraph.py [TREE [BUILD]]   (after make: it reads build/obj; TREE: this checkout)
"""
import os
import re
import subprocess
import sys

tree = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
build = sys.argv[2] if len(sys.argv) > 2 else os.path.join(tree, "build")
us = os.path.join(tree, "userspace")

# The floors, top of the data path first, as userspace/README.md's table lists them.
order = re.findall(r"^\| `([a-z]+)/` \|", open(os.path.join(us, "README.md")).read(), re.M)
rank = {f: i for i, f in enumerate(order)}

files = []
for d in sorted(os.listdir(us)):
    p = os.path.join(us, d)
    if os.path.isdir(p):
        files += [f"{d}/{f}" for f in sorted(os.listdir(p)) if f.endswith((".c", ".h"))]
have_c = {f[:-2] for f in files if f.endswith(".c")}


shared_h = set()


def module(path):
    """foo.c, foo.h and foo_int.h (what foo's files share) are module foo."""
    if path in shared_h:
        return path
    base = path[:-2]
    if base.endswith("_int") and base[:-4] in have_c:
        return base[:-4]
    return base if base in have_c else path


calls = {}
defs, undefs = {}, {}
for f in files:
    if not f.endswith(".c"):
        continue
    o = os.path.join(build, "obj", f[:-2] + ".o")
    if not os.path.exists(o):
        continue
    out = subprocess.run(["nm", o], capture_output=True, text=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "TDBR":
            defs[parts[2]] = f[:-2]
        elif len(parts) == 2 and parts[0] == "U":
            undefs.setdefault(f[:-2], set()).add(parts[1])
for a, syms in undefs.items():
    for s in syms:
        b = defs.get(s)
        if b and b != a:
            calls.setdefault(a, set()).add(b)


# A header whose functions are defined in more than one module (a folder's
# public interface, e.g. maps/tables.h) is a node of its own: it belongs to
# none of its definers.
for f in files:
    if not f.endswith(".h"):
        continue
    text = open(os.path.join(us, f)).read()
    names = re.findall(r"^(?!static|#|typedef|struct [a-z_]+ \{)[a-z][^;(]*?\b([a-z_0-9]+)\(", text, re.M)
    owners = {defs[n] for n in names if n in defs}
    if len(owners) > 1:
        shared_h.add(f)


inc = {}
for f in files:
    for m in re.finditer(r'^#include "([a-z_]+/[A-Za-z0-9_]+\.h)"', open(os.path.join(us, f)).read(), re.M):
        h = m.group(1)
        if h.split("/")[0] in rank and module(h) != module(f):
            inc.setdefault(module(f), set()).add(module(h))

def sccs(g):
    idx, low, on, st, out, n = {}, {}, set(), [], [], [0]
    nodes = set(g) | {v for vs in g.values() for v in vs}

    def visit(v):
        idx[v] = low[v] = n[0]
        n[0] += 1
        st.append(v)
        on.add(v)
        for w in sorted(g.get(v, ())):
            if w not in idx:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], idx[w])
        if low[v] == idx[v]:
            c = []
            while True:
                w = st.pop()
                on.discard(w)
                c.append(w)
                if w == v:
                    break
            if len(c) > 1:
                out.append(sorted(c))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in idx:
            visit(v)
    return sorted(out)


def folder(m):
    return m.split("/")[0]


def nodes(g):
    return set(g) | {v for vs in g.values() for v in vs}


found = 0
if len(calls) < 10:
    sys.exit(f"housegraph: {len(calls)} objects with calls under {build}/obj: build first")


for name, g in (("includes", inc), ("calls", calls)):
    edges = sum(len(v) for v in g.values())
    loops = sccs(g)
    print(f"{name}: {len(nodes(g))} modules, {edges} edges, {len(loops)} loops")
    for c in loops:
        print("  loop: " + " <-> ".join(c))
    fl = {}
    for a, bs in g.items():
        for b in bs:
            fa, fb = folder(a), folder(b)
            if fa != fb:
                fl.setdefault(fa, set()).add(fb)
    for c in sccs(fl):
        print("  folder loop: " + " <-> ".join(c))
    for fo in order:
        mods = sorted(m for m in nodes(g) if folder(m) == fo)
        comp = {m: m for m in mods}
        for c in sccs({m: {v for v in g.get(m, ()) if folder(v) == fo} for m in mods}):
            for m in c:
                comp[m] = c[0]
        # Floors: the longest chain of calls (or includes) inside the folder, a loop one floor.
        down = {}
        for m in mods:
            down.setdefault(comp[m], set()).update(
                comp[v] for v in g.get(m, ()) if folder(v) == fo and comp[v] != comp[m])
        floor = {}

        def depth(c):
            if c not in floor:
                floor[c] = 1 + max((depth(d) for d in down[c]), default=0)
            return floor[c]

        if mods:
            print(f"  {fo}/: {len(mods)} modules on {max(depth(c) for c in down)} floors")
    back = sorted((a, b) for a, bs in g.items() for b in bs
                  if folder(a) in rank and folder(b) in rank and rank[folder(b)] > rank[folder(a)])
    print(f"  back-up arrows: {len(back)}")
    for a, b in back:
        print(f"    {a} -> {b}")
    found += len(loops) + len(back)
sys.exit(1 if found else 0)
