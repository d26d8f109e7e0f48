//! Links the `coalprof` executable as a position-dependent (non-PIE) program on Linux.
//!
//! A PIE of this size carries 87,000 relative relocations (polars' vtables, mostly): the
//! loader writes every one at start-up, touching 1.7 MB of pages, 600 page faults and a
//! millisecond before `main` on every run; linked at a fixed address it needs 170 page faults
//! (`docs/performance.md`, "Native report reading"). Only the binary: the library, tests and benches are
//! built as before, and address-space randomisation of the heap, stack and libraries stays.

// Cargo tells a build script the target in its environment: this is not the program reading it.
#![allow(clippy::disallowed_methods)]

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}
