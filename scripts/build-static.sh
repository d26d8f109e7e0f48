#!/usr/bin/env bash
#! Builds the coalprof executable the release wheels ship and copies it to OUT: glibc linked in
#! statically, at a fixed address (`.github/workflows/release.yml` gives maturin the same two
#! flags). It starts without the dynamic loader: no libc, libm and libgcc_s to map, relocate and
#! initialise (libgcc_s probes the CPU with `cpuid` at every start, slow in a virtual machine),
#! so a small `analyze` is about a tenth faster (docs/performance.md, "Native report reading"),
#! and it runs on any Linux of its architecture whatever the glibc. coalprof uses none of what a
#! static glibc cannot do (no NSS lookups, no `dlopen`).
#!
#!   scripts/build-static.sh OUT
#!
#! Only the binary crate is built differently: `cargo rustc` passes the flags to it alone (as
#! RUSTFLAGS they would also reach the proc-macro crates, which cannot be linked statically), so
#! every dependency of `cargo build --release` is reused and this takes seconds after one. The
#! release folder is then relinked as `cargo build --release` makes it, so the two never mix.
set -euo pipefail
cd "$(dirname "$0")/.."

out=${1:?usage: scripts/build-static.sh OUT}
flags=(-C target-feature=+crt-static -C relocation-model=static)
cargo rustc --release --locked --quiet --bin coalprof -- "${flags[@]}"
cp "${CARGO_TARGET_DIR:-target}/release/coalprof" "$out"
cargo build --release --locked --quiet
