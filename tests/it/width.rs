//! Terminal tables fit the terminal: `COLUMNS`, else the terminal's width, else 100 columns
//! (the tests' stdout is a pipe). Secondary columns give way first and the table says so,
//! locations keep their file name and line, `--wide` shows everything; JSON, CSV and markdown
//! do not change with the width.

use std::path::{Path, PathBuf};

use crate::util::{coalprof, fixture, json, OkStdout};

/// The fixture reports with source counters and line info (tests/fixtures/ncu-rep/SOURCES.md).
const WITH_LINES: &[&str] = &[
    "microgpusim_vectoradd_100_32_gtx1080_2019",
    "eschnett-IndexSpaces.jl_profile_2022.1.1",
    "NVIDIA-nsight-training_manual_nvtx_2022.3.0",
    "panjd123-cutlass_report80_2024.1.1",
];

fn report(stem: &str) -> PathBuf {
    fixture(&format!("ncu-rep/{stem}.ncu-rep"))
}

fn stdout(args: &[&str], columns: Option<&str>) -> String {
    let mut c = coalprof();
    c.args(args);
    match columns {
        Some(n) => c.env("COLUMNS", n),
        None => c.env_remove("COLUMNS"),
    };
    String::from_utf8(c.ok_stdout()).unwrap()
}

/// The widest line, in characters.
fn widest(text: &str) -> usize {
    text.lines().map(|l| l.chars().count()).max().unwrap_or(0)
}

/// A report with waste on a source line whose file sits deep in someone's home folder: the naive
/// transpose (its store walks a column, its load fetches 9.6 sectors/request), built by the real
/// nvcc with `-lineinfo` from `/…/data5/home/numairs/…/conv_kernels.cu`, in a report written by
/// the fake ncu's writer (tests/it/lines_2025.rs). `None` (skipped) without nvcc.
fn deep_report(test: &str, dir: &Path) -> Option<PathBuf> {
    let source = dir.join("data5/home/numairs/projects/naive-conv2d-experiments/src/cuda/kernels/conv_kernels.cu");
    let built = crate::lines_2025::build_from(test, dir, &source)?;
    Some(crate::lines_2025::write_with(dir, &built, "2025", crate::lines_2025::START, 9.6))
}

#[test]
fn lines_fit_100_columns_and_keep_every_location_whole() {
    let dir = tempfile::tempdir().unwrap();
    let deep = deep_report("lines_fit_100_columns_and_keep_every_location_whole", dir.path());
    let mut wasteful = 0;
    let mut reports: Vec<PathBuf> = WITH_LINES.iter().map(|s| report(s)).collect();
    // Waste on instruction rows (no line info): long kernel names, SASS offsets.
    reports.push(report("bwd29-self-join-MiSTIC_profileBIGCROSS3.out_2020.3.0"));
    reports.extend(deep.clone());
    for path in &reports {
        let stem = path.file_name().unwrap().to_string_lossy();
        let p = path.to_str().unwrap();
        let table = stdout(&["lines", p], Some("100"));
        assert!(widest(&table) <= 100, "{stem}: a line of {} characters:\n{table}", widest(&table));
        // Unset, on a pipe: 100 as well.
        assert_eq!(stdout(&["lines", p], None), table, "{stem}: 100 columns when stdout is no terminal");
        let v = json(&coalprof().args(["lines", "--format", "json", p]).ok_stdout());
        for row in v["rows"].as_array().unwrap() {
            let (Some(file), Some(line)) = (row["file"].as_str(), row["line"].as_u64()) else { continue };
            let name = file.rsplit('/').next().unwrap();
            assert!(table.contains(&format!("{name}:{line}")), "{stem}: `{name}:{line}` whole:\n{table}");
            wasteful += usize::from(row["excess_sectors"].as_f64().is_some_and(|e| e > 0.0));
        }
    }
    assert!(wasteful > 0, "some report has a line with waste");
    if let Some(deep) = deep {
        let table = stdout(&["lines", deep.to_str().unwrap()], Some("100"));
        assert!(table.contains("│ conv_kernels.cu:6 "), "relative to the common folder: {table}");
        assert!(table.lines().any(|l| l.starts_with("  conv_kernels.cu:6: ")), "the diagnosis under it: {table}");
    }
}

#[test]
fn a_note_names_a_long_kernel_by_both_ends() {
    // Two CUTLASS GEMMs of thousands of characters each, both with a note on stderr (their
    // instructions executed more often than they issued requests).
    let path = report("panjd123-cutlass_report80_2024.1.1");
    let out = coalprof().args(["lines", path.to_str().unwrap()]).env("COLUMNS", "100").output().unwrap();
    assert!(out.status.success());
    let stderr = String::from_utf8(out.stderr).unwrap();
    let named: Vec<&str> = stderr
        .lines()
        .filter_map(|l| l.strip_prefix("note: `"))
        .filter_map(|l| l.split_once("`: ").map(|(name, _)| name))
        .collect();
    let long: Vec<&&str> = named.iter().filter(|n| n.starts_with("void cutlass::Kernel<")).collect();
    assert_eq!(long.len(), 2, "{stderr}");
    for name in &long {
        assert_eq!(name.chars().count(), 96, "cut to 96 characters: {name}");
        assert!(name.contains('…') && name.ends_with("(T1::Params)"), "both ends kept: {name}");
    }
    assert_ne!(long[0], long[1], "the two kernels stay apart");
    assert!(stderr.lines().all(|l| l.chars().count() < 400), "{stderr}");
}

#[test]
fn a_narrow_lines_table_hides_counts_and_says_so_and_wide_shows_them() {
    let path = report("panjd123-cutlass_report80_2024.1.1");
    let p = path.to_str().unwrap();
    let narrow = stdout(&["lines", p], Some("80"));
    assert!(widest(&narrow) <= 80, "{narrow}");
    assert!(narrow.contains("sect/req") && narrow.contains("location"), "{narrow}");
    assert!(!narrow.contains("┆ executions ┆"), "the counts go first: {narrow}");
    assert!(narrow.contains("hidden to fit 80 columns") && narrow.contains("--wide shows all"), "{narrow}");
    let wide = stdout(&["lines", "--wide", p], Some("80"));
    for header in ["executions", "requests", "lines/req", "shared wf", "ways", "code"] {
        assert!(wide.contains(header), "--wide shows `{header}`:\n{wide}");
    }
    assert!(!wide.contains("hidden to fit"), "{wide}");
    assert!(widest(&wide) > 80);
    // Diagnoses wrap under their row, within the width.
    let d = json(&coalprof().args(["lines", "--format", "json", p]).ok_stdout());
    let diagnosis = d["rows"].as_array().unwrap().iter().find_map(|r| r["diagnosis"].as_str()).expect("a diagnosis");
    let first_words: String = diagnosis.split_whitespace().take(3).collect::<Vec<_>>().join(" ");
    assert!(narrow.contains(&first_words), "the diagnosis is shown: {narrow}");
}

/// Two model runs (`--l2-fetch 32` and `64`) of the stride pattern.
fn two_runs(dir: &Path) -> (PathBuf, PathBuf) {
    let run = |id: &str, l2: &str| {
        coalprof()
            .args(["run", "--pattern", "stride", "--backend", "model", "--size", "16M", "--l2-fetch", l2])
            .args(["--run-id", id, "--format", "json", "--out"])
            .arg(dir)
            .ok_stdout();
        dir.join(id)
    };
    (run("l2-32", "32"), run("l2-64", "64"))
}

#[test]
fn compare_and_analyze_fit_a_narrow_terminal_and_wide_shows_all() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = two_runs(tmp.path());
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let clean = |s: String| s.replace(&tmp.path().display().to_string(), "[TMP]");
    let narrow = stdout(&["compare", a, b], Some("72"));
    assert!(widest(&narrow) <= 72, "{narrow}");
    assert!(narrow.contains("ld sectors/req") && narrow.contains("stride_128"), "the first metric stays: {narrow}");
    assert!(narrow.contains("hidden to fit 72 columns") && narrow.contains("--wide shows all"), "{narrow}");
    insta::assert_snapshot!("compare_72_columns", clean(narrow));
    let wide = stdout(&["compare", "--wide", a, b], Some("72"));
    for header in ["ld sectors/req", "st sectors/req", "L2 amp", "DRAM amp"] {
        assert_eq!(wide.matches(header).count(), 2, "--wide shows `{header}` for both inputs:\n{wide}");
    }
    assert!(!wide.contains("hidden to fit"));
    for format in ["json", "csv", "markdown"] {
        assert_eq!(
            stdout(&["compare", a, b, "--format", format], Some("40")),
            stdout(&["compare", a, b, "--format", format], Some("300")),
            "{format} does not depend on the width"
        );
    }

    let cutlass = report("panjd123-cutlass_report80_2024.1.1");
    let p = cutlass.to_str().unwrap();
    let narrow = stdout(&["analyze", p], Some("64"));
    assert!(widest(&narrow) <= 64, "{narrow}");
    assert!(narrow.contains("ld sectors/req") && narrow.contains("hidden to fit 64 columns"), "{narrow}");
    insta::assert_snapshot!("analyze_cutlass_64_columns", narrow);
    let wide = stdout(&["analyze", "--wide", p], Some("64"));
    assert!(widest(&wide) > 64 && !wide.contains("hidden to fit"), "{wide}");
    for format in ["json", "csv", "markdown"] {
        assert_eq!(
            stdout(&["analyze", p, "--format", format], Some("40")),
            stdout(&["analyze", p, "--format", format], Some("300")),
            "{format} does not depend on the width"
        );
    }
}

#[test]
fn the_model_table_fits_and_check_and_history_too() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().to_str().unwrap();
    let table = stdout(
        &["run", "--pattern", "stride,kv-layout", "--backend", "model", "--size", "16M", "--out", out],
        Some("60"),
    );
    assert!(widest(&table) <= 60, "{table}");
    insta::assert_snapshot!("model_stride_kv_60_columns", table);
    let check = stdout(&["check", "tests/fixtures/runs/stride-sm90.json", "--exit-zero"], Some("70"));
    assert!(widest(&check) <= 70, "{check}");
    assert!(check.contains("STATUS") && check.contains("CURRENT"), "{check}");
    let history = stdout(&["history", out], Some("60"));
    assert!(widest(&history) <= 60, "{history}");
}
