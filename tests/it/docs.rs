//! The docs cannot drift: every ```console example of README.md and of the pages under `docs/`
//! (the user guide, `docs/guide/`, and the reference beside it) runs here through trycmd, as
//! clap and cargo test the examples of their docs. Each `$ coalprof …` line runs the binary under test in the checkout, with the environment of
//! `util::coalprof()` and a machine without a GPU; the lines under it are its real stdout and
//! stderr (merged, in order), `? N` its exit code, `[..]` and `...` where output truly varies.
//!
//! A block whose output depends on a tool the tests install (`scripts/install-tools.sh`,
//! `scripts/install-sim.sh`) says so on the line before its fence, which neither GitHub nor the
//! guide shows: `<!-- example needs: nvdisasm -->` or `<!-- example needs: gpgpu-sim -->`. Such
//! blocks run in a test of their own, which skips loudly where the tool is absent (and fails in
//! CI, where it must be there). trycmd reads a copy of each page under `target/tmp/` holding only
//! the blocks of one test, every other line blanked, so a failure's line numbers are the page's.
//! `TRYCMD=overwrite` rewrites that copy, not the page: copy the new output over by hand.
//!
//! The examples write run folders into `profiles/` as a user's would; the tests remove the ones
//! they made.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::util::{no_gpu_path, root, skipped};

/// What an example may need, and the files that say it is installed (where the tests look).
const NEEDS: [(&str, &[&str]); 2] = [
    ("nvdisasm", &[".tools/cuda-home/bin/nvdisasm"]),
    ("gpgpu-sim", &[".tools/gpgpu-sim/lib/libcudart.so", ".tools/cuda11/bin/nvcc"]),
];

/// The marker a page puts on the line before a block that needs a tool.
const MARKER: &str = "<!-- example needs: ";

/// The doc tests share `profiles/` (each removes what it made), so they run one at a time.
static PROFILES: Mutex<()> = Mutex::new(());

#[test]
fn examples_of_the_readme_and_the_guide() {
    run_examples(None, "examples_of_the_readme_and_the_guide");
}

#[test]
fn examples_that_show_sass_need_nvdisasm() {
    run_examples(Some("nvdisasm"), "examples_that_show_sass_need_nvdisasm");
}

#[test]
fn examples_under_the_simulator_need_gpgpu_sim() {
    run_examples(Some("gpgpu-sim"), "examples_under_the_simulator_need_gpgpu_sim");
}

/// Runs the examples of every page that need `need` (`None`: no tool), or skips loudly.
fn run_examples(need: Option<&str>, test: &str) {
    if let Some(need) = need {
        let paths = NEEDS.iter().find(|(n, _)| *n == need).expect("a known need").1;
        if let Some(missing) = paths.iter().map(|p| root().join(p)).find(|p| !p.exists()) {
            skipped(test, &format!("{} is missing; run scripts/test.sh (CI does)", missing.display()));
            return;
        }
    }
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("doc-examples").join(need.unwrap_or("plain"));
    let _ = std::fs::remove_dir_all(&dir);
    let mut copies = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        if let Some(copy) = only_blocks_needing(&text, need, &page) {
            let to = dir.join(page.strip_prefix(root()).unwrap());
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::write(&to, copy).unwrap();
            copies.push(to);
        }
    }
    assert!(need.is_some() || copies.len() >= 2, "no console example found in README.md and docs/");
    if copies.is_empty() {
        return;
    }

    let _one_at_a_time = PROFILES.lock().unwrap_or_else(|e| e.into_inner());
    let before = profiles();
    let cases = trycmd::TestCases::new();
    cases.register_bin("coalprof", binary_without_overrides(&dir));
    let home = root().join("target/no-tool-home");
    cases
        .env("COALPROF_HOME", home.display().to_string())
        .env("NO_COLOR", "1")
        .env("COLUMNS", "100")
        .env("PATH", no_gpu_path())
        .timeout(std::time::Duration::from_secs(300));
    for copy in &copies {
        cases.case(copy);
    }
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| cases.run()));
    for made in profiles().difference(&before) {
        let _ = std::fs::remove_dir_all(root().join("profiles").join(made));
    }
    if let Err(e) = outcome {
        std::panic::resume_unwind(e);
    }
}

/// The binary under test, started without the variables `util::coalprof()` removes (a tool
/// override or a log filter of the machine's user must not change an example's output). trycmd
/// can add variables but not remove them (clap reads an empty `COALPROF_NCU` as a missing value),
/// so a script in `dir` removes them and runs the binary.
fn binary_without_overrides(dir: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let unset: String =
        ["COALPROF_NCU", "COALPROF_NVCC", "COALPROF_LOG", "CUDA_HOME", "CUDA_PATH", "COALPROF_GPGPUSIM", "CUDA11_HOME"]
            .iter()
            .map(|v| format!(" -u {v}"))
            .collect();
    let binary = trycmd::cargo::cargo_bin("coalprof");
    let script = dir.join("coalprof");
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(&script, format!("#!/bin/sh\nexec /usr/bin/env{unset} '{}' \"$@\"\n", binary.display())).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script
}

/// README.md and every page under `docs/`: the guide, and the reference pages beside it.
fn pages() -> Vec<PathBuf> {
    let mut pages = vec![root().join("README.md")];
    let mut dirs = vec![root().join("docs")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                pages.push(path);
            }
        }
    }
    pages.sort();
    pages
}

/// The entries of `profiles/` now.
fn profiles() -> BTreeSet<String> {
    std::fs::read_dir(root().join("profiles"))
        .map(|d| d.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default()
}

/// `text` with only its console blocks that need `need` (every other line blank, so line
/// numbers stay), or `None` when it has none. An unknown need fails: a typo must not hide a
/// block from every test.
fn only_blocks_needing(text: &str, need: Option<&str>, page: &Path) -> Option<String> {
    let mut out = Vec::new();
    let mut fence: Option<(String, bool)> = None; // the open fence, and whether its block is kept
    let mut previous = "";
    let mut kept = 0;
    for line in text.lines() {
        let ticks = line.len() - line.trim_start_matches('`').len();
        match &fence {
            None if ticks >= 3 => {
                let info = line[ticks..].trim();
                let console = matches!(info.split(',').next(), Some("console" | "trycmd"))
                    && !info.split(',').any(|i| i == "ignore");
                let needs = previous.trim().strip_prefix(MARKER).and_then(|m| m.strip_suffix("-->")).map(str::trim);
                if let Some(n) = needs {
                    assert!(
                        NEEDS.iter().any(|(k, _)| *k == n),
                        "{}: unknown need `{n}` (known: nvdisasm, gpgpu-sim)",
                        page.display()
                    );
                }
                let keep = console && needs == need;
                kept += usize::from(keep);
                out.push(if keep { line } else { "" });
                fence = Some((line[..ticks].to_string(), keep));
            }
            None => out.push(""),
            Some((ticks_open, keep)) => {
                out.push(if *keep { line } else { "" });
                if line.starts_with(ticks_open.as_str()) && line.trim_start_matches('`').trim().is_empty() {
                    fence = None;
                }
            }
        }
        previous = line;
    }
    assert!(fence.is_none(), "{}: a code block is not closed", page.display());
    (kept > 0).then(|| out.join("\n") + "\n")
}

/// The README stays a page a person reads (issue 42: at most 250 lines), and every relative link
/// in it names a file of the checkout (the guide's own links are checked by its build).
#[test]
fn the_readme_is_short_and_its_links_resolve() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(lines <= 250, "README.md has {lines} lines; the rest belongs in the guide (docs/guide/)");
    let link = regex::Regex::new(r"\]\(([^)\s#]+)(#[^)]*)?\)").unwrap();
    let mut checked = 0;
    for m in link.captures_iter(&readme) {
        let target = &m[1];
        if target.contains("://") || target.starts_with("mailto:") {
            continue;
        }
        checked += 1;
        assert!(root().join(target).exists(), "README.md links to `{target}`, which is not in the checkout");
    }
    assert!(checked > 0, "README.md links to no page of the guide");
}

#[test]
fn a_block_keeps_its_lines_and_a_marker_moves_it_to_its_tool() {
    let page = "intro\n```console\n$ coalprof a\nout\n```\n<!-- example needs: nvdisasm -->\n```console\n$ coalprof b\n```\n```sh\n$ not run\n```\n";
    let plain = only_blocks_needing(page, None, Path::new("p.md")).unwrap();
    assert_eq!(plain, "\n```console\n$ coalprof a\nout\n```\n\n\n\n\n\n\n\n");
    let tool = only_blocks_needing(page, Some("nvdisasm"), Path::new("p.md")).unwrap();
    assert_eq!(tool, "\n\n\n\n\n\n```console\n$ coalprof b\n```\n\n\n\n");
    assert_eq!(only_blocks_needing(page, Some("gpgpu-sim"), Path::new("p.md")), None);
    let typo = std::panic::catch_unwind(|| {
        only_blocks_needing("<!-- example needs: nvdisasn -->\n```console\n```\n", None, Path::new("p.md"))
    });
    assert!(typo.is_err(), "an unknown need is an error");
}
