//! Plots in a run folder: `run` writes `<pattern>.svg` (and `<pattern>-bandwidth.svg` where
//! there is bandwidth), `results.md` links them under each pattern's table, and `report
//! --format markdown` shows the same links; a results file without plots beside it links none.

use std::path::Path;

use coalprof::metrics::Catalogue;
use coalprof::render::{render_with_plots, run_folder, Format, Style};
use coalprof::results::Results;
use coalprof::store::RunDir;
use serde_json::json;

use crate::util::{coalprof, fixture, OkStdout};

fn model_run(dir: &Path) -> std::path::PathBuf {
    coalprof()
        .args([
            "run",
            "--pattern",
            "stride,kv-layout",
            "--backend",
            "model",
            "--size",
            "16M",
            "--run-id",
            "plots",
            "--out",
        ])
        .arg(dir)
        .assert()
        .success();
    dir.join("plots")
}

#[test]
fn run_writes_a_plot_per_pattern_and_results_md_links_them() {
    let dir = tempfile::tempdir().unwrap();
    let run = model_run(dir.path());
    for f in ["stride.svg", "kv-layout.svg"] {
        let svg = std::fs::read_to_string(run.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"), "{f}");
        assert!(svg.contains("(predicted by the address model)"), "{f} names its source:\n{svg}");
    }
    let md = std::fs::read_to_string(run.join("results.md")).unwrap();
    assert!(md.contains("![stride](stride.svg)"), "{md}");
    assert!(md.contains("![kv-layout](kv-layout.svg)"), "{md}");
    // Each link sits under its own pattern's table.
    let (stride, kv) = (md.find("## `stride`").unwrap(), md.find("## `kv-layout`").unwrap());
    let link = md.find("![stride](stride.svg)").unwrap();
    assert!(stride < link && (link < kv || kv < stride), "{md}");
    // Every linked file exists.
    for line in md.lines().filter(|l| l.starts_with("![")) {
        let target = &line[line.find("](").unwrap() + 2..line.len() - 1];
        assert!(run.join(target).is_file(), "{target} is linked but missing");
    }
    // Same input, same bytes: a second run writes identical plots.
    let again = tempfile::tempdir().unwrap();
    let run2 = model_run(again.path());
    assert_eq!(std::fs::read(run.join("stride.svg")).unwrap(), std::fs::read(run2.join("stride.svg")).unwrap());
}

/// A small measured run with the model's prediction beside it, and one user kernel (no plot).
fn measured_results() -> Results {
    let stride = |s: u32, measured: f64, predicted: f64, gbps: f64| {
        json!({
            "pattern": "stride", "variant": format!("stride_{s}"), "kernel": "stride_copy", "id": null, "launches": 1,
            "params": {"stride": s}, "source": "measured",
            "metrics": {"global_load_sectors_per_request": measured, "global_load_ideal_sectors_per_request": 4.0, "useful_bandwidth": gbps * 0.9e9},
            "predicted": {"global_load_sectors_per_request": predicted, "global_load_ideal_sectors_per_request": 4.0, "useful_bandwidth": gbps * 1e9}
        })
    };
    let kv = |v: &str, layout: &str, spr: f64| {
        json!({
            "pattern": "kv-layout", "variant": v, "kernel": "kv_read", "id": null, "launches": 1,
            "params": {"layout": layout, "dtype": "fp16"}, "source": "measured",
            "metrics": {"global_load_sectors_per_request": spr, "global_load_ideal_sectors_per_request": 2.0},
            "predicted": {"global_load_sectors_per_request": spr, "global_load_ideal_sectors_per_request": 2.0}
        })
    };
    let user = json!({"kernel": "my_kernel", "id": null, "launches": 3, "source": "measured", "metrics": {"global_load_sectors_per_request": 4.0}});
    serde_json::from_value(json!({
        "schema": "coalprof/1",
        "provenance": {"coalprof": "0.1.0", "backend": "ncu", "gpu": "NVIDIA H200", "compute_capability": "9.0"},
        "rows": [stride(1, 4.0, 4.0, 4000.0), stride(8, 32.0, 32.0, 500.0), stride(32, 32.0, 32.0, 500.0), kv("nhd_fp16", "NHD", 2.0), kv("hdn_fp16", "HDN", 32.0), user]
    }))
    .unwrap()
}

#[test]
fn a_measured_run_folder_has_bandwidth_plots_and_a_small_report_links_them() {
    let dir = tempfile::tempdir().unwrap();
    let style = Style::new(&Catalogue::builtin(), false);
    let run = RunDir::create(dir.path(), Some("measured"), "ncu").unwrap();
    let results = measured_results();
    run.save(&run_folder(&results, &style).unwrap()).unwrap();
    let mut files: Vec<String> =
        std::fs::read_dir(&run.path).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    files.sort();
    assert_eq!(
        files,
        ["kv-layout.svg", "report.html", "results.json", "results.md", "stride-bandwidth.svg", "stride.svg"]
    );
    // The page holds the same plots inline, so it needs none of the files beside it.
    let page = std::fs::read_to_string(run.file("report.html")).unwrap();
    for f in ["kv-layout.svg", "stride-bandwidth.svg", "stride.svg"] {
        let svg = std::fs::read_to_string(run.file(f)).unwrap();
        assert!(page.contains(&svg[svg.find("<svg").unwrap()..]), "{f} is inline in report.html");
    }
    let bw = std::fs::read_to_string(run.file("stride-bandwidth.svg")).unwrap();
    assert!(bw.contains("useful bandwidth (GB/s)") && bw.contains("measured vs predicted"), "{bw}");
    let md = std::fs::read_to_string(run.file("results.md")).unwrap();
    assert_eq!(md, render_with_plots(&results, Format::Markdown, &style).unwrap());
    insta::assert_snapshot!("results_md_with_plots", md);
}

#[test]
fn report_markdown_links_the_same_plots() {
    let dir = tempfile::tempdir().unwrap();
    let run = model_run(dir.path());
    let out = coalprof().args(["report", "--format", "markdown"]).arg(&run).ok_stdout();
    let text = String::from_utf8(out).unwrap();
    assert_eq!(text.trim_end(), std::fs::read_to_string(run.join("results.md")).unwrap().trim_end());
}

#[test]
fn report_of_a_results_file_without_plots_links_none() {
    let out = coalprof().args(["report", "--format", "markdown"]).arg(fixture("runs/stride-sm90.json")).ok_stdout();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("## `stride`") && !text.contains("]("), "{text}");
}
