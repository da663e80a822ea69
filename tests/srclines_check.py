#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Checks for tests/srclines.test: source lines and inline chains against
addr2line -f -i, and inlined frames against perf script --inline.

  srclines_check.py a2l NAME MINE REF MIN_PCT [SYMFILE...]
      MINE and REF: `addr2line -a -f -i` style output for the same addresses
      (tests/srclines.c resolve/sym, and addr2line). For every address
      addr2line gives a line for, the frames' file:line must be equal, and
      the functions too (names at one address in SYMFILE's symbol table are
      one function: addr2line names some by their alias, __GI_x for x).
      PASS when at least MIN_PCT % of them agree on both.
  srclines_check.py pprof NAME RAW ADDR2LINE MIN_PCT OUT_VADDRS FILE...
      RAW: `pprof -raw`. Every location in a mapping of FILE (with its
      debug file as FILE=DEBUGFILE) is turned into its ELF address and
      looked up with ADDR2LINE; its Lines (innermost first) must carry the
      same functions and line numbers. The ELF addresses of FILE's first
      mapping are written to OUT_VADDRS (for the resolver's file:line check).
  srclines_check.py perf NAME PERF_SCRIPT FOLDED COMM
      PERF_SCRIPT: `perf script --inline -F comm,ip,sym`. Every leaf inline
      chain (the inlined functions up to and with the function they are in)
      holding at least 5 % of perf's samples of COMM must be a leaf chain of
      the folded output too.
  srclines_check.py pprof-lines DIR FUNCTION FILE FIRST LAST
      Every *.pb.gz profile under DIR (pprof, as --continuous writes them),
      decoded by hand (pbdecode.py): of the samples with a frame in
      FUNCTION (the innermost one), how many carry a line FIRST..LAST of a
      file named FILE there. Prints "WITH_LINE TOTAL" (sample counts).
"""
import re
import subprocess
import sys
from collections import Counter, defaultdict


def report(ok, name, why=""):
    print("%s: %s%s" % ("PASS" if ok else "FAIL", name, "" if ok else ": " + why))
    return ok


def parse_a2l(text):
    """address -> [(function, file, line)], innermost first."""
    out, cur = {}, None
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        l = lines[i]
        if re.match(r"^0x[0-9a-f]+$", l):
            cur = out.setdefault(int(l, 16), [])
            i += 1
            continue
        if cur is None or i + 1 >= len(lines):
            break
        fl = re.sub(r" \(discriminator \d+\)$", "", lines[i + 1])
        f, _, ln = fl.rpartition(":")
        cur.append((l, f, ln))
        i += 2
    return out


def aliases(files):
    """name -> address, over the symbol tables of files: one address, one function."""
    addr = {}
    for path in files:
        try:
            text = subprocess.run(["readelf", "-Ws", path], capture_output=True, text=True).stdout
        except OSError:
            continue
        for l in text.splitlines():
            f = l.split()
            if len(f) >= 8 and f[3] in ("FUNC", "IFUNC") and f[6] != "UND":
                addr.setdefault(f[7].split("@")[0], int(f[1], 16))
    return addr


def same_fn(a, b, addr):
    if a == b:
        return True
    a, b = a.split("@")[0], b.split("@")[0]
    return a == b or (a in addr and addr.get(a) == addr.get(b))


def cmd_a2l(name, mine, ref, min_pct, symfiles):
    a = parse_a2l(open(mine).read())
    b = parse_a2l(open(ref).read())
    addr = aliases(symfiles)
    known = [k for k, v in b.items() if v and v[0][2] not in ("?", "0") and v[0][1] != "??"]
    agree, chains, bad = 0, 0, []
    for k in known:
        x, y = a.get(k, []), b[k]
        ok = len(x) == len(y) and all(p[1:] == q[1:] for p, q in zip(x, y)) and \
            all(same_fn(p[0], q[0], addr) for p, q in zip(x, y))
        agree += ok
        chains += ok and len(y) > 1
        if not ok:
            bad.append("%#x: ours %s, addr2line %s" % (k, x, y))
    pct = 100.0 * agree / len(known) if known else 0
    print("# %s: %d addresses with lines, %d agree (%.1f%%), %d of them with inlined frames"
          % (name, len(known), agree, pct, chains))
    report(len(known) > 0 and pct >= min_pct, name,
           "%.1f%% < %s%% agree; e.g. %s" % (pct, min_pct, "; ".join(bad[:3])))
    return 0


def load_segments(path):
    segs = []
    text = subprocess.run(["readelf", "-lW", path], capture_output=True, text=True).stdout
    for l in text.splitlines():
        f = l.split()
        if f and f[0] == "LOAD":
            segs.append((int(f[1], 16), int(f[2], 16), int(f[4], 16)))
    return segs


def to_vaddr(segs, off):
    for o, v, sz in segs:
        if o <= off < o + sz:
            return off - o + v
    return None


def parse_raw_locs(text):
    """pprof -raw: locations {id: (addr, map, [(function, file, line)])}, mappings {id: fields}."""
    locs, maps, section, cur = {}, {}, None, None
    for l in text.splitlines():
        if l in ("Locations", "Mappings") or l.startswith("Samples"):
            section = l
            continue
        if section == "Locations":
            m = re.match(r"^\s*(\d+): (0x[0-9a-f]+) (?:M=(\d+) )?(.*)$", l)
            rest = m.group(4) if m else l.strip()
            rest = re.sub(r" s=\d+(\(.*\))?$", "", rest)
            fn, _, fl = rest.rpartition(" ")
            f, _, ln = fl.rpartition(":")
            if m:
                cur = locs[int(m.group(1))] = (int(m.group(2), 16), int(m.group(3) or 0), [])
            if cur is not None:
                cur[2].append((fn, f, ln))
        elif section == "Mappings":
            m = re.match(r"^(\d+): (0x[0-9a-f]+)/(0x[0-9a-f]+)/(0x[0-9a-f]+) (\S+)", l)
            if m:
                maps[int(m.group(1))] = (int(m.group(2), 16), int(m.group(4), 16), m.group(5))
    return locs, maps


def cmd_pprof(name, raw, addr2line, min_pct, out_vaddrs, files):
    locs, maps = parse_raw_locs(open(raw, errors="replace").read())
    wanted = dict(f.split("=", 1) if "=" in f else (f, f) for f in files)
    todo = defaultdict(list)  # debug file -> [(location id, vaddr)]
    first = files[0].split("=")[0]
    for lid, (addr, mid, _) in locs.items():
        mp = maps.get(mid)
        if not mp or mp[2] not in wanted:
            continue
        vaddr = to_vaddr(load_segments(mp[2]), addr - mp[0] + mp[1])
        if vaddr is not None:
            todo[mp[2]].append((lid, vaddr))
    with open(out_vaddrs, "w") as f:
        for _, v in todo.get(first, []):
            f.write("%x\n" % v)
    total = agree = chains = 0
    bad = []
    for path, items in todo.items():
        text = subprocess.run([addr2line, "-a", "-f", "-i", "-e", wanted[path]] +
                              ["%#x" % v for _, v in items], capture_output=True, text=True).stdout
        ref = parse_a2l(text)
        addr = aliases([path, wanted[path]])
        for lid, v in items:
            y = ref.get(v, [])
            if not y or y[0][2] in ("?", "0"):
                continue
            x = locs[lid][2]
            total += 1
            # Outermost: our symbol (perf's name); addr2line may name it by DWARF or alias.
            ok = len(x) == len(y) and all(p[2] == q[2] for p, q in zip(x, y)) and \
                all(same_fn(p[0], q[0], addr) for p, q in zip(x[:-1], y[:-1]))
            agree += ok
            chains += ok and len(y) > 1
            if not ok:
                bad.append("%s+%#x: pprof %s, addr2line %s" % (path, v, x, y))
    pct = 100.0 * agree / total if total else 0
    print("# %s: %d sampled locations with lines, %d agree with addr2line -i (%.1f%%), "
          "%d with inlined functions" % (name, total, agree, pct, chains))
    report(total > 0 and pct >= min_pct and chains > 0, name,
           "%d locations, %.1f%% agree, %d with inlined frames; e.g. %s"
           % (total, pct, chains, "; ".join(bad[:3])))
    return 0


def perf_chains(text, comm):
    """perf script --inline: leaf chains (innermost first, up to the first non-inlined)."""
    out = Counter()
    for block in re.split(r"\n\s*\n", text):
        lines = [l for l in block.splitlines() if l.strip()]
        if not lines or lines[0].split()[0] != comm:
            continue
        chain = []
        for l in lines[1:]:
            f = l.split(None, 1)
            if len(f) < 2:
                break
            sym = re.sub(r"\+0x[0-9a-f]+$", "", f[1].strip())
            inl = sym.endswith(" (inlined)")
            chain.append(sym[:-len(" (inlined)")] if inl else sym)
            if not inl:
                break
        if chain:
            out[tuple(chain)] += 1
    return out


def folded_chains(path):
    out = Counter()
    for l in open(path, errors="replace"):
        stack, _, n = l.rstrip("\n").rpartition(" ")
        frames = [f for f in stack.split(";") if not f.endswith("_[k]")]
        chain = []
        for f in reversed(frames[1:]):
            inl = f.endswith("_[i]")
            chain.append(f[:-4] if inl else f)
            if not inl:
                break
        out[tuple(chain)] += int(n)
    return out


def cmd_perf(name, script, folded, comm):
    theirs = perf_chains(open(script, errors="replace").read(), comm)
    ours = folded_chains(folded)
    total = sum(theirs.values())
    hot = [c for c, n in theirs.items() if n * 20 >= total]
    # perf names a function by its DWARF name where we keep the symbol: compare the inlined part.
    ours_inl = {c[:-1] for c in ours}
    missing = [c for c in hot if c[:-1] not in ours_inl]
    inlined = [c for c in hot if len(c) > 1]
    print("# %s: perf: %d samples, %d leaf chains of 5%% or more (%d with inlined functions); "
          "ours: %d chains" % (name, total, len(hot), len(inlined), len(ours)))
    report(total > 0 and inlined and not missing, name,
           "perf's hot chains missing from ours: %s; ours: %s"
           % (missing[:3], ours.most_common(3)))
    return 0


def cmd_pprof_lines(out_dir, function, filename, first, last):
    import glob
    import gzip
    import os
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from pbdecode import fields, packed_ints

    total = with_line = 0
    for path in sorted(glob.glob(os.path.join(out_dir, "**", "*.pb.gz"), recursive=True)):
        raw = gzip.decompress(open(path, "rb").read())
        strings, samples, locs, funcs = [], [], {}, {}
        for num, wt, v in fields(raw):
            if num == 6:
                strings.append(v.decode())
            elif num == 2:
                samples.append(v)
            elif num == 4:
                lid, lines = 0, []
                for n, _, x in fields(v):
                    if n == 1:
                        lid = x
                    elif n == 4:
                        lines.append({a: b for a, _, b in fields(x)})
                locs[lid] = lines
            elif num == 5:
                f = {n: x for n, _, x in fields(v)}
                funcs[f.get(1, 0)] = f
        for s in samples:
            ids, values = [], []
            for n, wt, v in fields(s):
                if n == 1:
                    ids += packed_ints(wt, v)
                elif n == 2:
                    values += packed_ints(wt, v)
            count = values[0] if values else 0
            for lid in ids:
                hit = [ln for ln in locs.get(lid, [])
                       if strings[funcs.get(ln.get(1, 0), {}).get(2, 0)] == function]
                if hit:
                    total += count
                    fn = funcs[hit[0].get(1, 0)]
                    if (first <= hit[0].get(2, 0) <= last and
                            strings[fn.get(4, 0)].endswith("/" + filename)):
                        with_line += count
                    break
    print(with_line, total)
    return 0


def main(argv):
    if len(argv) >= 6 and argv[1] == "a2l":
        return cmd_a2l(argv[2], argv[3], argv[4], float(argv[5]), argv[6:])
    if len(argv) >= 8 and argv[1] == "pprof":
        return cmd_pprof(argv[2], argv[3], argv[4], float(argv[5]), argv[6], argv[7:])
    if len(argv) == 7 and argv[1] == "pprof-lines":
        return cmd_pprof_lines(argv[2], argv[3], argv[4], int(argv[5]), int(argv[6]))
    if len(argv) == 6 and argv[1] == "perf":
        return cmd_perf(argv[2], argv[3], argv[4], argv[5])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
