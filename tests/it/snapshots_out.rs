//! Snapshots of every output format (table, markdown, CSV, JSON) and of the exit paths' stderr,
//! so a change to what users read shows up in review. Absolute paths are filtered out.

use crate::util::{coalprof, root};

fn run(args: &[&str]) -> (i32, String, String) {
    let out = coalprof().args(args).output().unwrap();
    let clean = |b: &[u8]| String::from_utf8_lossy(b).replace(&root().display().to_string(), "[ROOT]");
    (out.status.code().unwrap_or(-1), clean(&out.stdout), clean(&out.stderr))
}

const REPORT: &str = "tests/fixtures/ncu/2022/import_ncu2022_3_microgpusim_vectoradd_100_32_gtx1080_2019_raw_base.csv";

#[test]
fn analyze_in_every_format() {
    for format in ["table", "markdown", "csv", "json"] {
        let (code, out, err) = run(&["analyze", REPORT, "--format", format]);
        assert_eq!(code, 0, "{err}");
        insta::assert_snapshot!(format!("analyze_{format}"), out);
    }
}

#[test]
fn model_run_table_and_markdown() {
    let dir = tempfile::tempdir().unwrap();
    for format in ["table", "markdown"] {
        let out = dir.path().display().to_string();
        let (code, text, err) = run(&[
            "run",
            "--pattern",
            "stride",
            "--backend",
            "model",
            "--size",
            "16M",
            "--format",
            format,
            "--out",
            &out,
        ]);
        assert_eq!(code, 0, "{err}");
        insta::assert_snapshot!(format!("model_stride_{format}"), text);
    }
}

#[test]
fn exit_paths_stderr() {
    let cases: &[(&str, &[&str])] = &[
        ("exit2_unknown_pattern", &["run", "--pattern", "strid"]),
        ("exit2_bad_size", &["run", "--pattern", "stride", "--size", "12Q"]),
        (
            "exit3_text_report",
            &["analyze", "tests/fixtures/ncu/2025/text_ncu2025_1_rtx3050ti_set_full_est_speedup.txt"],
        ),
        (
            "exit3_ctrperm_log",
            &["analyze", "tests/fixtures/ncu/unknown-version/log_ncu_err_nvgpuctrperm_target_processes_python.txt"],
        ),
    ];
    for (name, args) in cases {
        let (code, _, err) = run(args);
        insta::assert_snapshot!(*name, format!("exit code: {code}\n{err}"));
    }
}
