//! The crate as `cargo package` packs it (what `cargo install coalprof` builds): every file the
//! binary embeds is in it, and nothing of the repository's tests, fixtures or tools is.

use std::collections::BTreeSet;

use crate::util::root;

/// `cargo package --list`: the files the published crate holds.
fn packaged() -> BTreeSet<String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = std::process::Command::new(cargo)
        .args(["package", "--list", "--allow-dirty", "--offline"])
        .current_dir(root())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().lines().map(str::to_string).collect()
}

/// Every `include_str!`/`include_bytes!` of non-test code, as a path from the root.
fn embedded(dir: &std::path::Path, out: &mut BTreeSet<String>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            embedded(&p, out);
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&p) else { continue };
        // Unit tests may embed fixtures: they are not built from the crate.
        let code = text.split("#[cfg(test)]").next().unwrap();
        for piece in code.split("include_").skip(1) {
            let Some(arg) = piece.strip_prefix("str!(").or_else(|| piece.strip_prefix("bytes!(")) else { continue };
            let Some(lit) = arg.trim_start().strip_prefix('"').and_then(|a| a.split('"').next()) else { continue };
            if lit.contains("OUT_DIR") || arg.trim_start().starts_with("concat!") {
                continue;
            }
            // Canonical: `../../kernels/x.cu` names the file the crate must hold. A file that
            // does not exist is named as written, so the comparison below reports it.
            let file = p.parent().unwrap().join(lit);
            let rel = match file.canonicalize() {
                Ok(f) => f.strip_prefix(root().canonicalize().unwrap()).unwrap().to_string_lossy().into_owned(),
                Err(_) => file.to_string_lossy().into_owned(),
            };
            out.insert(rel);
        }
    }
}

#[test]
fn the_crate_holds_every_file_the_binary_embeds_and_no_fixture() {
    let files = packaged();
    let mut needed = BTreeSet::new();
    embedded(&root().join("src"), &mut needed);
    assert!(needed.iter().any(|f| f.starts_with("kernels/")), "the scan found no kernel: {needed:?}");
    for f in ["build.rs", "metrics.toml", "Cargo.toml", "README.md"] {
        needed.insert(f.into());
    }
    let missing: Vec<_> = needed.difference(&files).collect();
    assert!(missing.is_empty(), "embedded but not packaged: {missing:?}");
    let stray: Vec<_> = files
        .iter()
        .filter(|f| f.starts_with("tests/") || f.starts_with(".tools") || f.starts_with("profiles/"))
        .collect();
    assert!(stray.is_empty(), "packaged but repository-only: {stray:?}");
}
