#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Checks sfbpf's pprof and SVG outputs against its folded output of the same
aggregator (tests/outputs.c), using independent readers: Go's pprof (its -raw,
-traces and -top reports) and Chromium (the SVG after its script ran, and a
screenshot). Prints PASS/FAIL lines; exit status 0 unless it could not run.

  outputs_check.py pprof-raw FOLDED RAW [--type T] [--unit U] [--period N] [--weight]
  outputs_check.py pprof-traces FOLDED TRACES PERIOD_NS
  outputs_check.py pprof-top FOLDED TOP FUNC
  outputs_check.py pprof-mappings RAW MAPS... --want PATH[,PATH...]
      Every file mapping of the profile is an executable mapping of one of
      the /proc/PID/maps copies (start, limit and offset), each PATH among them.
  outputs_check.py svg FOLDED SVG
  outputs_check.py svg-dom DOM FUNC FOLDED       (after ?s=^FUNC$)
  outputs_check.py svg-zoom DOM FUNC             (after ?z=^FUNC$)
  outputs_check.py png-width PNG SVG FUNC FOLDED [--zoom PARENT]
  outputs_check.py selftest
"""
import re
import struct
import sys
import xml.etree.ElementTree as ET
import zlib
from collections import Counter, defaultdict

PAD, FULL_WIDTH = 10, 1180  # the writer's defaults: 1200 px wide
MIN_WIDTH = 0.1
MATCH_RGB = (230, 0, 230)

failures = 0


def report(ok, name, why=""):
    global failures
    if ok:
        print(f"PASS: {name}")
    else:
        failures += 1
        print(f"FAIL: {name}: {why}")
    sys.stdout.flush()


def clean(s):
    """What every output does to a name: UTF-8 only (else '?'), no control chars."""
    s = s.replace("\ufffd", "?")
    return "".join("_" if ord(c) < 0x20 or ord(c) == 0x7F else c for c in s)


def read_folded(path):
    """{line without count: count}; bytes decoded the way the writers sanitize."""
    out = Counter()
    with open(path, "rb") as f:
        for raw in f:
            line = raw.rstrip(b"\n").decode("utf-8", errors="replace")
            stack, _, count = line.rpartition(" ")
            out[clean(stack)] += int(count)
    return out


def diff(want, got, limit=4):
    lines = []
    for k in sorted(set(want) | set(got)):
        if want.get(k) != got.get(k):
            lines.append(f"{k!r}: folded {want.get(k)} vs {got.get(k)}")
    more = f" (+{len(lines) - limit} more)" if len(lines) > limit else ""
    return "; ".join(lines[:limit]) + more


# ---- pprof -raw ---------------------------------------------------------------------------

LOC_RE = re.compile(r"^\s*(\d+): (0x[0-9a-f]+) (?:M=(\d+) )?(?:\[F\] )?(.*)$")
MAP_RE = re.compile(r"^(\d+): (0x[0-9a-f]+)/(0x[0-9a-f]+)/(0x[0-9a-f]+) "
                    r"(.*?) ?([0-9a-f]*) (\[FN\])?\S*$")
LABEL_RE = re.compile(r"(\w+):\[(.*?)\](?= \w+:\[|$)")


def parse_raw(text):
    """pprof -raw: header fields, samples, locations, mappings."""
    p = {"samples": [], "locs": {}, "maps": {}, "header": {}}
    section = "header"
    cur = cur_loc = None
    for line in text.splitlines():
        if line in ("Samples:", "Locations", "Mappings"):
            section = line.rstrip(":")
            continue
        if section == "header":
            key, _, val = line.partition(": ")
            p["header"][key] = val
        elif section == "Samples":
            if "types" not in p:
                p["types"] = line.split()
            elif re.match(r"^\s+-?\d+(\s+-?\d+)*: ", line):
                vals, _, locs = line.partition(": ")
                cur = {"values": [int(v) for v in vals.split()],
                       "locs": [int(x) for x in locs.split()], "labels": {}}
                p["samples"].append(cur)
            else:
                for k, v in LABEL_RE.findall(line.strip()):
                    cur["labels"][k] = v
        elif section == "Locations":
            m = LOC_RE.match(line)
            rest = re.sub(r" s=\d+(\(.*\))?$", "", m.group(4) if m else line.strip())
            # "NAME FILE:LINE": a runtime's file may have a space ("<frozen site>").
            pseudo = re.match(r"^(.*?) (<[^<>]*>:-?\d+)$", rest)
            name, _, fileline = (pseudo.group(1), "", pseudo.group(2)) if pseudo else \
                rest.rpartition(" ")
            if not m:
                # The next Line of the location: the function the previous one was inlined into.
                if cur_loc is not None:
                    cur_loc["lines"].append((name, fileline.rpartition(":")[0]))
                    cur_loc["linenos"].append(int(fileline.rpartition(":")[2] or 0))
                continue
            cur_loc = p["locs"][int(m.group(1))] = {
                "addr": int(m.group(2), 16), "map": int(m.group(3) or 0), "name": name,
                "file": fileline.rpartition(":")[0], "lines": [(name, fileline.rpartition(":")[0])],
                "linenos": [int(fileline.rpartition(":")[2] or 0)]}
        elif section == "Mappings":
            m = MAP_RE.match(line)
            if m:
                p["maps"][int(m.group(1))] = {
                    "start": int(m.group(2), 16), "limit": int(m.group(3), 16),
                    "offset": int(m.group(4), 16), "file": m.group(5),
                    "build_id": m.group(6), "fn": bool(m.group(7))}
    return p


def raw_as_folded(p, value_index=0, label=None):
    """Folded lines rebuilt from the profile: comm label, root first, kernel _[k].
    label(loc, name, file, line): a frame's name as folded writes it (a
    runtime's frame: its method, file and line), if given."""
    out = Counter()
    for s in p["samples"]:
        names = []
        for lid in reversed(s["locs"]):
            loc = p["locs"][lid]
            mp = p["maps"].get(loc["map"])
            # Lines are innermost first; every one but the last was inlined (folded: _[i]).
            lines = list(zip(loc["lines"], loc["linenos"]))
            for i, ((name, file), line) in enumerate(reversed(lines)):
                if label:
                    name = label(loc, name, file, line)
                name = name.replace(";", ":")
                if mp and mp["file"] == "[kernel.kallsyms]":
                    name += "_[k]"
                elif i:
                    name += "_[i]"
                names.append(name)
        out[";".join([s["labels"].get("comm", "?")] + names)] += s["values"][value_index]
    return out


def check_raw(folded_path, raw_path, typ="cpu", unit="nanoseconds", period=None, weight=False):
    want = read_folded(folded_path)
    with open(raw_path, encoding="utf-8", errors="replace") as f:
        p = parse_raw(f.read())
    h = p["header"]
    report(h.get("PeriodType") == f"{typ} {unit}", "pprof-period-type", h.get("PeriodType"))
    report(p.get("types") == ["samples/count", f"{typ}/{unit}"], "pprof-sample-types",
           str(p.get("types")))
    if period is not None:
        report(h.get("Period") == str(period), "pprof-period", f"{h.get('Period')} != {period}")
    report("Time" in h and "Duration" in h, "pprof-time-duration", str(h))
    report(len(p["samples"]) > 0, "pprof-has-samples", "no samples")
    # Counts: the folded output of the same aggregator, frame for frame.
    got = raw_as_folded(p, 1 if weight else 0)
    report(got == want, "pprof-stacks-match-folded", diff(want, got))
    if not weight and period:
        bad = [s for s in p["samples"] if s["values"][1] != s["values"][0] * period]
        report(not bad, "pprof-cpu-values", f"{len(bad)} samples with cpu != count x period")
    # Every location is inside its mapping; functions are attached.
    outside = [lid for lid, loc in p["locs"].items() if loc["map"] and not (
        p["maps"][loc["map"]]["start"] <= loc["addr"] < p["maps"][loc["map"]]["limit"])]
    report(not outside, "pprof-locations-in-mappings", f"locations {outside[:5]}")
    report(all(m["fn"] for m in p["maps"].values()), "pprof-mappings-have-functions",
           str([m["file"] for m in p["maps"].values() if not m["fn"]]))
    files = [m for m in p["maps"].values() if m["file"].startswith("/")]
    nobid = [m["file"] for m in files if not re.fullmatch(r"[0-9a-f]{40}", m["build_id"])]
    report(files and not nobid, "pprof-build-ids", f"no build-id: {nobid}" if files else
           "no file-backed mapping")
    for m in p["maps"].values():
        print(f"# mapping {m['file']} {m['start']:#x}-{m['limit']:#x} @{m['offset']:#x} "
              f"build-id {m['build_id'] or '-'}")
    nopid = [s for s in p["samples"] if s["labels"].get("comm") != "swapper"
             and not re.fullmatch(r"[1-9]\d*", s["labels"].get("pid", ""))]
    report(not nopid, "pprof-pid-labels", f"{len(nopid)} samples without a numeric pid label")
    return p


def check_raw_labels(raw_path, labels):
    with open(raw_path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    p = parse_raw(text)
    missing = [s for s in p["samples"] if any(s["labels"].get(k) != v for k, v in labels)]
    report(p["samples"] and not missing, "pprof-extra-labels",
           f"{len(missing)} samples without {labels}")


# ---- pprof -traces and -top -------------------------------------------------------------

def read_proc_maps(path):
    """Executable file mappings of a /proc/PID/maps copy: (start, end, offset, path)."""
    out = set()
    with open(path) as f:
        for line in f:
            fields = line.split(None, 5)
            if len(fields) == 6 and "x" in fields[1] and fields[5].startswith("/"):
                lo, hi = (int(x, 16) for x in fields[0].split("-"))
                out.add((lo, hi, int(fields[2], 16), fields[5].rstrip("\n")))
    return out


def check_mappings(raw_path, maps_paths, want):
    """Each file mapping of the profile as the kernel showed it, range and offset."""
    with open(raw_path) as f:
        p = parse_raw(f.read())
    seen = set()
    for path in maps_paths:
        seen |= read_proc_maps(path)
    files = [m for m in p["maps"].values() if m["file"].startswith("/")]
    wrong = [m for m in files if (m["start"], m["limit"], m["offset"], m["file"]) not in seen]
    missing = sorted(set(want) - {m["file"] for m in files})
    ok = len(files) >= len(want) and not wrong and not missing and len(seen) >= len(want)
    why = "%d file mappings, %d executable mappings in %d maps files" % (
        len(files), len(seen), len(maps_paths))
    if wrong:
        m = wrong[0]
        near = sorted(x for x in seen if x[3] == m["file"])
        why += "; %d not as the kernel showed them, e.g. %s %#x/%#x/%#x (maps: %s)" % (
            len(wrong), m["file"], m["start"], m["limit"], m["offset"],
            ", ".join("%#x-%#x@%#x" % x[:3] for x in near[:3]) or "none")
    if missing:
        why += "; no mapping for %s" % ", ".join(missing)
    report(ok, "pprof-mapping-ranges-match-proc-maps", why)


def parse_ms(s):
    m = re.fullmatch(r"([\d.]+)(ns|us|µs|ms|s)", s)
    scale = {"ns": 1e-6, "us": 1e-3, "µs": 1e-3, "ms": 1, "s": 1000}[m.group(2)]
    return float(m.group(1)) * scale


def check_traces(folded_path, traces_path, period_ns):
    """-traces: each sample leaf first; rebuild comm;root..leaf (no _[k] there, inlined: _[i])."""
    want = Counter()
    for k, v in read_folded(folded_path).items():
        want[";".join(f[:-4] if f.endswith("_[k]") else f for f in k.split(";"))] += v
    got = Counter()
    with open(traces_path, encoding="utf-8", errors="replace") as f:
        blocks = re.split(r"^-+\+-+$", f.read(), flags=re.M)
    for b in blocks[1:]:
        comm, value, frames = "?", None, []
        for line in b.strip("\n").splitlines():
            m = re.match(r"^\s+(\w+):\s+(.*)$", line)
            if m and value is None and not re.match(r"^\s+[\d.]+(ns|us|µs|ms|s)\s", line):
                if m.group(1) == "comm":
                    comm = m.group(2)
                continue
            m = re.match(r"^\s+([\d.]+(?:ns|us|µs|ms|s))\s+(.*)$", line)
            if m and value is None:
                value = parse_ms(m.group(1))
                frames.append(m.group(2))
            elif value is not None:
                frames.append(line.strip())
        if value is None:
            continue
        count = round(value * 1e6 / period_ns)
        # pprof marks inlined functions " (inline)"; the folded output "_[i]".
        frames = [re.sub(r" \(inline\)$", "_[i]", x) for x in frames]
        got[";".join([comm] + [x.replace(";", ":") for x in reversed(frames)])] += count
    report(got == want, "pprof-traces-leaf-first", diff(want, got))


def check_top(folded_path, top_path, func):
    want = read_folded(folded_path)
    total = sum(want.values())
    flat = sum(v for k, v in want.items() if k.split(";")[-1] == func)
    with open(top_path, encoding="utf-8", errors="replace") as f:
        rows = [l.split() for l in f if l.strip().endswith(" " + func)]
    got = float(rows[0][1].rstrip("%")) if rows else None
    exp = 100.0 * flat / total if total else 0
    report(got is not None and abs(got - exp) < 0.01, f"pprof-top-{func}",
           f"pprof flat {got}% vs folded {exp:.2f}% ({flat}/{total})")


# ---- SVG ------------------------------------------------------------------------------------

SVGNS = "{http://www.w3.org/2000/svg}"
TITLE_RE = re.compile(r"^([\s\S]*) \(([\d,]+) (\S+), ([\d.]+)%\)$")


def svg_frames(root):
    height = float(root.get("height"))
    frames = []
    for g in root.iter(SVGNS + "g"):
        if g.get("id") == "frames":
            for fg in g:
                r, t = fg.find(SVGNS + "rect"), fg.find(SVGNS + "title")
                m = TITLE_RE.match(t.text)
                frames.append({"name": m.group(1), "v": int(fg.get("data-v")),
                               "count": int(m.group(2).replace(",", "")),
                               "pct": float(m.group(4)), "x": float(r.get("x")),
                               "w": float(r.get("width")), "y": float(r.get("y")),
                               "fill": r.get("fill"), "g": fg})
    ys = sorted({f["y"] for f in frames})
    # The root, "all", holds every sample (its original width may be zoomed away).
    y0 = max(frames, key=lambda f: (f["v"], f["name"] == "all"))["y"] if frames else 0
    inverted = y0 == ys[0] if ys else False
    for f in frames:
        f["d"] = round(abs(f["y"] - y0) / 16)
    return frames, height, inverted


def folded_tree(want):
    """{(depth, path tuple): value} of every frame the folded lines imply, plus "all"."""
    nodes = defaultdict(int)
    for k, v in want.items():
        parts = k.split(";")
        nodes[()] += v
        for i in range(1, len(parts) + 1):
            nodes[tuple(parts[:i])] += v
    return nodes


def check_svg(folded_path, svg_path):
    want = read_folded(folded_path)
    total = sum(want.values())
    try:
        root = ET.parse(svg_path).getroot()
    except ET.ParseError as e:
        report(False, "svg-well-formed", str(e))
        return
    report(True, "svg-well-formed")
    frames, _, _ = svg_frames(root)
    scale = FULL_WIDTH / total if total else 0
    exp = Counter()
    for path, v in folded_tree(want).items():
        if v * scale >= MIN_WIDTH:
            exp[(len(path), path[-1] if path else "all", v)] += 1
    got = Counter((f["d"], f["name"], f["v"]) for f in frames)
    report(got == exp, "svg-frames-match-folded",
           "; ".join(f"{k}: want {exp.get(k)} got {got.get(k)}"
                     for k in list((exp - got) + (got - exp))[:5]))
    allf = [f for f in frames if f["d"] == 0]
    report(len(allf) == 1 and abs(allf[0]["w"] - FULL_WIDTH) < 0.01 and allf[0]["v"] == total,
           "svg-root-full-width", str([(f["w"], f["v"]) for f in allf]))
    bad = [f["name"] for f in frames if abs(f["w"] - f["v"] * scale) > 0.002 or
           abs(f["pct"] - 100.0 * f["v"] / total) > 0.006 or f["count"] != f["v"]]
    report(not bad, "svg-widths-and-titles", f"{bad[:5]}")
    # Nesting: every frame lies within one frame a level closer to the root.
    by_depth = defaultdict(list)
    for f in frames:
        by_depth[f["d"]].append(f)
    orphans = [f["name"] for f in frames if f["d"] > 0 and not any(
        p["x"] - 0.002 <= f["x"] and f["x"] + f["w"] <= p["x"] + p["w"] + 0.002
        for p in by_depth[f["d"] - 1])]
    report(not orphans, "svg-nesting", f"{orphans[:5]}")
    hue = lambda fill: int(re.match(r"hsl\((\d+)", fill).group(1))
    kh = [hue(f["fill"]) for f in frames if f["name"].endswith("_[k]")]
    uh = [hue(f["fill"]) for f in frames if f["d"] > 1 and not f["name"].startswith("[")
          and not f["name"].endswith("_[k]")]
    report(not kh or not uh or min(kh) > max(uh) + 60, "svg-kernel-colours-apart",
           f"kernel hues {sorted(set(kh))[:5]} user hues {sorted(set(uh))[:5]}")


def check_svg_dom(dom_path, func, folded_path):
    """The DOM Chromium serialized after the script ran with ?s=^FUNC$."""
    want = read_folded(folded_path)
    total = sum(want.values())
    share = 100.0 * sum(v for k, v in want.items() if func in k.split(";")) / total
    with open(dom_path, encoding="utf-8", errors="replace") as f:
        dom = f.read()
    m = re.search(r'<svg[^>]*\bdata-ready="1"', dom)
    report(m is not None, "svg-script-ran", "no data-ready on <svg> after load")
    m = re.search(r'data-matched="([\d.]+)"', dom)
    got = float(m.group(1)) if m else None
    report(got is not None and abs(got - share) < 0.01, f"svg-search-{func}-share",
           f"matched {got}% vs folded {share:.4f}%")
    m = re.search(r'<text id="matched"[^>]*>Matched: ([\d.]+)%</text>', dom)
    report(m is not None and abs(float(m.group(1)) - share) < 0.006, "svg-search-shows-matched",
           m.group(0) if m else "no 'Matched: N%' text")
    hits = len(re.findall(r'fill="rgb\(230,0,230\)"', dom))
    report(hits > 0, "svg-search-highlights", "no frame filled with the match colour")


def check_svg_zoom(dom_path, func):
    """The DOM after ?z=^FUNC$: FUNC spans the width, ancestors dimmed, the rest hidden."""
    try:
        root = ET.parse(dom_path).getroot()
    except ET.ParseError as e:
        report(False, "svg-zoom-dom", f"Chromium's DOM does not parse: {e}")
        return
    frames, _, _ = svg_frames(root)
    report(root.get("data-zoom") == func, "svg-zoom-applied", f"data-zoom={root.get('data-zoom')}")
    target = [f for f in frames if f["name"] == func and "hide" not in f["g"].get("class", "")]
    ok = len(target) == 1 and abs(target[0]["x"] - PAD) < 0.01 and \
        abs(target[0]["w"] - FULL_WIDTH) < 0.01
    report(ok, f"svg-zoom-{func}-full-width", str([(f["x"], f["w"]) for f in target]))
    if not target:
        return
    t = target[0]
    shown = [f for f in frames if "hide" not in f["g"].get("class", "")]
    parents = [f for f in shown if f["d"] < t["d"]]
    report(parents and all("parent" in f["g"].get("class", "") and abs(f["w"] - FULL_WIDTH) < 0.01
                           for f in parents) and len(parents) == t["d"],
           "svg-zoom-ancestors", f"{len(parents)} shown below depth {t['d']}")
    stray = [f["name"] for f in shown if f["d"] >= t["d"] and
             not (t["x"] - 0.01 <= f["x"] and f["x"] + f["w"] <= t["x"] + t["w"] + 0.01)]
    report(not stray and len(shown) < len(frames), "svg-zoom-hides-others",
           f"outside the zoomed frame: {stray[:5]}")


# ---- PNG (Chromium screenshot) ------------------------------------------------------------

def read_png(path):
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, typ = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if typ == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and ctype in (2, 6) and not interlace, "unsupported PNG"
            bpp = 3 if ctype == 2 else 4
        elif typ == b"IDAT":
            idat += body
        pos += 12 + n
    raw, stride = zlib.decompress(idat), w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        start = y * (stride + 1)
        ft, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if ft == 1:
                line[i] = (line[i] + a) & 255
            elif ft == 2:
                line[i] = (line[i] + b) & 255
            elif ft == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif ft == 4:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return w, h, bpp, rows


def magenta_run(rows, bpp, y):
    """Pixels of the match colour in row y (antialiased ends count half)."""
    n = 0.0
    row = rows[y]
    for x in range(len(row) // bpp):
        r, g, b = row[x * bpp:x * bpp + 3]
        if g < 40 and abs(r - MATCH_RGB[0]) < 20 and abs(b - MATCH_RGB[2]) < 20:
            n += 1
        elif g < 200 and r > 200 and b > 200 and abs(r - b) < 20 and g < r - 40:
            n += 0.5
    return n


def check_png(png_path, svg_path, func, folded_path, zoom=None):
    """The rendered width of FUNC's frames (searched, so magenta) is its share."""
    want = read_folded(folded_path)
    total = sum(want.values())
    root = ET.parse(svg_path).getroot()
    frames, _, _ = svg_frames(root)
    hits = [f for f in frames if f["name"] == func]
    exp = FULL_WIDTH * sum(f["v"] for f in hits) / total
    if zoom:
        parent = max((f for f in frames if f["name"] == zoom), key=lambda f: f["w"])
        inside = [f for f in hits if parent["x"] - 0.01 <= f["x"] <= parent["x"] + parent["w"]]
        exp = FULL_WIDTH * sum(f["v"] for f in inside) / parent["v"]
        hits = inside
    w, h, bpp, rows = read_png(png_path)
    report(w >= 1200 and h >= float(root.get("height")) - 1, "svg-screenshot-size", f"{w}x{h}")
    got = 0.0
    for y in sorted({int(f["y"]) for f in hits}):
        got += magenta_run(rows, bpp, y + 1)  # the frame's top row: above its label
    tol = 2.0 * max(1, len({int(f["y"]) for f in hits}))
    name = f"svg-rendered-width-{func}" + (f"-zoomed-{zoom}" if zoom else "")
    report(hits and abs(got - exp) <= tol, name,
           f"{got:.1f} px rendered vs {exp:.1f} px expected (share of {FULL_WIDTH} px)")


def selftest():
    folded = Counter({"a;b;c": 3, "a;b": 1, "k;x_[k]": 2})
    tree = folded_tree(folded)
    assert tree[()] == 6 and tree[("a", "b")] == 4 and tree[("k", "x_[k]")] == 2
    raw = ("PeriodType: cpu nanoseconds\nPeriod: 10\nSamples:\nsamples/count cpu/nanoseconds\n"
           "          2         20: 1 2 \n                comm:[k]\nLocations\n"
           "     1: 0xffffffff81000010 M=1 x [kernel.kallsyms]:0 s=0\n"
           "     2: 0x0 weird name (x) :0 s=0\n"
           "Mappings\n1: 0xffffffff81000000/0xffffffff81000020/0x0 [kernel.kallsyms] ab [FN]\n")
    p = parse_raw(raw)
    got = raw_as_folded(p)
    assert got == Counter({"k;weird name (x);x_[k]": 2}), got
    assert clean("a\tb\ufffd") == "a_b?"
    print("PASS: outputs-check-selftest")


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    cmd, args = argv[1], argv[2:]
    if cmd == "selftest":
        selftest()
    elif cmd == "pprof-raw":
        opts = {"typ": "cpu", "unit": "nanoseconds", "period": None, "weight": False}
        rest = args[2:]
        while rest:
            o = rest.pop(0)
            if o == "--weight":
                opts["weight"] = True
            elif o == "--labels":
                pairs = [tuple(kv.split("=", 1)) for kv in rest.pop(0).split(",")]
                check_raw_labels(args[1], pairs)
            else:
                opts[{"--type": "typ", "--unit": "unit", "--period": "period"}[o]] = rest.pop(0)
        if opts["period"] is not None:
            opts["period"] = int(opts["period"])
        check_raw(args[0], args[1], **opts)
    elif cmd == "pprof-traces":
        check_traces(args[0], args[1], int(args[2]))
    elif cmd == "pprof-top":
        check_top(args[0], args[1], args[2])
    elif cmd == "pprof-mappings":
        i = args.index("--want")
        check_mappings(args[0], args[1:i], args[i + 1].split(","))
    elif cmd == "svg":
        check_svg(args[0], args[1])
    elif cmd == "svg-dom":
        check_svg_dom(args[0], args[1], args[2])
    elif cmd == "svg-zoom":
        check_svg_zoom(args[0], args[1])
    elif cmd == "png-width":
        zoom = args[args.index("--zoom") + 1] if "--zoom" in args else None
        check_png(args[0], args[1], args[2], args[3], zoom)
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
