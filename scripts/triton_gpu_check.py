#!/usr/bin/env python3
"""Triton on a GPU against `coalprof triton` without one (issue 40, item 7), for gpu-validate.sh.

  triton_gpu_check.py cases                    the cases, one per line: KERNEL<TAB>coalprof args
  triton_gpu_check.py launch                   run every case's kernel once on the GPU (under ncu)
  triton_gpu_check.py compare NCU.json TRITON.json…
                                               line by line: ncu's `coalprof lines --format json`
                                               rows against `coalprof triton --format json` rows

The kernels are tests/fixtures/triton/kernels.py's, with the shapes tests/it/triton.rs checks. The
comparison keys a row by (kernel, source file name, line ncu shows, op): `coalprof triton` gives
the true line and, where LLVM moved the instruction (llvm-project#177718), the line ncu shows in
its `sass` cell ("(ncu: line N)"), which is the one to match. Requests and sectors must be equal
(ncu counts every program; the triton runs here run every program too); ideal sectors are
coalprof's rule on both sides and are compared the same way. Exit 0 when every row matches, 1
with one line per difference otherwise, 2 on bad input.
"""
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KERNELS = os.path.join(ROOT, "tests", "fixtures", "triton", "kernels.py")

# kernel, grid, args (coalprof's spelling), meta
CASES = [
    ("gather4", "64", ["x_ptr=f32[65536]", "y_ptr=f32[16384]"], {"BLOCK": 256}),
    ("strided", "16", ["x_ptr=f32[65536]", "y_ptr=f32[16384]", "stride=2"], {"BLOCK": 1024}),
    ("copy", "4", ["x_ptr=f32[4000]", "y_ptr=f32[4000]", "n=4000"], {"BLOCK": 1024}),
    ("transpose", "8,8", ["x_ptr=f32[256,256]", "y_ptr=f32[256,256]", "N=256"], {"BLOCK": 32}),
]

DTYPES = {"f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64", "i32": "int32", "i64": "int64"}


def coalprof_args(case):
    kernel, grid, args, meta = case
    out = [f"{KERNELS}::{kernel}", "--grid", grid]
    for a in args:
        out += ["--arg", a]
    for k, v in meta.items():
        out += ["--meta", f"{k}={v}"]
    return out


def launch():
    """Each case's kernel once, with torch's CUDA tensors (Triton's launcher takes its stream
    from torch); zeros, so no access depends on data."""
    import importlib.util

    import torch

    spec = importlib.util.spec_from_file_location("coalprof_triton_kernels", KERNELS)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for kernel, grid, args, meta in CASES:
        values = []
        for a in args:
            name, value = a.split("=", 1)
            m = re.fullmatch(r"(\w+)\[([\d,]+)\]", value)
            if m:
                shape = [int(s) for s in m.group(2).split(",")]
                values.append(torch.zeros(shape, dtype=getattr(torch, DTYPES[m.group(1)]), device="cuda"))
            else:
                values.append(int(value))
        g = tuple(int(x) for x in grid.split(","))
        getattr(mod, kernel)[g](*values, **meta)
    torch.cuda.synchronize()


def ncu_line(row):
    m = re.search(r"\(ncu: line (\d+)\)", row.get("sass") or "")
    return int(m.group(1)) if m else row["line"]


def key(row, kernel, line):
    return (kernel, os.path.basename(row.get("file") or row.get("path") or ""), line, row["op"])


def rows_of(path):
    try:
        with open(path) as f:
            doc = json.load(f)
        return doc["rows"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise SystemExit(f"error: {path}: not a coalprof JSON document with rows ({e})") from None


def compare(ncu_rows, triton_docs):
    """The differences, one line each: a triton row ncu lacks or counts otherwise. Rows are
    summed per key on both sides (a line may hold several instructions); ncu rows of kernels or
    lines no triton run covers are not judged."""
    def add(table, k, r):
        t = table.setdefault(k, [0.0, 0.0, 0.0])
        for i, f in enumerate(("requests", "sectors", "ideal_sectors")):
            t[i] += float(r.get(f) or 0)

    want, have = {}, {}
    for kernel, rows in triton_docs:
        for r in rows:
            add(want, key(r, kernel, ncu_line(r)), r)
    kernels = {k for k, _ in triton_docs}
    for r in ncu_rows:
        # ncu names a Triton kernel by its Python function's name.
        name = r.get("kernel") or ""
        kernel = next((k for k in kernels if name == k or name.startswith(k + "_")), None)
        if kernel is not None:
            add(have, key(r, kernel, r["line"]), r)
    diffs = []
    for k, (rq, se, ide) in sorted(want.items()):
        got = have.get(k)
        where = f"{k[0]} {k[1]}:{k[2]} {k[3]}"
        if got is None:
            diffs.append(f"{where}: coalprof triton has requests {rq:g}, sectors {se:g}; ncu has no such row")
            continue
        for name, a, b in (("requests", rq, got[0]), ("sectors", se, got[1]), ("ideal sectors", ide, got[2])):
            if a != b:
                diffs.append(f"{where}: {name}: coalprof triton {a:g}, ncu {b:g}")
    return diffs, len(want)


def main(argv):
    if len(argv) >= 2 and argv[1] == "cases":
        for c in CASES:
            print(c[0] + "\t" + "\t".join(coalprof_args(c)))
        return 0
    if len(argv) == 2 and argv[1] == "launch":
        launch()
        return 0
    if len(argv) >= 4 and argv[1] == "compare":
        ncu = rows_of(argv[2])
        docs = []
        for p in argv[3:]:
            # TRITON.json files are named KERNEL.json (gpu-validate.sh writes them so).
            docs.append((os.path.basename(p).rsplit(".", 1)[0], rows_of(p)))
        diffs, n = compare(ncu, docs)
        for d in diffs:
            print("differs: " + d)
        print(f"triton-vs-ncu: {len(diffs)} differences in {n} rows" if diffs else f"triton-vs-ncu: all {n} rows equal")
        return 1 if diffs else 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
