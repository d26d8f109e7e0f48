#!/usr/bin/env bash
# A big `.ncu-rep` made of a small one's blocks repeated (scripts/ncu_rep_blocks.py repeat), read
# by `coalprof analyze` and `coalprof lines`: wall time, MB/s and peak RSS of each, at two sizes
# so that memory can be seen flat (or not) as the report grows; beside the peers on the same
# file in the same run: `ncu --import R --csv --page raw` for analyze, NVIDIA's `ncu_report`
# (tests/oracle/ncu_report_lines.py, every PC's counters) for lines, each with a time limit.
#
#   scripts/bench-big-report.sh [FIXTURE] [MB]   (default: the 2021.2.2 MiSTIC fixture, 164 blocks,
#                                                 to 1000 MB, about 50,000 launches; the small size
#                                                 is MB/4. PEERS=0 skips ncu and ncu_report,
#                                                 PEER_LIMIT=seconds bounds each, default 120)
set -euo pipefail
cd "$(dirname "$0")/.."

FIXTURE=${1:-tests/fixtures/ncu-rep/bwd29-self-join-MiSTIC_profile_2021.2.2.ncu-rep}
MB=${2:-1000}
DIR=${BENCH_DIR:-target/bench}
PEERS=${PEERS:-1}
LIMIT=${PEER_LIMIT:-120}
NCU=.tools/bin/ncu
PY=.tools/ncu-report/bin/python
mkdir -p "$DIR"
if [[ ! -x /usr/bin/time ]]; then
    echo "installing GNU time (for peak RSS)" >&2
    apt-get install -y time >/dev/null
fi
cargo build --release --quiet
BIN=${CARGO_TARGET_DIR:-target}/release/coalprof
stem=$(basename "$FIXTURE" .ncu-rep)
HOME_DIR=$(mktemp -d)
trap 'rm -rf "$HOME_DIR"' EXIT

# measure CMD...: "wall-seconds peak-KiB" of one run (GNU time), or "- -" if it failed or ran out of time.
measure() {
    local log; log=$(mktemp)
    if ! /usr/bin/time -v "$@" > /dev/null 2> "$log"; then
        rm -f "$log"; echo "- -"; return
    fi
    awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i]; w = s}
        /Maximum resident set size/ {r = $2} END {print w, r}' "$log"
    rm -f "$log"
}

printf 'machine: %s cores, %s, load average %s\n' "$(nproc)" "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')" "$(cut -d' ' -f1 /proc/loadavg)"
printf '%-8s %8s %9s %8s %9s %9s   %s\n' command "MB" "launches" "s" "MB/s" "RSS MB" "peer (same file): s, ratio"
for size in $((MB / 4)) "$MB"; do
    big=$DIR/big_${stem}_${size}mb.ncu-rep
    if [[ ! -s $big ]]; then
        python3 scripts/ncu_rep_blocks.py repeat "$FIXTURE" "$big" "$size" 2> "$big.log"
    fi
    launches=$(grep -o '[0-9]* launches' "$big.log" | cut -d' ' -f1)
    bytes=$(stat -c %s "$big")
    cat "$big" > /dev/null # the page cache, for every reader alike
    for cmd in analyze lines; do
        args=("$cmd" "$big" --format json)
        [[ $cmd == lines ]] && args+=(--top 0)
        read -r wall kib < <(measure "$BIN" "${args[@]}")
        peer="-"
        if [[ $PEERS == 1 && $cmd == analyze && -x $NCU ]]; then
            read -r pw _ < <(measure timeout "$LIMIT" env HOME="$HOME_DIR" "$NCU" --import "$big" --csv --page raw)
            peer=$([[ $pw == - ]] && echo "ncu --import: failed or over ${LIMIT} s" || awk -v p="$pw" -v w="$wall" 'BEGIN {printf "ncu --import %.2f s, %.1fx", p, p / w}')
        elif [[ $PEERS == 1 && $cmd == lines && -x $PY ]]; then
            read -r pw _ < <(measure timeout "$LIMIT" "$PY" tests/oracle/ncu_report_lines.py "$big" inst_executed memory_l2_theoretical_sectors_global memory_type)
            peer=$([[ $pw == - ]] && echo "ncu_report: failed or over ${LIMIT} s" || awk -v p="$pw" -v w="$wall" 'BEGIN {printf "ncu_report %.2f s, %.1fx", p, p / w}')
        fi
        awk -v c="$cmd" -v b="$bytes" -v n="$launches" -v w="$wall" -v k="$kib" -v p="$peer" 'BEGIN {
            printf "%-8s %8.0f %9d %8.2f %9.0f %9.0f   %s\n", c, b / 1e6, n, w, (b / 1e6) / w, k / 1024, p }'
    done
done
echo "goal (issue 21): analyze and lines >= 500 MB/s, peak RSS < 200 MB and flat from MB/4 to MB"
