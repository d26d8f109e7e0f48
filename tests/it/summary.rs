//! `--format summary` and `summary-md` (`render/summary.rs`): each command's summary snapshotted
//! on fixtures (a report with waste, a check with a failing rule, a model run, a profile through
//! the fake ncu), the 4 KB bound on the CUTLASS fixture and a big generated report, the limit
//! flag, hostile names, and the worst line's numbers against `lines --format json`.

use std::path::Path;

use serde_json::Value;

use crate::util::{coalprof, fixture, json, root, OkStdout};

/// The bytes the default summary's JSON may take.
const BOUND: usize = 4096;
/// A report whose lines waste (SASS instruction rows: the kernel has no line table).
const WASTE: &str = "ncu-rep/thedavidchu-speedy_scan_profile_2020.3.1.ncu-rep";
/// Ten lines that waste, one kernel.
const MISTIC: &str = "ncu-rep/bwd29-self-join-MiSTIC_profileBIGCROSS3.out_2020.3.0.ncu-rep";
const CUTLASS: &str = "ncu-rep/panjd123-cutlass_report80_2024.1.1.ncu-rep";

/// Output with the checkout, the temporary folder and run folders' timestamps replaced, and the
/// notice about nvdisasm (present or not, by machine) left out.
fn clean(text: &str, tmp: Option<&Path>) -> String {
    let mut text = text.replace(&root().display().to_string(), "[ROOT]");
    if let Some(t) = tmp {
        text = text.replace(&t.display().to_string(), "[TMP]");
    }
    // A run folder's name: its time, its backend, and `-2` for a second one in the same second.
    let stamp = regex::Regex::new(r"\d{8}-\d{6}-(model|profile|ncu|sim)(-\d+)?").unwrap();
    let text = stamp.replace_all(&text, "[STAMP]-$1").into_owned();
    text.lines().filter(|l| !l.contains("nvdisasm")).map(|l| format!("{l}\n")).collect()
}

/// The summary JSON of `args`, checked for its schema and bound, pretty for a snapshot (the
/// nvdisasm notice left out: it depends on the machine).
fn summary_json(out: &[u8], tmp: Option<&Path>) -> (Value, String) {
    assert!(out.ends_with(b"\n") && out.iter().filter(|&&b| b == b'\n').count() == 1, "one line of JSON");
    assert!(out.len() <= BOUND, "{} bytes: {}", out.len(), String::from_utf8_lossy(out));
    let mut v = json(out);
    assert_eq!(v["schema"], "coalprof-summary/1");
    assert!(v["truncated"]["kernels_omitted"].is_u64() && v["truncated"]["lines_omitted"].is_u64());
    if let Some(n) = v.get_mut("notices").and_then(Value::as_array_mut) {
        n.retain(|n| !n.as_str().unwrap_or_default().contains("nvdisasm"));
    }
    let pretty = clean(&serde_json::to_string_pretty(&v).unwrap(), tmp);
    (v, pretty)
}

/// `args` with `--format summary` and `summary-md`: the JSON (parsed) and both snapshot texts.
fn both(args: &[&str], code: i32, tmp: Option<&Path>) -> (Value, String, String) {
    let run = |format: &str| {
        let out = coalprof().args(args).args(["--format", format]).output().unwrap();
        assert_eq!(out.status.code(), Some(code), "{args:?} {format}: {}", String::from_utf8_lossy(&out.stderr));
        out.stdout
    };
    let (v, pretty) = summary_json(&run("summary"), tmp);
    let md = clean(&String::from_utf8(run("summary-md")).unwrap(), tmp);
    (v, pretty, md)
}

fn path(rel: &str) -> String {
    fixture(rel).display().to_string()
}

#[test]
fn analyze_summary_of_a_report() {
    let (v, j, md) = both(&["analyze", &path(WASTE)], 0, None);
    assert_eq!(v["command"], "analyze");
    assert_eq!(
        v["kernels"][0]["metrics"]["global_load_sectors_per_request"]["value"].as_f64().map(|x| x > 4.0),
        Some(true)
    );
    insta::assert_snapshot!("analyze_summary_json", j);
    insta::assert_snapshot!("analyze_summary_md", md);
}

#[test]
fn lines_summary_of_a_report_with_waste() {
    let (v, j, md) = both(&["lines", &path(WASTE)], 0, None);
    assert_eq!(v["command"], "lines");
    assert_eq!(v["lines"][0]["rule"], "CP1001", "the misaligned load first: {j}");
    insta::assert_snapshot!("lines_summary_json", j);
    insta::assert_snapshot!("lines_summary_md", md);
}

#[test]
fn check_summary_with_a_failing_rule_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("rules.toml");
    std::fs::write(&rules, "[[gate]]\nmatch = \"stride/*\"\nmetric = \"global_load_sectors_per_request\"\nmax = 4.5\n")
        .unwrap();
    let rules = rules.display().to_string();
    let run = path("runs/stride-sm90.json");
    let (v, j, md) = both(&["check", &run, "--rules", &rules], 1, Some(dir.path()));
    let gate = &v["gate"];
    assert_eq!(gate["verdict"], "fail");
    let failed: Vec<&Value> = gate["checks"].as_array().unwrap().iter().collect();
    assert!(!failed.is_empty() && failed.iter().all(|c| c["verdict"] == "fail" && c["value"].as_f64() > Some(4.5)));
    insta::assert_snapshot!("check_summary_json", j);
    insta::assert_snapshot!("check_summary_md", md);
}

#[test]
fn run_summary_names_its_run_folder() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().display().to_string();
    let args = ["run", "--pattern", "stride", "--backend", "model", "--size", "16M", "--out", &out];
    let (v, j, md) = both(&args, 0, Some(dir.path()));
    let folder = Path::new(v["run_folder"].as_str().expect("a run folder"));
    assert!(folder.join("results.json").is_file(), "{folder:?}");
    // stride_8: every lane in its own sector, 32 per request against 4 (4-byte loads).
    let k = v["kernels"].as_array().unwrap().iter().find(|k| k["name"] == "stride/stride_8").expect("stride_8");
    assert_eq!(k["metrics"]["global_load_sectors_per_request"]["value"], 32.0);
    assert_eq!(k["metrics"]["global_load_sectors_per_request"]["ideal"], 4.0);
    insta::assert_snapshot!("run_summary_json", j);
    insta::assert_snapshot!("run_summary_md", md);
}

#[test]
fn profile_summary_through_a_fake_ncu_names_the_worst_lines() {
    let dir = tempfile::tempdir().unwrap();
    let ncu = crate::profile::fake_ncu(dir.path(), &fixture(CUTLASS));
    let mut v = Value::Null;
    for format in ["summary", "summary-md"] {
        // A folder each: two runs in one second would be `…-profile` and `…-profile-2`.
        let runs = dir.path().join(format).display().to_string();
        let out = coalprof()
            .env("COALPROF_NCU", &ncu)
            .args(["profile", "--format", format, "--out", &runs, "--", "/opt/app"])
            .ok_stdout();
        if format == "summary" {
            let (parsed, j) = summary_json(&out, Some(dir.path()));
            insta::assert_snapshot!("profile_summary_json", j);
            v = parsed;
        } else {
            insta::assert_snapshot!("profile_summary_md", clean(&String::from_utf8(out).unwrap(), Some(dir.path())));
        }
    }
    assert_eq!(v["backend"], "ncu");
    assert!(v["run_folder"].as_str().is_some_and(|f| Path::new(f).join("report.ncu-rep").is_file()));
    assert!(!v["lines"].as_array().unwrap().is_empty(), "the CUTLASS report's lines: {v}");
}

/// The worst line of the summary is the row of `lines --format json` that wastes the most
/// (excess sectors plus excess wavefronts, `lines`' own ranking), with its numbers.
#[test]
fn the_worst_line_is_lines_worst_row_with_its_numbers() {
    let report = path(MISTIC);
    let summary = json(&coalprof().args(["lines", &report, "--format", "summary"]).ok_stdout());
    let lines = json(&coalprof().args(["lines", &report, "--format", "json", "--top", "0"]).ok_stdout());
    let excess =
        |r: &Value| r["excess_sectors"].as_f64().unwrap_or(0.0) + r["shared_excess_wavefronts"].as_f64().unwrap_or(0.0);
    let rows = lines["rows"].as_array().unwrap();
    let worst = rows.iter().max_by(|a, b| excess(a).total_cmp(&excess(b))).unwrap();
    assert!(excess(worst) > 0.0);
    let first = &summary["lines"][0];
    assert_eq!(first["location"], format!("+{:#x}", worst["pc_offset"].as_u64().unwrap()), "{summary}");
    assert_eq!(first["op"], worst["op"]);
    for key in ["sectors_per_request", "ideal_sectors_per_request", "excess_sectors", "excess_share"] {
        assert_eq!(first[key].as_f64(), worst[key].as_f64(), "{key}");
    }
    // Sectors beyond the ideal are the sectors less the ideal ones: the line's own counts.
    let (s, i) = (worst["sectors"].as_f64().unwrap(), worst["ideal_sectors"].as_f64().unwrap());
    assert_eq!(first["excess_sectors"].as_f64(), Some(s - i));
    // The lines come worst first.
    let shown: Vec<f64> = summary["lines"].as_array().unwrap().iter().map(excess).collect();
    assert!(shown.windows(2).all(|w| w[0] >= w[1]), "{shown:?}");
}

/// The bytes, kernels and lines of a summary.
fn measure(args: &[&str]) -> (usize, Value) {
    let out = coalprof().args(args).ok_stdout();
    (out.len(), json(&out))
}

fn count(v: &Value, what: &str) -> usize {
    v[what].as_array().map_or(0, Vec::len)
}

#[test]
fn the_summary_is_within_4_kb_on_cutlass_and_on_a_big_generated_report_and_the_limit_gives_more() {
    for command in ["analyze", "lines"] {
        let (bytes, _) = measure(&[command, &path(CUTLASS), "--format", "summary"]);
        assert!(bytes <= BOUND, "{command} on CUTLASS: {bytes} bytes");
    }
    // A report of MiSTIC's blocks repeated (scripts/ncu_rep_blocks.py, as the 1 GB benchmark
    // report is made), each launch its own kernel and lines (`--per-launch`).
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.ncu-rep");
    let made = std::process::Command::new("python3")
        .arg(root().join("scripts/ncu_rep_blocks.py"))
        .args(["repeat", &path(MISTIC)])
        .arg(&big)
        .arg("8")
        .output()
        .unwrap();
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    let big = big.display().to_string();
    for command in ["analyze", "lines"] {
        let args = [command, &big, "--per-launch", "--format", "summary"];
        let (bytes, v) = measure(&args);
        assert!(bytes <= BOUND, "{command}: {bytes} bytes");
        let t = &v["truncated"];
        let all_kernels = count(&v, "kernels") + t["kernels_omitted"].as_u64().unwrap() as usize;
        let all_lines = count(&v, "lines") + t["lines_omitted"].as_u64().unwrap() as usize;
        assert!(all_kernels + all_lines > 10, "{command}: a big report: {v}");
        assert!(t["kernels_omitted"].as_u64().unwrap() + t["lines_omitted"].as_u64().unwrap() > 0, "{v}");
        // All of it: every kernel and line counted above, past the bound.
        let (bytes, all) = measure(&[&args[..], &["--summary-limit", "0"]].concat());
        assert!(bytes > BOUND, "{command}: all of it is more than the bound");
        assert_eq!((count(&all, "kernels"), count(&all, "lines")), (all_kernels, all_lines), "{command}");
        assert_eq!(all["truncated"]["lines_omitted"], 0);
        // A limit gives that many.
        let (_, seven) = measure(&[&args[..], &["--summary-limit", "7"]].concat());
        assert_eq!(count(&seven, "lines"), all_lines.min(7), "{command}");
        assert_eq!(count(&seven, "kernels"), all_kernels.min(7), "{command}");
    }
}

/// Names with a newline and a workflow command, or terminal escapes, stay text: no raw control
/// character in either format, the markdown escaped, the JSON's names as visible text.
#[test]
fn hostile_kernel_names_stay_text_in_both_summaries() {
    let dir = tempfile::tempdir().unwrap();
    let rep = crate::hostile::hostile_rep(dir.path());
    let rep = rep.display().to_string();
    for format in ["summary", "summary-md"] {
        let out = coalprof().args(["analyze", &rep, "--format", format]).ok_stdout();
        for b in [0x1b, 0x07, b'\r'] {
            assert!(!out.contains(&b), "{format}: a raw control byte {b:#x}");
        }
        let text = String::from_utf8(out).unwrap();
        assert!(!text.lines().any(|l| l.starts_with("::")), "{format}:\n{text}");
        if format == "summary" {
            let v: Value = serde_json::from_str(&text).unwrap();
            let names: Vec<&str> =
                v["kernels"].as_array().unwrap().iter().map(|k| k["name"].as_str().unwrap()).collect();
            assert!(names.contains(&"evil\\n::warning::injected"), "{names:?}");
            assert!(names.iter().any(|n| n.contains("\\x1b]0;title\\x07")), "{names:?}");
        } else {
            assert!(text.contains("`evil\\n::warning::injected`"), "{text}");
        }
    }
}

#[test]
fn a_command_without_a_summary_refuses_it_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("run-1");
    std::fs::create_dir(&saved).unwrap();
    std::fs::copy(fixture("runs/stride-sm90.json"), saved.join("results.json")).unwrap();
    let (runs, run) = (dir.path().display().to_string(), path("runs/stride-sm90.json"));
    for args in [&["patterns"][..], &["history", &runs][..], &["compare", &run, &run][..]] {
        let out = coalprof().args(args).args(["--format", "summary"]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.starts_with("error:") && err.contains("--format summary"), "{err}");
    }
}

/// `triton`'s summary goes through `lines`' rows: a load 16 elements (64 bytes) apart puts each
/// of a warp's 32 lanes in its own sector, 32 per request where 4-byte loads need 128 / 32 = 4.
#[test]
fn triton_summary_names_the_strided_load() {
    let Some(py) = crate::triton::python("triton_summary_names_the_strided_load") else { return };
    let out = coalprof()
        .env("COALPROF_PYTHON", &py)
        .args(["triton", "tests/fixtures/triton/kernels.py::strided", "--grid", "2"])
        .args(["--arg", "x_ptr=f32[32768]", "--arg", "y_ptr=f32[2048]", "--arg", "stride=16"])
        .args(["--meta", "BLOCK=1024", "--format", "summary"])
        .ok_stdout();
    let (v, _) = summary_json(&out, None);
    assert_eq!(v["command"], "triton");
    let worst = &v["lines"][0];
    assert!(worst["location"].as_str().unwrap().ends_with("kernels.py:32"), "{v}");
    assert_eq!(worst["op"], "global load");
    assert_eq!(
        (worst["sectors_per_request"].as_f64(), worst["ideal_sectors_per_request"].as_f64()),
        (Some(32.0), Some(4.0))
    );
    // 2 programs × 1024 lanes = 64 warp requests, each 32 − 4 sectors beyond the ideal.
    assert_eq!(worst["excess_sectors"].as_f64(), Some(64.0 * 28.0));
}
