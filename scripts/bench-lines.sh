#!/usr/bin/env bash
# `coalprof lines` on one small report, beside NVIDIA's `ncu_report` reading the same per-line
# facts (tests/oracle/ncu_report_lines.py: per PC its source location and instanced counters)
# in the same run: median wall time of N runs of each, and the ratio.
#
#   scripts/bench-lines.sh [REPORT] [N]   (default: the 4 MB CUTLASS fixture, 1,000 instructions
#                                          with counters; 7 runs; needs scripts/install-tools.sh)
#
# coalprof runs the whole command (`lines R --top 0 --format json`: read, attribute, derive,
# render) twice: as installed (nvdisasm, if found, adds each instruction's SASS text: one more
# process) and with no CUDA toolkit in sight (run from / with a bare PATH: no project .tools).
# nvdisasm's listings are cached by cubin (the kernel cache's `sass/`), so the median is of warm
# runs; one cold run (outside the checkout, with an empty cache) shows what a first run pays.
set -euo pipefail
cd "$(dirname "$0")/.."

REPORT=${1:-tests/fixtures/ncu-rep/panjd123-cutlass_report80_2024.1.1.ncu-rep}
N=${2:-7}
PY=.tools/ncu-report/bin/python
cargo build --release --quiet
BIN=${CARGO_TARGET_DIR:-target}/release/coalprof
NAMES=(inst_executed memory_l1_tag_requests_global memory_l2_theoretical_sectors_global
    memory_l2_transactions_global memory_l2_theoretical_sectors_global_ideal memory_ideal_l2_transactions_global
    memory_l1_wavefronts_shared memory_l1_sectors_shared memory_l1_wavefronts_shared_ideal
    memory_l1_sectors_shared_ideal memory_type memory_access_type)

# median CMD...: the median wall seconds of N runs of CMD (stdout discarded).
median() {
    local times=()
    for _ in $(seq "$N"); do
        local t0=$EPOCHREALTIME
        "$@" > /dev/null 2>&1 || return 1
        times+=("$(echo "$EPOCHREALTIME - $t0" | bc -l)")
    done
    printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'
}

rows=$("$BIN" lines "$REPORT" --top 0 --format json --by instruction 2>/dev/null | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["rows"]))')
ours=$(median "$BIN" lines "$REPORT" --top 0 --format json)
ABS_BIN=$(realpath "$BIN"); ABS_REPORT=$(realpath "$REPORT")
bare_lines() { (cd / && env -u CUDA_HOME -u CUDA_PATH PATH=/usr/bin:/bin "$ABS_BIN" lines "$ABS_REPORT" --top 0 --format json); }
bare=$(median bare_lines)
COLD_CACHE=$(mktemp -d)
NVDISASM_DIR=$(dirname "$(realpath .tools/cuda-home/bin/nvdisasm 2>/dev/null || echo /nonexistent/x)")
t0=$EPOCHREALTIME
(cd / && XDG_CACHE_HOME=$COLD_CACHE PATH=$NVDISASM_DIR:/usr/bin:/bin "$ABS_BIN" lines "$ABS_REPORT" --top 0 --format json > /dev/null 2>&1)
cold=$(echo "$EPOCHREALTIME - $t0" | bc -l)
rm -rf "$COLD_CACHE"
start=$(median "$BIN" --version)
if [[ -x $PY ]]; then
    peer=$(median "$PY" tests/oracle/ncu_report_lines.py "$REPORT" "${NAMES[@]}")
else
    peer=""
fi
printf 'report: %s (%.1f MB, %s instruction rows); %s cores, load %s; median of %s runs\n' "$REPORT" \
    "$(echo "$(stat -c %s "$REPORT") / 1000000" | bc -l)" "$rows" "$(nproc)" "$(cut -d' ' -f1 /proc/loadavg)" "$N"
printf 'coalprof lines:                 %7.1f ms\n' "$(echo "$ours * 1000" | bc -l)"
printf 'coalprof lines, first run:      %7.1f ms  (empty cache: nvdisasm runs)\n' "$(echo "$cold * 1000" | bc -l)"
printf 'coalprof lines, no nvdisasm:    %7.1f ms\n' "$(echo "$bare * 1000" | bc -l)"
printf 'coalprof --version (start-up):  %7.1f ms\n' "$(echo "$start * 1000" | bc -l)"
if [[ -n $peer ]]; then
    printf 'ncu_report (Python, per PC):    %7.1f ms\n' "$(echo "$peer * 1000" | bc -l)"
    printf 'ratio: coalprof lines is %.1fx faster than the ncu_report script (%.1fx without nvdisasm)\n' \
        "$(echo "$peer / $ours" | bc -l)" "$(echo "$peer / $bare" | bc -l)"
else
    echo "ncu_report: $PY is missing (scripts/install-tools.sh); no ratio"
fi
printf 'goal (issue 21): <= 25 ms: %s\n' "$(if (( $(echo "$ours <= 0.025" | bc -l) )); then echo met; else echo 'NOT met'; fi)"
