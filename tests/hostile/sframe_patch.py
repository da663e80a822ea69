#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Turn a copy of a fixture executable into a hostile one, in place.

Usage: sframe_patch.py MODE IN OUT [--keep-build-id]

The program still runs (nothing the dynamic loader reads is touched); only
what a profiler reads is made hostile. Unless --keep-build-id is given, the
GNU build-id is replaced by one derived from MODE and OUT, so each copy is a
distinct object for sfbpf (which keys objects by build-id).

Modes:
  huge-counts    header claims 2^31-1 FDEs and FREs
  overlap        second function starts inside the first (still "sorted")
  cfa-zero       every row says CFA = SP + 0: the CFA never increases
  cfa-negative   every row says CFA = SP - 8: the CFA goes backwards
  section-huge   .sframe section header says it is 1 GiB, past the end of file
  segment-huge   no .sframe section header; PT_GNU_SFRAME claims 1 GiB
  pcmask-bomb    the .sframe section is replaced (a new, unmapped one at the
                 end of the file) by 30 KiB of valid V3 data: 1100 PLT-style
                 (PCMASK) functions of 64 KiB with a 2-byte repetition block,
                 of two rows each, which expand to 72 million rows
  none           only the build-id change

64-bit little-endian ELF (x86-64) with SFrame V1, V2 or V3.
"""
import hashlib
import struct
import sys

SHT_GNU_SFRAME = 0x6FFFFFF4
PT_GNU_SFRAME = 0x6474E554
PT_NOTE = 4
SHT_PROGBITS = 1
NT_GNU_BUILD_ID = 3
HUGE = 1 << 30


class Elf:
    def __init__(self, buf):
        if buf[:4] != b"\x7fELF" or buf[4] != 2 or buf[5] != 1:
            raise SystemExit("not a 64-bit little-endian ELF file")
        self.buf = buf
        (self.phoff, self.shoff) = struct.unpack_from("<QQ", buf, 0x20)
        (self.phentsize, self.phnum, self.shentsize, self.shnum,
         self.shstrndx) = struct.unpack_from("<HHHHH", buf, 0x36)

    def shdr_off(self, i):
        return self.shoff + i * self.shentsize

    def shdr(self, i):
        # name, type, flags, addr, offset, size
        return struct.unpack_from("<IIQQQQ", self.buf, self.shdr_off(i))

    def section_name(self, i):
        stroff = self.shdr(self.shstrndx)[4]
        start = stroff + self.shdr(i)[0]
        return bytes(self.buf[start:self.buf.index(b"\0", start)]).decode()

    def find_section(self, name):
        for i in range(self.shnum):
            if self.section_name(i) == name:
                return i
        raise SystemExit(f"no {name} section")

    def phdrs(self):
        for i in range(self.phnum):
            off = self.phoff + i * self.phentsize
            yield off, struct.unpack_from("<IIQQQQQ", self.buf, off)


class SFrame:
    """Field offsets of one .sframe section (absolute offsets in the file)."""

    def __init__(self, buf, base):
        self.buf, self.base = buf, base
        magic, self.version, self.flags = struct.unpack_from("<HBB", buf, base)
        if magic != 0xDEE2:
            raise SystemExit("bad SFrame magic (not little-endian SFrame?)")
        auxhdr = buf[base + 7]
        (self.num_fdes, self.num_fres, _, fdeoff,
         freoff) = struct.unpack_from("<IIIII", buf, base + 8)
        self.fde_size = {1: 17, 2: 20, 3: 16}[self.version]
        self.fde_base = base + 28 + auxhdr + fdeoff
        self.fre_base = base + 28 + auxhdr + freoff

    def fde(self, i):
        """(start field offset, start, size, FREs offset, num_fres, fre_type)."""
        at = self.fde_base + i * self.fde_size
        if self.version == 3:
            start, size, fre_off = struct.unpack_from("<qII", self.buf, at)
            attr = self.fre_base + fre_off
            num, info = struct.unpack_from("<HB", self.buf, attr)
            return at, start, size, attr + 5, num, info & 0xF
        start, size, fre_off, num, info = struct.unpack_from("<iIIIB", self.buf, at)
        return at, start, size, self.fre_base + fre_off, num, info & 0xF

    def fres(self, i):
        """Yield (offset of data word 0, word size) for each FRE of FDE i."""
        _, _, _, off, num, fre_type = self.fde(i)
        start_size = {0: 1, 1: 2, 2: 4}[fre_type]
        for _ in range(num):
            info = self.buf[off + start_size]
            count, wsize = (info >> 1) & 0xF, {0: 1, 1: 2, 2: 4}[(info >> 5) & 3]
            if count:
                yield off + start_size + 1, wsize
            off += start_size + 1 + count * wsize


def set_cfa(sf, value):
    fmt = {1: "<b", 2: "<h", 4: "<i"}
    for i in range(sf.num_fdes):
        for off, wsize in sf.fres(i):
            struct.pack_into(fmt[wsize], sf.buf, off, value)


def overlap(sf):
    if sf.num_fdes < 2:
        raise SystemExit("need two functions")
    at0, start0, _, _, _, _ = sf.fde(0)
    at1 = sf.fde(1)[0]
    # PC-relative starts count from the field itself (V2 with the flag, V3).
    pcrel = sf.flags & 0x4
    field = start0 + 1 - ((at1 - at0) if pcrel else 0)
    struct.pack_into("<q" if sf.version == 3 else "<i", sf.buf, at1, field)


def pcmask_bomb(n=1100, size=0x10000):
    """V3, sorted, starts relative to the section (at address 0)."""
    per = 5 + 2 * 3
    hdr = struct.pack("<HBBBbbBIIIII", 0xDEE2, 3, 0x1, 3, 0, -8, 0, n, 2 * n,
                      per * n, 0, 16 * n)
    fdes = b"".join(struct.pack("<qII", size * (i + 1), size, per * i) for i in range(n))
    # Each: 2 FREs, ADDR1 starts, PCMASK, default type, rep 2; then
    # CFA = SP + 8 from offset 0 and SP + 16 from offset 1.
    fres = (struct.pack("<HBBB", 2, 0x10, 0, 2) + bytes([0, 0x03, 8, 1, 0x03, 16])) * n
    return hdr + fdes + fres


def replace_section(elf, idx, data):
    """Append data and a section header table with one more section, which
    takes idx's name; idx keeps its bytes under another name and type."""
    buf = elf.buf
    old = elf.shdr_off(idx)
    name = struct.unpack_from("<I", buf, old)[0]
    other = elf.shdr(elf.shstrndx)[0]  # any other name: .shstrtab's own
    struct.pack_into("<II", buf, old, other, SHT_PROGBITS)
    buf.extend(b"\0" * (-len(buf) % 8))
    data_off = len(buf)
    buf.extend(data)
    buf.extend(b"\0" * (-len(buf) % 8))
    shoff = len(buf)
    buf.extend(buf[elf.shoff:elf.shoff + elf.shnum * elf.shentsize])
    buf.extend(struct.pack("<IIQQQQIIQQ", name, SHT_GNU_SFRAME, 0, 0, data_off,
                           len(data), 0, 0, 8, 0))
    struct.pack_into("<Q", buf, 0x28, shoff)
    struct.pack_into("<H", buf, 0x3C, elf.shnum + 1)


def new_build_id(elf, seed):
    digest = hashlib.sha256(seed.encode()).digest()
    for _, (p_type, _, off, _, _, filesz, _) in elf.phdrs():
        if p_type != PT_NOTE:
            continue
        end = off + filesz
        while off + 12 <= end:
            namesz, descsz, n_type = struct.unpack_from("<III", elf.buf, off)
            desc = off + 12 + ((namesz + 3) & ~3)
            if n_type == NT_GNU_BUILD_ID and elf.buf[off + 12:off + 15] == b"GNU":
                n = min(descsz, len(digest))
                elf.buf[desc:desc + n] = digest[:n]
                return
            off = desc + ((descsz + 3) & ~3)


def main(argv):
    keep = "--keep-build-id" in argv
    argv = [a for a in argv if a != "--keep-build-id"]
    if len(argv) != 4:
        raise SystemExit(__doc__)
    mode, src, dst = argv[1:]
    buf = bytearray(open(src, "rb").read())
    elf = Elf(buf)
    idx = elf.find_section(".sframe")
    sf = SFrame(buf, elf.shdr(idx)[4])
    if mode == "huge-counts":
        struct.pack_into("<II", buf, sf.base + 8, 0x7FFFFFFF, 0x7FFFFFFF)
    elif mode == "overlap":
        overlap(sf)
    elif mode == "cfa-zero":
        set_cfa(sf, 0)
    elif mode == "cfa-negative":
        set_cfa(sf, -8)
    elif mode == "section-huge":
        struct.pack_into("<Q", buf, elf.shdr_off(idx) + 0x20, HUGE)
    elif mode == "segment-huge":
        # Hide the section (name and type), so only the segment is left.
        name_at = elf.shdr(elf.shstrndx)[4] + elf.shdr(idx)[0]
        buf[name_at:name_at + 7] = b".hidden"
        struct.pack_into("<I", buf, elf.shdr_off(idx) + 4, SHT_PROGBITS)
        for off, ph in elf.phdrs():
            if ph[0] == PT_GNU_SFRAME:
                struct.pack_into("<QQ", buf, off + 0x20, HUGE, HUGE)
    elif mode == "pcmask-bomb":
        replace_section(elf, idx, pcmask_bomb())
    elif mode != "none":
        raise SystemExit(f"unknown mode {mode}")
    if not keep:
        new_build_id(elf, mode + ":" + dst)
    with open(dst, "wb") as f:
        f.write(buf)


if __name__ == "__main__":
    main(sys.argv)
