//! Bad input gets one clear error and exit 3 (or 4/5 where the table says), never a panic.

use std::io::Write;

use crate::util::{coalprof, fixture};

/// Analyze `bytes` written to a temporary file; return (exit code, stderr).
fn analyze_bytes(bytes: &[u8]) -> (i32, String) {
    let mut f = tempfile::NamedTempFile::new().unwrap();
    f.write_all(bytes).unwrap();
    analyze_path(f.path())
}

fn analyze_path(p: &std::path::Path) -> (i32, String) {
    let out = coalprof().arg("analyze").arg(p).output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into_owned())
}

fn assert_one_error(code: i32, stderr: &str, expected_code: i32, needle: &str) {
    assert_eq!(code, expected_code, "stderr: {stderr}");
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error: ")).collect();
    assert_eq!(errors.len(), 1, "exactly one error line: {stderr}");
    assert!(errors[0].contains(needle), "expected `{needle}` in: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn empty_binary_and_wrong_header_are_exit_3() {
    let (c, e) = analyze_bytes(b"");
    assert_one_error(c, &e, 3, "empty");
    let (c, e) = analyze_bytes(&[0u8, 159, 146, 150, 0, 1, 2, 3]);
    assert_one_error(c, &e, 3, "binary");
    let (c, e) = analyze_bytes(b"\"Name\",\"Value\"\n\"a\",\"1\"\n");
    assert_one_error(c, &e, 3, "no ncu CSV header");
}

#[test]
fn truncated_csv_is_exit_3_naming_the_line() {
    let text = std::fs::read_to_string(fixture(
        "ncu/2022/import_ncu2022_3_microgpusim_vectoradd_102400_32_gtx1080_2019_raw_base.csv",
    ))
    .unwrap();
    let cut = &text[..text.len() - 200];
    let (c, e) = analyze_bytes(cut.as_bytes());
    assert_one_error(c, &e, 3, "line 3");
    assert!(e.contains("truncated"), "{e}");
}

#[test]
fn text_reports_and_logs_without_results_are_refused_specifically() {
    let cases = [
        ("ncu/2025/text_ncu2025_1_rtx3050ti_set_full_est_speedup.txt", "text output"),
        ("ncu/2022/text_ncu2022_rtx3070_metrics_l1tex_coalescing_rowcol.txt", "text output"),
        ("ncu/unknown-version/log_ncu_err_nvgpuctrperm_target_processes_python.txt", "ERR_NVGPUCTRPERM"),
        ("ncu/2022/log_ncu2022_3_no_gpu_csv_stdout.txt", "no kernels"),
        ("ncu/2022/query_metrics_ncu2022_3_chip_gh100_head.txt", "metric catalogue"),
        ("ncu/2022/import_ncu2022_3_microgpusim_vectoradd_100_32_gtx1080_2019_source_sass.csv", "source page"),
        ("ncu/unknown-version/log_ncu_error_metric_list_parsed_as_executable_windows.txt", "does not exist"),
    ];
    for (rel, needle) in cases {
        let (c, e) = analyze_path(&fixture(rel));
        assert_one_error(c, &e, 3, needle);
    }
}

#[test]
fn header_without_launches_is_nothing_matched() {
    let (c, e) = analyze_bytes(b"\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n");
    assert_one_error(c, &e, 5, "no kernel launches");
}

#[test]
fn missing_file_is_exit_3() {
    let (c, e) = analyze_path(std::path::Path::new("/nonexistent/report.csv"));
    assert_one_error(c, &e, 3, "/nonexistent/report.csv");
}

#[test]
fn bad_metrics_toml_is_exit_2_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("m.toml");
    std::fs::write(&m, coalprof::metrics::BUILTIN.replacen("unit = \"sector\"", "unti = \"sector\"", 1)).unwrap();
    let out = coalprof()
        .args(["analyze", "--metrics"])
        .arg(&m)
        .arg(fixture("ncu/2019/details_csv_nvnsightcucli2019_v100_lassen_hotspot_stdout.txt"))
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert_one_error(out.status.code().unwrap(), &e, 2, "unti");
}
