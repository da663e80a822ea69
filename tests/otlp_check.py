#!/usr/bin/env python3
# Reads an OTLP ExportProfilesServiceRequest as `protoc --decode` prints it
# (protobuf text format, decoded against proto/otlp/ by protoc itself, so the
# body follows the schema) and checks it, for tests/otlp.test and
# tests/continuous.test:
#
#   otlp_check.py folded DECODED.txt [--scale N]
#       prints the request's stacks as folded lines ("comm;root;...;leaf N",
#       kernel frames with "_[k]", values divided by N), sorted and merged as
#       sfbpf's folded output is; fails (exit 1, a line on stderr) when the
#       dictionary breaks the schema's rules: an entry 0 that is not the zero
#       value, a duplicate entry, an index out of range, a sample without a
#       value, a resource without host.name/service.name/process.* attributes.
#       A location is a frame and the functions inlined at its address, its
#       lines innermost first: expanded outermost first, the inlined ones
#       marked "_[i]" as folded.c marks them.
#   otlp_check.py summary DECODED.txt
#       JSON: samples (summed values), profile ids, resource attributes seen.
#   otlp_check.py inline DECODED.txt BINARY SOURCE ADDR2LINE
#       PASS/FAIL lines for BINARY, an -O2 -g program built from SOURCE with
#       inlined functions: some of its locations have several lines, each
#       numbered; every location's lines (function, line) equal addr2line
#       -f -i's at its address (>= 95 %); the functions SOURCE defines have
#       it as filename and their definition's line as start_line.
import json
import re
import subprocess
import sys
from collections import Counter


def unescape(s):
    """A text-format string literal's body to str (C escapes, octal bytes)."""
    out = bytearray()
    i = 0
    simple = {"n": 10, "t": 9, "r": 13, '"': 34, "'": 39, "\\": 92, "a": 7, "b": 8,
              "f": 12, "v": 11}
    while i < len(s):
        c = s[i]
        if c != "\\":
            out += c.encode()
            i += 1
            continue
        n = s[i + 1]
        if n in simple:
            out.append(simple[n])
            i += 2
        elif n in "01234567":
            j = i + 1
            while j < len(s) and j < i + 4 and s[j] in "01234567":
                j += 1
            out.append(int(s[i + 1:j], 8))
            i = j
        elif n == "x":
            j = i + 2
            while j < len(s) and j < i + 4 and s[j] in "0123456789abcdefABCDEF":
                j += 1
            out.append(int(s[i + 2:j], 16))
            i = j
        else:
            raise ValueError("escape \\%s" % n)
    return bytes(out)


def parse(text):
    """Text format to nested dicts: {field: [values or dicts]}."""
    stack = [{}]
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        if line == "}":
            stack.pop()
        elif line.endswith("{"):
            d = {}
            stack[-1].setdefault(line[:-1].strip(), []).append(d)
            stack.append(d)
        else:
            k, _, v = line.partition(":")
            v = v.strip()
            if v.startswith('"'):
                v = unescape(v[1:-1])
            elif v in ("true", "false"):
                v = v == "true"
            else:
                v = int(v)
            stack[-1].setdefault(k.strip(), []).append(v)
    if len(stack) != 1:
        raise ValueError("unbalanced braces")
    return stack[0]


def one(d, k, default=0):
    return d.get(k, [default])[0]


def freeze(v):
    if isinstance(v, dict):
        return tuple(sorted((k, freeze(x)) for k, x in v.items()))
    if isinstance(v, list):
        return tuple(freeze(x) for x in v)
    return v


class Bad(Exception):
    pass


def check_tables(dic):
    names = ["mapping_table", "location_table", "function_table", "link_table",
             "string_table", "attribute_table", "stack_table"]
    for t in names:
        rows = dic.get(t, [])
        if not rows:
            raise Bad("%s is empty: entry 0 must be present" % t)
        zero = rows[0]
        if t == "string_table":
            if zero != b"":
                raise Bad("string_table[0] is %r" % zero)
        elif t == "link_table":
            if set(zero) - {"trace_id", "span_id"} or any(
                    set(x) - {0} for x in zero.values() for x in x):
                raise Bad("link_table[0] is not zero: %r" % zero)
        elif zero:
            raise Bad("%s[0] is not the zero value: %r" % (t, zero))
        seen = Counter(freeze(r) for r in rows)
        dup = [r for r, c in seen.items() if c > 1]
        if dup:
            raise Bad("%s has %d duplicate entries, e.g. %r" % (t, len(dup), dup[0]))


_STRS = {}


def strs(dic):
    """The string table decoded, once per request: every location asks (a
    machine's profile has tens of thousands)."""
    t = dic["string_table"]
    hit = _STRS.get(id(t))
    if hit is None or hit[0] is not t:
        hit = _STRS[id(t)] = (t, [s.decode("utf-8") for s in t])
    return hit[1]


def check_index(what, i, n):
    if not 0 <= i < n:
        raise Bad("%s %d out of range (%d entries)" % (what, i, n))


def attrs_of(dic, idx):
    s = strs(dic)
    out = {}
    for i in idx:
        check_index("attribute index", i, len(dic["attribute_table"]))
        a = dic["attribute_table"][i]
        v = one(a, "value", {})
        val = v["string_value"][0].decode() if "string_value" in v else one(v, "int_value")
        out[s[one(a, "key_strindex")]] = val
    return out


def resource_attrs(rp):
    out = {}
    for kv in one(rp, "resource", {}).get("attributes", []):
        v = one(kv, "value", {})
        out[one(kv, "key", b"").decode()] = (v["string_value"][0].decode()
                                             if "string_value" in v else one(v, "int_value"))
    return out


# A runtime's frames (OpenTelemetry's profile.frame.type): their function is
# the method, with its file and the line; the folded output labels them
# "method (File.java:LINE)" (frame_names.c's label: the file's base name).
RUNTIME_TYPES = ("cpython", "jvm", "v8js", "php", "ruby", "perl")


def runtime_label(name, file, line):
    base = file if file.startswith("<") else file.rpartition("/")[2]
    return "%s (%s:%d)" % (name, base, line) if line else "%s (%s)" % (name, base)


def loc_frames(dic, loc, kind):
    """A location's folded frames, outermost first: its lines are innermost
    first, the last the caller the others were inlined into; folded.c marks
    the inlined ones "_[i]" and kernel frames "_[k]"."""
    s = strs(dic)
    lines = loc.get("lines", [])
    if not lines:
        raise Bad("a location without lines")
    out = []
    for depth, line in enumerate(reversed(lines)):
        fi = one(line, "function_index")
        check_index("function_index", fi, len(dic["function_table"]))
        if fi == 0:
            raise Bad("a line without a function")
        if one(line, "line") < 0:
            raise Bad("a negative line number")
        fn = dic["function_table"][fi]
        name = s[one(fn, "name_strindex")]
        if kind.get("profile.frame.type") in RUNTIME_TYPES:
            name = runtime_label(name, s[one(fn, "filename_strindex")], one(line, "line"))
        if kind.get("profile.frame.type") == "kernel":
            name += "_[k]"
        elif depth:
            name += "_[i]"
        out.append(name)
    return out


def walk(req):
    """(resource attrs, profile, sample, [frame names root first]) for every sample."""
    dic = one(req, "dictionary", None)
    if dic is None:
        raise Bad("no dictionary")
    check_tables(dic)
    s = strs(dic)
    nstr = len(s)
    for m in dic["mapping_table"]:
        check_index("mapping filename", one(m, "filename_strindex"), nstr)
        attrs_of(dic, m.get("attribute_indices", []))
    for f in dic["function_table"]:
        for k in ("name_strindex", "system_name_strindex", "filename_strindex"):
            check_index("function " + k, one(f, k), nstr)
    for rp in req.get("resource_profiles", []):
        ra = resource_attrs(rp)
        for k in ("host.name", "service.name", "process.executable.name"):
            if k not in ra:
                raise Bad("resource without %s: %r" % (k, ra))
        for sp in rp.get("scope_profiles", []):
            for prof in sp.get("profiles", []):
                for smp in prof.get("samples", []):
                    if not smp.get("values"):
                        raise Bad("a sample without values")
                    si = one(smp, "stack_index")
                    check_index("stack_index", si, len(dic["stack_table"]))
                    frames = []
                    for li in dic["stack_table"][si].get("location_indices", []):
                        check_index("location index", li, len(dic["location_table"]))
                        loc = dic["location_table"][li]
                        check_index("mapping_index", one(loc, "mapping_index"),
                                    len(dic["mapping_table"]))
                        kind = attrs_of(dic, loc.get("attribute_indices", []))
                        frames.append(loc_frames(dic, loc, kind))
                    # Stacks are leaf first, folded lines root first.
                    frames = [f for loc in reversed(frames) for f in loc]
                    yield ra, prof, smp, attrs_of(dic, smp.get("attribute_indices", [])), frames


def folded(req, scale):
    lines = Counter()
    for _, _, smp, sattrs, frames in walk(req):
        comm = sattrs.get("thread.name")
        if comm is None:
            raise Bad("a sample without thread.name")
        key = ";".join(x.replace(";", ":") for x in [comm] + frames)
        lines[key] += sum(smp["values"]) // scale
    for k in sorted(lines, key=lambda x: x.encode()):
        if lines[k]:
            print("%s %d" % (k, lines[k]))


def summary(req):
    total, ids, res, times = 0, [], {}, set()
    for ra, prof, smp, _, _ in walk(req):
        total += sum(smp["values"])
        times.add(one(prof, "time_unix_nano") // 10**9)
        pid = one(prof, "profile_id", b"")
        if pid not in ids:
            ids.append(pid)
        for k, v in ra.items():
            res.setdefault(k, set()).add(str(v))
    print(json.dumps({"samples": total, "profile_ids": [i.hex() for i in ids],
                      "from": sorted(times),
                      "resource": {k: sorted(v) for k, v in sorted(res.items())}},
                     sort_keys=True))


def elf_addr(binary, loc, mapping):
    """A location's address in binary's ELF address space, through the PT_LOAD
    segment holding its file offset; None if none does."""
    off = one(loc, "address") - one(mapping, "memory_start") + one(mapping, "file_offset")
    out = subprocess.run(["readelf", "-lW", binary], capture_output=True, text=True).stdout
    for l in out.splitlines():
        f = l.split()
        if f and f[0] == "LOAD":
            p_off, vaddr, filesz = int(f[1], 16), int(f[2], 16), int(f[4], 16)
            if p_off <= off < p_off + filesz:
                return off - p_off + vaddr
    return None


def addr2line(a2l, binary, addrs):
    """{addr: [(function, line)] innermost first} as addr2line -f -i says."""
    out = subprocess.run([a2l, "-a", "-f", "-i", "-e", binary] + ["%#x" % a for a in addrs],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    res, cur, i = {}, None, 0
    while i < len(out):
        if out[i].startswith("0x"):
            cur = res.setdefault(int(out[i], 16), [])
            i += 1
            continue
        num = out[i + 1].rpartition(":")[2].split()[0]
        cur.append((out[i], int(num) if num.isdigit() else 0))
        i += 2
    return res


def inline(req, binary, source, a2l):
    """PASS/FAIL lines: binary's locations (an -O2 -g program with inlined
    functions, built from source) against addr2line -f -i, and its
    functions' declarations against the source."""
    dic = one(req, "dictionary", None)
    if dic is None:
        raise Bad("no dictionary")
    check_tables(dic)
    s = strs(dic)
    funcs = dic["function_table"]
    maps = [i for i, m in enumerate(dic["mapping_table"])
            if s[one(m, "filename_strindex")] == binary]
    locs = [l for l in dic["location_table"] if one(l, "mapping_index") in maps]
    if not locs:
        raise Bad("no location in %s" % binary)
    got = {}
    for loc in locs:
        a = elf_addr(binary, loc, dic["mapping_table"][one(loc, "mapping_index")])
        if a is None:
            raise Bad("location %#x outside %s's segments" % (one(loc, "address"), binary))
        got[a] = [(s[one(funcs[one(l, "function_index")], "name_strindex")], one(l, "line"))
                  for l in loc.get("lines", [])]
    multi = {a: v for a, v in got.items() if len(v) >= 2}
    unnumbered = [(a, v) for a, v in multi.items() if any(n <= 0 for _, n in v)]
    if multi and not unnumbered:
        print("PASS: otlp-inline-locations (%d of %d locations with 2 to %d lines, "
              "all numbered)" % (len(multi), len(got), max(len(v) for v in multi.values())))
    else:
        print("FAIL: otlp-inline-locations: %d of %d locations with >= 2 lines; "
              "unnumbered: %r" % (len(multi), len(got), unnumbered[:2]))
    want = addr2line(a2l, binary, sorted(got))
    bad = [(hex(a), got[a], want.get(a)) for a in sorted(got) if got[a] != want.get(a)]
    if len(bad) * 20 <= len(got):  # as tests/srclines.test: DWARF readers may differ a little
        print("PASS: otlp-lines-equal-addr2line (%d of %d locations)" %
              (len(got) - len(bad), len(got)))
    else:
        print("FAIL: otlp-lines-equal-addr2line: %d of %d differ, e.g. %r" %
              (len(bad), len(got), bad[:2]))
    # Each function the source defines: its filename and first line.
    src = open(source).read().splitlines()
    decl, bad = 0, []
    for f in funcs[1:]:
        name = s[one(f, "name_strindex")]
        defs = [i + 1 for i, l in enumerate(src)
                if re.match(r"^\S.*\b%s\(" % re.escape(name), l)]
        if not defs:
            continue
        decl += 1
        if s[one(f, "filename_strindex")] != source or one(f, "start_line") != defs[0]:
            bad.append((name, s[one(f, "filename_strindex")], one(f, "start_line"), defs[0]))
    if decl and not bad:
        print("PASS: otlp-function-declarations (%d functions)" % decl)
    else:
        print("FAIL: otlp-function-declarations: %d functions; (name, file, start_line, "
              "want) %r" % (decl, bad[:3]))


def main():
    cmd, path = sys.argv[1], sys.argv[2]
    scale = int(sys.argv[4]) if len(sys.argv) > 4 and sys.argv[3] == "--scale" else 1
    with open(path) as f:
        req = parse(f.read())
    try:
        if cmd == "folded":
            folded(req, scale)
        elif cmd == "inline":
            inline(req, *sys.argv[3:6])
        else:
            summary(req)
    except Bad as e:
        print("otlp_check: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
