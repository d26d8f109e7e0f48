#!/usr/bin/env bash
#! The `coalprof triton` benchmark (issue 40's goals): a 128×128-tile elementwise kernel
#! (`scale_tile` of tests/fixtures/triton/kernels.py) over two 8192² float32 tensors, 64×64 =
#! 4096 programs, sm_90, 4 warps: every program (goal ≤ 60 s, ≤ 3 GB RSS on the 2-core machine),
#! then `--programs 64` (goal ≤ 5 s, totals within 1% of the full run). Prints each run's wall
#! time and peak RSS (GNU time) and the two runs' sectors and requests per line side by side.
#! Needs a Python with triton and numpy (`COALPROF_PYTHON`, else .tools/triton/bin/python3).
set -euo pipefail
cd "$(dirname "$0")/.."
export COALPROF_PYTHON="${COALPROF_PYTHON:-$PWD/.tools/triton/bin/python3}"
coalprof="${COALPROF:-target/release/coalprof}"
[ -x "$coalprof" ] || coalprof=target/debug/coalprof
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
args=(triton tests/fixtures/triton/kernels.py::scale_tile --grid 64,64 --arg x_ptr=f32[8192,8192]
    --arg y_ptr=f32[8192,8192] --arg N=8192 --meta BLOCK=128 --num-warps 4 --arch sm_90 --format json --top 0)
for programs in all 64; do
    extra=()
    [ "$programs" = all ] || extra=(--programs "$programs")
    /usr/bin/time -f "programs=$programs: %e s wall, %M KB peak RSS" \
        "$coalprof" "${args[@]}" "${extra[@]}" > "$out/$programs.json" 2> "$out/$programs.err"
    grep "programs=" "$out/$programs.err"
done
python3 - "$out/all.json" "$out/64.json" <<'PY'
import json, sys
full, sample = (json.load(open(p))["rows"] for p in sys.argv[1:])
key = lambda r: (r["line"], r["op"])
s = {key(r): r for r in sample}
worst = 0.0
for r in full:
    for m in ("requests", "sectors", "ideal_sectors"):
        d = abs(s[key(r)][m] / r[m] - 1) if r[m] else 0.0
        worst = max(worst, d)
        print(f"line {r['line']} {r['op']}: {m} {r[m]:.0f} (all) vs {s[key(r)][m]:.0f} (64): {d:.3%}")
print(f"largest difference: {worst:.3%} (goal: within 1%)")
PY
