#!/usr/bin/env bash
# A clean release build: wall time, CPU time (user + system of cargo and every rustc and
# linker it starts) and the stripped binary's size, in a fresh target folder so nothing is
# reused. Takes minutes; not run in CI.
#
#   scripts/bench-build.sh [TARGET_DIR]     (default: a temporary folder, removed afterwards)
#   COALPROF_BUILD_TESTS=1 scripts/bench-build.sh   also times a clean `cargo test --no-run`
#
# The CPU time is the number to compare on a shared machine: other builds stretch the wall
# time but add little CPU time to this one. `--timings` writes cargo's crate-by-crate report
# (cargo-timing.html) into the target folder; its path is printed.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ ! -x /usr/bin/time ]]; then
    echo "bench-build: /usr/bin/time (GNU time) is missing: apt-get install time" >&2
    exit 1
fi
DIR=${1:-}
if [[ -z $DIR ]]; then
    DIR=$(mktemp -d)
    trap 'rm -rf "$DIR"' EXIT
fi

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "commit: $(git rev-parse --short HEAD)$(git diff --quiet || echo ' (with uncommitted changes)')"

# timed LABEL CMD...: runs CMD with GNU time and prints wall and CPU seconds.
timed() {
    local label=$1
    shift
    local log
    log=$(mktemp)
    /usr/bin/time -f '%e %U %S %M' -o "$log" "$@" > /dev/null 2>&1
    read -r wall user sys rss < "$log"
    rm -f "$log"
    printf '%-22s wall %7.1f s   CPU %7.1f s (user %.1f + sys %.1f)   peak RSS %d MB\n' \
        "$label" "$wall" "$(echo "$user + $sys" | bc -l)" "$user" "$sys" "$((rss / 1024))"
}

cargo fetch --locked --quiet
CARGO_TARGET_DIR=$DIR/release timed "clean release build" cargo build --release --locked --timings
BIN=$DIR/release/release/coalprof
printf '%-22s %d bytes (%.1f MB)%s\n' "binary" "$(stat -c %s "$BIN")" "$(echo "$(stat -c %s "$BIN") / 1048576" | bc -l)" \
    "$(file "$BIN" 2>/dev/null | grep -q 'not stripped' && echo ', NOT stripped' || echo ', stripped')"
echo "crate-by-crate: $(ls -t "$DIR"/release/cargo-timings/cargo-timing-*.html | head -1)"
if [[ ${COALPROF_BUILD_TESTS:-0} == 1 ]]; then
    CARGO_TARGET_DIR=$DIR/test timed "clean test build" cargo test --locked --no-run --timings
    echo "crate-by-crate: $(ls -t "$DIR"/test/cargo-timings/cargo-timing-*.html | head -1)"
fi
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
