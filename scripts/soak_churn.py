#!/usr/bin/env python3
# The churn soak's measurements and checks (scripts/soak_churn.sh says what
# runs and why each bound is what it is):
#   monitor DIR DURATION WARMUP_MAX WINDOW WINDOWS
#       every second, for each sfbpf-top in DIR/instances ("NAME PID
#       [METRICS_URL [OUT_DIR]]" lines): anon RSS, threads, open descriptors,
#       BPF map memory, bytes of its spill files in /var/tmp, the out-dir's
#       bytes (profiles and spool) and every gauge of /metrics, one JSON line
#       each second into DIR/series.jsonl; new profiles are hard-linked into
#       DIR/kept (the out-dir keeps only the newest). Warm-up until a steady
#       state (every judged series, over the last WINDOWS windows of WINDOW s,
#       grows at less than the rate its bound allows over DURATION), then
#       DURATION s judged. Writes DIR/steady ("T_MS" or empty).
#   judge DIR DURATION MIN_COMPLETE
#       the growth checks, the stacks, source lines, containers and JIT checks
#       from the kept profiles after the steady state; PASS/FAIL lines.
import calendar
import glob
import gzip
import json
import os
import re
import statistics
import sys
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
from pyroscope_receiver import fields, varint  # noqa: E402  (the one profile.proto reader)

KIB = 1024
DWARF_FDS_CAP = 256  # symcache.c: descriptors objects keep of their DWARF
# Budgeted byte gauges of /metrics and the gauge holding each one's budget.
BUDGETED = {"stack_bytes": "stack_budget_bytes", "symbol_cold_bytes": "symbol_budget_bytes",
            "jit_map_bytes": "jit_map_budget_bytes", "table_map_bytes": "table_budget_bytes"}
# Budgeted caches that fill by design, toward their budget over hours (an answer
# per address sampled): judged on their level only. Twice the budget: it is
# trimmed before a lookup, which may double an object's arrays past it.
FILLING = {"symbol_lines_bytes": "symbol_budget_bytes"}
# Counts the program keeps with no budget of their own: judged against what
# they held once steady (a thing kept per churned binary grows with the
# churn, thousands over a run).
KEPT = ("stacks", "symbol_objects", "mappings", "procs_bytes", "processes",
        "objects", "objects_lingering", "srcline_spill_bytes", "dwarf_fds")


# Memory, judged beyond doubt (the low end of its slope's interval): its peaks
# wander with what is built and freed at once (a profile, a refresh's model).
MEMORY = ("anon_net_kib", "heap_net_bytes")


def now_ms():
    return int(time.monotonic() * 1000)


# ---- measuring ---------------------------------------------------------------------------


def proc_sample(pid):
    """OS-side figures of PID, or None once it is gone."""
    out = {}
    try:
        for line in open("/proc/%d/status" % pid):
            k, _, v = line.partition(":")
            if k in ("RssAnon", "Threads"):
                out[k] = int(v.split()[0])
        fds = os.listdir("/proc/%d/fd" % pid)
    except OSError:
        return None
    maps, spill = {}, 0
    for fd in fds:
        p = "/proc/%d/fd/%s" % (pid, fd)
        try:
            link = os.readlink(p)
            if link.startswith("/var/tmp/"):
                spill += os.stat(p).st_blocks * 512
            elif link == "anon_inode:bpf-map":
                info = dict(line.split(":", 1) for line in open("/proc/%d/fdinfo/%s" % (pid, fd))
                            if ":" in line)
                maps[info["map_id"].strip()] = int(info["memlock"].split()[0])
        except (OSError, KeyError, ValueError):
            pass  # closed meanwhile
    return {"anon_kib": out.get("RssAnon", 0), "threads": out.get("Threads", 0),
            "fds": len(fds), "map_bytes": sum(maps.values()), "spill_bytes": spill}


def metrics(url):
    try:
        text = urllib.request.urlopen(url, timeout=3).read().decode()
    except OSError:
        return {}
    return {m.group(1): int(float(m.group(2)))
            for m in re.finditer(r"^sfbpf_(\w+) (\S+)$", text, re.M)}


def tree_bytes(d):
    """(bytes, files) under d, a file's every name counted."""
    n = files_n = 0
    for root, _, files in os.walk(d):
        for f in files:
            try:
                n += os.lstat(os.path.join(root, f)).st_size
                files_n += 1
            except OSError:
                pass
    return n, files_n


def keep_profiles(out_dir, kept):
    for f in glob.glob(os.path.join(out_dir, "sfbpf-*Z.pb.gz")):
        dst = os.path.join(kept, os.path.basename(f))
        if not os.path.exists(dst):
            try:
                os.link(f, dst)
            except OSError:
                pass


# ---- bounds --------------------------------------------------------------------------------


def largest_profile(d):
    """Bytes of the largest profile kept: (uncompressed, file)."""
    big, file_big = 0, 0
    for f in glob.glob(d + "/kept/*.pb.gz"):
        try:
            file_big = max(file_big, os.path.getsize(f))
            big = max(big, len(gzip.open(f).read()))
        except (OSError, EOFError):
            pass
    return big, file_big


def bounds(d, rows, steady_ms):
    """{(instance, series): (bound, why, level cap or None)}: the growth each may show."""
    big, file_big = largest_profile(d)
    last = rows[-1]
    out = {}
    before = [r for r in rows if steady_ms is None or r["t"] <= steady_ms][-30:]
    for inst in last["i"]:
        cur = [r["i"][inst] for r in before if inst in r["i"]]

        def level(k):
            vals = [c[k] for c in cur if k in c]
            return statistics.median(vals) if vals else 0

        threads = max([c.get("threads", 1) for c in cur] or [1])
        # Memory is judged less the container path cache (*_net_*, derive()): the
        # cache fills to its cap over an hour of this churn (two generations of ids,
        # the older dropped as the newer fills), in steps of its arena's chunks, and
        # its level is judged on its own cap below. A slope of those steps, added to
        # the bound, missed their height by a third in a quarter hour. What is left
        # is what it holds (malloc's blocks handed out: a profile being built) and,
        # resident, what the allocator may keep of freed blocks: its trim threshold,
        # 128 KiB, per thread's arena (malloc_trim gives back the rest).
        # The newest figures it served (the last scrape may have failed: every
        # check built from them would vanish with no FAIL line).
        m = next((r["i"][inst] for r in reversed(rows)
                  if inst in r["i"] and "heap_in_use_bytes" in r["i"][inst]), last["i"][inst])
        if "heap_net_bytes" in m:
            out[(inst, "heap_net_bytes")] = (big, "the largest profile %.0f KiB" % (big / KIB),
                                             None)
        out[(inst, "anon_net_kib")] = (big / KIB + 128 * threads,
                                       "the largest profile %.0f KiB + 128 KiB x %d threads"
                                       % (big / KIB, threads), None)
        out[(inst, "fds")] = (DWARF_FDS_CAP / 4, "a quarter of the %d DWARF descriptors "
                              "objects may keep" % DWARF_FDS_CAP, None)
        budget = m.get("table_budget_bytes") or max(c.get("map_bytes", 0) for c in cur)
        out[(inst, "map_bytes")] = (budget / 4, "a quarter of the table budget %.0f KiB"
                                    % (budget / KIB), None)
        out[(inst, "spill_bytes")] = (max(level("spill_bytes") / 2, 1 << 20),
                                      "half what it held when steady, 1 MiB at least", None)
        if "out_bytes" in m:
            # At most --keep files and --spool-max spooled ones, whatever their size, which
            # follows the interval's samples: a ceiling on the counts, not a slope.
            files = int(os.environ.get("SOAK_KEEP", "12")) + int(os.environ.get("SOAK_SPOOL", "12"))
            out[(inst, "out_bytes")] = (None, "%d of its largest profile files (%.0f KiB): "
                                        "--keep and --spool-max" % (files, file_big / KIB),
                                        files * file_big)
            # Each profile under both its names (the out-dir and its spool), and one
            # being written.
            out[(inst, "out_files")] = (None, "--keep + --spool-max, and one being written",
                                        files + 1)
        for k, b in BUDGETED.items():
            if k in m and m.get(b):
                out[(inst, k)] = (m[b] / 4, "a quarter of its budget %s %.0f KiB"
                                  % (b, m[b] / KIB), m[b])
        for k, b in FILLING.items():
            if k in m and m.get(b):
                out[(inst, k)] = (None, "twice its budget %s" % b, 2 * m[b])
        if "symbol_paths" in m:
            # Interned paths are swept once twice as many as the snapshots use + 1024
            # (symbolize.c): a sawtooth of minutes, judged on that ceiling, with what
            # it held when steady as what is live.
            cap = 2 * level("symbol_paths") + 1024
            out[(inst, "symbol_paths")] = (None, "twice what it held when steady + 1024, the "
                                           "sweep's rule", cap)
        if m.get("cgroup_paths_max"):
            out[(inst, "cgroup_paths")] = (None, "cgroup_paths_max: two generations of ids",
                                           m["cgroup_paths_max"])
        for k in KEPT:
            if k in m:
                floor = 1 << 20 if k.endswith("bytes") else 64
                cap = DWARF_FDS_CAP if k == "dwarf_fds" else None
                # The service's stacks start again at every profile: its interval's
                # distinct stacks follow its samples, which follow the CPU the machine
                # leaves the churn (run 3: +25 % samples a second as the machine went
                # idle, +63 stacks); a leak would add an interval's worth each time.
                # The live view's likewise: they are its last 40 refreshes'.
                share = 1.0 if k == "stacks" else 0.5
                out[(inst, k)] = (max(level(k) * share, floor), "%s it held when steady "
                                  "(%.0f), %d at least" % ("as much as" if share == 1 else
                                                           "half what", level(k), floor), cap)
    return out


# Each instance's series are judged on their maxima per what it keeps at once:
# the service a profile's interval (--interval, reset after each), the live
# view its window of TUI_WINDOW (40) refreshes of -d 1 s (tui.h).
BLOCK_MS = {"service": int(float(os.environ.get("SOAK_INTERVAL", "10")) * 1000),
            "live": 40 * 1000}


def slope_ci(points, block_ms, z=1.96):
    """Theil-Sen slope, per ms, of the maxima in each whole block_ms (robust to transient
    steps; a series reset every interval is judged on its peaks, not on its rise within one),
    with Sen's rank-based confidence interval (z: 1.96, 95 %): (low, slope, high). A block
    cut short at either end of the points is left out: its maximum is of a part."""
    peaks = {}
    for t, v in points:
        b = t // block_ms
        peaks[b] = max(peaks.get(b, (t, v)), (t, v), key=lambda p: p[1])
    if points and len(peaks) > 2:
        peaks.pop(points[0][0] // block_ms, None)
        peaks.pop(points[-1][0] // block_ms, None)
    pts = sorted(peaks.values())
    s = sorted((b[1] - a[1]) / (b[0] - a[0]) for i, a in enumerate(pts) for b in pts[i + 1:]
               if b[0] > a[0])
    if not s:
        return 0.0, 0.0, 0.0
    n = len(pts)
    c = z * (n * (n - 1) * (2 * n + 5) / 18.0) ** 0.5
    lo = max(0, int((len(s) - c) / 2))
    hi = min(len(s) - 1, int((len(s) + c) / 2))
    return s[lo], statistics.median(s), s[hi]


def slope(points, block_ms):
    return slope_ci(points, block_ms)[1]


def series(rows, inst, k, since=0):
    return [(r["t"], r["i"][inst][k]) for r in rows
            if r["t"] >= since and inst in r["i"] and k in r["i"][inst]]


def derive(s, scraped=None):
    """Memory less the container path cache and the source-line answers (their levels judged
    on their own caps: they fill up to them over hours, by design): resident (anon_net_kib)
    and malloc's blocks handed out (heap_net_bytes). The live view and the service each
    serve their own (none without: the memory as is)."""
    cache = s.get("cgroup_path_bytes", 0) + s.get("symbol_lines_bytes", 0)
    if scraped is False:
        return  # a scrape that failed: no net figure that second, rather than a spike
    if "anon_kib" in s:
        s["anon_net_kib"] = s["anon_kib"] - cache // KIB
    if "heap_in_use_bytes" in s:
        s["heap_net_bytes"] = s["heap_in_use_bytes"] - cache


def read_rows(d):
    rows = []
    for line in open(d + "/series.jsonl"):
        try:
            rows.append(json.loads(line))
        except ValueError:
            pass
    served = {i for r in rows for i, s in r["i"].items() if "heap_in_use_bytes" in s}
    for r in rows:
        for i, s in r["i"].items():
            derive(s, "heap_in_use_bytes" in s if i in served else None)
    return rows


# ---- monitor -------------------------------------------------------------------------------


def monitor(d, duration, warmup_max, window, windows):
    insts = []
    for line in open(d + "/instances"):
        f = line.split()
        insts.append((f[0], int(f[1]), f[2] if len(f) > 2 else None, f[3] if len(f) > 3 else None))
    os.makedirs(d + "/kept", exist_ok=True)
    out = open(d + "/series.jsonl", "a", buffering=1)
    t0, steady, rows, next_check = now_ms(), None, [], now_ms() + window * 1000
    open(d + "/t0_wall", "w").write("%.3f\n" % time.time())
    print("soak-churn: measuring %s" % ", ".join("%s (pid %d)" % (n, p) for n, p, _, _ in insts),
          flush=True)
    while True:
        t = now_ms()
        row = {"t": t - t0, "i": {}}
        for name, pid, url, od in insts:
            s = proc_sample(pid)
            if s is None:
                print("soak-churn: %s (pid %d) is gone" % (name, pid), flush=True)
                open(d + "/steady", "w").write("%s\n" % ("" if steady is None else steady))
                return 1
            if url:
                m = metrics(url)
                s.update(m)
                derive(s, bool(m))
            if od:
                keep_profiles(od, d + "/kept")
                s["out_bytes"], s["out_files"] = tree_bytes(od)
            row["i"][name] = s
        rows.append(row)
        out.write(json.dumps(row) + "\n")
        if steady is None and t >= next_check:
            next_check = t + window * 1000
            ok, why = steady_now(d, rows, duration, window * windows * 1000)
            if ok:
                steady = row["t"]
                open(d + "/steady_why", "w").write(why + "\n")
                print("soak-churn: steady after %d s: %s" % (steady // 1000, why), flush=True)
            elif row["t"] > warmup_max * 1000:
                print("soak-churn: no steady state after %d s: %s" % (warmup_max, why), flush=True)
                open(d + "/steady_why", "w").write(why + "\n")
                break
        if steady is not None and row["t"] - steady >= duration * 1000:
            break
        time.sleep(max(0.0, 1.0 - (now_ms() - t) / 1000))
    open(d + "/steady", "w").write("%s\n" % ("" if steady is None else steady))
    return 0


def steady_now(d, rows, duration, window_ms):
    last = [r for r in rows if r["t"] >= rows[-1]["t"] - window_ms]
    if rows[-1]["t"] - rows[0]["t"] < window_ms or len(last) < window_ms / 1000 * 2 / 3:
        return False, "too early: %d samples over the last %d s" % (len(last), window_ms // 1000)
    slow = []
    for (inst, k), (bound, _, _) in sorted(bounds(d, rows, None).items()):
        if bound is None:
            continue  # judged on its level only
        # Steady unless it grows faster than its bound allows, beyond doubt: a series whose
        # peaks wander more than the bound within a window (the live view's memory: 2-3 MiB
        # over a window, its bound 455 KiB over the hour) is judged on the hour, not on
        # whether one window's slope happened to fall under the rate.
        lo, r, _ = slope_ci(series(last, inst, k), BLOCK_MS[inst])  # per ms
        allowed = bound / duration / 1000
        if lo >= allowed and lo > 0:
            slow.append("%s %s %+.3f/s, at least %+.3f (steady below %.3f)"
                        % (inst, k, r * 1000, lo * 1000, allowed * 1000))
    return not slow, "; ".join(slow) or "every series within its bound's rate"


# ---- judging -------------------------------------------------------------------------------

failed = False


def check(name, ok, why):
    global failed
    print("%s: soak-churn-%s: %s" % ("PASS" if ok else "FAIL", name, why))
    failed |= not ok


def judge_growth(d, rows, duration, steady):
    for (inst, k), (bound, why_bound, cap) in sorted(bounds(d, rows, steady).items()):
        pts = series(rows, inst, k, steady)
        name = "%s-%s" % (inst, k.replace("_", "-"))
        if len(pts) < 30:
            check(name, False, "%d samples after the steady state (30 at least)" % len(pts))
            continue
        span = pts[-1][0] - pts[0][0]
        if bound is None:
            check(name, max(v for _, v in pts) <= cap, "peak %d, median %.0f over %.0f s judged "
                  "(ceiling %.0f: %s)" % (max(v for _, v in pts),
                                          statistics.median(v for _, v in pts), span / 1000, cap,
                                          why_bound))
            continue
        lo, r, hi = slope_ci(pts, BLOCK_MS[inst])
        growth = r * span
        vals = [v for _, v in pts]
        sixth = max(1, len(vals) // 6)
        unit = 1 / KIB if k.endswith("bytes") else 1
        u = " KiB" if k.endswith("bytes") or k.endswith("kib") else ""
        why = "%+.0f%s (95 %% %+.0f..%+.0f) over %.0f s judged (bound %.0f%s: %s); first/last " \
            "sixth median %.0f -> %.0f, peak %.0f" % (
                growth * unit, u, lo * span * unit, hi * span * unit, span / 1000, bound * unit,
                u, why_bound, statistics.median(vals[:sixth]) * unit,
                statistics.median(vals[-sixth:]) * unit, max(vals) * unit)
        # Memory wanders with the allocator (the live view's 40 s peaks by 2-3 MiB,
        # an hour's slope by about 190 KiB as noise alone, against bounds of 455): it fails
        # when it grew past its bound beyond doubt. What the program counts has no such noise:
        # it fails on the slope itself.
        ok = (lo if k in MEMORY else r) * span <= bound and span >= 0.9 * duration * 1000
        if cap is not None:
            ok &= max(vals) <= cap
            why += " (cap %.0f%s)" % (cap * unit, u)
        check(name, ok, why)


def judge_workload(rows, steady):
    """The judge's premise: the same load all along. The churn's units are spun by CPU time
    (soak_loop.h), so its samples a second stay put unless the machine cannot give it the CPU
    it asks for; then the growth of what follows the samples (the profiles, the live view's
    peaks) is the machine's, not the profiler's, and the run proves nothing either way."""
    pts = series(rows, "service", "samples_total", steady)
    if len(pts) < 60:
        check("workload", False, "%d readings of the service's samples after the steady state"
              % len(pts))
        return
    sixth = len(pts) // 6
    rates = []
    for i in range(6):
        a, b = pts[i * sixth], pts[(i + 1) * sixth - 1]
        rates.append((b[1] - a[1]) * 1000.0 / max(1, b[0] - a[0]))
    mid = statistics.median(rates)
    ok = mid > 0 and all(abs(r - mid) <= 0.25 * mid for r in rates)
    check("workload", ok, "samples a second in each sixth judged %s (within 25 %% of their "
          "median %.1f: the same load all along)" % (", ".join("%.1f" % r for r in rates), mid))


def profile_samples(path):
    """(count, frames leaf first as (function, line, mapping's file), labels) of every sample
    of a pprof file."""
    raw = gzip.decompress(open(path, "rb").read())
    strings, samples, locs, funcs, maps = [], [], {}, {}, {}
    for num, _, v in fields(raw):
        if num == 6:
            strings.append(v.decode("utf-8", "replace"))
        elif num == 2:
            samples.append(v)
        elif num == 3:
            m = {n: x for n, _, x in fields(v)}
            maps[m.get(1)] = m.get(5, 0)
        elif num == 4:
            loc = {"lines": []}
            for n, _, x in fields(v):
                if n in (1, 2):
                    loc[n] = x
                elif n == 4:
                    loc["lines"].append({a: b for a, _, b in fields(x)})
            # A location with no function: one unnamed frame.
            locs[loc.get(1)] = (loc["lines"] or [{}], loc.get(2, 0))
        elif num == 5:
            fn = {n: x for n, _, x in fields(v)}
            funcs[fn.get(1)] = fn.get(2, 0)
    for s in samples:
        ids, count, labels = [], 0, {}
        for num, wt, v in fields(s):
            if num == 1:
                ids += packed(v) if wt == 2 else [v]
            elif num == 2:
                count = (packed(v) if wt == 2 else [v])[0] if not count else count
            elif num == 3:
                lab = {n: x for n, _, x in fields(v)}
                if lab.get(2):
                    labels[strings[lab[1]]] = strings[lab[2]]
        frames = []
        for i in ids:
            lines, mapping = locs.get(i, ([{}], 0))
            frames += [(strings[funcs.get(ln.get(1), 0)], ln.get(2, 0),
                        strings[maps.get(mapping, 0)]) for ln in lines]
        yield count, frames, labels


def packed(buf):
    out, pos = [], 0
    while pos < len(buf):
        v, pos = varint(buf, pos)
        out.append(v)
    return out


def judge_profiles(d, steady_wall_ns, min_complete):
    """Stacks, source lines, containers and JIT names from the profiles after the steady state."""
    want = ["churn_hot", "churn_b", "churn_a", "main", "__libc_start_call_main"]
    plugin = ["plugin_hot", "plugin_inner", "plugin_entry", "churn_plugin", "dlopen_loop",
              "__libc_start_call_main"]  # main tail-calls dlopen_loop
    contained = dict(re.findall(r"^container (\S+) (\S+)$", open(d + "/load.txt").read(), re.M))
    n = dict.fromkeys(("bin", "bin_ok", "libc_named", "lines_ok", "plug", "plug_ok", "cont", "cont_ok", "jit",
                       "jit_named", "jit_complete"), 0)
    files = 0
    for f in sorted(glob.glob(d + "/kept/*.pb.gz")):
        m = re.search(r"sfbpf-(\d{8}T\d{6})Z", f)
        if not m or calendar.timegm(time.strptime(m.group(1), "%Y%m%dT%H%M%S")) \
                < steady_wall_ns / 1e9:
            continue
        files += 1
        for count, frames, labels in profile_samples(f):
            comm = labels.get("comm", "")
            names = [fn for fn, _, _ in frames]
            if re.match(r"ch[gz]-\d+$", comm) and names and names[0] == "churn_hot":
                n["bin"] += count
                # Unwound: through main to the program's entry (_start), over libc's frames.
                n["bin_ok"] += count * (names[:4] == want[:4] and len(names) >= 7 and
                                        names[-1] == "_start")
                n["libc_named"] += count * (names[:len(want)] == want)
                n["lines_ok"] += count * (frames[0][1] > 0)
                cg = contained.get(comm)
                if cg:
                    c = re.search(r"-([0-9a-f]{64})\.scope$", cg)
                    pod = re.search(r"-pod([0-9a-f_]{36})\.slice/", cg)
                    n["cont"] += count
                    n["cont_ok"] += count * (labels.get("container_id") == c.group(1) and (
                        not pod or labels.get("pod_uid") == pod.group(1).replace("_", "-")))
            elif comm == "churn_dlopen" and names and names[0] == "plugin_hot":
                n["plug"] += count
                n["plug_ok"] += count * (names[:len(plugin)] == plugin)
            elif comm == "churn_jit" and frames and not frames[0][2].startswith("/") and \
                    not frames[0][2].startswith("[kernel"):
                # Leaf in memory no file backs: the JIT's code.
                n["jit"] += count
                named = bool(re.match(r"jit_gen_\d+$", names[0]))
                n["jit_named"] += count * named
                n["jit_complete"] += count * (named and names[1:4] == ["jit_call", "jit_child",
                                                                       "jit_loop"])
    pct = lambda a, b: 100.0 * n[a] / n[b] if n[b] else 0.0  # noqa: E731
    check("stacks-binaries", n["bin"] >= 200 and pct("bin_ok", "bin") >= min_complete,
          "%.1f %% of %d samples in churn_hot of the distinct binaries unwind to _start "
          "through main;churn_a;churn_b;churn_hot and libc's frames (%d profiles after the "
          "steady state; %d samples and %.0f %% at least)" % (pct("bin_ok", "bin"), n["bin"],
                                                             files, 200, min_complete))
    check("stacks-names", n["bin"] >= 200 and pct("libc_named", "bin") >= min_complete,
          "%.1f %% of them name libc's frame: __libc_start_call_main;main;churn_a;churn_b;"
          "churn_hot" % pct("libc_named", "bin"))
    check("srclines", n["bin"] >= 200 and pct("lines_ok", "bin") >= min_complete,
          "%.1f %% of %d churn_hot samples have a source line (-g and -gz copies)"
          % (pct("lines_ok", "bin"), n["bin"]))
    check("stacks-plugins", n["plug"] >= 100 and pct("plug_ok", "plug") >= min_complete,
          "%.1f %% of %d samples in plugin_hot of the distinct libraries unwind to "
          "__libc_start_call_main through churn_plugin (100 at least)"
          % (pct("plug_ok", "plug"), n["plug"]))
    check("containers", n["cont"] >= 50 and pct("cont_ok", "cont") >= min_complete,
          "%.1f %% of %d churn_hot samples of binaries run in a container's cgroup carry its "
          "container id (and pod uid) (50 at least)" % (pct("cont_ok", "cont"), n["cont"]))
    # Named, not unwound: code with no table and no file is walked by its frame
    # pointer only where the unwinder allows it (the share is shown, not judged).
    check("jit-names", n["jit"] >= 50 and pct("jit_named", "jit") >= min_complete,
          "of %d samples in the JIT's code, %.1f %% named from its perf map (jit_gen_N); "
          "%.1f %% unwound through jit_call;jit_child;jit_loop (50 at least)"
          % (n["jit"], pct("jit_named", "jit"), pct("jit_complete", "jit")))


def judge(d, duration, min_complete):
    rows = read_rows(d)
    steady = open(d + "/steady").read().strip() if os.path.exists(d + "/steady") else ""
    why = open(d + "/steady_why").read().strip() if os.path.exists(d + "/steady_why") else ""
    if not rows or not steady:
        check("steady", False, "no steady state (%d samples; last window: %s)" % (len(rows), why))
        return
    steady = int(steady)
    after = [r for r in rows if r["t"] >= steady]
    span = (after[-1]["t"] - steady) / 1000
    check("steady", span >= 0.9 * duration, "after %d s of warm-up (%s); %d samples judged "
          "over %.0f s" % (steady // 1000, why, len(after), span))
    judge_workload(rows, steady)
    judge_growth(d, rows, duration, steady)
    t0_wall = float(open(d + "/t0_wall").read())
    judge_profiles(d, (t0_wall + steady / 1000) * 1e9, min_complete)


def main(argv):
    if len(argv) == 7 and argv[1] == "monitor":
        return monitor(argv[2], *map(int, argv[3:]))
    if len(argv) == 5 and argv[1] == "judge":
        judge(argv[2], int(argv[3]), float(argv[4]))
        return 1 if failed else 0
    print(__doc__ or "usage: see the header", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
