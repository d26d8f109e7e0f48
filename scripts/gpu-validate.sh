#!/usr/bin/env bash
#! One script for a GPU machine, done within 8 minutes: doctor, build for the GPU's architecture,
#! `run --all` under ncu (retrying with `--clock-control none` when clock control is refused), and
#! a summary, all copied to one folder (default $OUT, the lent device machine's output folder);
#! where Triton is installed, `coalprof triton` against ncu on the Triton fixtures, line by line.
#!
#! Usage: scripts/gpu-validate.sh [OUT_DIR] [--size BYTES]
#! The coalprof binary: $COALPROF, else target/release/coalprof, else coalprof on PATH.
#! Commit what it measured as profiles/reference/<gpu>/ (results.json, results.md, summary.md):
#! the first such run creates that folder (none is committed yet; profiles/README.md says so).
set -uo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-${OUT:-$root/profiles/gpu-validate}}"
shift || true
extra=("$@")   # passed on to `coalprof run`, e.g. --size 256M
mkdir -p "$out"
log="$out/validate.log"
exec > >(tee -a "$log") 2>&1

cp="${COALPROF:-}"
[ -n "$cp" ] || { [ -x "$root/target/release/coalprof" ] && cp="$root/target/release/coalprof"; }
[ -n "$cp" ] || cp="$(command -v coalprof || true)"
[ -x "$cp" ] || { echo "gpu-validate: no coalprof binary (set COALPROF)"; exit 2; }

# The machine's own CUDA tools, wherever the toolkit put them.
for d in /usr/local/cuda/bin /opt/nvidia/nsight-compute/*/ /usr/local/cuda/nsight-compute-*/; do
    [ -d "$d" ] && PATH="$PATH:${d%/}"
done
export PATH

step() { printf '\n== %s (%s s)\n' "$*" "$SECONDS"; }

step "doctor"
"$cp" doctor | tee "$out/doctor.txt"
nvidia-smi --query-gpu=name,compute_cap,memory.total,driver_version,clocks.max.memory,clocks.max.sm --format=csv | tee -a "$out/doctor.txt"

step "build"
"$cp" -v build --all || exit 3

run() {
    local id=$1 clock=$2
    shift 2
    "$cp" -v run --all --backend ncu --out "$out/runs" --run-id "$id" --clock-control "$clock" --timeout 300 "${extra[@]}" "$@"
}
step "run --all (clock control base)"
run validate base --format markdown > "$out/summary.md"
rc=$?
if [ $rc -ne 0 ] && grep -qiE 'clock|lock' "$log"; then
    step "clock control refused: run --all --clock-control none"
    rm -rf "$out/runs/validate"
    run validate none --format markdown > "$out/summary.md"
    rc=$?
fi

# Triton (issue 40, item 7): where this machine's Python has Triton and torch (whose stream
# Triton's launcher takes) and ncu is here, the fixtures' kernels run under ncu with source
# counters and `coalprof triton` computes the same launches without the GPU; the two are
# compared line by line (scripts/triton_gpu_check.py) into triton-vs-ncu.txt.
py="${COALPROF_PYTHON:-python3}"
trc=0
if command -v ncu >/dev/null && "$py" -c 'import triton, torch' 2>/dev/null; then
    step "triton: coalprof triton against ncu ($("$py" -c 'import triton; print(triton.__version__)'))"
    tdir="$out/triton"
    mkdir -p "$tdir/gpu" "$tdir/cpu"
    cc="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d ' .')"
    export COALPROF_PYTHON="$py"
    while IFS=$'\t' read -r kernel args; do
        IFS=$'\t' read -r -a a <<<"$args"
        "$cp" triton "${a[@]}" --arch "sm_$cc" --format json --top 0 > "$tdir/cpu/$kernel.json" || trc=3
    done < <("$py" "$root/scripts/triton_gpu_check.py" cases)
    "$cp" -v profile --out "$tdir/gpu" --clock-control none --timeout 300 -- \
        "$py" "$root/scripts/triton_gpu_check.py" launch > /dev/null || trc=3
    run_dir="$(dirname "$(ls -t "$tdir"/gpu/*/run.json "$tdir"/gpu/run.json 2>/dev/null | head -1)")"
    "$cp" lines "$run_dir" --format json --top 0 > "$tdir/ncu.json" || trc=3
    "$py" "$root/scripts/triton_gpu_check.py" compare "$tdir/ncu.json" "$tdir"/cpu/*.json \
        | tee "$out/triton-vs-ncu.txt"
    [ "${PIPESTATUS[0]}" -eq 0 ] || trc=1
    tar -C "$out" -czf "$out/triton.tar.gz" triton 2>/dev/null
    rm -rf "$tdir"
else
    step "triton: skipped (needs ncu, and triton and torch in $py)"
fi
[ $rc -ne 0 ] || rc=$trc

step "pack"
# $OUT keeps at most 8 files two folders deep: pack the run (reports, CSVs, manifests, results).
tar -C "$out/runs" -czf "$out/run.tar.gz" validate 2>/dev/null
cp "$out/runs/validate/results.json" "$out/results.json" 2>/dev/null
rm -rf "$out/runs"
step "done, exit $rc"
exit $rc
