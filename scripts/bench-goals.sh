#!/usr/bin/env bash
#! Issue 33's goals, every one measured in one run, then printed as one table (goal, figure,
#! met or not). Takes 25-30 minutes on the 2-core development machine; run it with nothing else
#! building, and say the load it prints.
#!
#!   scripts/bench-goals.sh          the whole table, starting from a fresh clone
#!   scripts/bench-goals.sh DIR      the same in an existing clone DIR whose `scripts/test.sh`
#!                                   already ran (without the three rows a fresh one measures)
#!
#! The fresh clone is of this checkout's HEAD (commit first), into a temporary folder with
#! `../shared` beside it as CI has it. There the README's two commands run as written, timed:
#! `scripts/test.sh` (its last lines list every step's time) and then `cargo run -- run
#! --pattern kv-layout`. Then a clean `cargo build --release --locked` in the clone (the test
#! command builds the dev profile only, so the release folder is empty): its wall and CPU time
#! and the binary's size. Every other row runs in that clone, with that release binary and the
#! clone's `.tools/`, through the project's other benchmark scripts: `bench-sim.sh`,
#! `bench-model.sh`, `bench-native.sh`, `bench-big-report.sh` (their own output is kept in the
#! log folder printed at the end).
set -euo pipefail
cd "$(dirname "$0")/.."
here=$PWD
logs=$(mktemp -d /tmp/bench-goals.XXXXXX)
rows=()

# row WHAT FIGURE GOAL MET: one line of the table.
row() { rows+=("| $1 | $2 | $3 | $4 |"); }
# verdict BOOL: "met" or "NOT met".
verdict() { if [ "$1" = 1 ]; then echo met; else echo "**NOT met**"; fi; }
# le A B: 1 when A <= B (decimals).
le() { python3 -c "import sys; print(int(float(sys.argv[1]) <= float(sys.argv[2])))" "$1" "$2"; }
# timed LOG CMD...: runs CMD with its output in LOG and prints its wall seconds (one decimal);
# a failing CMD stops the script, naming its log.
timed() {
    local log=$1 t0=$EPOCHREALTIME
    shift
    "$@" > "$log" 2>&1 || { echo "bench-goals: \`$*\` failed; see $log" >&2; tail -n 20 "$log" >&2; exit 1; }
    python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$t0" "$EPOCHREALTIME"
}

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "logs: $logs"

if [ -n "${1:-}" ]; then
    clone=$(cd "$1" && pwd)
    (cd "$clone" && cargo build --release --locked --quiet)
else
    work=$(mktemp -d /tmp/bench-goals-clone.XXXXXX)
    ln -s "$(cd .. && pwd)/shared" "$work/shared"
    git clone --quiet "$here" "$work/coalprof"
    clone=$work/coalprof
    echo "fresh clone of $(git rev-parse --short HEAD) in $clone"
    cd "$clone"
    t=$(timed "$logs/test.log" scripts/test.sh)
    row "README test command, fresh clone (\`scripts/test.sh\`)" "$t s" "≤ 900 s" "$(verdict "$(le "$t" 900)")"
    t=$(timed "$logs/main.log" cargo run -- run --pattern kv-layout)
    row "README main command right after it (\`cargo run -- run --pattern kv-layout\`)" "$t s" "≤ 180 s" \
        "$(verdict "$(le "$t" 180)")"
    echo "test command steps:"
    sed -n '/^==> steps/,$p' "$logs/test.log"
    /usr/bin/time -f "%e %U %S" -o "$logs/release.time" cargo build --release --locked > "$logs/release.log" 2>&1
    read -r wall user sys < "$logs/release.time"
    bytes=$(stat -c %s target/release/coalprof)
    mb=$(python3 -c "print(f'{$bytes / 1e6:.1f}')")
    cpu=$(python3 -c "print(round($user + $sys))")
    ok=$(( $(le "$wall" 300) && $(le "$mb" 25) ))
    row "clean \`cargo build --release\` (in the clone, after the tests)" "$wall s ($cpu CPU-s), $mb MB" \
        "≤ 300 s, ≤ 25 MB" "$(verdict $ok)"
fi
cd "$clone"
bin=$clone/target/release/coalprof

# The simulator: a build included (an empty kernel cache), at the issue's 64 KiB.
t=$(timed "$logs/sim-kv.log" env XDG_CACHE_HOME="$logs/cache" "$bin" run --backend sim --pattern kv-layout \
    --size 64K --out "$logs/runs")
row "\`run --backend sim --pattern kv-layout\` (6 variants, 64 KiB, build included)" "$t s" "≤ 30 s" "$(verdict "$(le "$t" 30)")"

# The two-kernel program, built once with the tool home's CUDA 11.8 nvcc; then only the run
# under the simulator is timed (the counters, per kernel and per line).
nvcc=$clone/.tools/cuda11/bin/nvcc
for n in 131072 16384; do
    "$nvcc" -ccbin g++-11 -cudart shared -arch=sm_70 -lineinfo -DN=$n -o "$logs/app$n" examples/sim/app.cu
done
t=$(timed "$logs/sim-131k.log" "$bin" profile --backend sim --out "$logs/runs" -- "$logs/app131072")
row "GPGPU-Sim on the 2-kernel, 131K-thread program, counters per line (\`profile --backend sim -- ./app\`)" \
    "$t s" "≤ 3 s" "$(verdict "$(le "$t" 3)")"
t=$(timed "$logs/sim-16k.log" "$bin" profile --backend sim --out "$logs/runs" -- "$logs/app16384")
c=$(timed "$logs/sim-16k-cu.log" "$bin" profile --backend sim --out "$logs/runs" --nvcc-arg=-DN=16384 examples/sim/app.cu)
row "\`profile --backend sim\` on the 2-kernel, 16K-element program" "$t s (from \`app.cu\`, nvcc included: $c s)" \
    "≤ 3 s" "$(verdict "$(le "$t" 3)")"

# Every built-in variant in the functional mode, each checked against the model.
t=$(timed "$logs/bench-sim.log" scripts/bench-sim.sh "" functional)
exact=$(sed -n 's/^ *functional: \([0-9]*\/[0-9]*\) variants.*/\1/p' "$logs/bench-sim.log")
row "\`scripts/bench-sim.sh\`, every variant, functional mode" "$t s, $exact exact" "≤ 120 s, all exact" \
    "$(verdict "$(le "$t" 120)")"

scripts/bench-model.sh 5 > "$logs/bench-model.log" 2>&1
read -r least median most < <(sed -n 's/^min \([0-9.]*\) s  median \([0-9.]*\) s  max \([0-9.]*\) s.*/\1 \2 \3/p' "$logs/bench-model.log")
ms() { python3 -c "print(round($1 * 1000))"; }
row "\`run --all --backend model\`, whole command (median of 5)" "$(ms "$median") ms ($(ms "$least")-$(ms "$most"))" \
    "≤ 200 ms" "$(verdict "$(le "$median" 0.2)")"

# 5 runs each: ncu's own time moves by a tenth from run to run, and the ratio with it.
scripts/bench-native.sh 5 > "$logs/bench-native.log" 2>&1
# The executable the release wheels ship (static glibc); the dynamically linked one beside it.
ratio=$(sed -n 's/.*median \([0-9.]*\)x over.*/\1/p' "$logs/bench-native.log")
dyn=$(sed -n 's/.*dynamically linked: median \([0-9.]*\)x.*/\1/p' "$logs/bench-native.log")
row "native \`.ncu-rep\` read vs \`ncu --import\` (median over the fixtures, 5 runs each; the wheels' static executable)" \
    "${ratio}x (dynamically linked: ${dyn}x)" "≥ 25x" "$(verdict "$(le 25 "$ratio")")"

PEERS=0 scripts/bench-big-report.sh > "$logs/bench-big.log" 2>&1
read -r mbs rss < <(awk '$1 == "lines" && $2 == 1000 { print $5, $6 }' "$logs/bench-big.log")
ok=$(( $(le 500 "$mbs") && $(le "$rss" 199) ))
row "\`lines\` on a 1 GB report" "$mbs MB/s, $rss MB" "≥ 500 MB/s, < 200 MB" "$(verdict $ok)"

echo
echo "| what | measured | goal | |"
echo "|---|---|---|---|"
printf '%s\n' "${rows[@]}"
echo
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg); logs: $logs"
