//! Tests through the real ncu 2022.3 (installed project-locally by scripts/install-tools.sh):
//! metric names against its catalogue, `--reader ncu` (`--import`) of real reports, and no ncu
//! at all. The native reader is tested in native_rep.rs.

use std::collections::HashSet;

use coalprof::metrics::Catalogue;
use coalprof::tools::ncu::{split_suffix, Ncu};

use crate::util::{coalprof, fixture, json, real_ncu, OkStdout};

fn ncu(path: std::path::PathBuf) -> Ncu {
    Ncu { path, home: Some(std::env::temp_dir()) }
}

#[test]
fn every_raw_metric_is_in_the_real_catalogue_of_gh100_and_ga100() {
    let Some(path) = real_ncu("every_raw_metric_is_in_the_real_catalogue") else { return };
    let ncu = ncu(path);
    let c = Catalogue::builtin();
    for chip in ["gh100", "ga100"] {
        let names: HashSet<String> = ncu.query_metrics(chip).unwrap().into_iter().collect();
        assert!(names.len() > 1000, "{chip}: only {} metrics listed", names.len());
        for (key, raw) in &c.raw {
            let (base, suffix) = split_suffix(&raw.ncu);
            assert!(names.contains(base), "{chip}: `{}` ({key}) is not in ncu's catalogue", raw.ncu);
            assert!(
                suffix.is_none_or(|s| ["sum", "avg", "max", "min", "ratio"].contains(&s)),
                "{key}: unexpected suffix"
            );
        }
    }
}

#[test]
fn analyze_imports_real_reports_through_the_real_ncu() {
    let Some(path) = real_ncu("analyze_imports_real_reports") else { return };
    for (report, launches) in [
        ("microgpusim_vectoradd_100_32_gtx1080_2019.ncu-rep", 5),
        ("microgpusim_vectoradd_102400_32_gtx1080_2019.ncu-rep", 1),
    ] {
        let out = coalprof()
            .env("COALPROF_NCU", &path)
            .args(["analyze", "--reader", "ncu", "--per-launch", "--format", "json"])
            .arg(fixture(&format!("ncu-rep/{report}")))
            .ok_stdout();
        let v = json(&out);
        let rows = v["rows"].as_array().unwrap();
        assert_eq!(rows.len(), launches, "{report}");
        assert_eq!(rows[0]["kernel"], "void vecAdd<float>(float*,float*,float*,int)");
        assert_eq!(v["provenance"]["ncu_version"], "2022.3.0.0");
    }
    // The same numbers as the CSV this ncu printed for it (the fixture).
    let out = coalprof()
        .env("COALPROF_NCU", &path)
        .args(["analyze", "--reader", "ncu", "--format", "json"])
        .arg(fixture("ncu-rep/microgpusim_vectoradd_102400_32_gtx1080_2019.ncu-rep"))
        .output()
        .unwrap();
    assert_eq!(json(&out.stdout)["rows"][0]["metrics"]["dram_bytes_read"], 820928.0);
}

#[test]
fn a_report_newer_than_ncu_names_both_versions() {
    let Some(path) = real_ncu("a_report_newer_than_ncu") else { return };
    let out = coalprof()
        .env("COALPROF_NCU", &path)
        .args(["analyze", "--reader", "ncu"])
        .arg(fixture("ncu-rep/muellernico_raytracing_baseline1_rtx4080_ncu2024_3.ncu-rep"))
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{e}");
    assert!(e.contains("newer than this ncu") && e.contains("2022.3.0.0"), "{e}");
}

#[test]
fn reader_ncu_without_any_ncu_exits_4_with_a_hint() {
    let out = coalprof()
        .env("PATH", "/usr/bin:/bin")
        .current_dir(std::env::temp_dir())
        .args(["analyze", "--reader", "ncu"])
        .arg(fixture("ncu-rep/microgpusim_vectoradd_100_32_gtx1080_2019.ncu-rep"))
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{e}");
    assert!(e.contains("needs ncu") && e.contains("hint:") && e.contains("coalprof setup ncu"), "{e}");
}
