#!/usr/bin/env python3
"""The peer coalprof's parser is measured against (scripts/bench-parse.sh), and the generator of
the benchmark's input.

  bench_parse_pandas.py generate SRC OUT MB   repeat SRC's data rows (a real ncu raw page) with
                                             fresh IDs until OUT holds about MB megabytes
  bench_parse_pandas.py parse FILE METRIC...  what an ncu-parsing script does with pandas: read the
                                             raw page (units row skipped, thousands=','), turn
                                             the metric columns into numbers, scale them by the
                                             units row, group by kernel and sum
  bench_parse_pandas.py parse-polars FILE METRIC...   the same with Python polars (every column
                                             read as text, as ncu's quoted, comma-grouped numbers
                                             need, then cast)

The parse step does the same work as `coalprof analyze FILE` up to the derived metrics: every
row is read, the metrics coalprof uses are converted and scaled, launches are summed per kernel.
"""
import csv
import sys
import time

PREFIX = {
    "byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "Tbyte": 1e12,
    "second": 1, "msecond": 1e-3, "usecond": 1e-6, "nsecond": 1e-9,
    "s": 1, "ms": 1e-3, "us": 1e-6, "ns": 1e-9,
}


def generate(src, out, megabytes):
    with open(src, newline="") as f:
        lines = [l for l in f.read().split("\n") if l.startswith('"')]
    header, units, rows = lines[0], lines[1], lines[2:]
    target = int(megabytes * 1e6)
    with open(out, "w", newline="") as f:
        f.write(header + "\n" + units + "\n")
        written, i = len(header) + len(units) + 2, 0
        while written < target:
            row = rows[i % len(rows)]
            fields = row.split('","', 1)  # the first field is the ID
            line = f'"{i}","{fields[1]}\n'
            f.write(line)
            written += len(line)
            i += 1
    print(f"{out}: {written / 1e6:.0f} MB, {i} launches", file=sys.stderr)


def parse(path, metrics):
    import pandas as pd

    start = time.perf_counter()
    units = pd.read_csv(path, nrows=1, dtype=str, keep_default_na=False).iloc[0]
    df = pd.read_csv(path, skiprows=[1], thousands=",", low_memory=False)
    cols = [m for m in metrics if m in df.columns]
    for c in cols:
        v = pd.to_numeric(df[c], errors="coerce")
        df[c] = v * PREFIX.get(units[c], 1)
    totals = df.groupby(["Kernel Name"])[cols].sum()
    totals["launches"] = df.groupby(["Kernel Name"]).size()
    elapsed = time.perf_counter() - start
    print(totals.iloc[:, :3].to_string(), file=sys.stderr)
    print(f"pandas {pd.__version__}: {len(df)} rows, {len(cols)} metrics in {elapsed:.2f} s", file=sys.stderr)


def parse_polars(path, metrics):
    import polars as pl

    start = time.perf_counter()
    head = pl.read_csv(path, n_rows=1, infer_schema=False)
    cols = [m for m in metrics if m in head.columns]
    units = head.row(0, named=True)
    df = pl.read_csv(path, skip_rows_after_header=1, infer_schema=False, columns=["Kernel Name", *cols])
    df = df.with_columns(
        (pl.col(c).str.replace_all(",", "").cast(pl.Float64, strict=False) * PREFIX.get(units[c] or "", 1)).alias(c)
        for c in cols
    )
    totals = df.group_by("Kernel Name", maintain_order=True).agg(
        [pl.col(c).sum() for c in cols] + [pl.len().alias("launches")]
    )
    elapsed = time.perf_counter() - start
    print(totals.select(totals.columns[:3]), file=sys.stderr)
    print(f"polars {pl.__version__}: {len(df)} rows, {len(cols)} metrics in {elapsed:.2f} s", file=sys.stderr)


if __name__ == "__main__":
    if sys.argv[1] == "generate":
        generate(sys.argv[2], sys.argv[3], float(sys.argv[4]))
    elif sys.argv[1] == "parse":
        parse(sys.argv[2], sys.argv[3:])
    elif sys.argv[1] == "parse-polars":
        parse_polars(sys.argv[2], sys.argv[3:])
    else:
        sys.exit(__doc__)
