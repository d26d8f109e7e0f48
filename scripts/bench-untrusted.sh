#!/usr/bin/env bash
# What a report costs coalprof, for untrusted input: a million launches of one kernel (a report
# made by `scripts/ncu_rep_blocks.py launches`, plain and zstd-compressed) read by `analyze` and
# `check`, and the two forged reports of issue 41 (a 6 KB `.ncu-repz` declaring 50,000,000 empty
# results, a 4 KB one whose result claims 4,000,000,000 bytes) refused by `check`: wall time and
# peak RSS of each, RUNS times (a range). No peer reads this file: `ncu --import` refuses a
# result without the fields ncu itself requires (thread and API-call IDs, work dimensions, …),
# which these minimal launches leave out; scripts/bench-big-report.sh sets the native reader
# beside ncu on a real report, 1 GB of it.
#
#   scripts/bench-untrusted.sh [LAUNCHES]   (default 1000000; BIN=path to time another build)
#
# The compressed copy is read with `--trust-input`: a million identical launches compress about
# 1000×, past the 256× a real report is allowed untrusted (tests/it/untrusted.rs checks both).
set -euo pipefail
cd "$(dirname "$0")/.."

N=${1:-1000000}
RUNS=${RUNS:-3}
DIR=${BENCH_DIR:-target/bench}
mkdir -p "$DIR"
if [[ ! -x /usr/bin/time ]]; then
    echo "installing GNU time (for peak RSS)" >&2
    apt-get install -y time >/dev/null
fi
if [[ -z "${BIN:-}" ]]; then
    cargo build --release --quiet
    BIN=${CARGO_TARGET_DIR:-target}/release/coalprof
fi
plain=$DIR/million.ncu-rep
python3 scripts/ncu_rep_blocks.py launches "$N" "$plain"
zstd -q -f -3 "$plain" -o "$DIR/million.ncu-repz"
python3 - "$DIR" <<'PY'
# The two forged reports: zstd frames of raw and RLE blocks (RFC 8878), as tests/it/untrusted.rs
# builds them.
import struct, sys
d = sys.argv[1]
def varint(v):
    o = bytearray()
    while v >= 0x80:
        o.append(v & 0x7F | 0x80); v >>= 7
    o.append(v); return bytes(o)
def framed(b): return struct.pack("<I", len(b)) + b
def zstd(parts):
    out = bytearray(b"\x28\xb5\x2f\xfd\x00" + bytes([7 << 3]))
    blocks = []
    for kind, x in parts:
        if kind == "raw":
            blocks += [(0, x[i:i + 131072]) for i in range(0, len(x), 131072)]
        else:
            n = x
            while n:
                k = min(n, 131072); blocks.append((1, k)); n -= k
    for i, (kind, x) in enumerate(blocks):
        size = len(x) if kind == 0 else x
        out += struct.pack("<I", (i == len(blocks) - 1) | kind << 1 | size << 3)[:3]
        out += x if kind == 0 else b"\0"
    return bytes(out)
start = b"NVR\0" + framed(b"\x08\x07")
n = 50_000_000
head = start + framed(b"\x10" + varint(n) + b"\x28" + varint(4 * n))
open(f"{d}/forged-empty-results.ncu-repz", "wb").write(zstd([("raw", head), ("rle", 4 * n)]))
claim = 4_000_000_000
head = start + framed(b"\x10\x01\x28" + varint(claim + 4)) + struct.pack("<I", claim)
open(f"{d}/forged-huge-length.ncu-repz", "wb").write(zstd([("raw", head), ("rle", claim // 32)]))
PY

# measure NAME CMD...: RUNS runs of CMD; prints the wall-time range and the largest peak RSS.
measure() {
    local name=$1 times=() rss=0
    shift
    for _ in $(seq "$RUNS"); do
        /usr/bin/time -f "%e %M" -o "$DIR/time" "$@" >/dev/null 2>"$DIR/stderr" || true
        read -r t m < <(tail -n 1 "$DIR/time") || true
        times+=("${t:-?}")
        ((m > rss)) && rss=$m
    done
    printf '%-48s %s s (%s runs), peak RSS %d MB\n' "$name" "$(printf '%s\n' "${times[@]}" | sort -n | sed -n '1p;$p' | paste -sd-)" "$RUNS" $((rss / 1024))
}

echo "== $N launches of one kernel: $(du -m "$plain" | cut -f1) MB plain, $(du -k "$DIR/million.ncu-repz" | cut -f1) KB compressed; $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
measure "analyze million.ncu-rep" "$BIN" analyze "$plain" --format json
measure "check million.ncu-rep" "$BIN" check "$plain"
measure "analyze --trust-input million.ncu-repz" "$BIN" --trust-input analyze "$DIR/million.ncu-repz" --format json
measure "check (refused) forged-empty-results.ncu-repz" "$BIN" check "$DIR/forged-empty-results.ncu-repz"
measure "check (refused) forged-huge-length.ncu-repz" "$BIN" check "$DIR/forged-huge-length.ncu-repz"
