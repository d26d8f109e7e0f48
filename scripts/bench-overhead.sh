#!/usr/bin/env bash
#! Orchestration overhead: the time coalprof spends outside its child processes, from its own
#! trace (`-v` logs "time: … in child processes, … in coalprof itself"). Without a GPU the
#! profiling step is a fake ncu that replays a real report (tests/fixtures/ncu-rep), which
#! coalprof then reads natively (`--version` goes to the real ncu 2022.3); on a GPU machine pass `--real` to time
#! `coalprof run --pattern stride` instead.
#! Usage: scripts/bench-overhead.sh [--real] [REPEATS]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
cargo build --release -q
bin="$root/target/release/coalprof"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

if [ "${1:-}" = "--real" ]; then
    shift
    for _ in $(seq "${1:-3}"); do
        "$bin" -v run --pattern stride --backend ncu --out "$work" --format csv 2>&1 >/dev/null | grep -E 'time:'
    done
    exit 0
fi

real_ncu="$root/.tools/bin/ncu"
[ -x "$real_ncu" ] || { echo "bench-overhead: run scripts/install-tools.sh first" >&2; exit 1; }
report="$root/tests/fixtures/ncu-rep/microgpusim_vectoradd_100_32_gtx1080_2019.ncu-rep"
cat > "$work/ncu" <<SH
#!/bin/sh
case "\$1" in --import|--version|--query-metrics) exec "$real_ncu" "\$@";; esac
out=""; while [ \$# -gt 0 ]; do [ "\$1" = "--export" ] && out="\$2"; shift; done
echo '==PROF== Profiling "vecAdd" - 0: 0%....50%....100% - 9 passes'
cp "$report" "\$out"
SH
chmod +x "$work/ncu"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
for _ in $(seq "${1:-5}"); do
    COALPROF_NCU="$work/ncu" "$bin" -v profile --out "$work/runs" --format csv -- /bin/true 2>&1 >/dev/null | grep -E 'time:'
done
