#!/usr/bin/env python3
"""The block layout of an .ncu-rep report (docs/ncu-rep-format.md), and a big report made of a
small one's blocks (scripts/bench-big-report.sh).

  ncu_rep_blocks.py list R            one line per block: offset, header bytes, payload bytes,
                                      sources, results, whether it carries a string table
  ncu_rep_blocks.py repeat R OUT MB   all of R, then its blocks' results again and again until OUT
                                      holds about MB megabytes: a repeated block keeps its
                                      results and process but drops its string table (indices
                                      are cumulative, so the first copy's names serve), session
                                      and sources (the first copy's modules serve)
  ncu_rep_blocks.py launches N OUT    a report of N launches of one kernel, one result per block
                                      as ncu writes them, each with 8 global-load sectors over 1
                                      request (scripts/bench-untrusted.sh)
"""
import struct
import sys


def varint(b, i):
    v = s = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << s
        s += 7
        if c < 0x80:
            return v, i


def enc_varint(v):
    out = bytearray()
    while True:
        c = v & 0x7F
        v >>= 7
        if v:
            out.append(c | 0x80)
        else:
            out.append(c)
            return bytes(out)


def fields(h):
    """(field number, wire type, raw bytes of the whole field) of a message."""
    i = 0
    while i < len(h):
        start = i
        k, i = varint(h, i)
        t = k & 7
        if t == 0:
            v, i = varint(h, i)
        elif t == 2:
            n, i = varint(h, i)
            v = h[i:i + n]
            i += n
        elif t == 1:
            v = h[i:i + 8]
            i += 8
        elif t == 5:
            v = h[i:i + 4]
            i += 4
        else:
            raise ValueError(f"wire type {t}")
        yield k >> 3, t, v, h[start:i]


def blocks(b):
    o = 8 + struct.unpack_from("<I", b, 4)[0]
    while o + 4 <= len(b):
        n = struct.unpack_from("<I", b, o)[0]
        h = b[o + 4:o + 4 + n]
        f = {num: v for num, _, v, _ in fields(h)}
        payload = f.get(5, 0)
        yield o, h, b[o + 4 + n:o + 4 + n + payload], f
        o += 4 + n + payload


def items(payload, count):
    """The first `count` length-prefixed items of a payload, and the rest."""
    o, out = 0, []
    for _ in range(count):
        n = struct.unpack_from("<I", payload, o)[0]
        out.append(payload[o:o + 4 + n])
        o += 4 + n
    return out, payload[o:]


def one_kernel(n, out_path):
    """N minimal launches of one kernel: the string table in the first block, then a block per
    result (kernel name, grid, block, four metrics as doubles)."""
    def num(f, v):
        return enc_varint(f << 3) + enc_varint(v)

    def field(f, b):
        return enc_varint(f << 3 | 2) + enc_varint(len(b)) + b

    def framed(b):
        return struct.pack("<I", len(b)) + b

    names = [b"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", b"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
             b"launch__grid_size", b"launch__block_size"]
    dims = lambda d: b"".join(num(i + 1, v) for i, v in enumerate(d))
    result = field(7, b"copy_kernel(float*, float const*)") + field(10, dims([4, 1, 1])) + field(11, dims([256, 1, 1]))
    for i, v in enumerate([8.0, 1.0, 4.0, 256.0]):
        result += field(13, num(1, i) + field(2, enc_varint(3 << 3 | 1) + struct.pack("<d", v)))
    table = field(4, b"".join(field(1, n) for n in names))
    one = framed(num(1, 0) + num(2, 1) + num(5, len(result) + 4)) + framed(result)
    with open(out_path, "wb") as w:
        w.write(b"NVR\0" + framed(num(1, 7)) + framed(num(1, 0) + num(2, 0) + table + num(5, 0)))
        for _ in range(n):
            w.write(one)


def main():
    cmd, path = sys.argv[1], sys.argv[2]
    if cmd == "launches":
        one_kernel(int(path), sys.argv[3])
        return
    b = open(path, "rb").read()
    if cmd == "list":
        for o, h, p, f in blocks(b):
            print(o, len(h), len(p), f.get(1, 0), f.get(2, 0), 4 in f)
        return
    out_path, mb = sys.argv[3], float(sys.argv[4])
    head = b[:8 + struct.unpack_from("<I", b, 4)[0]]
    bl = list(blocks(b))
    # Each block again without its string table (4), session details (3) and sources: results only.
    again = []
    for o, h, p, f in bl:
        srcs, rest = items(p, f.get(1, 0))
        results = rest
        keep = b"".join(raw for num, _, _, raw in fields(h) if num not in (1, 3, 4, 5))
        hdr = keep + b"\x08" + enc_varint(0) + b"\x28" + enc_varint(len(results))
        again.append(struct.pack("<I", len(hdr)) + hdr + results)
    target, launches = int(mb * 1e6), 0
    keep = [i for i, (_, _, _, f) in enumerate(bl) if f.get(2, 0) > 0]
    again = [again[i] for i in keep]
    per = [bl[i][3].get(2, 0) for i in keep]
    with open(out_path, "wb") as w:
        w.write(b)
        written = len(b)
        launches += sum(per)
        i = 0
        while written < target:
            w.write(again[i])
            written += len(again[i])
            launches += per[i]
            i = (i + 1) % len(again)
    print(f"{out_path}: {written / 1e6:.0f} MB, {launches} launches", file=sys.stderr)


if __name__ == "__main__":
    main()
