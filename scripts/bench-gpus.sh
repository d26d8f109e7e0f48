#!/usr/bin/env bash
#! `run --gpus` on the fake 4-GPU node of tests/fake_gpu/ (two A100s and two H200s): the same
#! `run --all --backend ncu` on one GPU and on all four, the fake ncu sleeping like a profiler
#! (FAKE_NCU_SLEEP seconds per launch, default 0.2), the kernels built beforehand so neither
#! timing includes nvcc. Prints both wall times and their ratio; exits 1 above 0.35 (issue 14).
#! Usage: scripts/bench-gpus.sh   (COALPROF_BIN picks the binary; default: a debug build)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
target="${CARGO_TARGET_DIR:-$root/target}"
bin="${COALPROF_BIN:-$target/debug/coalprof}"
[ -x "$bin" ] || cargo build -q
nvcc="$root/.tools/cuda-home/bin/nvcc"
[ -x "$nvcc" ] || { echo "bench-gpus: run scripts/install-tools.sh first (nvcc builds the patterns)" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# What the fake ncu reports: the model's raw counters under their ncu names.
"$bin" run --all --backend model --size 1M --format json --out "$work/model" > "$work/model.json"
python3 - "$root/metrics.toml" "$work/model.json" > "$work/counters.json" <<'PY'
import json, sys, tomllib
raw = tomllib.load(open(sys.argv[1], "rb"))["raw"]
rows = json.load(open(sys.argv[2]))["rows"]
print(json.dumps({r["variant"]: {raw[k]["ncu"]: v for k, v in r["metrics"].items() if k in raw} for r in rows}))
PY

export PATH="$root/tests/fake_gpu:$PATH" COALPROF_NCU="$root/tests/fake_gpu/ncu" COALPROF_NVCC="$nvcc"
export COALPROF_PLAN_ONLY=1 FAKE_NCU_COUNTERS="$work/counters.json" FAKE_NCU_SLEEP="${FAKE_NCU_SLEEP:-0.2}"
export FAKE_SMI_GPUS="0, NVIDIA A100-SXM4-80GB, 8.0, 81920, 570.124.06, GPU-a100a000-0000-4000-8000-000000000000
1, NVIDIA A100-SXM4-80GB, 8.0, 81920, 570.124.06, GPU-a100a000-0000-4000-8000-000000000001
2, NVIDIA H200, 9.0, 143771, 570.124.06, GPU-h200a000-0000-4000-8000-000000000002
3, NVIDIA H200, 9.0, 143771, 570.124.06, GPU-h200a000-0000-4000-8000-000000000003"
"$bin" build --all --arch sm_80,sm_90 > /dev/null

wall() {
    local start end
    start=$(date +%s.%N)
    "$bin" run --all --backend ncu --size 1M --gpus "$1" --format json --out "$work/runs" > /dev/null 2> "$work/err" \
        || { cat "$work/err" >&2; exit 1; }
    end=$(date +%s.%N)
    python3 -c 'import sys; print(float(sys.argv[1]) - float(sys.argv[2]))' "$end" "$start"
}
one=$(wall 0)
four=$(wall all)
ratio=$(python3 -c 'import sys; print(float(sys.argv[1]) / float(sys.argv[2]))' "$four" "$one")
printf 'bench-gpus: run --all, fake ncu sleeping %s s per launch\n' "$FAKE_NCU_SLEEP"
printf '  one GPU (--gpus 0):     %6.2f s\n  four GPUs (--gpus all): %6.2f s\n  ratio: %.3f (target <= 0.35)\n' \
    "$one" "$four" "$ratio"
python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) <= 0.35 else 1)' "$ratio"
