#!/usr/bin/env bash
#! Installs what `coalprof run|profile --backend sim` needs into the project's own `.tools/`
#! through `coalprof setup sim` with `COALPROF_HOME=.tools` (src/tools/setup/sim.rs, the code an
#! installed coalprof runs): GPGPU-Sim's build dependencies from Debian main (apt-get, as root),
#! the CUDA 11.8 toolkit from Debian bookworm non-free as one folder `.tools/cuda11/` (or a link
#! to `CUDA11_HOME`), the toolkit's C++ libraries Debian ships apart (libcu++, CUB, Thrust, from
#! Debian main, unpacked into `.tools/cuda11/include/`), and GPGPU-Sim built from the vendored `git archive`
#! (`../shared/vendor/gpgpu-sim/`, sha256-checked, or `COALPROF_GPGPUSIM_SRC`: an archive or a
#! source folder) with the project's fixes (`scripts/sim-patches/*.patch`, built into coalprof)
#! into `.tools/gpgpu-sim/`. Idempotent: each step is skipped when its result is already there
#! (the simulator is rebuilt when the source or a patch changes).
#!
#! Where the simulator cannot be had it prints one `SKIPPED install-sim: <why>` line and exits 0:
#! the sim tests then say SKIPPED too, and `coalprof doctor` names what is missing. In CI (`CI`
#! set, as root) it must build: a failure there fails this script.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
tools="$root/.tools"
mkdir -p "$tools"

# The build scripts/test.sh makes first (`cargo build --locked`, the dev profile the tests and
# the README's `cargo run` share) (built here when absent).
target_dir="${CARGO_TARGET_DIR:-target}"
case "$target_dir" in /*) ;; *) target_dir="$root/$target_dir" ;; esac
coalprof="$target_dir/debug/coalprof"
if [ ! -x "$coalprof" ]; then
    printf 'install-sim: building coalprof for `coalprof setup` (cargo build --locked)\n' >&2
    (cd "$root" && cargo build --locked)
fi

log="$(mktemp)"
trap 'rm -f "$log"' EXIT
# In the checkout (where `setup` finds the vendored source); its lines shown as they come and
# kept for the SKIPPED line.
set +e
(cd "$root" && COALPROF_HOME="$tools" "$coalprof" setup sim) 2>&1 | tee "$log" >&2
rc=${PIPESTATUS[0]}
set -e
case "$rc" in
    0) exit 0 ;;
    130) exit 130 ;;
esac
if [ -n "${CI:-}" ]; then
    exit "$rc"
fi
why="$(sed -n 's/^error: //p' "$log" | head -n1)"
printf 'SKIPPED install-sim: %s\n' "${why:-coalprof setup sim exited $rc}" >&2
