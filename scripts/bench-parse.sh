#!/usr/bin/env bash
# Parse throughput and peak memory of `coalprof analyze` on a raw-page CSV, beside its peers on
# the same file in the same run (the machine is shared: ratios, not absolute speeds, are the
# result): pandas and Python polars doing the same work, and the `csv` crate's own record
# splitting (in-process: benches/parse.rs, what `cargo bench --bench parse` runs).
#
#   scripts/bench-parse.sh [MB]      (default 300; the file goes to $BENCH_DIR, default target/bench)
#
# The input repeats the data rows of a real ncu 2022.3 raw page (changing the ID column). The
# peers are scripts/bench_parse_pandas.py: read the raw page (units row skipped, thousands=','),
# the metric columns coalprof reads converted to numbers and scaled by the units row, summed per
# kernel. coalprof runs twice: pinned to one core (`taskset -c 0`: the fast path parses inline)
# and on two (a parsing thread per core). pandas and polars go into the project-local venv
# .tools/bench-venv (ignored by git).
set -euo pipefail
cd "$(dirname "$0")/.."

MB=${1:-300}
DIR=${BENCH_DIR:-target/bench}
SRC=tests/fixtures/ncu/2022/import_ncu2022_3_microgpusim_vectoradd_102400_32_gtx1080_2019_raw_base.csv
FILE=$DIR/raw_page_${MB}mb.csv
VENV=.tools/bench-venv
mkdir -p "$DIR"

if [[ ! -x /usr/bin/time ]]; then
    echo "installing GNU time (for peak RSS)" >&2
    apt-get install -y time >/dev/null
fi
if [[ ! -x $VENV/bin/python ]] || ! "$VENV/bin/python" -c 'import pandas, polars' 2>/dev/null; then
    echo "installing pandas and polars into $VENV" >&2
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet pandas polars
fi

cargo build --release --quiet --bin coalprof
BIN=${CARGO_TARGET_DIR:-target}/release/coalprof
# The in-process benchmark, built with the release profile like the binary. A bench target
# turns on the dev-dependencies' features, so its first build compiles its own copy of the
# library (20 minutes on the loaded 2-core machine, once); later runs reuse it.
BENCH=$(cargo build --release --quiet --bench parse --message-format=json |
    python3 -c 'import json, sys; print([m["executable"] for m in map(json.loads, sys.stdin) if m.get("executable")][-1])')

if [[ ! -s $FILE ]]; then
    python3 scripts/bench_parse_pandas.py generate "$SRC" "$FILE" "$MB"
fi
BYTES=$(stat -c %s "$FILE")
cat "$FILE" > /dev/null # warm the page cache for all

# The catalogue's ncu names (and aliases): the columns coalprof reads.
METRICS=$("$VENV/bin/python" - <<'PY'
import tomllib
m = tomllib.load(open("metrics.toml", "rb"))
print(" ".join(n for r in m["raw"].values() for n in [r["ncu"], *r.get("aliases", [])]))
PY
)

# run NAME CMD...: wall seconds and peak RSS (KiB) of CMD, via GNU time.
run() {
    local name=$1; shift
    local log; log=$(mktemp)
    /usr/bin/time -v "$@" > /dev/null 2> "$log" || { cat "$log" >&2; exit 1; }
    local wall rss
    wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i]; print s}' "$log")
    rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$log")
    rm -f "$log"
    echo "$name $wall $rss"
}

read -r _ C1_WALL C1_RSS < <(run coalprof-1 taskset -c 0 "$BIN" analyze "$FILE" --format json)
read -r _ C2_WALL C2_RSS < <(run coalprof-2 "$BIN" analyze "$FILE" --format json)
# shellcheck disable=SC2086
read -r _ P_WALL P_RSS < <(run pandas "$VENV/bin/python" scripts/bench_parse_pandas.py parse "$FILE" $METRICS)
# shellcheck disable=SC2086
read -r _ L_WALL L_RSS < <(run polars "$VENV/bin/python" scripts/bench_parse_pandas.py parse-polars "$FILE" $METRICS)
# The csv crate's record splitting alone, in-process on the same file (and our parser beside it).
SPLIT_OUT=$("$BENCH" "$FILE")
SPLIT=$(awk -F': *' '/^csv crate/ {print $2 + 0}' <<< "$SPLIT_OUT")

awk -v bytes="$BYTES" -v c1="$C1_WALL" -v r1="$C1_RSS" -v c2="$C2_WALL" -v r2="$C2_RSS" \
    -v pw="$P_WALL" -v pr="$P_RSS" -v lw="$L_WALL" -v lr="$L_RSS" -v csvsplit="$SPLIT" \
    -v file="$FILE" -v cpu="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')" -v nproc="$(nproc)" \
    -v load="$(cut -d' ' -f1 /proc/loadavg)" 'BEGIN {
    mb = bytes / 1e6
    printf "input:    %.0f MB raw page (%s)\n", mb, file
    printf "machine:  %s cores, %s, load average %s\n", nproc, cpu, load
    printf "coalprof analyze, 1 core:  %7.1f MB/s  %6.2f s  peak RSS %6.0f MB\n", mb / c1, c1, r1 / 1024
    printf "coalprof analyze, 2 cores: %7.1f MB/s  %6.2f s  peak RSS %6.0f MB\n", mb / c2, c2, r2 / 1024
    printf "pandas:                    %7.1f MB/s  %6.2f s  peak RSS %6.0f MB\n", mb / pw, pw, pr / 1024
    printf "polars (Python):           %7.1f MB/s  %6.2f s  peak RSS %6.0f MB\n", mb / lw, lw, lr / 1024
    printf "csv crate, split only:     %7.1f MB/s  (in-process, no conversion, no analysis)\n", csvsplit
    printf "ratio, 1 core:  %.1fx pandas, %.1fx polars, %.2fx the csv crate'\''s splitting, %.1fx less memory than pandas\n", pw / c1, lw / c1, (mb / c1) / csvsplit, pr / r1
    printf "ratio, 2 cores: %.1fx pandas, %.1fx polars, %.2fx the csv crate'\''s splitting\n", pw / c2, lw / c2, (mb / c2) / csvsplit
    printf "goal (issue 21): >= 600 MB/s on one core and >= 8x pandas: %s; >= 1000 MB/s on two: %s; < 50 MB: %s\n", \
        (mb / c1 >= 600 && pw / c1 >= 8) ? "met" : "NOT met", (mb / c2 >= 1000) ? "met" : "NOT met", \
        (r1 / 1024 < 50 && r2 / 1024 < 50) ? "met" : "NOT met"
}'
echo
echo "in-process (cargo bench --bench parse, best of 3, the file in memory):"
grep -v '^input' <<< "$SPLIT_OUT" | sed 's/^/  /'
