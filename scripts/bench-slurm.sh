#!/usr/bin/env bash
#! The Slurm path's overhead per task: `run --backend model` locally and through `--slurm` on
#! the running cluster of scripts/slurm-local.sh (start it first and export its SLURM_CONF).
#! Latency: one pattern (one task) through Slurm minus the same run locally. Throughput:
#! `run --all` (9 tasks) through Slurm minus locally, per task; the one-node cluster runs as
#! many tasks at once as it has CPUs. Usage: scripts/bench-slurm.sh [REPEATS]  (default 3)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
target="${CARGO_TARGET_DIR:-$root/target}"
bin="${COALPROF_BIN:-$target/debug/coalprof}"
[ -x "$bin" ] || cargo build -q
[ -n "${SLURM_CONF:-}" ] || { echo "bench-slurm: start the cluster: eval \"\$(scripts/slurm-local.sh start)\"" >&2; exit 1; }
repeats="${1:-3}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# Mean wall time of `run ARGS…` over the repeats.
mean() {
    local total=0 start end
    for i in $(seq "$repeats"); do
        start=$(date +%s.%N)
        "$bin" run "$@" --backend model --size 16M --format json --out "$work/$RANDOM$i" > /dev/null 2> "$work/err" \
            || { cat "$work/err" >&2; exit 1; }
        end=$(date +%s.%N)
        total=$(python3 -c 'import sys; print(float(sys.argv[1]) + float(sys.argv[2]) - float(sys.argv[3]))' "$total" "$end" "$start")
    done
    python3 -c 'import sys; print(float(sys.argv[1]) / int(sys.argv[2]))' "$total" "$repeats"
}
one_local=$(mean --pattern stride)
one_slurm=$(mean --pattern stride --slurm)
all_local=$(mean --all)
all_slurm=$(mean --all --slurm)
python3 - "$one_local" "$one_slurm" "$all_local" "$all_slurm" "$(nproc)" <<'PY'
import sys
one_local, one_slurm, all_local, all_slurm = map(float, sys.argv[1:5])
print("bench-slurm: run --backend model, mean of the repeats, cluster of one node with %s CPUs" % sys.argv[5])
print("  one task:  local %.2f s, through Slurm %.2f s: %.2f s of latency per task" % (one_local, one_slurm, one_slurm - one_local))
print("  9 tasks:   local %.2f s, through Slurm %.2f s: %.2f s per task" % (all_local, all_slurm, (all_slurm - all_local) / 9))
PY
