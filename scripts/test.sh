#!/usr/bin/env bash
#! The test command: builds coalprof (`cargo build --locked`: the dev profile, which the tests
#! and the README's main command, `cargo run -- run …`, then reuse) and installs with its
#! `coalprof setup` what the tests need into the project's own `.tools/` (scripts/install-tools.sh:
#! nvcc from PyPI, the real ncu 2022.3 from Debian, NVIDIA's ncu_report; scripts/install-sim.sh:
#! GPGPU-Sim built from the vendored source with the CUDA 11.8 toolkit; idempotent, no GPU),
#! starts a one-node Slurm on loopback (scripts/slurm-local.sh, which apt-installs slurm-wlm and
#! munge when missing, so it needs root as CI has), checks formatting, clippy and the docs, builds
#! the user guide (MkDocs, `--strict`: links checked; installed by install-tools.sh), then
#! runs every test against the locked dependencies (in CI, a test that would skip for a missing
#! tool fails). Extra arguments go to `cargo test`.
#!
#! One profile for everything here: a release build as well compiled every dependency a second
#! time (and cannot be shared with the tests: a test harness needs unwinding, the release
#! binary aborts). Each step prints its name when it starts and its time when it ends; the last
#! lines list them all.
set -euo pipefail
cd "$(dirname "$0")/.."

# step NAME CMD...: runs CMD, printing NAME first and its wall time after, and keeps the time
# for the summary at the end.
steps=()
step() {
    local name=$1 t0=$SECONDS
    shift
    echo "==> $name" >&2
    "$@"
    local s=$((SECONDS - t0))
    echo "==> $name: ${s} s" >&2
    steps+=("$(printf '%6s s  %s' "$s" "$name")")
}
summary() {
    echo "==> steps (${SECONDS} s in all):" >&2
    printf '%s\n' "${steps[@]}" >&2
}
trap summary EXIT

# The binary whose `coalprof setup` installs the tools below.
step "build" cargo build --locked
step "tools (nvcc, ncu, ncu_report)" bash scripts/install-tools.sh
# GPGPU-Sim and the CUDA 11.8 toolkit for the sim tests (tests/it/sim.rs); where they cannot be
# had it prints one SKIPPED line, and those tests say SKIPPED too.
step "GPGPU-Sim" bash scripts/install-sim.sh
# Triton and numpy (no torch) for tests/it/triton.rs, in .tools/triton/.
step "Triton" bash scripts/install-triton.sh
# A real one-node Slurm for tests/it/slurm.rs (installed by the script when missing). A cluster
# that cannot start fails here, with the daemons' logs; COALPROF_SKIP_SLURM=1 leaves it out and
# the Slurm tests then say SKIPPED.
# (The assignment, not `eval "$(…)"`, so that a failed start stops this script.)
if [ -z "${COALPROF_SKIP_SLURM:-}" ]; then
    echo "==> Slurm" >&2
    slurm_env="$(bash scripts/slurm-local.sh start)"
    eval "$slurm_env"
    trap 'bash scripts/slurm-local.sh stop; summary' EXIT
fi
# Rules a machine checks (ARCHITECTURE.md): formatting, clippy with every warning an error
# (clippy.toml: no process spawned outside src/tools/process.rs, no environment read below the
# settings; Cargo.toml's [lints]: nothing but src/messages.rs writes to stderr), docs without
# a broken link.
step "fmt" cargo fmt --check
step "clippy" cargo clippy --locked --all-targets -- -D warnings
step "doc" env RUSTDOCFLAGS="-D warnings" cargo doc --locked --no-deps --quiet
# The user guide (mkdocs.yml, docs/): strict, so a broken link or anchor, or a page missing from
# its navigation, fails here (not `--quiet`: it hides the warnings strict mode counts). Its
# examples run in `cargo test` (tests/it/docs.rs).
step "guide" .tools/mkdocs/bin/mkdocs build --strict
# In CI every tool is installed above, so a test that would skip for a missing one fails.
if [ -n "${CI:-}" ]; then
    export COALPROF_REQUIRE_TOOLS=1
fi
step "tests" cargo test --locked "$@"
