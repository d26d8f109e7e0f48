#!/usr/bin/env bash
#! Runs every built-in variant in GPGPU-Sim (`coalprof run --backend sim --all`, which runs one
#! simulator per core) once per simulator mode, functional (the default) then timing, and prints
#! the agreement table: per variant, whether each counter the simulator and the address model
#! share (global requests and sectors, shared instructions, wavefronts and conflicts) is equal in
#! each mode, whether the two modes' counters are equal, and each mode's wall time and their ratio.
#! Usage: scripts/bench-sim.sh [SIZE] [MODES] (MODES default `functional,timing`, or one of them;
#! SIZE default: 64K when both modes run, so that their counters can be compared at the timing
#! mode's default size, else that mode's default). Needs scripts/install-sim.sh first.
set -euo pipefail
cd "$(dirname "$0")/.."
modes="${2:-functional,timing}"
size="${1:-}"
[ -z "$size" ] && [[ "$modes" == *,* ]] && size=64K
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
# COALPROF_BIN: a coalprof already built (else the release build of this checkout).
bin="${COALPROF_BIN:-}"
if [ -z "$bin" ]; then
    cargo build --release --quiet
    bin="${CARGO_TARGET_DIR:-target}/release/coalprof"
fi
size_args=()
[ -n "$size" ] && size_args=(--size "$size")
status=0
for mode in ${modes//,/ }; do
    start=$(date +%s.%N)
    "$bin" --format json run --backend sim --sim-mode "$mode" "${size_args[@]}" --all \
        --out "$out/runs-$mode" > "$out/$mode.json" || status=$?
    end=$(date +%s.%N)
    echo "$mode $start $end" >> "$out/seconds"
done
py=0
python3 - "$out" "${size:-default}" <<'PY' || py=$?
import json, os, sys
out, size = sys.argv[1], sys.argv[2]
keys = ["global_load_requests", "global_load_sectors", "global_store_requests", "global_store_sectors",
        "shared_load_instructions", "shared_load_wavefronts", "shared_load_bank_conflicts",
        "shared_store_instructions", "shared_store_wavefronts"]
seconds = {m: float(b) - float(a) for m, a, b in (l.split() for l in open(os.path.join(out, "seconds")))}
modes = list(seconds)
rows = {}
for m in modes:
    path = os.path.join(out, m + ".json")
    rows[m] = json.load(open(path))["rows"] if os.path.getsize(path) else []
ids = [r["pattern"] + "/" + r["variant"] for r in rows[modes[0]]]
by = {m: {r["pattern"] + "/" + r["variant"]: r for r in rows[m]} for m in modes}
def agreement(r):
    p, m = r.get("predicted") or {}, r["metrics"]
    shared = [k for k in keys if k in p]
    diff = [k for k in shared if m.get(k) != p[k]]
    return (bool(shared) and not diff), diff
exact = {m: 0 for m in modes}
same = 0
head = f"{'pattern/variant':<34} {'ld sect/req sim (model)':>24}" + "".join(f" {m:>12}" for m in modes)
print(head + ("  modes" if len(modes) > 1 else ""))
for i in ids:
    r0 = by[modes[0]][i]
    spr, pspr = r0["metrics"].get("global_load_sectors_per_request"), (r0.get("predicted") or {}).get("global_load_sectors_per_request")
    cell = "–" if spr is None else f"{spr:.2f} ({pspr:.2f})"
    line = f"{i:<34} {cell:>24}"
    for m in modes:
        r = by[m].get(i)
        ok, diff = agreement(r) if r else (False, ["missing"])
        exact[m] += ok
        line += f" {'exact' if ok else 'DIFFERS: ' + ','.join(diff):>12}"
    if len(modes) > 1:
        eq = all(by[m].get(i) and by[m][i]["metrics"] == r0["metrics"] for m in modes[1:])
        same += eq
        line += "  " + ("equal" if eq else "DIFFER")
    print(line)
print()
for m in modes:
    print(f"{m:>10}: {exact[m]}/{len(rows[m])} variants simulated = predicted exactly, at --size {size}; {seconds[m]:.1f} s wall")
ok = all(exact[m] == len(rows[m]) == len(ids) > 0 for m in modes)
if len(modes) > 1:
    print(f"     modes: {same}/{len(ids)} variants with every counter equal in both; "
          f"{modes[1]} / {modes[0]} wall time = {seconds[modes[1]] / seconds[modes[0]]:.1f}x")
    ok = ok and same == len(ids)
sys.exit(0 if ok else 1)
PY
[ "$status" = 0 ] || exit "$status"
exit "$py"
