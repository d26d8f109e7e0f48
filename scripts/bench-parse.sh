#!/usr/bin/env bash
# Parse throughput and peak memory of `coalprof analyze` against pandas on the same raw-page CSV.
#
#   scripts/bench-parse.sh [MB]      (default 500; the file goes to $BENCH_DIR, default target/bench)
#
# The input repeats the data rows of a real ncu 2022.3 raw page (changing the ID column). The peer
# is scripts/bench_parse_pandas.py: pandas read_csv (units row skipped, thousands=','), the metric
# columns coalprof reads converted to numbers and scaled by the units row, summed per kernel.
# pandas goes into the project-local venv .tools/bench-venv (ignored by git).
set -euo pipefail
cd "$(dirname "$0")/.."

MB=${1:-500}
DIR=${BENCH_DIR:-target/bench}
SRC=tests/fixtures/ncu/2022/import_ncu2022_3_microgpusim_vectoradd_102400_32_gtx1080_2019_raw_base.csv
FILE=$DIR/raw_page_${MB}mb.csv
VENV=.tools/bench-venv
mkdir -p "$DIR"

if [[ ! -x /usr/bin/time ]]; then
    echo "installing GNU time (for peak RSS)" >&2
    apt-get install -y time >/dev/null
fi
if [[ ! -x $VENV/bin/python ]] || ! "$VENV/bin/python" -c 'import pandas' 2>/dev/null; then
    echo "installing pandas into $VENV" >&2
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet pandas
fi

cargo build --release --quiet
BIN=target/release/coalprof

if [[ ! -s $FILE ]]; then
    python3 scripts/bench_parse_pandas.py generate "$SRC" "$FILE" "$MB"
fi
BYTES=$(stat -c %s "$FILE")
cat "$FILE" > /dev/null # warm the page cache for both

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
    grep -E '^pandas' "$log" >&2 || true
    echo "$name $wall $rss"
}

read -r _ C_WALL C_RSS < <(run coalprof "$BIN" analyze "$FILE" --format json)
# shellcheck disable=SC2086
read -r _ P_WALL P_RSS < <(run pandas "$VENV/bin/python" scripts/bench_parse_pandas.py parse "$FILE" $METRICS)

awk -v bytes="$BYTES" -v cw="$C_WALL" -v cr="$C_RSS" -v pw="$P_WALL" -v pr="$P_RSS" \
    -v file="$FILE" -v cpu="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')" -v nproc="$(nproc)" 'BEGIN {
    mb = bytes / 1e6
    printf "input:    %.0f MB raw page (%s)\n", mb, file
    printf "machine:  %s cores, %s\n", nproc, cpu
    printf "coalprof: %7.1f MB/s  %6.2f s  peak RSS %6.0f MB\n", mb / cw, cw, cr / 1024
    printf "pandas:   %7.1f MB/s  %6.2f s  peak RSS %6.0f MB\n", mb / pw, pw, pr / 1024
    printf "ratio:    coalprof is %.1fx faster, with %.1fx less memory\n", pw / cw, pr / cr
}'
