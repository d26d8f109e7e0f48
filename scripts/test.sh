#!/usr/bin/env bash
#! The test command: builds the release binary (`cargo build --release --locked`; the README's
#! main command, `cargo run --release -- run …`, then reuses it) and installs with its
#! `coalprof setup` what the tests need into the project's own `.tools/` (scripts/install-tools.sh:
#! nvcc from PyPI, the real ncu 2022.3 from Debian, NVIDIA's ncu_report; scripts/install-sim.sh:
#! GPGPU-Sim built from the vendored source with the CUDA 11.8 toolkit; idempotent, no GPU),
#! starts a one-node Slurm on loopback (scripts/slurm-local.sh, which apt-installs slurm-wlm and
#! munge when missing, so it needs root as CI has), checks formatting, clippy and the docs, then
#! runs every test against the locked dependencies (in CI, a test that would skip for a missing
#! tool fails). Extra arguments go to `cargo test`.
set -euo pipefail
cd "$(dirname "$0")/.."
# The binary whose `coalprof setup` installs the tools below.
cargo build --release --locked
bash scripts/install-tools.sh
# GPGPU-Sim and the CUDA 11.8 toolkit for the sim tests (tests/it/sim.rs); where they cannot be
# had it prints one SKIPPED line, and those tests say SKIPPED too.
bash scripts/install-sim.sh
# A real one-node Slurm for tests/it/slurm.rs (installed by the script when missing). A cluster
# that cannot start fails here, with the daemons' logs; COALPROF_SKIP_SLURM=1 leaves it out and
# the Slurm tests then say SKIPPED.
# (The assignment, not `eval "$(…)"`, so that a failed start stops this script.)
if [ -z "${COALPROF_SKIP_SLURM:-}" ]; then
    slurm_env="$(bash scripts/slurm-local.sh start)"
    eval "$slurm_env"
    trap 'bash scripts/slurm-local.sh stop' EXIT
fi
# Rules a machine checks (ARCHITECTURE.md): formatting, clippy with every warning an error
# (clippy.toml: no process spawned outside src/tools/process.rs, no environment read below the
# settings; Cargo.toml's [lints]: nothing but src/messages.rs writes to stderr), docs without
# a broken link.
cargo fmt --check
cargo clippy --locked --all-targets -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc --locked --no-deps --quiet
# In CI every tool is installed above, so a test that would skip for a missing one fails.
if [ -n "${CI:-}" ]; then
    export COALPROF_REQUIRE_TOOLS=1
fi
cargo test --locked "$@"
