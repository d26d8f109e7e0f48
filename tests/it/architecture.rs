//! The shape of the source tree, checked: no module cycle at any depth (at every level, the
//! sibling modules under one parent depend on each other in one direction only), the top-level
//! graph is exactly the one ARCHITECTURE.md draws (its `module-graph` block), no arrow of it
//! points up ARCHITECTURE.md's `layers`, the longest chain of top-level imports is at most 10
//! rooms, every file says what it is for in a `//!` line, every file ARCHITECTURE.md names
//! (its recipes, its room table) is there, one function opens reports, and no function's error
//! is a `String`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::util::root;

/// Every file and folder under `dir`, at any depth.
fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files_under(&path, out);
        }
        out.push(path);
    }
}

/// The `.rs` files under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut all = Vec::new();
    files_under(dir, &mut all);
    out.extend(all.into_iter().filter(|p| p.extension().is_some_and(|e| e == "rs")));
}

/// The module a file of `src/` is (`["lines", "aggregate"]` for `src/lines/aggregate.rs`,
/// `["lines"]` for `src/lines/mod.rs`, `[]` for `lib.rs`).
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap();
    let mut parts: Vec<String> = rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    let last = parts.pop().unwrap();
    match last.trim_end_matches(".rs") {
        "mod" | "lib" | "main" => {}
        name => parts.push(name.to_string()),
    }
    parts
}

/// The code of a file without comments and without its unit tests (a test may use anything):
/// the file is cut at its first inline test module (`#[cfg(test)]` then `mod tests {` or `mod
/// proptests {`), which by custom ends it. A declaration (`mod tests;`) cuts nothing: its file,
/// `tests.rs`, is left out of the scan, and the code after the declaration is the module's own.
fn code(text: &str) -> String {
    let inline = ["#[cfg(test)]\nmod tests {", "#[cfg(test)]\nmod proptests {"];
    let body = match inline.iter().filter_map(|m| text.find(m)).min() {
        Some(i) => &text[..i],
        None => text,
    };
    body.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n")
}

fn ident(s: &str) -> String {
    s.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect()
}

/// Every path a file's code names from `crate::`, `super::` or `self::`, absolute (`crate::a::{b,
/// c}` gives `a::b` and `a::c`; `super::` of `lines::aggregate` is `lines`).
fn paths(module: &[String], text: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for start in ["crate::", "super::", "self::"] {
        for (i, _) in text.match_indices(start) {
            if i > 0 && text[..i].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == ':') {
                continue; // a later segment (`super::super::`), or part of a longer name
            }
            let mut prefix: Vec<String> = match start {
                "crate::" => Vec::new(),
                "super::" => module[..module.len().saturating_sub(1)].to_vec(),
                _ => module.to_vec(),
            };
            let mut rest = &text[i + start.len()..];
            while let Some(r) = rest.strip_prefix("super::") {
                prefix.pop();
                rest = r;
            }
            loop {
                if let Some(group) = rest.strip_prefix('{') {
                    let end = group.find('}').unwrap_or(group.len());
                    for part in group[..end].split(',') {
                        let name = ident(part.trim());
                        if !name.is_empty() {
                            out.push(prefix.iter().cloned().chain([name]).collect());
                        }
                    }
                    break;
                }
                let name = ident(rest);
                if name.is_empty() {
                    out.push(prefix.clone());
                    break;
                }
                rest = &rest[name.len()..];
                prefix.push(name);
                match rest.strip_prefix("::") {
                    Some(r) => rest = r,
                    None => {
                        out.push(prefix.clone());
                        break;
                    }
                }
            }
        }
    }
    out
}

/// Parent module → (child → the siblings it depends on), from every file's code.
type Graph = BTreeMap<Vec<String>, BTreeMap<String, BTreeSet<String>>>;

fn graph() -> Graph {
    graph_reading(&|f| std::fs::read_to_string(f).unwrap())
}

/// The graph as `graph` makes it, each file's text read by `read` (a test plants an arrow).
fn graph_reading(read: &dyn Fn(&Path) -> String) -> Graph {
    let src = root().join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| module_of(&src, f)).collect();
    let mut g = Graph::new();
    for file in files.iter().filter(|f| f.file_name().is_some_and(|n| n != "tests.rs")) {
        let module = module_of(&src, file);
        let text = code(&read(file));
        for path in paths(&module, &text) {
            // The module a path lands in: its longest prefix that is a module.
            let Some(target) = (0..=path.len()).rev().map(|n| path[..n].to_vec()).find(|p| modules.contains(p)) else {
                continue;
            };
            let common = module.iter().zip(&target).take_while(|(a, b)| a == b).count();
            if common == module.len() || common == target.len() {
                continue; // a module and its ancestors or descendants
            }
            let siblings = g.entry(module[..common].to_vec()).or_default();
            siblings.entry(module[common].clone()).or_default().insert(target[common].clone());
        }
    }
    g
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
fn no_module_cycle_at_any_depth() {
    let g = graph();
    assert!(g[&Vec::<String>::new()]["frame"].contains("results"), "the scan sees the tree: {g:?}");
    assert!(g.keys().any(|p| p.len() == 1), "the scan sees nested modules: {:?}", g.keys().collect::<Vec<_>>());
    let mut cycles = Vec::new();
    for (parent, deps) in &g {
        for m in deps.keys() {
            if let Some(c) = cycle_through(deps, m) {
                let at = if parent.is_empty() { "crate".to_string() } else { parent.join("::") };
                cycles.push(format!("in {at}: {}", c.join(" → ")));
            }
        }
    }
    assert!(cycles.is_empty(), "module cycles:\n{}", cycles.join("\n"));
}

#[test]
fn the_cycle_check_can_fail() {
    let deps: BTreeMap<String, BTreeSet<String>> =
        [("a".to_string(), BTreeSet::from(["b".to_string()])), ("b".to_string(), BTreeSet::from(["a".to_string()]))]
            .into();
    assert_eq!(cycle_through(&deps, "a"), Some(vec!["a".into(), "b".into(), "a".into()]));
    let nested = paths(&["lines".into(), "aggregate".into()], "use super::cubin::X; use crate::frame::{a, b};");
    assert_eq!(
        nested,
        [
            vec!["frame".to_string(), "a".into()],
            vec!["frame".into(), "b".into()],
            vec!["lines".into(), "cubin".into(), "X".into()]
        ]
    );
}

/// The top-level graph as ARCHITECTURE.md's `module-graph` block writes it: `a → b, c` per line.
fn documented() -> BTreeMap<String, BTreeSet<String>> {
    let text = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let start = text.find("```text module-graph\n").expect("ARCHITECTURE.md has a ```text module-graph block");
    let block = &text[start..];
    let body = &block[block.find('\n').unwrap() + 1..block[3..].find("```").unwrap() + 3];
    let mut out = BTreeMap::new();
    for line in body.lines().filter(|l| !l.trim().is_empty()) {
        let (from, to) = line.split_once('→').unwrap_or((line, ""));
        let to: BTreeSet<String> = to.split(',').map(|t| t.trim().to_string()).filter(|t| !t.is_empty()).collect();
        out.insert(from.trim().to_string(), to);
    }
    out
}

#[test]
fn architecture_md_draws_the_module_graph_the_code_has() {
    // Every module with no dependency is listed too, so a new module cannot slip in unseen.
    let actual = top_level();
    let drawn = documented();
    let show = |g: &BTreeMap<String, BTreeSet<String>>| {
        g.iter()
            .map(|(k, v)| format!("{k} → {}", v.iter().cloned().collect::<Vec<_>>().join(", ")))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(
        drawn,
        actual,
        "ARCHITECTURE.md's module-graph block must read:\n```text module-graph\n{}\n```",
        show(&actual)
    );
}

/// ARCHITECTURE.md's `layers` block: one layer per line, lowest first, each line its top-level
/// modules (`a, b`; a `#` starts a comment).
fn layers() -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let start = text.find("```text layers\n").expect("ARCHITECTURE.md has a ```text layers block");
    let block = &text[start..];
    let body = &block[block.find('\n').unwrap() + 1..block[3..].find("```").unwrap() + 3];
    (body.lines())
        .map(|l| l.split('#').next().unwrap_or(""))
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split(',').map(|m| m.trim().to_string()).filter(|m| !m.is_empty()).collect())
        .collect()
}

/// What breaks the layering of `graph` (module → the modules it imports): an arrow from a
/// module to one in a higher layer, a module in no layer, a layer naming no module, a module in
/// two layers. Arrows within a layer are the cycle check's business.
fn layer_violations(layers: &[Vec<String>], graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let mut out = Vec::new();
    let mut level: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, layer) in layers.iter().enumerate() {
        for m in layer {
            if let Some(j) = level.insert(m, i) {
                out.push(format!("`{m}` is in layers {} and {}", j + 1, i + 1));
            }
            if !graph.contains_key(m) {
                out.push(format!("layer {} names `{m}`, which is no top-level module", i + 1));
            }
        }
    }
    for (from, deps) in graph {
        let Some(&lf) = level.get(from.as_str()) else {
            out.push(format!("`{from}` is in no layer: add it to ARCHITECTURE.md's `layers` block"));
            continue;
        };
        for to in deps {
            if let Some(&lt) = level.get(to.as_str()).filter(|&&lt| lt > lf) {
                out.push(format!("`{from}` (layer {}) → `{to}` (layer {}): an arrow up the layers", lf + 1, lt + 1));
            }
        }
    }
    out
}

/// The top-level graph with every module in it, dependencies or not.
fn top_level() -> BTreeMap<String, BTreeSet<String>> {
    top_level_reading(&|f| std::fs::read_to_string(f).unwrap())
}

/// The top-level graph as `top_level` makes it, each file's text read by `read`.
fn top_level_reading(read: &dyn Fn(&Path) -> String) -> BTreeMap<String, BTreeSet<String>> {
    let mut g = graph_reading(read).remove(&Vec::new()).unwrap_or_default();
    let src = root().join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    for f in &files {
        if let Some(top) = module_of(&src, f).first() {
            g.entry(top.clone()).or_default();
        }
    }
    g
}

#[test]
fn no_arrow_points_up_the_layers() {
    let layers = layers();
    assert!(layers.len() > 3, "the scan reads the layers block: {layers:?}");
    let bad = layer_violations(&layers, &top_level());
    assert!(bad.is_empty(), "ARCHITECTURE.md's layers are broken:\n{}", bad.join("\n"));
}

#[test]
fn the_layer_check_fails_on_a_reversed_edge() {
    let layers = layers();
    let mut g = top_level();
    assert!(layer_violations(&layers, &g).is_empty());
    // `commands` is the top layer and `messages` below it: the arrow reversed must be named.
    g.get_mut("messages").unwrap().insert("commands".into());
    let bad = layer_violations(&layers, &g);
    assert_eq!(bad.len(), 1, "{bad:?}");
    assert!(bad[0].starts_with("`messages` (layer 1) → `commands` (layer"), "{bad:?}");
    // A module no layer lists is named too.
    g.insert("newcomer".into(), BTreeSet::new());
    assert!(layer_violations(&layers, &g).iter().any(|v| v.starts_with("`newcomer` is in no layer")));
}

/// An arrow after an early `#[cfg(test)] mod tests;` declaration is seen: `src/model/mod.rs`
/// declares its tests at the top, and an arrow planted at its end (to `commands`, the top
/// layer) must make the drawn graph wrong and be named as an arrow up the layers.
#[test]
fn an_arrow_after_an_early_mod_tests_declaration_is_seen() {
    let planted = root().join("src/model/mod.rs");
    let original = std::fs::read_to_string(&planted).unwrap();
    let declared = original.find("#[cfg(test)]\nmod tests;").expect("src/model/mod.rs declares `mod tests;`");
    assert!(declared < original.len() / 2, "the declaration is early in the file, so the plant is after it");
    let read = |f: &Path| {
        let text = std::fs::read_to_string(f).unwrap();
        if f == planted {
            text + "\nfn planted() { crate::commands::stdout(); }\n"
        } else {
            text
        }
    };
    let g = top_level_reading(&read);
    assert!(g["model"].contains("commands"), "the planted arrow is seen: model → {:?}", g["model"]);
    assert_ne!(g, documented(), "the drawn graph no longer matches");
    let bad = layer_violations(&layers(), &g);
    assert!(bad.iter().any(|v| v.starts_with("`model` (layer 2) → `commands`")), "{bad:?}");
    // The same plant after an inline test module is test code, and cut.
    let inline = "use crate::patterns::X;\n#[cfg(test)]\nmod tests {\n    use crate::commands::Y;\n}\n";
    assert_eq!(paths(&["model".into()], &code(inline)), [vec!["patterns".to_string(), "X".into()]]);
}

/// The parsers are a leaf: outside `src/parse/` they use only modules that use nothing of the
/// crate (what a record means, the catalogue, sanity and grouping, is the frame's).
#[test]
fn parse_uses_only_leaf_modules() {
    let g = top_level();
    let uses = &g["parse"];
    let not_leaves: Vec<&String> = uses.iter().filter(|m| !g[*m].is_empty()).collect();
    assert!(not_leaves.is_empty(), "src/parse/ uses {not_leaves:?}, which are not leaf modules");
}

/// The longest chain of imports among top-level modules (the graph has no cycle).
fn longest_chain(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    fn from(g: &BTreeMap<String, BTreeSet<String>>, m: &str, memo: &mut BTreeMap<String, Vec<String>>) -> Vec<String> {
        if let Some(c) = memo.get(m) {
            return c.clone();
        }
        let mut best = Vec::new();
        for d in g.get(m).into_iter().flatten() {
            let c = from(g, d, memo);
            if c.len() > best.len() {
                best = c;
            }
        }
        best.insert(0, m.to_string());
        memo.insert(m.to_string(), best.clone());
        best
    }
    let mut memo = BTreeMap::new();
    g.keys().map(|m| from(g, m, &mut memo)).max_by_key(|c| c.len()).unwrap_or_default()
}

/// The tower of rooms stays low: the longest chain of top-level imports is at most 10 rooms
/// (issue 30 measured 15 and set 10 as the rule; ARCHITECTURE.md's `layers`). Run with
/// `--nocapture` to see today's chain.
#[test]
fn the_longest_chain_of_rooms_is_at_most_ten() {
    let chain = longest_chain(&top_level());
    println!("longest chain of top-level imports ({} rooms): {}", chain.len(), chain.join(" → "));
    assert!(chain.len() >= 2, "the scan sees imports: {chain:?}");
    assert!(
        chain.len() <= 10,
        "the longest chain of top-level imports is {} rooms, more than 10: {}\n(cut an arrow: move a plain \
         type down to the room that owns it, or let the caller compose)",
        chain.len(),
        chain.join(" → ")
    );
}

#[test]
fn the_chain_check_can_fail() {
    let g: BTreeMap<String, BTreeSet<String>> =
        (0..12).map(|i| (format!("m{i}"), (i + 1 < 12).then(|| format!("m{}", i + 1)).into_iter().collect())).collect();
    assert_eq!(longest_chain(&g).len(), 12);
    assert_eq!(longest_chain(&g)[..2], ["m0".to_string(), "m1".to_string()]);
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

/// build.rs links the executable at a fixed address: a PIE's 87,000 relocations cost a
/// millisecond of every run's start (docs/performance.md, "Native report reading").
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[test]
fn the_executable_is_not_position_independent() {
    let elf = std::fs::read(env!("CARGO_BIN_EXE_coalprof")).unwrap();
    assert_eq!(&elf[..4], b"\x7fELF");
    // e_type: 2 is ET_EXEC (fixed address), 3 ET_DYN (a PIE or a shared object).
    assert_eq!(u16::from_le_bytes([elf[16], elf[17]]), 2, "the coalprof executable is a PIE");
}

/// The files and folders a text names in backticks (`src/lib.rs`, `engine/`, `home.rs:12`) that
/// are not in the tree. A name with a folder is looked for at the root and under `src/`; a bare
/// file name anywhere under `src/` and `tests/` (the room table names files inside its rooms).
/// Templates (`kernels/<name>.cu`), globs and extensions alone (`.cu`) are not names.
fn missing_files(text: &str) -> Vec<String> {
    const KINDS: &[&str] = &[".rs", ".cu", ".cuh", ".md", ".toml", ".sh", ".css", ".js", ".py", "/"];
    let root = root();
    let mut everywhere = Vec::new();
    for dir in ["src", "tests"] {
        files_under(&root.join(dir), &mut everywhere);
    }
    let mut missing = Vec::new();
    for name in text.split('`').skip(1).step_by(2) {
        let name = name.split(':').next().unwrap_or_default();
        let is_path = KINDS.iter().any(|k| name.ends_with(k))
            && !name.starts_with(['.', '-', '$', '~', '/'])
            && !name.contains(['<', '*', '{', ' ', '(']);
        if !is_path {
            continue;
        }
        let found = root.join(name).exists()
            || root.join("src").join(name).exists()
            || (!name.trim_end_matches('/').contains('/')
                && everywhere.iter().any(|f| f.file_name().is_some_and(|n| *n == *name.trim_end_matches('/'))));
        if !found {
            missing.push(name.to_string());
        }
    }
    missing
}

/// ARCHITECTURE.md sends a reader to files (its recipes, its room table, where to start
/// reading): each one is there, so a move that forgets the document fails here.
#[test]
fn every_file_architecture_md_names_is_there() {
    let text = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    assert!(text.contains("## Recipes") && text.contains("`commands/run.rs`"), "the recipes are read");
    let missing = missing_files(&text);
    assert!(missing.is_empty(), "ARCHITECTURE.md names files that are not there: {missing:?}");
}

#[test]
fn the_file_check_can_fail() {
    let text = "a recipe: `patterns/nowhere.rs`, `engine/` and `gone.rs`, but `kernels/<name>.cu` is a template";
    assert_eq!(missing_files(text), ["patterns/nowhere.rs", "gone.rs"]);
}

/// One opener: no file of `src/` but `import.rs` opens a report itself, with the native reader
/// (`ncu_rep::open`) or ncu (`import_raw`); every command goes through `import::open_report`.
#[test]
fn reports_are_opened_in_one_place() {
    let src = root().join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut openers = Vec::new();
    for file in &files {
        let rel = file.strip_prefix(&src).unwrap();
        // The opener, the reader itself and ncu's own module (which defines `import_raw`).
        if rel == Path::new("import.rs") || rel.starts_with("parse") || rel == Path::new("tools/ncu.rs") {
            continue;
        }
        let text = std::fs::read_to_string(file).unwrap();
        for line in code(&text).lines() {
            let imports_open = line.contains("ncu_rep::{") && line.contains("open");
            if line.contains("ncu_rep::open") || imports_open || line.contains("import_raw(") {
                openers.push(format!("{}: {}", rel.display(), line.trim()));
            }
        }
    }
    assert!(files.len() > 50, "the walk found the sources: {}", files.len());
    assert!(openers.is_empty(), "reports opened outside `import::open_report`:\n{}", openers.join("\n"));
}

/// The `Result<_, String>`s of `text`'s code, one line each: a failure said as a string has no
/// type to match on and no cause to chain.
fn string_errors(text: &str) -> Vec<String> {
    let code = code(text);
    let mut out = Vec::new();
    for line in code.lines() {
        let mut rest = line;
        while let Some(at) = rest.find("Result<") {
            // The error type: after the generic list's top-level comma, up to its closing `>`.
            let (mut depth, mut comma) = (0usize, None);
            let tail = &rest[at + "Result<".len()..];
            let mut end = tail.len();
            for (i, c) in tail.char_indices() {
                match c {
                    '<' | '(' => depth += 1,
                    '>' | ')' if depth == 0 => {
                        end = i;
                        break;
                    }
                    '>' | ')' => depth -= 1,
                    ',' if depth == 0 => comma = Some(i),
                    _ => {}
                }
            }
            if comma.is_some_and(|c| tail[c + 1..end].trim() == "String") {
                out.push(line.trim().to_string());
            }
            rest = &tail[end.min(tail.len())..];
        }
    }
    out
}

/// No fallible function of `src/` says its failure as a `String`: errors are the crate's
/// `error::Error` or a typed error of the room (issue 42).
#[test]
fn no_result_has_a_string_error() {
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    let found: Vec<String> = (files.iter())
        .flat_map(|f| {
            let rel = f.strip_prefix(root()).unwrap().display().to_string();
            string_errors(&std::fs::read_to_string(f).unwrap()).into_iter().map(move |l| format!("{rel}: {l}"))
        })
        .collect();
    assert!(files.len() > 50, "the walk found the sources");
    assert!(found.is_empty(), "`Result<_, String>` in src/:\n{}", found.join("\n"));
}

#[test]
fn the_string_error_check_can_fail() {
    let text = "fn a() -> Result<Sizing, String> {}\nfn b() -> Result<BTreeMap<u64, String>, ToolError> {}\n\
                type R<T> = std::result::Result<T, String>;\nfn c() -> Result<(), Error> {}";
    assert_eq!(
        string_errors(text),
        ["fn a() -> Result<Sizing, String> {}", "type R<T> = std::result::Result<T, String>;"]
    );
}
