#!/usr/bin/env python3
"""Judges build/tests/hotspot against the JDK's own tools, for tests/hotspot.test.

  hotspot_check.py tables NAME OURS SA NM
      OURS: hotspot --tables PID; SA: jhsdb clhsdb's vmstructsdump, intConstant
      and longConstant of the same JVM; NM: `nm -C -S` of its libjvm.so (empty
      when it has no .symtab). Every entry of OURS is one the agent prints
      (statics aside: it prints none), and for every type of OURS the agent's
      type and fields are ours (it adds types of its own, and lists inherited
      fields under subtypes); every constant the agent prints is ours. Every
      static of OURS sits at the libjvm symbol TYPE::NAME (or inside it, for
      a member or an element). At least 300 types, 300 fields and 100
      constants.
  hotspot_check.py threads NAME OURS JSTACK [NAME=END ...] [compiled=NAME]
      OURS: hotspot --threads PID; JSTACK: jstack PID taken after it. Every
      JavaThread of jstack's SMR list is in OURS (same JavaThread*, and the
      TID jstack calls nid). The fixture's threads (sleeper, waiter, parker,
      reader, recurser, warmed) end as told (call_stub unless NAME=END says
      otherwise) and their frames equal jstack's, frame by frame (a walk
      that ends early: a prefix of them, at least one frame); compiled=NAME:
      at least two of that thread's frames are compiled code's (" *").
One PASS/FAIL line each.
"""
import re
import shlex
import sys

AGENT_TYPES = {"markOop"}
FIXTURE_THREADS = ["sleeper", "waiter", "parker", "reader", "recurser", "warmed"]


def lines_of(path):
    with open(path) as f:
        return [l.rstrip("\n") for l in f]


def tables(name, ours_path, sa_path, nm_path):
    ours = set()
    statics = []
    for l in lines_of(ours_path):
        if l.startswith("static "):
            statics.append(l.split())
        elif l:
            ours.add(l)
    sa = set()
    for l in lines_of(sa_path):
        l = re.sub(r"^(hsdb> )+", "", l)
        if re.match(r"(type|field|intConstant|longConstant) ", l):
            sa.add(l)
    kinds = {k: sum(1 for l in sa if l.startswith(k + " ")) for k in ("type", "field")}
    consts = sum(1 for l in sa if "Constant " in l)
    # The agent also lists a type's inherited fields under it: such a line
    # is ours too when the field is a supertype's, at the same offset.
    supers = {}
    fields = {}
    for l in ours:
        w = shlex.split(l)
        if w[0] == "type":
            supers[w[1]] = w[2]
        elif w[0] == "field":
            fields[(w[1], w[2])] = w[-2]
    def inherited(l):
        w = shlex.split(l)
        # The agent declares some types itself, over the JVM's (JDK 11's markOop
        # is an integer to it): its own, as those it adds.
        if w[0] == "type" and w[1] in AGENT_TYPES:
            return True
        if w[0] == "type" or (w[0] == "field" and w[1] not in supers):
            return w[1] not in supers  # a type of the agent's own, and its fields
        if w[0] != "field":
            return False
        t, seen = supers.get(w[1]), 0
        while t and t != "null" and seen < 64:
            if fields.get((t, w[2])) == w[-2]:
                return True
            t, seen = supers.get(t), seen + 1
        return False
    missing = sorted(l for l in sa - ours if not inherited(l))
    extra = sorted(l for l in ours - sa if shlex.split(l)[1] not in AGENT_TYPES)
    if kinds["type"] < 300 or kinds["field"] < 300 or consts < 100:
        print(f"FAIL: {name}: the agent printed too little: {kinds} {consts} constants")
    elif missing or extra:
        print(f"FAIL: {name}: {len(missing)} of the agent's entries not ours, {len(extra)} "
              f"of ours not the agent's: {missing[:3]} {extra[:3]}")
    else:
        print(f"PASS: {name}: {kinds['type']} types, {kinds['field']} fields and {consts} "
              "constants as jhsdb reads them")
    # nm -C -S: "VALUE SIZE KIND NAME"; a member of a static struct or array
    # ("CompressedOops::_narrow_oop._base", "vmClasses::_klasses[...]") lies
    # inside the symbol of the whole.
    syms = {}
    for l in lines_of(nm_path):
        m = re.match(r"([0-9a-f]+) ([0-9a-f]+) \S (.*)", l)
        if m:
            syms.setdefault(m.group(3), []).append((int(m.group(1), 16), int(m.group(2), 16)))
    if not syms:
        print(f"SKIP: {name}-statics: libjvm.so has no symbol table (nm)")
        return
    bad = []
    for _, typ, field, val in statics:
        v = int(val, 16)
        outer = re.split(r"[.\[]", field)[0]
        inner = outer != field
        where = syms.get(f"{typ}::{outer}", []) + syms.get(outer, [])
        # A template's static ("RehashableSymbolHashtable::_seed") has the
        # template's name in the symbol table: at its address, by its field.
        at = [n for n, places in syms.items() if n.endswith("::" + outer)
              and any(a == v for a, _ in places)] if not where else []
        if not at and not any(a == v or (inner and a <= v < a + size) for a, size in where):
            bad.append(f"{typ}::{field}@{val}={[hex(a) for a, _ in where[:2]]}")
    if len(statics) < 20 or bad:
        print(f"FAIL: {name}-statics: {len(bad)} of {len(statics)} statics at no symbol of "
              f"their name: {bad[:4]}")
    else:
        print(f"PASS: {name}-statics: {len(statics)} statics, each at its libjvm symbol")


def unaddressed(frame):
    """A frame without the address the JVM adds to the name of a hidden class
    ("Main$$Lambda$3/0x1a28", JDK 15+, from its symbol) or an anonymous one
    (JDK 11, from its Klass*): an identity, not a name, and ours only
    where the class's own symbol carries it."""
    return re.sub(r"/0x[0-9a-f]+(?=\.)", "", frame)


def parse_ours(path):
    threads, cur = {}, None
    for l in lines_of(path):
        if l.startswith("thread "):
            _, tid, jt, _state, end, _nr = l.split()
            cur = {"tid": int(tid), "jt": int(jt, 16), "end": end, "frames": []}
            threads[int(jt, 16)] = cur
        elif l.startswith("\tat ") and cur is not None:
            cur["frames"].append(unaddressed(l[4:].removesuffix(" *")))
            cur["compiled"] = cur.get("compiled", 0) + l.endswith(" *")
    return threads


def parse_jstack(path):
    """({JavaThread*: {name, nid, frames}}, [SMR list])"""
    threads, smr, cur, in_smr = {}, [], None, False
    for l in lines_of(path):
        if l.startswith("_java_thread_list="):
            in_smr = True
            continue
        if in_smr:
            smr += [int(x, 16) for x in re.findall(r"0x[0-9a-f]+", l)]
            if "}" in l:
                in_smr = False
            continue
        m = re.match(r'"(.*)" #\d+ .* tid=(0x[0-9a-f]+) nid=(0x[0-9a-f]+|\d+) ', l)
        if m:
            cur = {"name": m.group(1), "nid": int(m.group(3), 0), "frames": []}
            threads[int(m.group(2), 16)] = cur
            continue
        if l.startswith('"'):
            cur = None
        m = re.match(r"\tat (.*)", l)
        if m and cur is not None:
            # "(java.base@17.0.15/Thread.java:123)": the module is not ours to say.
            cur["frames"].append(re.sub(r"\((?:[^()/]*/)+", "(", m.group(1)))
    for t in threads.values():
        t["frames"] = [unaddressed(f) for f in t["frames"]]
    return threads, smr


def threads(name, ours_path, jstack_path, ends):
    ours = parse_ours(ours_path)
    js, smr = parse_jstack(jstack_path)
    lost = [hex(jt) for jt in smr if jt not in ours or (jt in js and ours[jt]["tid"] != js[jt]["nid"])]
    if len(smr) < 8 or lost:
        print(f"FAIL: {name}-list: {len(lost)} of jstack's {len(smr)} JavaThreads not ours "
              f"(or another TID): {lost[:4]}")
    else:
        print(f"PASS: {name}-list: jstack's {len(smr)} JavaThreads, each with its TID")
    by_name = {t["name"]: (jt, t) for jt, t in js.items()}
    want_compiled = ends.pop("compiled", None)
    for tname in FIXTURE_THREADS:
        want_end = ends.get(tname, "call_stub")
        if tname not in by_name:
            print(f"FAIL: {name}-{tname}: not in jstack")
            continue
        jt, truth = by_name[tname]
        o = ours.get(jt)
        if not o:
            print(f"FAIL: {name}-{tname}: JavaThread {hex(jt)} not ours")
            continue
        fr = o["frames"]
        if o["end"] != want_end:
            print(f"FAIL: {name}-{tname}: walk ended {o['end']}, not {want_end}: ours {fr[:3]}, "
                  f"jstack {truth['frames'][:3]}")
        elif want_end == "call_stub" and fr != truth["frames"]:
            print(f"FAIL: {name}-{tname}: frames differ:\n  ours   {fr}\n  jstack {truth['frames']}")
        elif want_end != "call_stub" and (not fr or fr != truth["frames"][:len(fr)]):
            print(f"FAIL: {name}-{tname}: not a prefix:\n  ours   {fr}\n  jstack {truth['frames']}")
        elif tname == want_compiled and o.get("compiled", 0) < 2:
            print(f"FAIL: {name}-{tname}: {o.get('compiled', 0)} compiled frames, not 2 or more")
        else:
            print(f"PASS: {name}-{tname}: {len(fr)} of jstack's {len(truth['frames'])} frames, "
                  f"{o.get('compiled', 0)} compiled, equal, ending {o['end']} ({fr[0] if fr else ''})")


def main(argv):
    if argv[1] == "tables":
        tables(*argv[2:6])
    elif argv[1] == "threads":
        ends = dict(a.split("=", 1) for a in argv[5:])
        threads(argv[2], argv[3], argv[4], ends)
    else:
        sys.exit(f"usage: {argv[0]} tables|threads ...")


if __name__ == "__main__":
    main(sys.argv)
