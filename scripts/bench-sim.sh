#!/usr/bin/env bash
#! Runs all 42 built-in variants in GPGPU-Sim (`coalprof run --backend sim --all`, two processes
#! at a time on the two halves of the patterns) and prints the agreement table: per variant,
#! whether each counter the simulator and the address model share (global requests and sectors,
#! shared instructions, wavefronts and conflicts) is equal, and the wall time.
#! Usage: scripts/bench-sim.sh [SIZE] (default 64K, the simulator's default). Needs
#! scripts/install-sim.sh first.
set -euo pipefail
cd "$(dirname "$0")/.."
size="${1:-64K}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
# COALPROF_BIN: a coalprof already built (else the release build of this checkout).
bin="${COALPROF_BIN:-}"
if [ -z "$bin" ]; then
    cargo build --release --quiet
    bin="${CARGO_TARGET_DIR:-target}/release/coalprof"
fi
start=$SECONDS
half() { "$bin" --format json run --backend sim --size "$size" --pattern "$1" --out "$out/runs-$2" > "$out/$2.json"; }
half coalesced,offset,stride,broadcast,gather a &
a=$!
half vector,kv-layout,bank-conflicts,column b &
b=$!
status=0
wait "$a" || status=$?
wait "$b" || status=$?
elapsed=$((SECONDS - start))
python3 - "$out/a.json" "$out/b.json" "$elapsed" "$size" <<'PY'
import json, sys
keys = ["global_load_requests", "global_load_sectors", "global_store_requests", "global_store_sectors",
        "shared_load_instructions", "shared_load_wavefronts", "shared_load_bank_conflicts",
        "shared_store_instructions", "shared_store_wavefronts"]
rows = [r for f in sys.argv[1:3] for r in json.load(open(f))["rows"]]
agree = 0
print(f"{'pattern/variant':<38} {'ld sect/req sim (model)':>24} {'compared':>8}  agreement")
for r in rows:
    p, m = r.get("predicted") or {}, r["metrics"]
    shared = [k for k in keys if k in p]
    diff = [k for k in shared if m.get(k) != p[k]]
    spr = m.get("global_load_sectors_per_request")
    pspr = p.get("global_load_sectors_per_request")
    cell = "–" if spr is None else f"{spr:.2f} ({pspr:.2f})"
    ok = not diff and shared
    agree += bool(ok)
    print(f"{r['pattern'] + '/' + r['variant']:<38} {cell:>24} {len(shared):>8}  {'exact' if ok else 'DIFFERS: ' + ', '.join(diff)}")
print(f"\n{agree}/{len(rows)} variants: simulated = predicted exactly, at --size {sys.argv[4]}; {sys.argv[3]} s wall")
sys.exit(0 if agree == len(rows) == 42 else 1)
PY
exit "$status"
