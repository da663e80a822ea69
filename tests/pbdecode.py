"""The protobuf wire format, read by hand (no generated code, no schema): how
the check scripts and the test receiver decode the pprof profiles sfbpf
writes (realworld_check.py, pyroscope_receiver.py)."""


class WireError(ValueError):
    """A wire type protobuf does not have (3 and 4, the old groups, included)."""


def varint(buf, pos):
    """The varint at buf[pos]: (value, position after it)."""
    v = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        v |= (b & 0x7F) << shift
        if b < 0x80:
            return v, pos
        shift += 7


def fields(buf):
    """(field number, wire type, value) of one message, in order; values are
    ints (varint, fixed64, fixed32) or bytes (length-delimited)."""
    pos = 0
    while pos < len(buf):
        key, pos = varint(buf, pos)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, pos = varint(buf, pos)
        elif wt == 2:
            n, pos = varint(buf, pos)
            v, pos = buf[pos:pos + n], pos + n
        elif wt == 1:
            v, pos = int.from_bytes(buf[pos:pos + 8], "little"), pos + 8
        elif wt == 5:
            v, pos = int.from_bytes(buf[pos:pos + 4], "little"), pos + 4
        else:
            raise WireError("wire type %d" % wt)
        yield num, wt, v


def packed_ints(wt, v):
    """A repeated integer field's value as a list, packed (bytes) or not."""
    if wt == 0:
        return [v]
    out, pos = [], 0
    while pos < len(v):
        x, pos = varint(v, pos)
        out.append(x)
    return out
