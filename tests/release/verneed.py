#!/usr/bin/env python3
"""Rewrites, in a copy of an ELF64 LE program, the newest GLIBC_2.N version it
needs to GLIBC_9.N (which no C library defines): what a C library older than
the program needs looks like to its dynamic loader. tests/release.test.
  verneed.py IN OUT   prints the version need rewritten ("GLIBC_2.28 -> GLIBC_9.28")
"""
import struct
import sys


def elf_hash(name):
    h = 0
    for c in name:
        h = ((h << 4) + c) & 0xFFFFFFFF
        g = h & 0xF0000000
        if g:
            h ^= g >> 24
        h &= ~g & 0xFFFFFFFF
    return h


def main():
    data = bytearray(open(sys.argv[1], "rb").read())
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    secs = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    SHT_GNU_VERNEED = 0x6FFFFFFE
    vr = next(s for s in secs if s[1] == SHT_GNU_VERNEED)
    strtab = secs[vr[6]]  # sh_link: .dynstr
    stroff = strtab[4]
    best = None
    off = vr[4]
    while True:
        _, cnt, _, aux, nxt = struct.unpack_from("<HHIII", data, off)
        a = off + aux
        for _ in range(cnt):
            _, _, _, name, anext = struct.unpack_from("<IHHII", data, a)
            end = data.index(b"\0", stroff + name)
            s = bytes(data[stroff + name:end])
            if s.startswith(b"GLIBC_2."):
                key = tuple(int(x) for x in s[6:].split(b"."))
                if best is None or key > best[0]:
                    best = (key, a, stroff + name, s)
            if not anext:
                break
            a += anext
        if not nxt:
            break
        off += nxt
    if best is None:
        sys.exit("no GLIBC_2.N version needed")
    _, a, at, old = best
    new = b"GLIBC_9." + old[len(b"GLIBC_2."):]
    data[at:at + len(new)] = new  # same length; .dynstr's copy shared by every user of it
    struct.pack_into("<I", data, a, elf_hash(new))
    open(sys.argv[2], "wb").write(data)
    print("%s -> %s" % (old.decode(), new.decode()))


if __name__ == "__main__":
    main()
