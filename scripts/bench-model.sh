#!/usr/bin/env bash
# The whole `coalprof run --all --backend model` (release build): process start, the model over
# every built-in variant at 1 GiB (56 with reuse's; the README's figures were measured on 42),
# the derivation per pattern, the table, and the run saved after every pattern (results,
# plots). N runs (default 10) after one warm-up, each into a fresh folder; prints every run's
# wall time, then min / median / max, and the machine's load.
#
#   scripts/bench-model.sh [N]
#
# hyperfine's method without hyperfine (not installed here): wall time from bash's
# $EPOCHREALTIME around each run, stdout and stderr discarded, the median reported. With
# COALPROF_BENCH_PROFILE=1 it also prints where one run's time goes (`perf stat`, if present).
set -euo pipefail
cd "$(dirname "$0")/.."

N=${1:-10}
cargo build --release --locked --quiet
BIN=${CARGO_TARGET_DIR:-target}/release/coalprof
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "command: $BIN run --all --backend model --out DIR --run-id rK"
"$BIN" run --all --backend model --out "$OUT" --run-id warmup > /dev/null 2>&1
times=()
for k in $(seq "$N"); do
    t0=$EPOCHREALTIME
    "$BIN" run --all --backend model --out "$OUT" --run-id "r$k" > /dev/null 2>&1
    t1=$EPOCHREALTIME
    t=$(echo "$t1 - $t0" | bc -l)
    times+=("$t")
    printf '  run %2d  %.3f s\n' "$k" "$t"
done
printf '%s\n' "${times[@]}" | sort -g | awk '
    {a[NR] = $1}
    END {printf "min %.3f s  median %.3f s  max %.3f s  (%d runs)\n", a[1], a[int((NR + 1) / 2)], a[NR], NR}'
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
if [[ ${COALPROF_BENCH_PROFILE:-0} == 1 ]] && command -v perf > /dev/null; then
    perf stat -e task-clock "$BIN" run --all --backend model --out "$OUT" --run-id perf > /dev/null
fi
