//! Three things done once at build time instead of at every start:
//!
//! * The `coalprof` executable is linked position-dependent (non-PIE) on Linux. A PIE of this
//!   size carries 87,000 relative relocations (polars' vtables, mostly): the loader writes every
//!   one at start-up, touching 1.7 MB of pages, 600 page faults and a millisecond before `main`
//!   on every run; linked at a fixed address it needs 170 page faults. Only the binary: the
//!   library, tests and benches are built as before, and address-space randomisation of the
//!   heap, stack and libraries stays.
//! * The built-in `metrics.toml` is written out as JSON (`$OUT_DIR/metrics.json`), which
//!   `src/metrics.rs` reads in a fraction of the time TOML takes; the gate entries keep the
//!   byte offset they start at, for their line numbers. A file that does not parse is written
//!   as `null`, and the run-time TOML parser then says what is wrong with it.
//!
//! * The project's patches to GPGPU-Sim (`scripts/sim-patches/*.patch`) are listed into
//!   `$OUT_DIR/sim_patches.rs`, which `src/tools/setup/sim.rs` includes: an installed coalprof
//!   carries them for `coalprof setup sim`, and a new patch file is picked up without a code
//!   change.
//!
//! The first two are measured in `docs/performance.md`, "Native report reading".

// Cargo tells a build script the target and its output folder in its environment, and reads
// its instructions (`cargo:…`) on its stdout: this is not the program reading or writing them.
#![allow(clippy::disallowed_methods, clippy::print_stdout)]

use serde::{Deserialize, Serialize};

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=metrics.toml");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let json = std::fs::read_to_string("metrics.toml").ok().and_then(|t| catalogue_json(&t)).unwrap_or("null".into());
    std::fs::write(out.join("metrics.json"), json).expect("OUT_DIR is writable");
    std::fs::write(out.join("sim_patches.rs"), sim_patches()).expect("OUT_DIR is writable");
}

/// `pub(super) const SIM_PATCHES: &[(&str, &[u8])]`: each patch's file name and bytes, in name order
/// (the order they apply in). A missing folder fails the build: a coalprof without its patches
/// would build a simulator that miscounts.
fn sim_patches() -> String {
    // The checkout cargo builds now (set when the script runs), not the one the script was
    // compiled in: one target folder shared by two checkouts reuses this script's binary.
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let dir = std::path::Path::new(&manifest).join("scripts/sim-patches");
    // A folder: cargo reruns this script when any file in it changes, is added or removed.
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e} (the patches to GPGPU-Sim are part of the build)", dir.display()))
        .map(|e| e.expect("a readable folder").file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".patch"))
        .collect();
    names.sort();
    let mut code = String::from("/// The patches of `scripts/sim-patches/`, by file name, in the order they apply.\n");
    code.push_str("pub(super) const SIM_PATCHES: &[(&str, &[u8])] = &[\n");
    for n in &names {
        code.push_str(&format!("    ({n:?}, include_bytes!({:?})),\n", dir.join(n).display().to_string()));
    }
    code.push_str("];\n");
    code
}

/// Only the gate entries, with their places in the file.
#[derive(Deserialize)]
struct Gate {
    #[serde(default)]
    gate: Vec<toml::Spanned<toml::Value>>,
}

/// `{"catalogue": every table but the gate, "gate": [[offset, entry], …]}`, in file order.
fn catalogue_json(text: &str) -> Option<String> {
    let mut tables: toml::Table = toml::from_str(text).ok()?;
    tables.remove("gate");
    let gate: Gate = toml::from_str(text).ok()?;
    let gate: Vec<(usize, &toml::Value)> = gate.gate.iter().map(|g| (g.span().start, g.get_ref())).collect();
    // Through a struct, not `serde_json::Value`, whose maps would sort the keys: the derived
    // metrics must stay in file order.
    serde_json::to_string(&Precompiled { catalogue: &tables, gate }).ok()
}

#[derive(Serialize)]
struct Precompiled<'a> {
    catalogue: &'a toml::Table,
    gate: Vec<(usize, &'a toml::Value)>,
}
