//! The shape of the source tree: the top-level modules of `src/` form no cycle (each step of the
//! data flow depends only on the steps before it and on shared types), and every file says
//! what it is for in a `//!` line.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::util::root;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a file of `src/` belongs to (`frame` for `src/frame/join.rs`).
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap();
    let first = rel.components().next().unwrap().as_os_str().to_string_lossy().into_owned();
    first.trim_end_matches(".rs").to_string()
}

/// The code of a file without comments and without its unit tests (a test may use anything).
fn code(text: &str) -> String {
    let body = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => text,
    };
    body.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n")
}

/// Top-level module → the top-level modules its non-test code names through `crate::`.
fn dependencies() -> BTreeMap<String, BTreeSet<String>> {
    let src = root().join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut deps: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in files {
        let module = module_of(&src, &file);
        if ["lib", "main"].contains(&module.as_str()) || file.file_name().is_some_and(|n| n == "tests.rs") {
            continue;
        }
        let text = code(&std::fs::read_to_string(&file).unwrap());
        let entry = deps.entry(module.clone()).or_default();
        for (i, _) in text.match_indices("crate::") {
            let name: String = text[i + 7..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            if name != module && !name.is_empty() {
                entry.insert(name);
            }
        }
    }
    deps
}

/// A cycle through `start`, if there is one (depth-first search).
fn cycle_through(deps: &BTreeMap<String, BTreeSet<String>>, start: &str) -> Option<Vec<String>> {
    fn walk(
        deps: &BTreeMap<String, BTreeSet<String>>,
        start: &str,
        at: &str,
        path: &mut Vec<String>,
        seen: &mut BTreeSet<String>,
    ) -> bool {
        for next in deps.get(at).into_iter().flatten() {
            if next == start {
                path.push(next.clone());
                return true;
            }
            if seen.insert(next.clone()) {
                path.push(next.clone());
                if walk(deps, start, next, path, seen) {
                    return true;
                }
                path.pop();
            }
        }
        false
    }
    let mut path = vec![start.to_string()];
    walk(deps, start, start, &mut path, &mut BTreeSet::new()).then_some(path)
}

#[test]
fn the_top_level_modules_form_no_cycle() {
    let deps = dependencies();
    assert!(deps.contains_key("frame") && deps["frame"].contains("results"), "the scan sees the tree: {deps:?}");
    let cycles: Vec<String> = deps.keys().filter_map(|m| cycle_through(&deps, m)).map(|c| c.join(" → ")).collect();
    assert!(cycles.is_empty(), "module cycles:\n{}", cycles.join("\n"));
}

#[test]
fn the_cycle_check_can_fail() {
    let deps: BTreeMap<String, BTreeSet<String>> =
        [("a".to_string(), BTreeSet::from(["b".to_string()])), ("b".to_string(), BTreeSet::from(["a".to_string()]))]
            .into();
    assert_eq!(cycle_through(&deps, "a"), Some(vec!["a".into(), "b".into(), "a".into()]));
}

#[test]
fn every_source_file_says_what_it_is_for() {
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    rust_files(&root().join("tests/it"), &mut files);
    let missing: Vec<String> = (files.iter())
        .filter(|f| !std::fs::read_to_string(f).unwrap().starts_with("//!"))
        .map(|f| f.display().to_string())
        .collect();
    assert!(missing.is_empty(), "files without a //! line: {missing:?}");
}
