//! The gate on source lines: a `[[gate]]` rule on `line_global_load_sectors_per_request` fails a
//! report where a line exceeds it (the line's value taken from ncu 2022.3's own source page),
//! passes one where it does not, names `file:line`, and a baseline keys lines by kernel, file
//! and line, so a line that moves is `new` + `missing`.

use std::path::Path;

use crate::util::{coalprof, fixture, json, OkStdout};

const STEM: &str = "NVIDIA-nsight-training_manual_nvtx_2022.3.0";

/// Sectors per request of `line` on ncu's source page (L2 theoretical sectors / L1 tag requests).
fn ncu_sectors_per_request(line: &str) -> f64 {
    let csv =
        std::fs::read_to_string(fixture(&format!("ncu/2022/import_ncu2022_3_{STEM}_source_cuda_sass.csv"))).unwrap();
    // Each function's block has its own header (the columns differ between blocks).
    let mut header: Vec<&str> = Vec::new();
    for l in csv.lines() {
        let cells: Vec<&str> = l.split("\",\"").map(|c| c.trim_matches('"')).collect();
        if cells[0] == "Line No" {
            header = cells;
        } else if cells[0] == line {
            let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
            let n = |name: &str| cells[col(name)].replace(',', "").parse::<f64>().unwrap();
            return n("L2 Theoretical Sectors Global") / n("L1 Tag Requests Global");
        }
    }
    panic!("line {line} is not on the source page")
}

fn rules(dir: &Path, body: &str) -> std::path::PathBuf {
    let p = dir.join("rules.toml");
    std::fs::write(&p, body).unwrap();
    p
}

#[test]
fn a_line_rule_fails_a_report_where_a_line_exceeds_it() {
    let spr = ncu_sectors_per_request("78");
    let dir = tempfile::tempdir().unwrap();
    let report = fixture(&format!("ncu-rep/{STEM}.ncu-rep"));
    let tight = rules(
        dir.path(),
        &format!(
            "[[gate]]\nmatch = \"check_results*\"\nmetric = \"line_global_load_sectors_per_request\"\nmax = {}\n",
            spr - 0.5
        ),
    );
    let a = coalprof().arg("check").arg("--rules").arg(&tight).arg(&report).assert().code(1);
    let out = String::from_utf8_lossy(&a.get_output().stdout).into_owned();
    assert!(out.contains("manual_nvtx.cu:78") && out.contains("FAIL"), "{out}");
    let loose = rules(
        dir.path(),
        &format!(
            "[[gate]]\nmatch = \"check_results*\"\nmetric = \"line_global_load_sectors_per_request\"\nmax = {}\n",
            spr + 0.5
        ),
    );
    let out = String::from_utf8(coalprof().arg("check").arg("--rules").arg(&loose).arg(&report).ok_stdout()).unwrap();
    assert!(out.contains("manual_nvtx.cu:78") && out.contains("PASS"), "{out}");
    // Kernel rows are not checked against a line metric (no `skipped` noise).
    assert!(!out.lines().any(|l| l.contains("SKIPPED") && !l.contains(" @ ")), "{out}");
}

#[test]
fn a_baseline_keys_lines_so_a_moved_line_is_new_and_missing() {
    let dir = tempfile::tempdir().unwrap();
    let report = fixture(&format!("ncu-rep/{STEM}.ncu-rep"));
    let metrics = dir.path().join("metrics.toml");
    let builtin = std::fs::read_to_string(crate::util::root().join("metrics.toml")).unwrap();
    std::fs::write(
        &metrics,
        builtin + "\n[[gate]]\nmatch = \"*\"\nmetric = \"line_global_load_sectors_per_request\"\nregress = \"+5%\"\n",
    )
    .unwrap();
    let baseline = dir.path().join("baseline.json");
    coalprof()
        .arg("--metrics")
        .arg(&metrics)
        .args(["baseline", "update", "--baseline"])
        .arg(&baseline)
        .arg(&report)
        .assert()
        .success();
    let text = std::fs::read_to_string(&baseline).unwrap();
    let key = "manual_nvtx.cu:78\"";
    assert!(text.contains(key), "the baseline keys the line: {text}");
    // Unchanged: the line passes against itself.
    let v = json(
        &coalprof()
            .arg("--metrics")
            .arg(&metrics)
            .args(["--format", "json", "check", "--baseline"])
            .arg(&baseline)
            .arg(&report)
            .ok_stdout(),
    );
    let verdict = |v: &serde_json::Value, suffix: &str| -> Vec<String> {
        v["checks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| {
                c["row"].as_str().unwrap().ends_with(suffix) && c["metric"] == "line_global_load_sectors_per_request"
            })
            .map(|c| c["verdict"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(verdict(&v, "manual_nvtx.cu:78"), ["pass"]);
    // The line "moved" (the baseline recorded it one line up): new here, missing there.
    std::fs::write(&baseline, text.replace(key, "manual_nvtx.cu:77\"")).unwrap();
    let out = coalprof()
        .arg("--metrics")
        .arg(&metrics)
        .args(["--format", "json", "check", "--baseline"])
        .arg(&baseline)
        .arg(&report)
        .output()
        .unwrap();
    let v = json(&out.stdout);
    assert_eq!(verdict(&v, "manual_nvtx.cu:78"), ["new"]);
    assert_eq!(verdict(&v, "manual_nvtx.cu:77"), ["missing"]);
}
