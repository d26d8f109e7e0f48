#!/usr/bin/env bash
# The native .ncu-rep reader against `ncu --import --csv --page raw`, on every fixture report
# ncu 2022.3 can read, in one run: wall time of each (median of N runs), the ratio, and the
# peak RSS of the native read beside the report's largest block (the reader holds one block
# item at a time, plus the modules later results refer to). Also, in the same run: coalprof's
# start-up alone (`--version`), and NVIDIA's `ncu_report` Python module reading the same report
# (tests/oracle/ncu_report_dump.py, every metric of every launch) where it is installed.
#
#   scripts/bench-native.sh [N]      (default 5 runs each; needs scripts/install-tools.sh's ncu)
#
# The native read is the whole `coalprof analyze R --format json`: process start, reading,
# deriving, rendering; by the executable the release wheels ship (scripts/build-static.sh: glibc
# linked in statically), and beside it by `cargo build --release`'s (dynamically linked), the
# goal's ratio being the first's. ncu's is only its import to CSV, which coalprof then still
# had to parse, so the ratio understates the old path's cost.
set -euo pipefail
cd "$(dirname "$0")/.."

N=${1:-5}
NCU=.tools/bin/ncu
if [[ ! -x $NCU ]]; then
    echo "bench-native: $NCU is missing; run scripts/install-tools.sh" >&2
    exit 1
fi
if [[ ! -x /usr/bin/time ]]; then
    echo "installing GNU time (for peak RSS)" >&2
    apt-get install -y time >/dev/null
fi
HOME_DIR=$(mktemp -d)
trap 'rm -rf "$HOME_DIR"' EXIT
cargo build --release --locked --quiet
DYN=${CARGO_TARGET_DIR:-target}/release/coalprof
BIN=$HOME_DIR/coalprof-static
scripts/build-static.sh "$BIN"
PY=.tools/ncu-report/bin/python

# median NAME CMD...: the median wall seconds of N runs of CMD (stdout discarded).
median() {
    local times=()
    for _ in $(seq "$N"); do
        local t0 t1
        t0=$EPOCHREALTIME
        "$@" > /dev/null 2>&1 || return 1
        t1=$EPOCHREALTIME
        times+=("$(echo "$t1 - $t0" | bc -l)")
    done
    printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'
}

# peak_kib CMD...: peak resident set of one run.
peak_kib() {
    /usr/bin/time -v "$@" 2>&1 > /dev/null | awk -F': ' '/Maximum resident set size/ {print $2}'
}

# largest_block R: the largest block (header + payload) of a report, in bytes.
largest_block() {
    python3 - "$1" <<'PY'
import struct, sys
b = open(sys.argv[1], "rb").read()
o = 8 + struct.unpack_from("<I", b, 4)[0]
def payload(h):
    i, out = 0, 0
    def varint():
        nonlocal i
        v = s = 0
        while True:
            c = h[i]; i += 1; v |= (c & 0x7F) << s; s += 7
            if c < 0x80: return v
    while i < len(h):
        k = varint()
        if k & 7 == 0:
            v = varint()
            if k >> 3 == 5: out = v
        elif k & 7 == 2:
            n = varint()
            i += n
        elif k & 7 == 1: i += 8
        elif k & 7 == 5: i += 4
    return out
best = 0
while o + 4 <= len(b):
    n = struct.unpack_from("<I", b, o)[0]
    p = payload(b[o + 4:o + 4 + n])
    best = max(best, 4 + n + p)
    o += 4 + n + p
print(best)
PY
}

BASE_KIB=$(peak_kib "$BIN" analyze tests/fixtures/ncu/2022/import_ncu2022_3_microgpusim_vectoradd_102400_32_gtx1080_2019_raw_base.csv --format json)
printf 'machine: %s cores, %s, load average %s; %s runs each, median\n' "$(nproc)" "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')" "$(cut -d' ' -f1 /proc/loadavg)" "$N"
printf 'baseline: coalprof on a 1-launch CSV peaks at %.1f MB RSS\n' "$(echo "$BASE_KIB / 1024" | bc -l)"
printf 'start-up: coalprof --version takes %.1f ms (%.1f ms dynamically linked)\n\n' \
    "$(echo "$(median "$BIN" --version) * 1000" | bc -l)" "$(echo "$(median "$DYN" --version) * 1000" | bc -l)"
printf '%-62s %9s %9s %8s %9s %8s %11s %8s %9s %9s %9s\n' report "native s" "ncu s" ratio "dynamic s" ratio "ncu_report s" ratio \
    "RSS MB" "+base MB" "block MB"
worst=""
ratios=()
dyn_ratios=()
for r in tests/fixtures/ncu-rep/*.ncu-rep; do
    # Through sh, whose stderr is discarded: ncu 2022.3 crashes on one report, and bash would
    # print the signal.
    if ! sh -c 'HOME="$1" "$2" --import "$3" --csv --page raw; exit $?' _ "$HOME_DIR" "$NCU" "$r" > /dev/null 2>&1; then
        printf '%-62s %9.4f %9s %8s %9.4f %8s %11s %8s %9.1f %9s %9.2f\n' "$(basename "$r")" "$(median "$BIN" analyze "$r" --format json)" \
            "-" "(no ncu)" "$(median "$DYN" analyze "$r" --format json)" "-" "-" "-" \
            "$(echo "$(peak_kib "$BIN" analyze "$r" --format json) / 1024" | bc -l)" "" \
            "$(echo "$(largest_block "$r") / 1048576" | bc -l)"
        continue
    fi
    nat=$(median "$BIN" analyze "$r" --format json)
    dyn=$(median "$DYN" analyze "$r" --format json)
    imp=$(median env HOME="$HOME_DIR" "$NCU" --import "$r" --csv --page raw)
    if [[ -x $PY ]] && rep=$(median "$PY" tests/oracle/ncu_report_dump.py "$r"); then
        rep_ratio=$(printf '%7.1fx' "$(echo "$rep / $nat" | bc -l)")
    else
        rep=0 rep_ratio="-"
    fi
    kib=$(peak_kib "$BIN" analyze "$r" --format json)
    block=$(largest_block "$r")
    ratio=$(echo "$imp / $nat" | bc -l)
    ratios+=("$ratio")
    dyn_ratio=$(echo "$imp / $dyn" | bc -l)
    dyn_ratios+=("$dyn_ratio")
    printf '%-62s %9.4f %9.4f %7.1fx %9.4f %7.1fx %11.4f %8s %9.1f %9.1f %9.2f\n' "$(basename "$r")" "$nat" "$imp" "$ratio" \
        "$dyn" "$dyn_ratio" "$rep" "$rep_ratio" \
        "$(echo "$kib / 1024" | bc -l)" "$(echo "($kib - $BASE_KIB) / 1024" | bc -l)" "$(echo "$block / 1048576" | bc -l)"
    if [[ -z $worst ]] || (( $(echo "$ratio < $worst" | bc -l) )); then worst=$ratio; fi
done
middle() { printf '%s\n' "$@" | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
printf '\nratio to ncu --import: slowest %.1fx, median %.1fx over %s reports (goal, issue 21: >= 25x); dynamically linked: median %.1fx; "(no ncu)": ncu 2022.3 cannot read the report (newer, or it crashes)\n' \
    "$worst" "$(middle "${ratios[@]}")" "${#ratios[@]}" "$(middle "${dyn_ratios[@]}")"
