//! Help texts checked against behaviour where they state a fact: the sentence is in the help,
//! and the command does what it says (a help that drifts from the code fails here).

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::util::{coalprof, fixture, ncu_rep_fixtures};

/// `coalprof ARGS --help`'s text.
fn help(args: &[&str]) -> String {
    let out = coalprof().args(args).arg("--help").output().unwrap();
    assert!(out.status.success(), "{args:?} --help: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// The rows of `analyze --format json` over `input` (a path, or `-` with `stdin`).
fn rows(input: &str, stdin: Option<Vec<u8>>, ncu: &Path) -> serde_json::Value {
    let mut c = coalprof();
    c.env("COALPROF_NCU", ncu).env("PATH", "/usr/bin:/bin").args(["analyze", "--format", "json", input]);
    if let Some(bytes) = stdin {
        c.write_stdin(bytes);
    }
    let out = c.output().unwrap();
    assert!(out.status.success(), "analyze {input}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()["rows"].clone()
}

/// `analyze --help` on its inputs: `.ncu-rep` reports are read natively (no ncu runs: the ncu
/// it is given leaves a mark if it does, and none is on `PATH`), and `-` reads stdin (the same
/// rows as the file).
#[test]
fn analyze_help_says_how_it_reads_its_inputs_and_does_so() {
    let text = help(&["analyze"]);
    let said = "`.ncu-rep` reports (read natively: no ncu needed; see `--reader`), or `-` for stdin";
    assert!(text.replace('\n', " ").split_whitespace().collect::<Vec<_>>().join(" ").contains(said), "{text}");
    assert!(!text.contains("read through `ncu --import`"), "{text}");

    let dir = tempfile::tempdir().unwrap();
    let (ncu, mark) = (dir.path().join("ncu"), dir.path().join("ncu-ran"));
    std::fs::write(&ncu, format!("#!/bin/sh\necho \"$@\" > '{}'\nexit 1\n", mark.display())).unwrap();
    std::fs::set_permissions(&ncu, std::fs::Permissions::from_mode(0o755)).unwrap();
    let reports = ncu_rep_fixtures();
    assert!(!reports.is_empty(), "the .ncu-rep fixtures are there");
    for report in &reports {
        let r = rows(report.to_str().unwrap(), None, &ncu);
        assert!(!r.as_array().unwrap().is_empty(), "{}: no rows", report.display());
    }
    assert!(!mark.exists(), "ncu ran: {}", std::fs::read_to_string(&mark).unwrap_or_default());

    let csv = fixture("ncu/2022/import_ncu2022_3_microgpusim_vectoradd_102400_32_gtx1080_2019_raw_base.csv");
    let from_file = rows(csv.to_str().unwrap(), None, &ncu);
    assert!(!from_file.as_array().unwrap().is_empty());
    assert_eq!(rows("-", Some(std::fs::read(&csv).unwrap()), &ncu), from_file, "`-` reads stdin like the file");
}
