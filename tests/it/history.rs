//! `coalprof history`: three saved runs of three commits become one trend per row and metric
//! (table, CSV, JSON, SVG, HTML), `--metric`, `--kernel` and `--since` narrow it; and a run
//! records the commit, branch and dirty flag of the checkout it was made in.

use std::path::Path;

use serde_json::Value;

use crate::util::{coalprof, fixture, json, root, OkStdout};

const SPR: &str = "global_load_sectors_per_request";

/// `profiles/` with three runs of the stride fixture, made at three commits a month apart; at
/// the third, `stride_2` starts reading 32 sectors per request.
fn three_runs(dir: &Path) -> std::path::PathBuf {
    let base: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("runs/stride-sm90.json")).unwrap()).unwrap();
    let profiles = dir.join("profiles");
    for (i, (name, commit, spr)) in [
        ("20260101-120000-ncu", "a".repeat(40), 8.0),
        ("20260201-120000-ncu", "b".repeat(40), 8.0),
        ("20260301-120000-ncu", "c".repeat(40), 32.0),
    ]
    .into_iter()
    .enumerate()
    {
        let mut run = base.clone();
        run["provenance"]["git"] = serde_json::json!({ "commit": commit, "branch": "main", "dirty": i == 1 });
        for r in run["rows"].as_array_mut().unwrap() {
            if r["variant"] == "stride_2" {
                r["metrics"][SPR] = spr.into();
            }
        }
        std::fs::create_dir_all(profiles.join(name)).unwrap();
        std::fs::write(profiles.join(name).join("results.json"), serde_json::to_vec_pretty(&run).unwrap()).unwrap();
    }
    profiles
}

fn history(profiles: &Path, args: &[&str]) -> String {
    String::from_utf8(coalprof().arg("history").arg(profiles).args(args).ok_stdout()).unwrap()
}

#[test]
fn three_runs_print_the_trend_and_when_it_changed() {
    let dir = tempfile::tempdir().unwrap();
    let profiles = three_runs(dir.path());
    let table = history(&profiles, &["--metric", SPR]);
    assert!(table.starts_with("3 run(s), 7 series"), "{table}");
    let line = table.lines().find(|l| l.contains("stride/stride_2 ")).expect("stride_2's trend");
    let cells: Vec<&str> = line.split(['│', '┆']).map(str::trim).collect();
    assert_eq!(&cells[3..6], ["8.00", "8.00", "32.00"], "{line}");
    assert!(cells[6].starts_with("#3 cccccccccccc (main): 8.00 → 32.00"), "{line}");
    let steady = table.lines().find(|l| l.contains("stride/stride_1 ")).unwrap();
    assert!(steady.contains("unchanged"), "{steady}");
    assert!(table.contains("bbbbbbbbbbbb (main, dirty)"), "the dirty run is marked: {table}");

    let doc = json(history(&profiles, &["--format", "json", "--kernel", "stride_2$"]).as_bytes());
    assert_eq!(doc["schema"], "coalprof-history/1");
    assert_eq!(doc["runs"].as_array().unwrap().len(), 3);
    let series = doc["series"].as_array().unwrap();
    assert!(series.iter().all(|s| s["key"] == "stride/stride_2"), "--kernel keeps only stride_2");
    let spr = series.iter().find(|s| s["metric"] == SPR).unwrap();
    let values: Vec<f64> = spr["points"].as_array().unwrap().iter().map(|p| p["value"].as_f64().unwrap()).collect();
    assert_eq!(values, [8.0, 8.0, 32.0]);

    let csv = history(&profiles, &["--format", "csv", "--metric", SPR, "--since", "2026-02-01"]);
    assert_eq!(csv.lines().count(), 1 + 2 * 7, "a header and a line per point since February: {csv}");
    assert!(csv
        .lines()
        .nth(1)
        .unwrap()
        .starts_with(&format!("20260201-120000-ncu,2026-02-01 12:00:00,{}", "b".repeat(40))));

    let svg = history(&profiles, &["--format", "svg", "--metric", SPR]);
    assert!(svg.starts_with("<?xml") && svg.contains("<svg"));
    assert_eq!(svg.matches("<polyline").count(), 7, "one trend per row");
    let html = history(&profiles, &["--format", "html", "--metric", SPR]);
    assert!(html.starts_with("<!DOCTYPE html>") && html.contains("<svg") && html.contains("default-src 'none'"));
}

#[test]
fn what_history_refuses() {
    let dir = tempfile::tempdir().unwrap();
    let profiles = three_runs(dir.path());
    let code = |args: &[&str]| coalprof().arg("history").args(args).output().unwrap().status.code();
    let p = profiles.to_str().unwrap();
    assert_eq!(code(&[p, "--since", "last week"]), Some(2));
    assert_eq!(code(&[p, "--metric", "no_such_metric"]), Some(2));
    assert_eq!(code(&[p, "--kernel", "^gemm"]), Some(5));
    assert_eq!(code(&[dir.path().join("empty").to_str().unwrap()]), Some(3));
}

#[test]
fn a_run_records_the_commit_of_its_checkout() {
    let head = std::process::Command::new("git").arg("-C").arg(root()).args(["rev-parse", "HEAD"]).output();
    let Some(head) = head.ok().filter(|o| o.status.success()) else {
        return crate::util::skipped("history: a_run_records_the_commit", "git or the checkout is missing");
    };
    let head = String::from_utf8_lossy(&head.stdout).trim().to_string();
    let dir = tempfile::tempdir().unwrap();
    let profiles = dir.path().join("profiles");
    for id in ["one", "two", "three"] {
        coalprof()
            .args(["run", "--pattern", "stride", "--backend", "model", "--size", "16M", "--run-id", id, "--out"])
            .arg(&profiles)
            .ok_stdout();
    }
    let results: Value = serde_json::from_slice(&std::fs::read(profiles.join("one/results.json")).unwrap()).unwrap();
    let git = &results["provenance"]["git"];
    assert_eq!(git["commit"], head.as_str());
    assert!(git["dirty"].is_boolean());
    let table = history(&profiles, &["--metric", SPR]);
    assert!(table.starts_with("3 run(s)"), "{table}");
    assert!(table.contains(&head[..12]), "{table}");
}
