//! `coalprof history PROFILES_DIR`: every saved run of the folder, in time order, as one frame:
//! per row and metric its value at each run (and commit), and where it first changed.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::exit::Exit;
use crate::frame::history::{history, SavedRun};
use crate::import::read_results_json;
use crate::settings::{Common, HistorySettings};

/// How deep under the folder runs are looked for: `profiles/reference/<gpu>/<run>/`, the layout
/// reference runs are to be committed in (`profiles/README.md`; none is yet).
const DEPTH: usize = 3;

pub(crate) fn run(common: &Common, s: &HistorySettings) -> Result<Exit> {
    if !s.dir.is_dir() {
        return Err(
            Error::input(&s.dir, "not a folder of runs").with_hint("give the folder runs are saved in (`profiles/`)")
        );
    }
    let mut files = Vec::new();
    find(&s.dir, DEPTH, &mut files);
    let mut runs = Vec::new();
    for file in files {
        match read_results_json(&file) {
            Ok(results) => runs.push(saved(&s.dir, &file, results)),
            Err(e) => crate::messages::note_in(&"left out of the history", &e, e.hint()),
        }
    }
    if runs.is_empty() {
        return Err(Error::input(&s.dir, "no saved run here (no results.json in it or its folders)")
            .with_hint("`coalprof run … --out DIR` saves runs there"));
    }
    let h = history(runs, &s.filter)?;
    if h.series.is_empty() {
        return Err(Error::nothing_matched(
            "no run has a value for the rows and metrics asked for",
            Some("check `--metric`, `--kernel` and `--since`".into()),
        ));
    }
    super::print(&crate::render::render_history(&h, common.format, &common.style)?)?;
    Ok(Exit::Ok)
}

/// Every `results.json` under `dir`, sorted by path.
fn find(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() && depth > 0 {
            find(&p, depth - 1, out);
        } else if p.file_name().is_some_and(|n| n == "results.json") {
            out.push(p);
        }
    }
}

/// A run, named by its folder; made at the time its default name records
/// (`20261130-091500-ncu`), else when its results were last written.
fn saved(base: &Path, file: &Path, results: crate::results::Results) -> SavedRun {
    let folder = file.parent().unwrap_or(base);
    let name = folder.strip_prefix(base).map_or_else(|_| folder.display().to_string(), |p| p.display().to_string());
    let name = if name.is_empty() { ".".to_string() } else { name };
    let leaf = folder.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let time = time_in_name(&leaf).unwrap_or_else(|| {
        file.metadata().and_then(|m| m.modified()).map(crate::store::utc).unwrap_or_else(|_| "unknown".into())
    });
    SavedRun { name, path: folder.display().to_string(), time, results }
}

/// `2026-11-30 09:15:00` from a run named `20261130-091500…`.
fn time_in_name(name: &str) -> Option<String> {
    let b = name.as_bytes();
    let digits = |r: std::ops::Range<usize>| b.get(r.clone()).is_some_and(|s| s.iter().all(u8::is_ascii_digit));
    if !(digits(0..8) && b.get(8) == Some(&b'-') && digits(9..15)) {
        return None;
    }
    let n = |r: std::ops::Range<usize>| &name[r];
    Some(format!("{}-{}-{} {}:{}:{}", n(0..4), n(4..6), n(6..8), n(9..11), n(11..13), n(13..15)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_default_run_name_holds_its_time() {
        assert_eq!(time_in_name("20261130-091500-ncu").as_deref(), Some("2026-11-30 09:15:00"));
        assert_eq!(time_in_name("20261130-091500").as_deref(), Some("2026-11-30 09:15:00"));
        assert_eq!(time_in_name("main"), None);
        assert_eq!(time_in_name("2026113-091500"), None);
    }
}
