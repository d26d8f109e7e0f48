//! `--format bencher` and `--format github-benchmark[-bigger]` against the shapes their tools
//! document, checked by a small schema of their own here: Bencher Metric Format is
//! `{benchmark: {measure: {value, lower_value?, upper_value?}}}` with numbers; the input of
//! github-action-benchmark's `customSmallerIsBetter`/`customBiggerIsBetter` tools is an array of
//! `{name, unit, value, range?, extra?}` (strings, `value` a number). Every number is the
//! results JSON's, and each metric is in the file of its direction in metrics.toml.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::util::{coalprof, fixture, json, root, OkStdout};

fn report(format: &str) -> Value {
    json(&coalprof().arg("report").arg(fixture("runs/stride-sm90.json")).args(["--format", format]).ok_stdout())
}

/// metric → "lower" or "higher", from metrics.toml (raw metrics and those without a
/// `direction` are lower-is-better).
fn directions() -> BTreeMap<String, String> {
    let toml: toml::Table = std::fs::read_to_string(root().join("metrics.toml")).unwrap().parse().unwrap();
    let mut out = BTreeMap::new();
    for (k, d) in toml["derived"].as_table().unwrap() {
        out.insert(k.clone(), d.get("direction").and_then(|v| v.as_str()).unwrap_or("lower").to_string());
    }
    for k in toml["raw"].as_table().unwrap().keys() {
        out.insert(k.clone(), "lower".into());
    }
    out
}

/// The results' value of `metric` on the row keyed `key`.
fn value(results: &Value, key: &str, metric: &str) -> Option<f64> {
    let row = results["rows"].as_array()?.iter().find(|r| {
        format!("{}/{}", r["pattern"].as_str().unwrap_or(""), r["variant"].as_str().unwrap_or("")) == key
            || r["kernel"] == key
    })?;
    row["metrics"][metric].as_f64()
}

/// Bencher Metric Format, as its docs define it; returns (benchmark, measure, value).
fn bmf_schema(doc: &Value) -> Vec<(String, String, f64)> {
    let mut out = Vec::new();
    let benches = doc.as_object().expect("BMF: a JSON object of benchmarks");
    assert!(!benches.is_empty());
    for (bench, measures) in benches {
        assert!(!bench.is_empty(), "BMF: a benchmark name");
        let measures = measures.as_object().expect("BMF: each benchmark an object of measures");
        for (slug, m) in measures {
            assert!(
                slug.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
                "BMF slug `{slug}`"
            );
            let m = m.as_object().expect("BMF: a measure is an object");
            for (k, v) in m {
                assert!(["value", "lower_value", "upper_value"].contains(&k.as_str()), "BMF: unknown key `{k}`");
                assert!(v.is_f64() || v.is_i64() || v.is_u64(), "BMF: `{k}` is a number");
            }
            out.push((bench.clone(), slug.clone(), m["value"].as_f64().expect("BMF: `value` is required")));
        }
    }
    out
}

/// github-action-benchmark's custom tool input; returns (name, unit, value).
fn gab_schema(doc: &Value) -> Vec<(String, String, f64)> {
    let entries = doc.as_array().expect("github-action-benchmark: a JSON array");
    let mut names = BTreeSet::new();
    entries
        .iter()
        .map(|e| {
            let e = e.as_object().expect("an entry is an object");
            for (k, v) in e {
                match k.as_str() {
                    "name" | "unit" | "range" | "extra" => assert!(v.is_string(), "`{k}` is a string"),
                    "value" => assert!(v.is_number(), "`value` is a number"),
                    other => panic!("github-action-benchmark: unknown key `{other}`"),
                }
            }
            let name = e["name"].as_str().expect("`name` is required").to_string();
            assert!(names.insert(name.clone()), "names are unique: `{name}`");
            (name, e["unit"].as_str().expect("`unit` is required").to_string(), e["value"].as_f64().expect("`value`"))
        })
        .collect()
}

#[test]
fn bencher_metric_format_holds_the_results_numbers() {
    let results = report("json");
    let entries = bmf_schema(&report("bencher"));
    assert!(entries.len() >= 7, "every row has a measure: {entries:?}");
    for (bench, slug, v) in &entries {
        let metric = slug.replace('-', "_");
        assert_eq!(value(&results, bench, &metric), Some(*v), "{bench} {slug}");
    }
    assert!(entries
        .iter()
        .any(|(b, s, v)| b == "stride/stride_8" && s == "global-load-sectors-per-request" && *v == 32.0));
}

#[test]
fn github_benchmark_files_split_the_metrics_by_their_direction() {
    let (results, dirs) = (report("json"), directions());
    let mut seen = BTreeSet::new();
    for (format, want) in [("github-benchmark", "lower"), ("github-benchmark-bigger", "higher")] {
        let entries = gab_schema(&report(format));
        for (name, unit, v) in &entries {
            let (key, metric) = name.split_once(": ").expect("`row: metric`");
            assert_eq!(dirs.get(metric).map(String::as_str), Some(want), "{format}: {metric}");
            assert_eq!(value(&results, key, metric), Some(*v), "{name}");
            assert!(!unit.is_empty());
            seen.insert(name.clone());
        }
        assert!(!entries.is_empty(), "{format} has entries");
    }
    // Every exported (row, metric) is in exactly one of the two files.
    let bencher: BTreeSet<String> =
        bmf_schema(&report("bencher")).into_iter().map(|(b, s, _)| format!("{b}: {}", s.replace('-', "_"))).collect();
    assert_eq!(seen, bencher);
}

#[test]
fn benchmark_exports_are_stable() {
    for format in ["bencher", "github-benchmark", "github-benchmark-bigger"] {
        let out = coalprof().arg("report").arg(fixture("runs/stride-sm90.json")).args(["--format", format]).ok_stdout();
        insta::assert_snapshot!(format!("report_{}", format.replace('-', "_")), String::from_utf8(out).unwrap());
    }
}

#[test]
fn formats_a_command_does_not_write_are_usage_errors() {
    let rep = fixture("ncu-rep/panjd123-cutlass_report80_2024.1.1.ncu-rep");
    let out = coalprof().arg("lines").arg(&rep).args(["--format", "bencher"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("`lines` does not write `--format bencher`"));
    let out =
        coalprof().arg("report").arg(fixture("runs/stride-sm90.json")).args(["--format", "svg"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}
