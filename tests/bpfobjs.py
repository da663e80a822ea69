#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""sfbpf's BPF objects in the kernel, for tests/signals.test and scripts/soak.sh.

Other sfbpf sessions may run on the machine at the same time, so objects are
attributed through file descriptors (/proc/PID/fdinfo: prog_id, map_id,
link_id, memlock), not by name alone.

  bpfobjs.py snapshot FILE         the sfbpf programs, maps and links now
  bpfobjs.py leaks FILE [SECS]     those created since the snapshot that no
                                   live process holds (so: pinned, or leaked
                                   by the kernel), waiting up to SECS (5) for
                                   deferred frees; one line each, exit 1 if any
  bpfobjs.py pins                  sfbpf objects pinned under /sys/fs/bpf (by
                                   path name or by id): one line each, exit 1
  bpfobjs.py ours PID              ids of the sfbpf maps (by name) PID holds a
                                   descriptor of, one a line
  bpfobjs.py memlock PID           BPF map and program memory held by PID's
                                   descriptors: "maps BYTES progs BYTES"
  bpfobjs.py signal-on-fd PID SIG1 TEXT SIG2 SECS
                                   sends SIG1 to PID, then SIG2 as soon as PID
                                   has a descriptor whose target contains
                                   TEXT: exit 0; 1 if PID ended first or SECS
                                   passed
"""
import glob
import json
import os
import re
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NAME_LEN = 15  # BPF_OBJ_NAME_LEN - 1


def our_map_names():
    """Map names declared in bpf/*: SEC(".maps") and libbpf's internal maps, and the
    table segments the loader makes at run time (userspace/maps/segments.c)."""
    names = {"sfbpf_seg"}
    for path in glob.glob(os.path.join(ROOT, "bpf", "*")):
        if not os.path.isfile(path):
            continue  # bpf/arch/: other architectures' kernel types
        with open(path, errors="replace") as f:
            text = f.read()
        names.update(n[:NAME_LEN] for n in re.findall(r"\}\s*(\w+)\s+SEC\(\"\.maps\"\)", text))
    return names


INTERNAL = re.compile(r"^\w{1,8}\.(rodata|data|bss|kconfig)")


def bpftool(*args):
    out = subprocess.run(["bpftool", "-j", *args], capture_output=True, text=True, check=False)
    try:
        return json.loads(out.stdout or "[]")
    except json.JSONDecodeError:
        return []


def objects():
    """{'progs': {id: name}, 'maps': {id: name}, 'links': {id: prog_id}, 'prog_maps':
    {prog id: [map ids]}} of sfbpf's."""
    shown = [p for p in bpftool("prog", "show") if p.get("name", "").startswith("sfbpf_")]
    progs = {p["id"]: p["name"] for p in shown}
    names = our_map_names()
    maps = {m["id"]: m.get("name", "") for m in bpftool("map", "show")
            if m.get("name", "") in names or INTERNAL.match(m.get("name", ""))}
    links = {ln["id"]: ln.get("prog_id") for ln in bpftool("link", "show")
             if ln.get("prog_id") in progs}
    prog_maps = {p["id"]: p.get("map_ids", []) for p in shown}
    return {"progs": progs, "maps": maps, "links": links, "prog_maps": prog_maps}


def held():
    """Ids of programs, maps and links some live process has a descriptor of."""
    ids = {"prog_id": set(), "map_id": set(), "link_id": set()}
    for info in glob.glob("/proc/[0-9]*/fdinfo/*"):
        try:
            with open(info) as f:
                text = f.read()
        except OSError:
            continue
        for key in ("prog_id", "map_id", "link_id"):
            m = re.search(r"^%s:\s*(\d+)" % key, text, re.M)
            if m:
                ids[key].add(int(m.group(1)))
    return ids


def orphans(before):
    """sfbpf objects created since before that no live process holds."""
    now = objects()
    h = held()
    found = []
    used = set()  # maps of programs some process holds
    for i, n in now["progs"].items():
        if i in h["prog_id"]:
            used.update(now["prog_maps"][i])
        elif str(i) not in before["progs"]:
            found.append("program %d %s held by no process" % (i, n))
    for i, n in now["maps"].items():
        if str(i) not in before["maps"] and i not in h["map_id"] and i not in used:
            found.append("map %d %s held by no process" % (i, n))
    for i, p in now["links"].items():
        if str(i) not in before["links"] and i not in h["link_id"]:
            found.append("link %d (program %s) held by no process" % (i, p))
    return found


def pins():
    """Every object pinned under /sys/fs/bpf that is sfbpf's, by path or by id."""
    ours = objects()
    out = []
    for dirpath, _, files in os.walk("/sys/fs/bpf"):
        for name in files:
            path = os.path.join(dirpath, name)
            if "sfbpf" in path:
                out.append(path)
    for kind, key in (("prog", "progs"), ("map", "maps"), ("link", "links")):
        for o in bpftool("-f", kind, "show"):
            if str(o["id"]) in {str(i) for i in ours[key]}:
                out.extend("%s %d pinned at %s" % (kind, o["id"], p) for p in o.get("pinned", []))
    return sorted(set(out))


def memlock(pid):
    maps, progs = {}, {}
    for info in glob.glob("/proc/%d/fdinfo/*" % pid):
        try:
            with open(info) as f:
                text = f.read()
        except OSError:
            continue
        mem = re.search(r"^memlock:\s*(\d+)", text, re.M)
        for key, acc in (("map_id", maps), ("prog_id", progs)):
            m = re.search(r"^%s:\s*(\d+)" % key, text, re.M)
            if m and mem and "link_id" not in text:
                acc[int(m.group(1))] = int(mem.group(1))
    return sum(maps.values()), sum(progs.values())


def signal_on_fd(pid, sig1, text, sig2, secs):
    """Polls without sleeping: the window (an output being written) can be a few ms."""
    fd_dir = "/proc/%d/fd" % pid
    os.kill(pid, sig1)
    end = time.monotonic() + secs
    while time.monotonic() < end:
        try:
            fds = os.listdir(fd_dir)
        except OSError:
            return 1
        for fd in fds:
            try:
                if text in os.readlink(os.path.join(fd_dir, fd)):
                    os.kill(pid, sig2)
                    return 0
            except OSError:
                pass
    return 1


def main(argv):
    if len(argv) >= 3 and argv[1] == "snapshot":
        with open(argv[2], "w") as f:
            json.dump(objects(), f)
        return 0
    if len(argv) >= 3 and argv[1] == "leaks":
        with open(argv[2]) as f:
            before = json.load(f)
        end = time.monotonic() + (float(argv[3]) if len(argv) > 3 else 5)
        while True:
            found = orphans(before)
            if not found or time.monotonic() >= end:
                break
            time.sleep(0.2)
        for line in found:
            print(line)
        return 1 if found else 0
    if len(argv) == 2 and argv[1] == "pins":
        found = pins()
        for line in found:
            print(line)
        return 1 if found else 0
    if len(argv) == 3 and argv[1] == "ours":
        ours = objects()["maps"]
        ids = set()
        for info in glob.glob("/proc/%d/fdinfo/*" % int(argv[2])):
            try:
                with open(info) as f:
                    m = re.search(r"^map_id:\s*(\d+)", f.read(), re.M)
            except OSError:
                continue
            if m and int(m.group(1)) in ours:
                ids.add(int(m.group(1)))
        for i in sorted(ids):
            print(i)
        return 0 if ids else 1
    if len(argv) == 3 and argv[1] == "memlock":
        print("maps %d progs %d" % memlock(int(argv[2])))
        return 0
    if len(argv) == 7 and argv[1] == "signal-on-fd":
        sig = lambda name: getattr(signal, "SIG" + name)  # noqa: E731
        return signal_on_fd(int(argv[2]), sig(argv[3]), argv[4], sig(argv[5]), float(argv[6]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
